// Tests of stateful sessions through parity-worker (Run.keep, return_kept,
// spec/protocol/parity_worker.proto): the same steps with an adapter that
// keeps the state (ABI v2 bind_state/read_state) and with ones whose state
// the worker carries (a version-1 table, null slots), the refusals, the
// per-run memory fields, and the faults and in-place mode around them.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "harness/worker/worker_test_util.h"
#include "spec/abi/parity_adapter.h"

namespace parity::worker {
namespace {

using namespace test_util;  // NOLINT: the helpers are the vocabulary of these tests

using Bindings = std::vector<std::pair<std::string, std::string>>;
const Bindings kSumToAcc = {{"sum", "acc"}};

// A run of AccumulateModel: `acc` only when given (non-empty), `x` always.
Request RunAccumulate(uint64_t session_id, const std::vector<float>& x, const Bindings& keep = kSumToAcc,
                      const std::vector<float>& acc = {}, bool return_kept = true) {
  Request r;
  protocol::Run* run = r.mutable_run();
  run->set_session_id(session_id);
  if (!acc.empty()) {
    protocol::Value* v = run->add_inputs();
    v->set_name("acc");
    *v->mutable_tensor() = Floats("acc", acc);
  }
  protocol::Value* v = run->add_inputs();
  v->set_name("x");
  *v->mutable_tensor() = Floats("x", x);
  for (const auto& [output, input] : keep) {
    protocol::StateBinding* b = run->add_keep();
    b->set_output(output);
    b->set_input(input);
  }
  run->set_return_kept(return_kept);
  return r;
}

std::vector<std::string> OutputNames(const Response& r) {
  std::vector<std::string> names;
  for (const auto& v : r.run().outputs()) names.push_back(v.name());
  return names;
}

std::vector<float> Output(const Response& r, const std::string& name) {
  for (const auto& v : r.run().outputs()) {
    if (v.name() == name) return ReadFloats(v.tensor());
  }
  ADD_FAILURE() << "no output '" << name << "'";
  return {};
}

uint64_t CreateOrFail(WorkerProcess& worker, const std::string& model, const std::string& case_name = "test_state") {
  const Response created = worker.Call(Create(model, case_name));
  EXPECT_FALSE(Failed(created)) << created.status().message() << "\n" << worker.Stderr();
  return created.session().session_id();
}

// Who keeps the state: the adapter (bind_state) or the worker.
struct StateHolder {
  const char* name;
  const char* adapter;
  std::vector<std::string> env;
  uint32_t abi_version;
};

class StatefulHoldersTest : public ::testing::TestWithParam<StateHolder> {};

// Three steps by hand: acc starts at {1,-5,3}; x adds {1,1,1}, {1,1,1}, {-10,0,0}.
TEST_P(StatefulHoldersTest, CarriesTheBoundOutputIntoTheNextRun) {
  const StateHolder& holder = GetParam();
  WorkerProcess worker(AdapterPath(holder.adapter), "", holder.env);
  const Response hello = worker.Call(Hello());
  ASSERT_FALSE(Failed(hello)) << worker.Stderr();
  EXPECT_EQ(hello.info().abi_version(), holder.abi_version);
  const uint64_t id = CreateOrFail(worker, AccumulateModel());

  const Response step0 = worker.Call(RunAccumulate(id, {1, 1, 1}, kSumToAcc, {1, -5, 3}));
  ASSERT_FALSE(Failed(step0)) << step0.status().message() << "\n" << worker.Stderr();
  // Unbound outputs in graph order, then the kept ones named after their outputs.
  EXPECT_EQ(OutputNames(step0), (std::vector<std::string>{"relu", "sum"}));
  EXPECT_EQ(Output(step0, "relu"), (std::vector<float>{2, 0, 4}));
  EXPECT_EQ(Output(step0, "sum"), (std::vector<float>{2, -4, 4}));

  // Later steps leave acc out; without return_kept only relu comes back.
  const Response step1 = worker.Call(RunAccumulate(id, {1, 1, 1}, kSumToAcc, {}, /*return_kept=*/false));
  ASSERT_FALSE(Failed(step1)) << step1.status().message() << "\n" << worker.Stderr();
  EXPECT_EQ(OutputNames(step1), (std::vector<std::string>{"relu"}));
  EXPECT_EQ(Output(step1, "relu"), (std::vector<float>{3, 0, 5}));

  const Response step2 = worker.Call(RunAccumulate(id, {-10, 0, 0}));
  ASSERT_FALSE(Failed(step2)) << step2.status().message();
  EXPECT_EQ(Output(step2, "relu"), (std::vector<float>{0, 0, 5}));
  EXPECT_EQ(Output(step2, "sum"), (std::vector<float>{-7, -3, 5}));

  // An input sent anyway replaces the kept value: sum restarts from {0,0,0}.
  const Response restart = worker.Call(RunAccumulate(id, {4, 5, 6}, kSumToAcc, {0, 0, 0}));
  ASSERT_FALSE(Failed(restart)) << restart.status().message();
  EXPECT_EQ(Output(restart, "sum"), (std::vector<float>{4, 5, 6}));
  const Response after = worker.Call(RunAccumulate(id, {1, 1, 1}));
  EXPECT_EQ(Output(after, "sum"), (std::vector<float>{5, 6, 7}));

  // A second session of the same worker keeps its own state.
  const uint64_t other = CreateOrFail(worker, AccumulateModel());
  const Response fresh = worker.Call(RunAccumulate(other, {1, 1, 1}, kSumToAcc, {10, 10, 10}));
  EXPECT_EQ(Output(fresh, "sum"), (std::vector<float>{11, 11, 11}));
  EXPECT_EQ(Output(worker.Call(RunAccumulate(id, {0, 0, 0})), "sum"), (std::vector<float>{5, 6, 7}));
  EXPECT_FALSE(Failed(worker.Call(Shutdown())));
  EXPECT_TRUE(ExitedWith(worker.Wait(), 0)) << worker.Stderr();
}

INSTANTIATE_TEST_SUITE_P(
    Holders, StatefulHoldersTest,
    ::testing::Values(StateHolder{"AdapterBindState", "reference", {}, PARITY_ABI_VERSION},
                      // bind_state and read_state poisoned beyond struct_size: reading them would crash.
                      StateHolder{"WorkerForVersionOneTable", "fault_injection", {"PARITY_FAULTS_ABI=1"}, 1},
                      StateHolder{"WorkerForNullSlots", "template", {}, PARITY_ABI_VERSION}),
    [](const ::testing::TestParamInfo<StateHolder>& info) { return std::string(info.param.name); });

TEST(StatefulRunTest, RefusesBindingsThatChangeOrClash) {
  WorkerProcess worker(AdapterPath("reference"));
  const uint64_t id = CreateOrFail(worker, AccumulateModel());

  const Response twice = worker.Call(RunAccumulate(id, {1, 1, 1}, {{"sum", "acc"}, {"relu", "acc"}}, {0, 0, 0}));
  EXPECT_EQ(twice.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(twice.status().message().find("'acc' is bound twice"), std::string::npos) << twice.status().message();
  const Response unnamed = worker.Call(RunAccumulate(id, {1, 1, 1}, {{"sum", ""}}, {0, 0, 0}));
  EXPECT_EQ(unnamed.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(unnamed.status().message().find("must name both"), std::string::npos) << unnamed.status().message();
  // The adapter's bind_state names what the graph lacks.
  const Response absent = worker.Call(RunAccumulate(id, {1, 1, 1}, {{"nope", "acc"}}, {0, 0, 0}));
  EXPECT_EQ(absent.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(absent.status().message().find("'nope'"), std::string::npos) << absent.status().message();

  // None of those made the session stateful: this run does (bind_state,
  // called once already, is not called again: the worker keeps the state).
  ASSERT_FALSE(Failed(worker.Call(RunAccumulate(id, {1, 1, 1}, kSumToAcc, {1, 2, 3}))));
  const Response none = worker.Call(RunAccumulate(id, {1, 1, 1}, {}));
  EXPECT_EQ(none.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(none.status().message().find("this one names none"), std::string::npos) << none.status().message();
  const Response other = worker.Call(RunAccumulate(id, {1, 1, 1}, {{"relu", "acc"}}));
  EXPECT_EQ(other.status().code(), protocol::INVALID_ARGUMENT);
  const std::string& message = other.status().message();
  EXPECT_NE(message.find("leaves out 'sum'->'acc'"), std::string::npos) << message;
  EXPECT_NE(message.find("adds 'relu'->'acc'"), std::string::npos) << message;
  // Refused runs leave the state as it was: {1,2,3} + {1,1,1}, then + {1,1,1}.
  const Response next = worker.Call(RunAccumulate(id, {1, 1, 1}));
  ASSERT_FALSE(Failed(next)) << next.status().message();
  EXPECT_EQ(Output(next, "sum"), (std::vector<float>{3, 4, 5}));
}

TEST(StatefulRunTest, WorkerCarryingStateNamesABoundOutputTheRunLacks) {
  WorkerProcess worker(AdapterPath("template"));
  const uint64_t id = CreateOrFail(worker, AccumulateModel());
  const Response absent = worker.Call(RunAccumulate(id, {1, 1, 1}, {{"nope", "acc"}}, {0, 0, 0}));
  EXPECT_EQ(absent.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_NE(absent.status().message().find("no output 'nope'"), std::string::npos) << absent.status().message();
}

TEST(StatefulRunTest, SessionThatRanBeforeBindingIsCarriedByTheWorker) {
  // bind_state may only come before an adapter's first run; the worker
  // carries the values of a session that becomes stateful later.
  WorkerProcess worker(AdapterPath("reference"));
  const uint64_t id = CreateOrFail(worker, AccumulateModel());
  ASSERT_FALSE(Failed(worker.Call(RunAccumulate(id, {1, 1, 1}, {}, {0, 0, 0}))));
  const Response bound = worker.Call(RunAccumulate(id, {1, 1, 1}, kSumToAcc, {5, 5, 5}));
  ASSERT_FALSE(Failed(bound)) << bound.status().message();
  const Response carried = worker.Call(RunAccumulate(id, {1, 2, 3}));
  ASSERT_FALSE(Failed(carried)) << carried.status().message();
  EXPECT_EQ(Output(carried, "sum"), (std::vector<float>{7, 8, 9}));
}

TEST(StatefulRunTest, EveryRunReportsItsMemory) {
  WorkerProcess worker(AdapterPath("reference"));
  const uint64_t id = CreateOrFail(worker, AccumulateModel());
  for (const Bindings& keep : {Bindings{}, kSumToAcc}) {
    const Response ran = worker.Call(RunAccumulate(id, {1, 1, 1}, keep, {0, 0, 0}));
    ASSERT_FALSE(Failed(ran)) << ran.status().message();
    ASSERT_TRUE(ran.run().has_rss_kb());
    EXPECT_GT(ran.run().rss_kb(), 0u);
    // The high-water mark is reset just before the run, and read with the
    // resident size after it: never below it, and never above the worker's
    // peak over its whole life, which the resets must not lower.
    ASSERT_TRUE(ran.run().has_run_peak_rss_kb()) << "this kernel allows writing /proc/self/clear_refs";
    EXPECT_GE(ran.run().run_peak_rss_kb(), ran.run().rss_kb());
    EXPECT_LE(ran.run().run_peak_rss_kb(), ran.peak_rss_kb());
  }
}

TEST(StatefulRunTest, RunPeakSeesMemoryFreedBeforeTheRunReturned) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer's allocator keeps freed memory resident";
  // relu = Relu(x) over 8 Mi floats: the adapter's parsed input and its
  // intermediate copies (32 MiB each) are freed before run returns, so this
  // run's peak lies well above the resident size after it.
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("big_relu");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("y");
  auto vector_of_n = [](onnx::ValueInfoProto* info, const char* name) {
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    info->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("n");
  };
  vector_of_n(graph->add_input(), "x");
  vector_of_n(graph->add_output(), "y");
  WorkerProcess worker(AdapterPath("reference"));
  const uint64_t id = CreateOrFail(worker, model.SerializeAsString());
  Request r;
  r.mutable_run()->set_session_id(id);
  protocol::Value* x = r.mutable_run()->add_inputs();
  x->set_name("x");
  *x->mutable_tensor() = Floats("x", std::vector<float>(size_t{8} << 20, 1.0f));
  const Response ran = worker.Call(r);
  ASSERT_FALSE(Failed(ran)) << ran.status().message();
  ASSERT_TRUE(ran.run().has_run_peak_rss_kb());
  EXPECT_GE(ran.run().run_peak_rss_kb(), ran.run().rss_kb() + 16 * 1024)
      << "rss after the run: " << ran.run().rss_kb() << " KiB";
  // A later, small run resets the mark again; the worker's peak keeps the big one.
  Request tiny = r;
  *tiny.mutable_run()->mutable_inputs(0)->mutable_tensor() = Floats("x", {1, 2});
  const Response after = worker.Call(tiny);
  ASSERT_FALSE(Failed(after)) << after.status().message();
  EXPECT_LT(after.run().run_peak_rss_kb(), ran.run().run_peak_rss_kb());
  EXPECT_GE(after.peak_rss_kb(), ran.run().run_peak_rss_kb());
}

TEST(StatefulRunTest, CorruptStateFaultBreaksTheThirdStepOnly) {
  WorkerProcess worker(AdapterPath("fault_injection"), "test_corrupt*=corrupt_state");
  Request caps_request;
  caps_request.mutable_get_capabilities();
  EXPECT_TRUE(worker.Call(caps_request).capabilities().honours_aliasing());
  const uint64_t id = CreateOrFail(worker, AccumulateModel(), "test_corrupt_cache");
  const Response step0 = worker.Call(RunAccumulate(id, {1, 1, 1}, kSumToAcc, {1, -5, 3}));
  const Response step1 = worker.Call(RunAccumulate(id, {1, 1, 1}));
  ASSERT_FALSE(Failed(step1)) << step1.status().message();
  EXPECT_EQ(Output(step0, "sum"), (std::vector<float>{2, -4, 4}));
  EXPECT_EQ(Output(step1, "sum"), (std::vector<float>{3, -3, 5}));
  const Response step2 = worker.Call(RunAccumulate(id, {-10, 0, 0}));
  ASSERT_FALSE(Failed(step2)) << step2.status().message();
  const std::vector<float> sum = Output(step2, "sum");
  ASSERT_EQ(sum.size(), 3u);
  EXPECT_NE(sum[0], -7.0f);  // element 0 of the kept {3,-3,5} was changed before the run
  EXPECT_EQ(sum[1], -3.0f);
  EXPECT_EQ(sum[2], 5.0f);
  EXPECT_NE(worker.Stderr().find("changed element 0 of the state kept for 'acc'"), std::string::npos)
      << worker.Stderr();

  // Without the fault named, the adapter declares no aliasing.
  WorkerProcess plain(AdapterPath("fault_injection"));
  EXPECT_FALSE(plain.Call(caps_request).capabilities().honours_aliasing());
}

TEST(InPlaceAdapterTest, DeclaresAliasingAndRefusesInvalidAnnotationsNamingTheRule) {
  WorkerProcess worker(AdapterPath("reference_inplace"));
  const Response hello = worker.Call(Hello());
  EXPECT_EQ(hello.info().name(), "reference_inplace");
  Request caps_request;
  caps_request.mutable_get_capabilities();
  EXPECT_TRUE(worker.Call(caps_request).capabilities().honours_aliasing());

  const Response names = worker.Call(Create(AccumulateModel("input=no_such_input")));
  EXPECT_EQ(names.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_EQ(names.status().message().rfind("ALIAS-NAMES", 0), 0u) << names.status().message();
  const Response key = worker.Call(Create(AccumulateModel("input=acc;mode=sometimes")));
  EXPECT_EQ(key.status().code(), protocol::INVALID_ARGUMENT);
  EXPECT_EQ(key.status().message().rfind("ALIAS-KEY", 0), 0u) << key.status().message();

  // The functional reference ignores annotations, valid or not.
  WorkerProcess functional(AdapterPath("reference"));
  EXPECT_FALSE(functional.Call(caps_request).capabilities().honours_aliasing());
  EXPECT_FALSE(Failed(functional.Call(Create(AccumulateModel("input=no_such_input")))));
}

// The cache steps of ScatterCacheModel: row `step` of the cache gets {step+1, -(step+1)}.
Request RunScatter(uint64_t session_id, int step) {
  Request r;
  protocol::Run* run = r.mutable_run();
  run->set_session_id(session_id);
  if (step == 0) {
    protocol::Value* past = run->add_inputs();
    past->set_name("past");
    onnx::TensorProto cache = Floats("past", std::vector<float>(8, 0.5f));
    cache.clear_dims();
    for (int64_t d : {1, 4, 2}) cache.add_dims(d);
    *past->mutable_tensor() = cache;
  }
  protocol::Value* update = run->add_inputs();
  update->set_name("update");
  onnx::TensorProto row = Floats("update", {static_cast<float>(step + 1), -static_cast<float>(step + 1) * 3});
  row.clear_dims();
  for (int64_t d : {1, 1, 2}) row.add_dims(d);
  *update->mutable_tensor() = row;
  protocol::Value* index = run->add_inputs();
  index->set_name("index");
  index->mutable_tensor()->set_data_type(onnx::TensorProto::INT64);
  index->mutable_tensor()->add_dims(1);
  index->mutable_tensor()->add_int64_data(step);
  protocol::StateBinding* keep = run->add_keep();
  keep->set_output("present");
  keep->set_input("past");
  return r;
}

TEST(InPlaceAdapterTest, CacheStepsEqualTheFunctionalReference) {
  const std::string model = ScatterCacheModel().SerializeAsString();
  WorkerProcess in_place(AdapterPath("reference_inplace"));
  WorkerProcess functional(AdapterPath("reference"));
  const uint64_t a = CreateOrFail(in_place, model);
  const uint64_t b = CreateOrFail(functional, model);
  // The cache by hand: 0.5 everywhere, then row s = {s+1, -3(s+1)}.
  std::vector<float> cache(8, 0.5f);
  for (int step = 0; step < 4; ++step) {
    const Response x = in_place.Call(RunScatter(a, step));
    const Response y = functional.Call(RunScatter(b, step));
    ASSERT_FALSE(Failed(x)) << x.status().message() << "\n" << in_place.Stderr();
    ASSERT_FALSE(Failed(y)) << y.status().message();
    cache[static_cast<size_t>(2 * step)] = static_cast<float>(step + 1);
    cache[static_cast<size_t>(2 * step + 1)] = -3.0f * static_cast<float>(step + 1);
    float total = 0;
    for (float v : cache) total += v;
    EXPECT_EQ(Output(x, "present"), cache) << "step " << step;
    EXPECT_EQ(Output(x, "total"), (std::vector<float>{total})) << "step " << step;
    EXPECT_EQ(x.run().outputs(0).tensor().SerializeAsString(), y.run().outputs(0).tensor().SerializeAsString());
    EXPECT_EQ(x.run().outputs(1).tensor().SerializeAsString(), y.run().outputs(1).tensor().SerializeAsString());
  }
}

}  // namespace
}  // namespace parity::worker
