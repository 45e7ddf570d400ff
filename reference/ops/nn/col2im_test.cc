// Tests of Col2Im (col2im.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::Ints;
using testing::Make;
using testing::RunError;
using testing::RunOk;

Tensor Int64s(std::vector<double> v) { return Make(DataType::kInt64, {static_cast<int64_t>(v.size())}, v); }

TEST(Col2Im, OneBlockIsTheImage) {
  Tensor y = RunOk(
      NodeRunner("Col2Im").Opset(18).Input(Floats({1, 4, 1}, {1, 2, 3, 4})).Input(Int64s({2, 2})).Input(Int64s({2, 2})));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Col2Im, OverlappingBlocksAdd) {
  // Rows are kernel offsets, columns block positions: image[1] = k0 b1 + k1 b0.
  Tensor y =
      RunOk(NodeRunner("Col2Im").Opset(18).Input(Floats({1, 2, 2}, {1, 2, 3, 4})).Input(Int64s({3})).Input(Int64s({2})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 5, 4}));
}

TEST(Col2Im, PadsStridesAndIntegers) {
  Tensor y = RunOk(NodeRunner("Col2Im")
                       .Opset(18)
                       .Input(Make(DataType::kInt32, {1, 1, 2}, {5, 7}))
                       .Input(Int64s({3}))
                       .Input(Int64s({1}))
                       .Attr("pads", Ints({1, 0}))
                       .Attr("strides", Ints({2})));
  // Blocks start at -1 and 1: the first falls in the padding.
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0, 7, 0}));
}

TEST(Col2Im, RejectsWrongBlockCount) {
  std::string error = RunError(
      NodeRunner("Col2Im").Opset(18).Input(Floats({1, 2, 3}, {1, 2, 3, 4, 5, 6})).Input(Int64s({3})).Input(Int64s({2})));
  EXPECT_NE(error.find("number of blocks"), std::string::npos) << error;
}

}  // namespace
}  // namespace parity::ops::nn
