// Harness overhead per case: a trivial model (Identity on one float) through
// a worker hosting the reference adapter, so that nearly all the time
// measured is the harness's and the protocol's, not the backend's.
//   build/parity_bench --benchmark_filter=Harness
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "harness/compare.h"
#include "harness/run/adapter_manifest.h"
#include "harness/run/case_runner.h"
#include "onnx/onnx-ml.pb.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

onnx::ModelProto IdentityModel() {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  auto* graph = model.mutable_graph();
  graph->set_name("identity");
  auto* node = graph->add_node();
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("y");
  for (const char* name : {"x", "y"}) {
    auto* value = std::string(name) == "x" ? graph->add_input() : graph->add_output();
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(1);
  }
  return model;
}

onnx::TensorProto OneFloat(const char* name) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(1);
  t.add_float_data(1.5f);
  return t;
}

WorkerLaunch LaunchOf(const std::string& name) {
  StatusOr<ResolvedAdapter> adapter = ResolveAdapter(name, ExecutableDir());
  if (!adapter.ok()) return {};
  return adapter->launch;
}

// The protocol alone: create a session, run it, release it.
void BM_HarnessProtocolRoundTrip(benchmark::State& state) {
  WorkerSlot slot(LaunchOf("reference"));
  StatusOr<WorkerProcess*> worker = slot.Get(60000);
  if (!worker.ok()) {
    state.SkipWithError(worker.status().ToString().c_str());
    return;
  }
  const std::string model = IdentityModel().SerializeAsString();
  for (auto _ : state) {
    protocol::Request create;
    create.mutable_create_session()->set_model(model);
    StatusOr<protocol::Response> created = (*worker)->Call(create, 10000);
    if (!created.ok() || !created->has_session()) {
      state.SkipWithError("the reference worker did not create a session");
      break;
    }
    protocol::Request run;
    run.mutable_run()->set_session_id(created->session().session_id());
    auto* input = run.mutable_run()->add_inputs();
    input->set_name("x");
    *input->mutable_tensor() = OneFloat("x");
    StatusOr<protocol::Response> ran = (*worker)->Call(run, 10000);
    benchmark::DoNotOptimize(ran);
    protocol::Request release;
    release.mutable_release_session()->set_session_id(created->session().session_id());
    (void)(*worker)->Call(release, 10000);
  }
  slot.Shutdown();
}
BENCHMARK(BM_HarnessProtocolRoundTrip)->Unit(benchmark::kMillisecond);

// A whole case as `parity run` runs it: read the files, create, run, compare.
void HarnessCase(benchmark::State& state, const std::string& adapter) {
  const fs::path dir = fs::temp_directory_path() / "parity-bench-case" / "test_identity_one";
  fs::create_directories(dir / "test_data_set_0");
  std::ofstream(dir / "model.onnx", std::ios::binary) << IdentityModel().SerializeAsString();
  std::ofstream(dir / "test_data_set_0/input_0.pb", std::ios::binary) << OneFloat("x").SerializeAsString();
  std::ofstream(dir / "test_data_set_0/output_0.pb", std::ios::binary) << OneFloat("y").SerializeAsString();
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Load(std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json");
  WorkerSlot slot(LaunchOf(adapter));
  CaseRunSettings settings;
  settings.adapter = adapter;
  settings.device = "cpu";
  settings.warm_repeats = static_cast<int>(state.range(0));
  settings.policy = &*policy;
  CaseInfo info;
  info.dir = dir.string();
  info.name = "test_identity_one";
  info.suite = "bench";
  for (auto _ : state) {
    CaseResult r = RunCase(info, slot, settings);
    if (r.state != CaseState::kPass) {
      state.SkipWithError(r.message.c_str());
      break;
    }
  }
  slot.Shutdown();
  fs::remove_all(dir.parent_path());
}
void BM_HarnessCase(benchmark::State& state) { HarnessCase(state, "reference"); }
BENCHMARK(BM_HarnessCase)->Arg(0)->Arg(3)->ArgName("warm_repeats")->Unit(benchmark::kMillisecond);
// The same through the Python worker module and ONNX Runtime.
void BM_HarnessCaseOnnxRuntime(benchmark::State& state) { HarnessCase(state, "onnxruntime"); }
BENCHMARK(BM_HarnessCaseOnnxRuntime)->Arg(0)->Arg(3)->ArgName("warm_repeats")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace parity
