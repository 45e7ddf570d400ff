// Conv and ConvTranspose at the size of a real model's layer, and where the
// time of the GEMM form goes: conversion to double, im2col, the GEMM, and
// the rounding into the output. Reports GFLOP/s (2 flops a multiply-add).
//   build/parity_bench --benchmark_filter=Conv
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include "reference/core/parallel.h"
#include "reference/ops/gemm.h"
#include "reference/ops/common.h"
#include "reference/ops/nn/conv_gemm.h"
#include "reference/ops/nn/im2col.h"
#include "reference/ops/node_runner.h"

namespace parity::ops::nn {
namespace {

Tensor RandomFloats(Shape shape, double scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t->size(); ++i) t->SetDouble(i, normal(rng));
  return std::move(t).value();
}

// X [1, 64, 112, 112], W [128, 64, 3, 3], pads 1: a ResNet-style layer.
constexpr int64_t kC = 64, kM = 128, kSide = 112, kK = 3;
constexpr double kConvFlops = 2.0 * kM * kC * kK * kK * kSide * kSide;

void RunNode(benchmark::State& state, const NodeRunner& runner, double flops) {
  SetThreadCount(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    StatusOr<Tensor> y = runner.RunOne();
    if (!y.ok()) state.SkipWithError(y.status().ToString().c_str());
    benchmark::DoNotOptimize(y);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  SetThreadCount(0);
}

void BM_Conv(benchmark::State& state) {
  NodeRunner runner("Conv");
  runner.Opset(22)
      .Input(RandomFloats({1, kC, kSide, kSide}, 1.0, 1))
      .Input(RandomFloats({kM, kC, kK, kK}, 0.1, 2))
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  RunNode(state, runner, kConvFlops);
}
BENCHMARK(BM_Conv)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// X [1, 128, 56, 56] -> [1, 64, 112, 112] with a 4x4 kernel, stride 2, pads 1.
void BM_ConvTranspose(benchmark::State& state) {
  NodeRunner runner("ConvTranspose");
  runner.Opset(22)
      .Input(RandomFloats({1, 128, 56, 56}, 1.0, 1))
      .Input(RandomFloats({128, 64, 4, 4}, 0.1, 2))
      .Attr("strides", std::vector<int64_t>{2, 2})
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  RunNode(state, runner, 2.0 * 128 * 64 * 16 * 56 * 56);
}
BENCHMARK(BM_ConvTranspose)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The phases of BM_Conv on one thread, block after block as its tasks do.
void BM_ConvPhases(benchmark::State& state) {
  SetThreadCount(1);
  const Tensor x = RandomFloats({1, kC, kSide, kSide}, 1.0, 1);
  const Tensor w = RandomFloats({kM, kC, kK, kK}, 0.1, 2);
  const std::vector<double> wv = w.ToDoubles();
  Window win{{kSide, kSide}, {kK, kK}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {kSide, kSide}};
  const WindowMap map = WindowMap::ForConv(win);
  const int64_t rows = kC * kK * kK, positions = kSide * kSide;
  const int64_t block = BlockPositions(positions, rows);
  std::vector<double> cols(static_cast<size_t>(rows * block)), out(static_cast<size_t>(kM * block));
  StatusOr<Tensor> y = Tensor::Create(DataType::kFloat, {1, kM, kSide, kSide});
  double convert = 0, im2col = 0, gemm = 0, write = 0;
  auto seconds = [](auto start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (auto _ : state) {
    auto t = std::chrono::steady_clock::now();
    DoubleBuffer xd = ReadAllDoubles(x);
    convert += seconds(t);
    for (int64_t begin = 0; begin < positions; begin += block) {
      const int64_t count = std::min(block, positions - begin);
      t = std::chrono::steady_clock::now();
      Im2Col(map, BlockSegments(map, begin, begin + count), xd.get(), kC, count, cols.data());
      im2col += seconds(t);
      t = std::chrono::steady_clock::now();
      GemmDoubleSerial(kM, count, rows, {wv.data(), rows, false}, {cols.data(), count, false}, out.data(), count);
      gemm += seconds(t);
      t = std::chrono::steady_clock::now();
      for (int64_t m = 0; m < kM; ++m) y->WriteDoubles(m * positions + begin, count, out.data() + m * count);
      write += seconds(t);
    }
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["block"] = static_cast<double>(block);
  state.counters["convert_ms"] = convert / n * 1e3;
  state.counters["im2col_ms"] = im2col / n * 1e3;
  state.counters["gemm_ms"] = gemm / n * 1e3;
  state.counters["write_ms"] = write / n * 1e3;
  state.counters["gemm_GFLOP/s"] = kConvFlops * n / gemm * 1e-9;
  SetThreadCount(0);
}
BENCHMARK(BM_ConvPhases)->Unit(benchmark::kMillisecond)->UseRealTime();

// The BLAS alone on the whole product of BM_Conv, for comparison.
void BM_ConvEquivalentGemm(benchmark::State& state) {
  SetThreadCount(static_cast<int>(state.range(0)));
  const int64_t rows = kC * kK * kK, positions = kSide * kSide;
  std::vector<double> a(static_cast<size_t>(kM * rows), 0.5), b(static_cast<size_t>(rows * positions), 0.25);
  std::vector<double> c(static_cast<size_t>(kM * positions));
  for (auto _ : state) {
    GemmDouble(kM, positions, rows, {a.data(), rows, false}, {b.data(), positions, false}, c.data(), positions);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(kConvFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  SetThreadCount(0);
}
BENCHMARK(BM_ConvEquivalentGemm)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace parity::ops::nn
