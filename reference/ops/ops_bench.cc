// The reference's heavy operators at real-model size, against OpenBLAS's own
// dgemm on the same machine (issue 12: "the reference is fast at real size").
// Each operator runs through the Evaluator on a one-node model built here,
// on inputs made once, so the float32 -> double conversion and the final
// rounding are inside the time. FLOP counts are the operator's useful work:
//   MatMul  2*M*N*K
//   Conv    2*N*M*(C/group)*kh*kw*OH*OW
//   causal Attention  4*heads*head_size*(L*(L+1)/2): the unmasked pairs only
// Counters: GFLOP/s (over the wall-clock time of the runs), dgemm_GFLOP/s
// (OpenBLAS's own 2048^3 dgemm on every hardware thread: the rate
// BM_OpenBlasDgemm_2048 printed, which runs first) and dgemm_ratio, their
// quotient.
//   build/parity_bench --benchmark_filter='Reference|Dgemm'
//   PARITY_THREADS=1 build/parity_bench --benchmark_filter=Reference   (one thread)
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reference/core/parallel.h"
#include "reference/model/loader.h"
#include "reference/ops/gemm.h"
#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

using Clock = std::chrono::steady_clock;

int HardwareThreads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// PARITY_THREADS, as the workers read it; unset: one thread per core.
// Returns false, having skipped the benchmark with the reason, when it is
// not a number of threads.
bool ApplyThreadSetting(benchmark::State& state) {
  const char* text = std::getenv("PARITY_THREADS");
  if (!text || !*text) {
    SetThreadCount(0);
    return true;
  }
  char* end = nullptr;
  const long threads = std::strtol(text, &end, 10);
  if (*end != '\0' || threads < 1 || threads > 1024) {
    state.SkipWithError(("PARITY_THREADS='" + std::string(text) + "' is not a number of threads from 1 to 1024").c_str());
    return false;
  }
  SetThreadCount(static_cast<int>(threads));
  return true;
}

// Values in [-1, 1), from a fixed seed so every run times the same data.
Tensor RandomFloats(Shape shape, uint64_t seed) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, std::move(shape));
  if (!t.ok()) return Tensor();
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  float* data = t->mutable_data<float>();
  for (int64_t i = 0; i < t->size(); ++i) data[i] = uniform(engine);
  return std::move(t).value();
}

// --- OpenBLAS's own rate: the ceiling the reference's double GEMM can reach. ----

constexpr int kDgemmSize = 2048;

// One 2048^3 dgemm with OpenBLAS on every hardware thread; seconds. The
// reference keeps OpenBLAS at one thread (gemm.cc), so the setting goes
// back to 1 before any reference benchmark runs again.
double TimedDgemm(const std::vector<double>& a, const std::vector<double>& b, std::vector<double>& c) {
  openblas_set_num_threads(HardwareThreads());
  const auto start = Clock::now();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kDgemmSize, kDgemmSize, kDgemmSize, 1.0, a.data(), kDgemmSize,
              b.data(), kDgemmSize, 0.0, c.data(), kDgemmSize);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ops::UseOneBlasThreadNow();  // the reference's setting, its idle threads stopped
  return seconds;
}

double DgemmFlops() { return 2.0 * kDgemmSize * kDgemmSize * kDgemmSize; }

struct DgemmOperands {
  std::vector<double> a, b, c;
  DgemmOperands() : a(size_t{kDgemmSize} * kDgemmSize), b(a.size()), c(a.size()) {
    std::mt19937_64 engine(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double& v : a) v = uniform(engine);
    for (double& v : b) v = uniform(engine);
  }
};

// The dgemm rate the ratios divide by, GFLOP/s: the one BM_OpenBlasDgemm_2048
// printed in this process, or, when a filter left it out, three calls after
// a warm-up measured the same way (total FLOPs over total seconds).
std::optional<double>& DgemmRate() {
  static std::optional<double> rate;
  return rate;
}

double DgemmGflops() {
  if (!DgemmRate()) {
    DgemmOperands m;
    TimedDgemm(m.a, m.b, m.c);
    double seconds = 0;
    for (int i = 0; i < 3; ++i) seconds += TimedDgemm(m.a, m.b, m.c);
    DgemmRate() = 3 * DgemmFlops() / seconds / 1e9;
  }
  return *DgemmRate();
}

void BM_OpenBlasDgemm_2048(benchmark::State& state) {
  DgemmOperands m;
  double seconds = 0;
  for (auto _ : state) {
    const double call = TimedDgemm(m.a, m.b, m.c);
    seconds += call;
    state.SetIterationTime(call);
    benchmark::DoNotOptimize(m.c.data());
  }
  DgemmRate() = DgemmFlops() * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["GFLOP/s"] = *DgemmRate();
  state.counters["blas_threads"] = HardwareThreads();
  state.SetLabel(ops::BlasDescription());
}

// --- The reference on one-node models. ------------------------------------------

// A one-node model loaded into an Evaluator, with its inputs.
struct OneNodeRun {
  std::unique_ptr<Evaluator> evaluator;
  std::vector<Value> inputs;
  std::string error;  // why it could not be built; empty when it was
};

// `inputs` share their buffers with those given to `runner` (copies of a
// Tensor are views), so each input is made once.
OneNodeRun Prepare(const NodeRunner& runner, const std::vector<Tensor>& inputs, const std::string& name) {
  OneNodeRun run;
  for (const Tensor& t : inputs) {
    if (!t.defined()) {
      run.error = name + ": an input could not be allocated";
      return run;
    }
    run.inputs.push_back(Value::FromTensor(t));
  }
  StatusOr<LoadedModel> loaded = LoadModelBytes(runner.Model().SerializeAsString(), name);
  if (!loaded.ok()) {
    run.error = loaded.status().ToString();
    return run;
  }
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(*loaded, WithReferenceKernels());
  if (!evaluator.ok()) {
    run.error = evaluator.status().ToString();
    return run;
  }
  run.evaluator = std::move(evaluator).value();
  return run;
}

// Times Evaluator::Run on `run` and sets the counters; `flops` per run.
void TimeReference(benchmark::State& state, const OneNodeRun& run, double flops) {
  if (!run.error.empty()) {
    state.SkipWithError(run.error.c_str());
    return;
  }
  double seconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    StatusOr<std::vector<Value>> outputs = run.evaluator->Run(run.inputs);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (!outputs.ok()) {
      state.SkipWithError(outputs.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(outputs->data());
  }
  const double gflops = flops * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["GFLOP/s"] = gflops;
  state.counters["dgemm_GFLOP/s"] = DgemmGflops();
  state.counters["dgemm_ratio"] = gflops / DgemmGflops();
  state.counters["threads"] = ThreadCount();
}

// Each model and its inputs are built once per benchmark run, outside the
// timed loop, and so is the dgemm rate when it is not known yet. Opset 23
// for all three, as in cases/real_size/.
void BM_ReferenceMatMul_1024(benchmark::State& state) {
  if (!ApplyThreadSetting(state)) return;
  DgemmGflops();
  constexpr int64_t n = 1024;
  const std::vector<Tensor> inputs = {RandomFloats({n, n}, 1), RandomFloats({n, n}, 2)};
  NodeRunner runner("MatMul");
  runner.Opset(23).Input(inputs[0]).Input(inputs[1]);
  const OneNodeRun run = Prepare(runner, inputs, "matmul_1024");
  TimeReference(state, run, 2.0 * n * n * n);
}

void BM_ReferenceConv_64x112x112_128x3x3(benchmark::State& state) {
  if (!ApplyThreadSetting(state)) return;
  DgemmGflops();
  const Shape x = {1, 64, 112, 112}, w = {128, 64, 3, 3};
  const std::vector<Tensor> inputs = {RandomFloats(x, 3), RandomFloats(w, 4)};
  NodeRunner runner("Conv");
  runner.Opset(23).Input(inputs[0]).Input(inputs[1]).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  const OneNodeRun run = Prepare(runner, inputs, "conv_64x112x112_128x3x3");
  // Stride 1, pads 1, 3x3: the output is 112 x 112.
  const double out_h = 112, out_w = 112;
  TimeReference(state, run, 2.0 * 1 * 128 * 64 * 3 * 3 * out_h * out_w);
}

void BM_ReferenceCausalAttention_32x1024x128(benchmark::State& state) {
  if (!ApplyThreadSetting(state)) return;
  DgemmGflops();
  constexpr int64_t heads = 32, length = 1024, head_size = 128;
  const Shape qkv = {1, heads, length, head_size};
  const std::vector<Tensor> inputs = {RandomFloats(qkv, 5), RandomFloats(qkv, 6), RandomFloats(qkv, 7)};
  NodeRunner runner("Attention");
  runner.Opset(23).Input(inputs[0]).Input(inputs[1]).Input(inputs[2]).Attr("is_causal", int64_t{1});
  const OneNodeRun run = Prepare(runner, inputs, "causal_attention_32x1024x128");
  // Q K^T and P V over the pairs (i, j <= i) only: 2 + 2 FLOPs per pair and unit of head_size.
  const double pairs = static_cast<double>(length) * (length + 1) / 2;
  TimeReference(state, run, 4.0 * heads * head_size * pairs);
}

BENCHMARK(BM_OpenBlasDgemm_2048)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceMatMul_1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceConv_64x112x112_128x3x3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReferenceCausalAttention_32x1024x128)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace parity
