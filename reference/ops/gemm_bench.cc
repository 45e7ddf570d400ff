// GemmDouble against one cblas_dgemm call of the same product, both in
// double on data made once: what the fixed tiles (and the scan for special
// values) cost next to OpenBLAS splitting the call itself.
//   build/parity_bench --benchmark_filter=Gemm
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <random>
#include <thread>
#include <vector>

#include "reference/core/parallel.h"
#include "reference/ops/gemm.h"

namespace parity::ops {
namespace {

std::vector<double> RandomDoubles(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = uniform(engine);
  return v;
}

void SetFlops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// args: n, threads
void BM_GemmDouble(benchmark::State& state) {
  const int64_t n = state.range(0);
  SetThreadCount(static_cast<int>(state.range(1)));
  const std::vector<double> a = RandomDoubles(n * n, 1), b = RandomDoubles(n * n, 2);
  std::vector<double> c(static_cast<size_t>(n * n));
  for (auto _ : state) {
    GemmDouble(n, n, n, {a.data(), n, false}, {b.data(), n, false}, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, n);
  SetThreadCount(0);
}
BENCHMARK(BM_GemmDouble)->Args({1024, 1})->Args({1024, 2})->Args({2048, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

// The conventional arithmetic's product (float32 steps, k in order), args:
// n, threads. Before GemmInOrder the same sums took a GetDouble per operand.
void BM_GemmInOrder(benchmark::State& state) {
  const int64_t n = state.range(0);
  SetThreadCount(static_cast<int>(state.range(1)));
  const std::vector<double> a = RandomDoubles(n * n, 1), b = RandomDoubles(n * n, 2);
  std::vector<double> c(static_cast<size_t>(n * n));
  for (auto _ : state) {
    GemmInOrder(n, n, n, {a.data(), n, false}, {b.data(), n, false}, c.data(), n, true);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, n);
  SetThreadCount(0);
}
BENCHMARK(BM_GemmInOrder)->Args({1024, 1})->Args({1024, 2})->UseRealTime()->Unit(benchmark::kMillisecond);

// args: n, OpenBLAS threads
void BM_OpenBlasDgemmOneCall(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  openblas_set_num_threads(static_cast<int>(state.range(1)));
  const std::vector<double> a = RandomDoubles(int64_t{n} * n, 1), b = RandomDoubles(int64_t{n} * n, 2);
  std::vector<double> c(static_cast<size_t>(n) * n);
  for (auto _ : state) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  UseOneBlasThreadNow();  // the reference's setting (gemm.h)
  SetFlops(state, n);
}
BENCHMARK(BM_OpenBlasDgemmOneCall)
    ->Args({1024, 1})
    ->Args({1024, 2})
    ->Args({2048, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace parity::ops
