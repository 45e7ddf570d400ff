// Tests of the GEMM forms of Conv and ConvTranspose (conv_gemm.cc) against
// the direct loops of convolve.h, and of the kernels that choose between
// them (conv.cc, conv_transpose.cc).
//
// The bound: both forms sum the same n = C/group * kernel_size products and
// the bias in double, in different orders (the GEMM may also fuse a product
// into its sum). Each computed sum is within gamma_n * S of the exact one,
// S = sum |x w| + |b| and gamma_n = n u / (1 - n u), u = 2^-53, whatever the
// order; so the two doubles differ by at most 2 gamma_n S. The output, rounded
// once to its type, must lie between the roundings of reference -/+ that.
#include "reference/ops/gemm.h"
#include "reference/ops/nn/conv_gemm.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "reference/core/parallel.h"
#include "reference/ops/nn/convolve.h"
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

// What Conv tells ConvByGemm: neither operand holds an infinity or a NaN.
bool Finite(const std::vector<double>& x, const std::vector<double>& w) {
  return !HoldsSpecialValue(x.data(), static_cast<int64_t>(x.size())) &&
         !HoldsSpecialValue(w.data(), static_cast<int64_t>(w.size()));
}

using testing::I;
using testing::Make;
using testing::RunOk;

struct Problem {
  Shape x_shape;  // [N, C, spatial...]
  int64_t out_per_group = 1;
  int64_t group = 1;
  Window win;     // Conv: input -> output; ConvTranspose: the same, roles swapped
  bool bias = true;
};

std::vector<double> Random(int64_t count, std::mt19937& rng, DataType type) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& e : v) e = u(rng);
  return Make(type, {count}, v).ToDoubles();  // the values as the type holds them
}

std::vector<double> Abs(std::vector<double> v) {
  for (double& e : v) e = std::fabs(e);
  return v;
}

int64_t Count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// y[i] + b[channel of i] for a [N, M, plane] result.
void AddBias(std::vector<double>& y, const std::vector<double>& b, int64_t plane) {
  if (b.empty() || plane == 0) return;
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] += b[static_cast<size_t>(static_cast<int64_t>(i) / plane % static_cast<int64_t>(b.size()))];
  }
}

// How far two sums of the same `terms` terms, in any order, may be apart:
// 2 gamma_n S, where `size` is S computed in double (a sum of non-negative
// terms, at most gamma_n below the exact one, hence the (1 + 2 gamma)).
double SumBound(int64_t terms, double size) {
  constexpr double u = std::numeric_limits<double>::epsilon() / 2;
  const double gamma = static_cast<double>(terms) * u / (1 - static_cast<double>(terms) * u);
  return 2 * gamma * size * (1 + 2 * gamma);
}

// Checks `got` (of any floating type) against the double yardstick `want`:
// it must lie between the roundings of want -/+ SumBound.
void ExpectWithinSumBound(const Tensor& got, const std::vector<double>& want, const std::vector<double>& size,
                          int64_t terms, const std::string& label) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << label;
  std::vector<double> lo(want.size()), hi(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const double bound = SumBound(terms, size[i]);
    lo[i] = want[i] - bound;
    hi[i] = want[i] + bound;
  }
  const std::vector<double> lo_t = Make(got.dtype(), {got.size()}, lo).ToDoubles();
  const std::vector<double> hi_t = Make(got.dtype(), {got.size()}, hi).ToDoubles();
  const std::vector<double> values = got.ToDoubles();
  int failures = 0;
  for (size_t i = 0; i < values.size() && failures < 5; ++i) {
    if (!(values[i] >= lo_t[i] && values[i] <= hi_t[i])) {
      ++failures;
      ADD_FAILURE() << label << ": element " << i << " is " << values[i] << ", want " << want[i] << " within ["
                    << lo_t[i] << ", " << hi_t[i] << "]";
    }
  }
}

Shape ConvOutputShape(const Problem& p) {
  Shape s{p.x_shape[0], p.out_per_group * p.group};
  s.insert(s.end(), p.win.output.begin(), p.win.output.end());
  return s;
}

// Runs ConvByGemm (or ConvTransposeByGemm) on random data of `type` and
// checks it against the direct loop.
void CheckAgainstDirect(const Problem& p, DataType type, bool transposed, uint32_t seed, const std::string& label) {
  std::mt19937 rng(seed);
  const int64_t channels = p.x_shape[1];
  const int64_t in_per_group = channels / p.group;
  const int64_t out_channels = p.out_per_group * p.group;
  const int64_t kernel_size = Count(p.win.kernel);
  const int64_t w_count = out_channels * in_per_group * kernel_size;  // the same for both layouts
  const std::vector<double> x = Random(Count(p.x_shape), rng, type);
  const std::vector<double> w = Random(w_count, rng, type);
  const std::vector<double> b = p.bias ? Random(out_channels, rng, type) : std::vector<double>();
  StatusOr<Tensor> y = Tensor::Create(type, ConvOutputShape(p));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<double> want, size;
  if (transposed) {
    ConvTransposeByGemm(x.data(), p.x_shape, w.data(), p.out_per_group, p.group, p.win, p.bias ? b.data() : nullptr,
                        &*y, Finite(x, w));
    want = ConvolveTransposed(x, p.x_shape, w, p.out_per_group, p.group, p.win);
    size = ConvolveTransposed(Abs(x), p.x_shape, Abs(w), p.out_per_group, p.group, p.win);
  } else {
    ConvByGemm(x.data(), p.x_shape, w.data(), out_channels, p.group, p.win, p.bias ? b.data() : nullptr, &*y,
               Finite(x, w));
    want = Convolve(x, p.x_shape, w, out_channels, p.group, p.win);
    size = Convolve(Abs(x), p.x_shape, Abs(w), out_channels, p.group, p.win);
  }
  AddBias(want, b, Count(p.win.output));
  AddBias(size, Abs(b), Count(p.win.output));
  ExpectWithinSumBound(*y, want, size, in_per_group * kernel_size + 1, label);
}

// A Conv window with explicit pads; the output extent by the spec's formula.
Window ConvWindow(Shape input, Shape kernel, Shape strides, Shape dilations, Shape pad_begin, Shape pad_end) {
  Window w{input, kernel, strides, dilations, pad_begin, pad_end, {}};
  for (size_t a = 0; a < input.size(); ++a) {
    w.output.push_back((input[a] + pad_begin[a] + pad_end[a] - w.Extent(a)) / strides[a] + 1);
  }
  return w;
}

// A ConvTranspose window: output = stride (in - 1) + extent - pads, where a
// negative pad_end stands for output_padding or a larger output_shape.
Window TransposeWindow(Shape input, Shape kernel, Shape strides, Shape dilations, Shape pad_begin, Shape pad_end) {
  Window w{input, kernel, strides, dilations, pad_begin, pad_end, {}};
  for (size_t a = 0; a < input.size(); ++a) {
    w.output.push_back(strides[a] * (input[a] - 1) + w.Extent(a) - pad_begin[a] - pad_end[a]);
  }
  return w;
}

// A random geometry of rank 1 to 3 with groups, strides, dilations and
// asymmetric pads; negative pads only for ConvTranspose.
Problem RandomProblem(std::mt19937& rng, bool transposed) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const size_t rank = static_cast<size_t>(pick(1, 3));
  Problem p;
  p.group = pick(1, 3);
  p.out_per_group = pick(1, 3);
  const int64_t in_per_group = pick(1, 3);
  p.x_shape = {pick(1, 2), in_per_group * p.group};
  p.bias = pick(0, 1) == 1;
  Shape input, kernel, strides, dilations, pad_begin, pad_end;
  for (size_t a = 0; a < rank; ++a) {
    kernel.push_back(pick(1, 3));
    strides.push_back(pick(1, 3));
    dilations.push_back(pick(1, 2));
    const int64_t extent = (kernel.back() - 1) * dilations.back() + 1;
    if (transposed) {
      input.push_back(pick(1, 6));
      pad_begin.push_back(pick(0, 2));
      pad_end.push_back(pick(-strides.back() + 1, 2));
    } else {
      pad_begin.push_back(pick(0, 2));
      pad_end.push_back(pick(0, 2));
      input.push_back(std::max<int64_t>(0, extent - pad_begin.back() - pad_end.back()) + pick(0, 6));
    }
  }
  p.x_shape.insert(p.x_shape.end(), input.begin(), input.end());
  p.win = transposed ? TransposeWindow(input, kernel, strides, dilations, pad_begin, pad_end)
                     : ConvWindow(input, kernel, strides, dilations, pad_begin, pad_end);
  for (int64_t o : p.win.output) {
    if (o < 0) return RandomProblem(rng, transposed);  // pads larger than the output: draw again
  }
  return p;
}

std::string Describe(const Problem& p) {
  return StrCat("X ", ShapeToString(p.x_shape), " group ", p.group, " M/group ", p.out_per_group, " kernel ",
                ShapeToString(p.win.kernel), " strides ", ShapeToString(p.win.strides), " dilations ",
                ShapeToString(p.win.dilations), " pads ", ShapeToString(p.win.pad_begin), "+",
                ShapeToString(p.win.pad_end), " output ", ShapeToString(p.win.output));
}

TEST(ConvByGemm, AgreesWithTheDirectLoopOnRandomShapes) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 80; ++trial) {
    const Problem p = RandomProblem(rng, false);
    for (DataType type : {DataType::kDouble, DataType::kFloat}) {
      CheckAgainstDirect(p, type, false, static_cast<uint32_t>(trial), Describe(p));
    }
  }
}

TEST(ConvByGemm, DepthwiseTinyAndBlockCrossingShapes) {
  std::vector<Problem> problems;
  // Depthwise 3x3 over 6 channels, batch 2; the same with two outputs per channel.
  problems.push_back({{2, 6, 9, 8}, 1, 6, ConvWindow({9, 8}, {3, 3}, {1, 2}, {1, 1}, {1, 0}, {1, 2})});
  problems.push_back({{1, 6, 7, 7}, 2, 6, ConvWindow({7, 7}, {3, 3}, {2, 2}, {2, 1}, {2, 1}, {0, 1})});
  // One output position; a 1x1 kernel; one input channel and one output channel.
  problems.push_back({{1, 3, 3, 3}, 2, 1, ConvWindow({3, 3}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0})});
  problems.push_back({{3, 4, 5, 6}, 5, 1, ConvWindow({5, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0})});
  problems.push_back({{1, 1, 1}, 1, 1, ConvWindow({1}, {1}, {1}, {1}, {0}, {0})});
  // A 1x1 kernel that strides, or pads, is not read in place.
  problems.push_back({{2, 2, 7, 6}, 3, 1, ConvWindow({7, 6}, {1, 1}, {2, 1}, {1, 1}, {0, 0}, {0, 0})});
  problems.push_back({{1, 2, 5}, 2, 2, ConvWindow({5}, {1}, {1}, {1}, {1}, {0})});
  // More output positions than one block holds: 1-D, 2-D and 3-D, with groups and batch.
  problems.push_back({{2, 2, 9001}, 2, 2, ConvWindow({9001}, {3}, {1}, {2}, {2}, {1})});
  problems.push_back({{1, 4, 70, 71}, 3, 2, ConvWindow({70, 71}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})});
  problems.push_back(
      {{2, 2, 18, 17, 19}, 2, 1, ConvWindow({18, 17, 19}, {2, 3, 2}, {1, 1, 1}, {1, 1, 2}, {0, 1, 1}, {1, 1, 0})});
  problems.push_back({{2, 6, 80, 80}, 2, 3, ConvWindow({80, 80}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0})});
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    if (i >= 7) {
      const int64_t rows = p.x_shape[1] / p.group * Count(p.win.kernel);
      ASSERT_LT(BlockPositions(Count(p.win.output), rows), Count(p.win.output)) << Describe(p);
    }
    for (DataType type : {DataType::kDouble, DataType::kFloat}) {
      CheckAgainstDirect(p, type, false, static_cast<uint32_t>(i), Describe(p));
    }
  }
}

TEST(ConvTransposeByGemm, AgreesWithTheDirectLoopOnRandomShapes) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 80; ++trial) {
    const Problem p = RandomProblem(rng, true);
    for (DataType type : {DataType::kDouble, DataType::kFloat}) {
      CheckAgainstDirect(p, type, true, static_cast<uint32_t>(trial), Describe(p));
    }
  }
}

TEST(ConvTransposeByGemm, ManyChannelsDepthwiseAndBlockCrossingShapes) {
  std::vector<Problem> problems;
  // 20 outputs per group of a 4x4 kernel: more GEMM rows than one task takes.
  problems.push_back({{2, 4, 5, 6}, 20, 2, TransposeWindow({5, 6}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {1, 0})});
  // Depthwise, with a larger output_shape (negative end pads).
  problems.push_back({{1, 5, 6, 6}, 1, 5, TransposeWindow({6, 6}, {3, 3}, {2, 2}, {1, 2}, {1, 0}, {-1, -1})});
  // More input positions than one block holds: 1-D, 2-D, 3-D.
  problems.push_back({{1, 2, 9001}, 2, 1, TransposeWindow({9001}, {3}, {2}, {1}, {1}, {0})});
  problems.push_back({{2, 2, 65, 66}, 3, 2, TransposeWindow({65, 66}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0})});
  problems.push_back(
      {{1, 2, 17, 18, 16}, 2, 1, TransposeWindow({17, 18, 16}, {2, 2, 2}, {2, 1, 2}, {1, 1, 1}, {1, 0, 0}, {0, 1, -1})});
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    const int64_t kernel_size = Count(p.win.kernel);
    if (i == 0) {
      ASSERT_LT(ChannelsPerTask(p.out_per_group, kernel_size), p.out_per_group);
    }
    if (i >= 2) {
      const int64_t rows = ChannelsPerTask(p.out_per_group, kernel_size) * kernel_size;
      ASSERT_LT(BlockPositions(Count(p.win.input), rows), Count(p.win.input)) << Describe(p);
    }
    for (DataType type : {DataType::kDouble, DataType::kFloat}) {
      CheckAgainstDirect(p, type, true, static_cast<uint32_t>(i), Describe(p));
    }
  }
}

TEST(ConvByGemm, SpecialValuesInXPropagateAsInTheDirectLoop) {
  const Problem p{{1, 2, 6, 6}, 2, 1, ConvWindow({6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})};
  std::mt19937 rng(3);
  std::vector<double> x = Random(72, rng, DataType::kDouble);
  const std::vector<double> w = Random(36, rng, DataType::kDouble);
  x[7] = std::numeric_limits<double>::infinity();
  x[30] = -std::numeric_limits<double>::infinity();
  x[50] = std::numeric_limits<double>::quiet_NaN();
  StatusOr<Tensor> y = Tensor::Create(DataType::kDouble, ConvOutputShape(p));
  ConvByGemm(x.data(), p.x_shape, w.data(), 2, 1, p.win, nullptr, &*y, Finite(x, w));
  const std::vector<double> want = Convolve(x, p.x_shape, w, 2, 1, p.win);
  const std::vector<double> size = Convolve(Abs(x), p.x_shape, Abs(w), 2, 1, p.win);
  const std::vector<double> got = y->ToDoubles();
  int finite = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << i;
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << i;
    }
    if (std::isfinite(want[i])) {
      ++finite;
      EXPECT_LE(std::fabs(got[i] - want[i]), SumBound(18, size[i])) << i;
    }
  }
  EXPECT_GT(finite, 0);
}

// --- The kernels: the choice of path, bias, and thread counts.

class ConvKernelTest : public ::testing::Test {
 protected:
  void TearDown() override { SetThreadCount(0); }
};

std::vector<uint64_t> Bits(const Tensor& t) {
  std::vector<uint64_t> bits;
  for (double v : t.ToDoubles()) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    bits.push_back(b);
  }
  return bits;
}

TEST_F(ConvKernelTest, ResultsAreBitIdenticalForEveryThreadCount) {
  std::mt19937 rng(5);
  // Conv: batch 2 x group 2 x several position blocks; ConvTranspose:
  // batch 2 x group 2 x two channel blocks, each over several input blocks.
  const Tensor x = Make(DataType::kFloat, {2, 4, 66, 70}, Random(2 * 4 * 66 * 70, rng, DataType::kFloat));
  const Tensor w = Make(DataType::kFloat, {6, 2, 3, 3}, Random(6 * 2 * 9, rng, DataType::kFloat));
  const Tensor b = Make(DataType::kFloat, {6}, Random(6, rng, DataType::kFloat));
  const Tensor wt = Make(DataType::kFloat, {4, 20, 4, 4}, Random(4 * 20 * 16, rng, DataType::kFloat));
  auto conv = [&] {
    return RunOk(NodeRunner("Conv").Opset(22).Input(x).Input(w).Input(b).Attr("group", I(2)).Attr(
        "pads", std::vector<int64_t>{1, 0, 2, 1}));
  };
  auto conv_transpose = [&] {
    return RunOk(NodeRunner("ConvTranspose").Opset(22).Input(x).Input(wt).Attr("group", I(2)).Attr(
        "strides", std::vector<int64_t>{2, 2}));
  };
  SetThreadCount(1);
  const std::vector<uint64_t> conv_one = Bits(conv()), transpose_one = Bits(conv_transpose());
  for (int threads : {2, 3}) {
    SetThreadCount(threads);
    EXPECT_EQ(Bits(conv()), conv_one) << threads << " threads";
    EXPECT_EQ(Bits(conv_transpose()), transpose_one) << threads << " threads";
  }
}

// W with an infinity: where a window overlaps the padding the direct loop
// skips the padded taps, so those outputs stay finite (or +-inf); 0 x inf
// in an im2col column would make them NaN. The kernel keeps the direct loop.
TEST_F(ConvKernelTest, ConvWithInfinityInWeightMatchesTheDirectLoopExactly) {
  const Problem p{{1, 1, 4, 4}, 1, 1, ConvWindow({4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1})};
  std::vector<double> x(16), w(9, 0.5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) - 7.5;
  w[0] = std::numeric_limits<double>::infinity();  // the top-left tap: padding for the first row and column
  const Tensor y = RunOk(NodeRunner("Conv")
                             .Opset(22)
                             .Input(Make(DataType::kFloat, {1, 1, 4, 4}, x))
                             .Input(Make(DataType::kFloat, {1, 1, 3, 3}, w))
                             .Input(Make(DataType::kFloat, {1}, {0.25}))
                             .Attr("pads", std::vector<int64_t>{1, 1, 1, 1}));
  std::vector<double> want = Convolve(x, p.x_shape, w, 1, 1, p.win);
  AddBias(want, {0.25}, 16);
  const std::vector<double> got = y.ToDoubles();
  const std::vector<double> want_float = Make(DataType::kFloat, {16}, want).ToDoubles();
  ASSERT_EQ(got.size(), want_float.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want_float[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], want_float[i]) << i;
    }
  }
  // The case means something: the GEMM form would give NaN at position 0.
  EXPECT_FALSE(std::isnan(want[0]));
  StatusOr<Tensor> gemm = Tensor::Create(DataType::kDouble, {1, 1, 4, 4});
  ConvByGemm(x.data(), p.x_shape, w.data(), 1, 1, p.win, nullptr, &*gemm, Finite(x, w));
  EXPECT_TRUE(std::isnan(gemm->GetDouble(0)));
}

TEST_F(ConvKernelTest, ConvTransposeWithNaNInWeightMatchesTheDirectLoopExactly) {
  const Problem p{{1, 2, 3}, 2, 1, TransposeWindow({3}, {3}, {2}, {1}, {1}, {0})};
  const std::vector<double> x{1, -2, 3, 0.5, 4, -1};
  std::vector<double> w{1, 2, 3, -1, 0.5, 2, 0.25, 1, 1, 1, -3, 2};
  w[4] = std::numeric_limits<double>::quiet_NaN();
  w[9] = -std::numeric_limits<double>::infinity();
  const Tensor y = RunOk(NodeRunner("ConvTranspose")
                             .Opset(22)
                             .Input(Make(DataType::kDouble, {1, 2, 3}, x))
                             .Input(Make(DataType::kDouble, {2, 2, 3}, w))
                             .Attr("strides", std::vector<int64_t>{2})
                             .Attr("pads", std::vector<int64_t>{1, 0}));
  const std::vector<double> want = ConvolveTransposed(x, p.x_shape, w, 2, 1, p.win);
  const std::vector<double> got = y.ToDoubles();
  ASSERT_EQ(got.size(), want.size());
  int finite = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      finite += std::isfinite(want[i]) ? 1 : 0;
      EXPECT_EQ(got[i], want[i]) << i;
    }
  }
  EXPECT_GT(finite, 0);
}

}  // namespace
}  // namespace parity::ops::nn
