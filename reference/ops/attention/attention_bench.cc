// Cost of one Attention node at the size of a real model's layer: float32
// Q, K, V [1, 32, 1024, 128], causal, on 1 and 2 threads. The useful work
// is 4 * 32 * 128 * (1024 * 1025 / 2) = 8.6 GFLOP (QK^T and P V over the
// keys each query sees); `GFLOP/s` reports that rate.
#include <benchmark/benchmark.h>

#include <random>

#include "reference/core/parallel.h"
#include "reference/ops/node_runner.h"

namespace parity {
namespace {

Tensor RandomNormalFloats(Shape shape, uint32_t seed) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, std::move(shape));
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  float* data = t->mutable_data<float>();
  for (int64_t i = 0; i < t->size(); ++i) data[i] = normal(gen);
  return std::move(t).value();
}

void BM_AttentionCausal(benchmark::State& state) {
  const int64_t heads = 32, seq = state.range(0), size = 128;
  SetThreadCount(static_cast<int>(state.range(1)));
  const Tensor q = RandomNormalFloats({1, heads, seq, size}, 1);
  const Tensor k = RandomNormalFloats({1, heads, seq, size}, 2);
  const Tensor v = RandomNormalFloats({1, heads, seq, size}, 3);
  const NodeRunner runner =
      NodeRunner("Attention").Opset(23).Input(q).Input(k).Input(v).Attr("is_causal", int64_t{1});
  for (auto _ : state) {
    StatusOr<Tensor> y = runner.RunOne();
    if (!y.ok()) state.SkipWithError(y.status().ToString().c_str());
    benchmark::DoNotOptimize(y);
  }
  const double flops = 4.0 * heads * size * (seq * (seq + 1) / 2.0);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  SetThreadCount(0);
}
BENCHMARK(BM_AttentionCausal)->Args({1024, 1})->Args({1024, 2})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace parity
