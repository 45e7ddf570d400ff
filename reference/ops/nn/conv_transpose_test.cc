// Tests of ConvTranspose (conv_transpose.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Ints;
using testing::RunError;
using testing::RunOk;

NodeRunner Basic() {
  return std::move(NodeRunner("ConvTranspose").Opset(22).Input(Floats({1, 1, 2}, {1, 2})).Input(Floats({1, 1, 2}, {1, 1})));
}

TEST(ConvTranspose, OneDimensionalTwoOutputChannels) {
  Tensor y = RunOk(NodeRunner("ConvTranspose")
                       .Opset(11)
                       .Input(Floats({1, 1, 3}, {0, 1, 2}))
                       .Input(Floats({1, 2, 3}, std::vector<double>(6, 1.0))));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 5}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0, 1, 3, 3, 2, 0, 1, 3, 3, 2}));
}

TEST(ConvTranspose, Strides) {
  Tensor y = RunOk(Basic().Attr("strides", Ints({2})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 1, 2, 2}));
}

TEST(ConvTranspose, LargerOutputShapeLeavesZerosAtTheEnd) {
  Tensor y = RunOk(Basic().Attr("strides", Ints({2})).Attr("output_shape", Ints({5})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 1, 2, 2, 0}));
}

TEST(ConvTranspose, OutputPaddingExtendsTheEnd) {
  Tensor y = RunOk(Basic().Attr("strides", Ints({2})).Attr("output_padding", Ints({1})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 1, 2, 2, 0}));
}

TEST(ConvTranspose, PadsCropTheOutput) {
  Tensor y = RunOk(Basic().Attr("strides", Ints({2})).Attr("pads", Ints({1, 0})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 2, 2}));
}

TEST(ConvTranspose, SameUpperKeepsInputTimesStride) {
  // Natural extent 3 (stride 1, kernel 2) cropped to 2: SAME_UPPER crops the end.
  Tensor upper = RunOk(Basic().Attr("auto_pad", std::string("SAME_UPPER")));
  EXPECT_EQ(upper.ToDoubles(), (std::vector<double>{1, 3}));
  Tensor lower = RunOk(Basic().Attr("auto_pad", std::string("SAME_LOWER")));
  EXPECT_EQ(lower.ToDoubles(), (std::vector<double>{3, 2}));
}

TEST(ConvTranspose, GroupsDilationsAndBias) {
  Tensor y = RunOk(NodeRunner("ConvTranspose")
                       .Opset(22)
                       .Input(Floats({1, 2, 1}, {1, 2}))
                       .Input(Floats({2, 1, 2}, {3, 4, 5, 6}))
                       .Input(Floats({2}, {10, 20}))
                       .Attr("group", I(2))
                       .Attr("dilations", Ints({2})));
  // Channel 0: 1 * [3, _, 4]; channel 1: 2 * [5, _, 6]; plus bias.
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{13, 10, 14, 30, 20, 32}));
}

TEST(ConvTranspose, RejectsWeightOfWrongChannels) {
  std::string error = RunError(NodeRunner("ConvTranspose").Opset(22).Input(Floats({1, 2, 1}, {1, 2})).Input(Floats({1, 1, 1}, {1})));
  EXPECT_NE(error.find("first dimension"), std::string::npos) << error;
}

}  // namespace
}  // namespace parity::ops::nn
