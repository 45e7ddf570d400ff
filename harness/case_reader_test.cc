// Tests of reading stateful cases (case.json "steps"): the carry list against
// the graph and its errors, the files a step may leave out, and the check that
// each carried input file holds what the step before computed. The file's own
// shape is checked by ParseCaseFile (case_file_test.cc).
#include "harness/case_reader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "reference/model/tensor_io.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

void AddFloat(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& name) {
  onnx::ValueInfoProto* v = values->Add();
  v->set_name(name);
  auto* type = v->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_value(3);
}

// Inputs (past, x), outputs (y, present); no nodes: the reader never runs it.
onnx::ModelProto CacheModel() {
  onnx::ModelProto model;
  AddFloat(model.mutable_graph()->mutable_input(), "past");
  AddFloat(model.mutable_graph()->mutable_input(), "x");
  AddFloat(model.mutable_graph()->mutable_output(), "y");
  AddFloat(model.mutable_graph()->mutable_output(), "present");
  return model;
}

// `steps` as ParseCaseFile reads it: {"carry": [{"output", "input"}, ...]}.
CaseFile Stateful(const std::vector<CaseCarry>& carry) {
  CaseFile file;
  file.steps = CaseSteps{carry};
  return file;
}

Value Floats(std::vector<double> values) {
  return Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {3}, values));
}

class CaseReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("parity_case_reader_" + std::to_string(::getpid())) / "test_cache";
    fs::remove_all(dir_.parent_path());
    fs::create_directories(dir_);
    info_.name = "test_cache";
    info_.dir = dir_.string();
    info_.case_file = Stateful({{"present", "past"}});
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }

  // Writes step `step`'s file kind_index.pb ("input", 0) holding `value`.
  void Write(int step, const std::string& kind, int index, const Value& value) {
    const fs::path set = dir_ / ("test_data_set_" + std::to_string(step));
    fs::create_directories(set);
    ASSERT_TRUE(WriteValueFile((set / (kind + "_" + std::to_string(index) + ".pb")).string(), value, "v").ok());
  }
  void Remove(int step, const std::string& file) {
    fs::remove(dir_ / ("test_data_set_" + std::to_string(step)) / file);
  }
  // Three complete, consistent steps: present = past + x, y = x.
  void WriteSteps() {
    std::vector<double> past = {0, 0, 0};
    for (int step = 0; step < 3; ++step) {
      const std::vector<double> x = {1.0 * step, 2.0, 3.5};
      std::vector<double> present = past;
      for (size_t i = 0; i < 3; ++i) present[i] += x[i];
      Write(step, "input", 0, Floats(past));
      Write(step, "input", 1, Floats(x));
      Write(step, "output", 0, Floats(x));
      Write(step, "output", 1, Floats(present));
      past = present;
    }
  }
  StatusOr<std::vector<DataSet>> Read(bool read_inputs = true) {
    return ReadDataSets(info_, CacheModel(), read_inputs);
  }

  fs::path dir_;
  CaseInfo info_;
};

TEST_F(CaseReaderTest, CarriesAreParsedWithTheirGraphIndices) {
  StatusOr<std::vector<StateCarry>> carries = ReadStepCarries(info_, CacheModel().graph());
  ASSERT_TRUE(carries.ok()) << carries.status().ToString();
  ASSERT_EQ(carries->size(), 1u);
  EXPECT_EQ((*carries)[0].output, "present");
  EXPECT_EQ((*carries)[0].output_index, 1);
  EXPECT_EQ((*carries)[0].input, "past");
  EXPECT_EQ((*carries)[0].input_index, 0);
  EXPECT_TRUE(IsStateful(info_));

  CaseInfo plain = info_;
  plain.case_file = CaseFile{};
  EXPECT_FALSE(IsStateful(plain));
  EXPECT_TRUE(ReadStepCarries(plain, CacheModel().graph())->empty());
}

TEST_F(CaseReaderTest, BadCarriesNameTheCaseAndTheValue) {
  const onnx::GraphProto graph = CacheModel().graph();
  auto error = [&](const std::vector<CaseCarry>& carry) {
    info_.case_file = Stateful(carry);
    StatusOr<std::vector<StateCarry>> carries = ReadStepCarries(info_, graph);
    return carries.ok() ? std::string("(accepted)") : carries.status().message();
  };
  std::string m = error({{"presnt", "past"}});
  EXPECT_NE(m.find("case 'test_cache'"), std::string::npos) << m;
  EXPECT_NE(m.find("'presnt' is not an output of the graph"), std::string::npos) << m;

  m = error({{"present", "y"}});
  EXPECT_NE(m.find("'y' is not an input of the graph"), std::string::npos) << m;

  // ParseCaseFile refuses this first; a CaseFile built in code still cannot.
  m = error({{"present", "past"}, {"y", "past"}});
  EXPECT_NE(m.find("input 'past' is carried twice"), std::string::npos) << m;
  EXPECT_NE(m.find("carry[1]"), std::string::npos) << m;
}

TEST_F(CaseReaderTest, CompleteStepsAreReadInOrder) {
  WriteSteps();
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(fs::path((*sets)[s].dir).filename(), "test_data_set_" + std::to_string(s));
    EXPECT_EQ((*sets)[s].input_index, (std::vector<int>{0, 1}));
    EXPECT_EQ((*sets)[s].output_index, (std::vector<int>{0, 1}));
    EXPECT_EQ((*sets)[s].inputs.size(), 2u);
  }
  // The state at step 2 is the sum of the x of steps 0 and 1.
  EXPECT_EQ((*sets)[2].inputs[0].tensor().ToDoubles(), (std::vector<double>{1, 4, 7}));
}

TEST_F(CaseReaderTest, CarriedFilesMayBeLeftOut) {
  WriteSteps();
  Remove(1, "input_0.pb");   // the state feeds it
  Remove(2, "input_0.pb");
  Remove(0, "output_1.pb");  // not compared at step 0
  StatusOr<std::vector<DataSet>> sets = Read(/*read_inputs=*/false);
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  EXPECT_EQ((*sets)[0].input_index, (std::vector<int>{0, 1}));
  EXPECT_EQ((*sets)[1].input_index, std::vector<int>{1});
  EXPECT_EQ((*sets)[0].output_index, std::vector<int>{0});
  EXPECT_EQ((*sets)[0].outputs.size(), 1u);
  EXPECT_EQ((*sets)[1].output_index, (std::vector<int>{0, 1}));
  EXPECT_TRUE((*sets)[1].inputs.empty());  // not read, only found
}

TEST_F(CaseReaderTest, MissingFilesThatAreNotCarriedAreErrors) {
  WriteSteps();
  Remove(0, "input_0.pb");  // step 0 has no state to take it from
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("test_data_set_0/input_0.pb (input 'past') is missing"), std::string::npos)
      << sets.status().message();

  WriteSteps();
  Remove(2, "input_1.pb");
  sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("test_data_set_2/input_1.pb (input 'x') is missing"), std::string::npos)
      << sets.status().message();

  WriteSteps();
  Remove(1, "output_0.pb");
  sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("test_data_set_1/output_0.pb (output 'y') is missing"), std::string::npos)
      << sets.status().message();
}

TEST_F(CaseReaderTest, PlainCasesStillStopAtTheFirstMissingFile) {
  WriteSteps();
  info_.case_file = CaseFile{};
  Remove(1, "input_0.pb");
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  EXPECT_TRUE((*sets)[1].inputs.empty());
  EXPECT_TRUE((*sets)[1].input_index.empty());
  EXPECT_EQ((*sets)[0].inputs.size(), 2u);
}

TEST_F(CaseReaderTest, APlainCaseNeedsAnExpectedFileForEveryOutput) {
  WriteSteps();
  info_.case_file = CaseFile{};
  Remove(1, "output_1.pb");
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("test_data_set_1/output_1.pb (output 'present') is missing"),
            std::string::npos)
      << sets.status().message();
}

// A file that is not what the graph declares there is the case's fault,
// named by file and value, whatever a backend would make of it.
TEST_F(CaseReaderTest, ValuesThatAreNotWhatTheGraphDeclaresAreRefused) {
  WriteSteps();
  info_.case_file = CaseFile{};
  Write(0, "input", 1, Value::FromTensor(*Tensor::FromDoubles(DataType::kDouble, {3}, {1, 2, 3})));
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("test_data_set_0/input_1.pb (input 'x'): holds float64[3] where the graph "
                                         "declares float32"),
            std::string::npos)
      << sets.status().message();
  WriteSteps();
  Write(2, "output", 0, Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {4}, {1, 2, 3, 4})));
  sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("holds float32[4] where the graph declares dimension 0 = 3"), std::string::npos)
      << sets.status().message();
  WriteSteps();
  Write(1, "input", 0, Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {3, 1}, {1, 2, 3})));
  sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("of rank 2 where the graph declares rank 1"), std::string::npos)
      << sets.status().message();
}

// A symbolic link loop named like a data set is an error of the case, not
// an exception that ends the process.
TEST_F(CaseReaderTest, ASymlinkLoopIsAnErrorNotAnException) {
  WriteSteps();
  info_.case_file = CaseFile{};
  fs::create_symlink("test_data_set_9", dir_ / "test_data_set_9");
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("test_data_set_9"), std::string::npos) << sets.status().message();
}

TEST_F(CaseReaderTest, OverlappingRootsFindACaseOnce) {
  std::ofstream(dir_ / "model.onnx") << "";
  StatusOr<std::vector<CaseInfo>> cases =
      DiscoverCases({dir_.parent_path().string(), dir_.string(), dir_.string() + "/"});
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].name, "test_cache");
}

// onnx.proto requires string elements to be UTF-8; a file that breaks it
// is the case's fault (a runtime that decodes strings refuses it).
TEST_F(CaseReaderTest, StringsThatAreNotUtf8AreRefused) {
  info_.case_file = CaseFile{};
  onnx::ModelProto model;
  for (auto* values : {model.mutable_graph()->mutable_input(), model.mutable_graph()->mutable_output()}) {
    onnx::ValueInfoProto* v = values->Add();
    v->set_name("s");
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
  }
  Tensor strings = *Tensor::Create(DataType::kString, {3});
  strings.mutable_strings()[0] = "caf\xc3\xa9";  // valid two-byte form
  strings.mutable_strings()[1] = "ok";
  strings.mutable_strings()[2] = "ok";
  Write(0, "input", 0, Value::FromTensor(strings));
  Write(0, "output", 0, Value::FromTensor(strings));
  ASSERT_TRUE(ReadDataSets(info_, model).ok());
  for (const char* bad : {"\xff", "\xc3", "\xc0\x80", "\xed\xa0\x80"}) {  // stray, cut short, overlong, surrogate
    strings.mutable_strings()[2] = bad;
    Write(0, "input", 0, Value::FromTensor(strings));
    StatusOr<std::vector<DataSet>> sets = ReadDataSets(info_, model);
    ASSERT_FALSE(sets.ok());
    EXPECT_NE(sets.status().message().find("string element 2 is not UTF-8"), std::string::npos)
        << sets.status().message();
  }
}

TEST_F(CaseReaderTest, ACarriedInputThatDiffersFromTheOutputBeforeIsInconsistent) {
  WriteSteps();
  Write(2, "input", 0, Floats({1, 4, 7.5}));  // step 1's present is {1, 4, 7}
  StatusOr<std::vector<DataSet>> sets = Read(/*read_inputs=*/false);
  ASSERT_FALSE(sets.ok());
  const std::string m = sets.status().message();
  EXPECT_EQ(m.rfind("case is inconsistent: case 'test_cache'", 0), 0u) << m;
  EXPECT_NE(m.find("test_data_set_2/input_0.pb (input 'past') differs from test_data_set_1/output_1.pb "
                   "(output 'present')"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("element 2"), std::string::npos) << m;

  // Without the expected file of step 1 there is nothing to check against.
  Remove(1, "output_1.pb");
  EXPECT_TRUE(Read().ok());
}

TEST_F(CaseReaderTest, StepsMustBeNumberedWithoutGaps) {
  WriteSteps();
  fs::rename(dir_ / "test_data_set_2", dir_ / "test_data_set_3");
  StatusOr<std::vector<DataSet>> sets = Read();
  ASSERT_FALSE(sets.ok());
  EXPECT_NE(sets.status().message().find("step 2 is test_data_set_3"), std::string::npos) << sets.status().message();
}

}  // namespace
}  // namespace parity
