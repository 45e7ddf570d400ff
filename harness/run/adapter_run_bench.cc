// One adapter's `run` in a loop, in this process: the time a step of a small
// model takes in the adapter itself, without the worker's process switches,
// protocol and comparisons around it (`parity run` times the same call
// inside its worker: spec/protocol/README.md, "Timings").
//   build/parity_bench --benchmark_filter=AdapterRun
// PARITY_BENCH_ADAPTER names the adapter library (default: the oneDNN
// adapter in build/adapters) and PARITY_BENCH_CASES the case folders,
// separated by ':' (default: the two exported decoders of cases/models);
// paths are taken from the current folder. Each case runs its
// test_data_set_0 with the thread count of PARITY_THREADS.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "spec/abi/parity_adapter.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

bool ReadFile(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  *out = bytes.str();
  return true;
}

// The adapter's table, or null with `error` set.
const parity_adapter_api* LoadAdapter(const std::string& path, std::string* error) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept for the process's life
  if (!library) {
    *error = "cannot load " + path + ": " + dlerror();
    return nullptr;
  }
  auto query = reinterpret_cast<parity_adapter_query_fn>(dlsym(library, "parity_adapter_query"));
  const parity_adapter_api* api = query ? query(PARITY_ABI_VERSION) : nullptr;
  if (!api) *error = path + " exports no usable parity_adapter_query";
  return api;
}

void BM_AdapterRun(benchmark::State& state, const std::string& case_dir) {
  std::string error;
  const parity_adapter_api* api =
      LoadAdapter(EnvOr("PARITY_BENCH_ADAPTER", "build/adapters/libparity_adapter_onednn.so"), &error);
  if (!api) return state.SkipWithError(error.c_str());
  std::string model_bytes;
  onnx::ModelProto model;
  if (!ReadFile(fs::path(case_dir) / "model.onnx", &model_bytes) || !model.ParseFromString(model_bytes)) {
    return state.SkipWithError(("cannot read " + case_dir + "/model.onnx").c_str());
  }
  // input_K.pb feeds the graph's K-th input that is not an initializer.
  std::vector<std::string> names, bytes;
  for (const auto& input : model.graph().input()) {
    bool initializer = false;
    for (const auto& init : model.graph().initializer()) initializer |= init.name() == input.name();
    if (initializer) continue;
    const fs::path file = fs::path(case_dir) / "test_data_set_0" / ("input_" + std::to_string(names.size()) + ".pb");
    std::string data;
    if (!ReadFile(file, &data)) break;
    names.push_back(input.name());
    bytes.push_back(std::move(data));
  }
  std::vector<parity_value> inputs;
  for (size_t i = 0; i < names.size(); ++i) {
    inputs.push_back({names[i].c_str(), PARITY_VALUE_TENSOR, bytes[i].data(), bytes[i].size()});
  }
  parity_session_options options{};
  options.device = "cpu";
  options.allow_fallback = 1;
  parity_session* session = nullptr;
  if (parity_status* status = api->create_session(model_bytes.data(), model_bytes.size(), &options, &session,
                                                  nullptr)) {
    error = std::string("create_session: ") + api->status_message(status);
    api->release_status(status);
    return state.SkipWithError(error.c_str());
  }
  for (auto _ : state) {
    const parity_value* outputs = nullptr;
    size_t count = 0;
    if (parity_status* status = api->run(session, inputs.data(), inputs.size(), &outputs, &count)) {
      error = std::string("run: ") + api->status_message(status);
      api->release_status(status);
      state.SkipWithError(error.c_str());
      break;
    }
    benchmark::DoNotOptimize(outputs);
  }
  api->release_session(session);
}

// The cases are named at start-up, so that each is its own benchmark.
const bool registered = [] {
  std::stringstream cases(
      EnvOr("PARITY_BENCH_CASES", "cases/models/llama_decoder_opset24:cases/models/llama_decode_step_opset23"));
  std::string dir;
  while (std::getline(cases, dir, ':')) {
    if (dir.empty()) continue;
    benchmark::RegisterBenchmark(("AdapterRun/" + fs::path(dir).filename().string()).c_str(),
                                 [dir](benchmark::State& state) { BM_AdapterRun(state, dir); })
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
}  // namespace parity
