// Tests of DeformConv (deform_conv.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::Iota;
using testing::RunError;
using testing::RunOk;

Tensor Ones2x2() { return Floats({1, 1, 2, 2}, {1, 1, 1, 1}); }

// Offsets [1, 8, 2, 2]: channel (k * 2 + axis); `dx` shifts every tap along x.
Tensor Offsets(double dx) {
  std::vector<double> v(32, 0.0);
  for (int k = 0; k < 4; ++k) {
    for (int o = 0; o < 4; ++o) v[static_cast<size_t>((k * 2 + 1) * 4 + o)] = dx;
  }
  return Floats({1, 8, 2, 2}, v);
}

TEST(DeformConv, ZeroOffsetsAreAConvolution) {
  Tensor y = RunOk(NodeRunner("DeformConv").Opset(19).Input(Iota({1, 1, 3, 3})).Input(Ones2x2()).Input(Offsets(0)));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{8, 12, 20, 24}));
}

TEST(DeformConv, HalfPixelOffsetInterpolatesWithZerosOutside) {
  Tensor y = RunOk(NodeRunner("DeformConv").Opset(22).Input(Iota({1, 1, 3, 3})).Input(Ones2x2()).Input(Offsets(0.5)));
  // Output (0, 0): taps at x = 0.5 and 1.5 on rows 0 and 1: 0.5 + 1.5 + 3.5 + 4.5.
  // Output (0, 1): x = 1.5 and 2.5; 2.5 mixes column 2 with zero beyond the edge.
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{10, 9.5, 22, 18.5}));
}

TEST(DeformConv, MaskAndBias) {
  Tensor mask = Floats({1, 4, 2, 2}, std::vector<double>(16, 0.5));
  Tensor y = RunOk(NodeRunner("DeformConv")
                       .Opset(19)
                       .Input(Iota({1, 1, 3, 3}))
                       .Input(Ones2x2())
                       .Input(Offsets(0))
                       .Input(Floats({1}, {1}))
                       .Input(mask));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{5, 7, 11, 13}));
}

TEST(DeformConv, RejectsOffsetOfWrongShape) {
  std::string error = RunError(
      NodeRunner("DeformConv").Opset(19).Input(Iota({1, 1, 3, 3})).Input(Ones2x2()).Input(Floats({1, 2, 2, 2}, std::vector<double>(8, 0))));
  EXPECT_NE(error.find("offset"), std::string::npos) << error;
}

}  // namespace
}  // namespace parity::ops::nn
