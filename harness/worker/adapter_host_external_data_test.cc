// Tests of external data through parity-worker: CreateSession.model_dir
// reaches the adapter as parity_session_options.model_dir (ABI version 3),
// adapters read the weights from that folder under the containment rule of
// spec/abi/README.md ("External data") and refuse, naming the rule, a
// location that leaves it; a version-2 adapter is still served.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/worker/worker_test_util.h"
#include "spec/abi/parity_adapter.h"

namespace parity::worker {
namespace {

using namespace test_util;  // NOLINT: the helpers are the vocabulary of these tests

const std::vector<float> kWeights = {1, 2, 0.5f};
constexpr int kWeightsOffset = 8;  // bytes of padding before the weights in weights.bin

// y = Relu(a + w) over float[3], with w an initializer whose data lies in
// `location` at `offset` (relative to the model's folder, as the case has it).
std::string ExternalAddReluModel(const std::string& location, int offset = kWeightsOffset) {
  onnx::ModelProto model;
  model.ParseFromString(AddReluModel());
  onnx::GraphProto* graph = model.mutable_graph();
  graph->mutable_input()->RemoveLast();  // b becomes the initializer w
  graph->mutable_node(0)->set_input(1, "w");
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto entry = [&](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  entry("location", location);
  entry("offset", std::to_string(offset));
  entry("length", std::to_string(kWeights.size() * sizeof(float)));
  return model.SerializeAsString();
}

Request RunA(uint64_t session_id) {
  Request r;
  r.mutable_run()->set_session_id(session_id);
  protocol::Value* a = r.mutable_run()->add_inputs();
  a->set_name("a");
  *a->mutable_tensor() = Floats("a", {1, -5, 3});
  return r;
}
const std::vector<float> kExpected = {2, 0, 3.5f};  // Relu({1,-5,3} + {1,2,0.5})

Request CreateIn(const std::string& model, const std::string& model_dir) {
  Request r = Create(model, "test_external");
  if (!model_dir.empty()) r.mutable_create_session()->set_model_dir(model_dir);
  return r;
}

// A folder tree: root/case/weights.bin (padding, then the weights), and
// root/outside.bin beside the case folder, which no location may reach.
class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/parity_external_data_test_XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    root_ = name;
    case_dir_ = root_ / "case";
    std::filesystem::create_directory(case_dir_);
    const std::string padding(kWeightsOffset, '\x7f');
    const std::string weights(reinterpret_cast<const char*>(kWeights.data()), kWeights.size() * sizeof(float));
    std::ofstream(case_dir_ / "weights.bin", std::ios::binary) << padding << weights;
    std::ofstream(root_ / "outside.bin", std::ios::binary) << padding << weights;
    std::filesystem::create_symlink(root_ / "outside.bin", case_dir_ / "link_out.bin");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::filesystem::path root_;
  std::filesystem::path case_dir_;
};

class ExternalDataAdaptersTest : public ExternalDataTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(ExternalDataAdaptersTest, ReadsTheWeightsFromModelDir) {
  WorkerProcess worker(AdapterPath(GetParam()));
  const Response created = worker.Call(CreateIn(ExternalAddReluModel("weights.bin"), case_dir_.string()));
  ASSERT_FALSE(Failed(created)) << created.status().message() << "\n" << worker.Stderr();
  const Response ran = worker.Call(RunA(created.session().session_id()));
  ASSERT_FALSE(Failed(ran)) << ran.status().message();
  ASSERT_EQ(ran.run().outputs_size(), 1);
  EXPECT_EQ(ReadFloats(ran.run().outputs(0).tensor()), kExpected);
}

TEST_P(ExternalDataAdaptersTest, RefusesExternalDataWithoutAFolder) {
  WorkerProcess worker(AdapterPath(GetParam()));
  const Response created = worker.Call(CreateIn(ExternalAddReluModel("weights.bin"), ""));
  EXPECT_EQ(created.status().code(), protocol::INVALID_ARGUMENT) << created.status().message();
  EXPECT_NE(created.status().message().find("weights.bin"), std::string::npos) << created.status().message();
}

TEST_P(ExternalDataAdaptersTest, RefusesLocationsOutsideTheFolderNamingTheRule) {
  WorkerProcess worker(AdapterPath(GetParam()));
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {"../outside.bin", "contains '..'"},
      {(root_ / "outside.bin").string(), "is an absolute path"},
      {"link_out.bin", "outside the model's folder"},
      {".", "is not a regular file"},
  };
  for (const auto& [location, rule] : refusals) {
    const Response created = worker.Call(CreateIn(ExternalAddReluModel(location), case_dir_.string()));
    EXPECT_EQ(created.status().code(), protocol::INVALID_ARGUMENT) << location << ": " << created.status().message();
    EXPECT_NE(created.status().message().find(rule), std::string::npos) << location << ": " << created.status().message();
  }
  const Response beyond = worker.Call(CreateIn(ExternalAddReluModel("weights.bin", 1000), case_dir_.string()));
  EXPECT_EQ(beyond.status().code(), protocol::INVALID_ARGUMENT) << beyond.status().message();
  EXPECT_NE(beyond.status().message().find("lies beyond the end of 'weights.bin'"), std::string::npos)
      << beyond.status().message();
}

INSTANTIATE_TEST_SUITE_P(Adapters, ExternalDataAdaptersTest,
                         ::testing::Values("reference", "reference_inplace", "template", "fault_injection"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// An adapter built against ABI version 2 knows no model_dir: the worker
// still serves it, and it refuses external data as having no folder, while
// models without external data run as before.
TEST_F(ExternalDataTest, VersionTwoAdapterIsServedAndReadsNoModelDir) {
  WorkerProcess worker(AdapterPath("fault_injection"), "", {"PARITY_FAULTS_ABI=2"});
  const Response hello = worker.Call(Hello());
  ASSERT_FALSE(Failed(hello)) << hello.status().message() << "\n" << worker.Stderr();
  EXPECT_EQ(hello.info().abi_version(), 2u);

  const Response plain = worker.Call(CreateIn(AddReluModel(), case_dir_.string()));
  ASSERT_FALSE(Failed(plain)) << plain.status().message();
  const Response ran = worker.Call(RunAddRelu(plain.session().session_id()));
  ASSERT_FALSE(Failed(ran)) << ran.status().message();
  EXPECT_EQ(ReadFloats(ran.run().outputs(0).tensor()), kAddReluExpected);

  const Response external = worker.Call(CreateIn(ExternalAddReluModel("weights.bin"), case_dir_.string()));
  EXPECT_EQ(external.status().code(), protocol::INVALID_ARGUMENT) << external.status().message();
  EXPECT_NE(external.status().message().find("not loaded from a folder"), std::string::npos)
      << external.status().message();
}

}  // namespace
}  // namespace parity::worker
