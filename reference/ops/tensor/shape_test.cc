// Tests of Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze and Expand.
#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

Tensor Zeros(Shape shape) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, std::move(shape));
  return *t;
}

TEST(ShapeTest, StartAndEndClamp) {
  const Tensor x = Zeros({2, 3, 4, 5});
  ExpectInts(RunOk(NodeRunner("Shape").Input(x)), {4}, {2, 3, 4, 5});
  ExpectInts(RunOk(NodeRunner("Shape").Input(x).Attr("start", int64_t{-3}).Attr("end", int64_t{-1})), {2}, {3, 4});
  ExpectInts(RunOk(NodeRunner("Shape").Input(x).Attr("start", int64_t{-10}).Attr("end", int64_t{10})), {4},
             {2, 3, 4, 5});
  ExpectInts(RunOk(NodeRunner("Shape").Input(x).Attr("start", int64_t{3}).Attr("end", int64_t{1})), {0}, {});
}

TEST(SizeTest, CountsElements) {
  ExpectInts(RunOk(NodeRunner("Size").Input(Zeros({2, 0, 3}))), {}, {0});
  ExpectInts(RunOk(NodeRunner("Size").Input(Zeros({2, 3}))), {}, {6});
}

TEST(ReshapeTest, ZeroCopiesAndMinusOneInfers) {
  const Tensor x = Floats({2, 3, 4}, std::vector<double>(24, 1));
  EXPECT_EQ(RunOk(NodeRunner("Reshape").Input(x).Input(Int64s({0, -1}))).shape(), (Shape{2, 12}));
  EXPECT_EQ(RunOk(NodeRunner("Reshape").Input(x).Input(Int64s({4, 0, 2}))).shape(), (Shape{4, 3, 2}));
  ExpectError(NodeRunner("Reshape").Input(x).Input(Int64s({5, -1})), "cannot reshape");
  ExpectError(NodeRunner("Reshape").Input(x).Input(Int64s({-1, -1})), "more than one -1");
}

TEST(ReshapeTest, AllowZeroKeepsZeroDimensions) {
  const Tensor empty = Zeros({0, 3});
  EXPECT_EQ(RunOk(NodeRunner("Reshape").Opset(14).Input(empty).Input(Int64s({3, 0})).Attr("allowzero", int64_t{1}))
                .shape(),
            (Shape{3, 0}));
  ExpectError(NodeRunner("Reshape").Opset(14).Input(empty).Input(Int64s({0, -1})).Attr("allowzero", int64_t{1}),
              "allowzero");
}

TEST(ReshapeTest, OpsetOneReadsTheAttribute) {
  const Tensor x = Floats({6}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(RunOk(NodeRunner("Reshape").Opset(1).Input(x).Attr("shape", std::vector<int64_t>{3, 2})).shape(),
            (Shape{3, 2}));
}

TEST(FlattenTest, AxisZeroToRank) {
  const Tensor x = Zeros({2, 3, 4});
  EXPECT_EQ(RunOk(NodeRunner("Flatten").Input(x).Attr("axis", int64_t{0})).shape(), (Shape{1, 24}));
  EXPECT_EQ(RunOk(NodeRunner("Flatten").Input(x).Attr("axis", int64_t{3})).shape(), (Shape{24, 1}));
  EXPECT_EQ(RunOk(NodeRunner("Flatten").Input(x).Attr("axis", int64_t{-1})).shape(), (Shape{6, 4}));
  ExpectError(NodeRunner("Flatten").Input(x).Attr("axis", int64_t{4}), "out of range");
}

TEST(SqueezeTest, AxesAsInputOrAttribute) {
  const Tensor x = Zeros({1, 3, 1, 2});
  EXPECT_EQ(RunOk(NodeRunner("Squeeze").Input(x)).shape(), (Shape{3, 2}));
  EXPECT_EQ(RunOk(NodeRunner("Squeeze").Input(x).Input(Int64s({-2}))).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(RunOk(NodeRunner("Squeeze").Opset(11).Input(x).Attr("axes", std::vector<int64_t>{0})).shape(),
            (Shape{3, 1, 2}));
  ExpectError(NodeRunner("Squeeze").Input(x).Input(Int64s({1})), "cannot squeeze");
}

TEST(UnsqueezeTest, AxesIndexTheOutput) {
  const Tensor x = Zeros({3, 4});
  EXPECT_EQ(RunOk(NodeRunner("Unsqueeze").Input(x).Input(Int64s({3, 0}))).shape(), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(RunOk(NodeRunner("Unsqueeze").Input(x).Input(Int64s({-1}))).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(RunOk(NodeRunner("Unsqueeze").Opset(11).Input(x).Attr("axes", std::vector<int64_t>{1})).shape(),
            (Shape{3, 1, 4}));
  ExpectError(NodeRunner("Unsqueeze").Input(x).Input(Int64s({1, 1})), "repeated");
}

TEST(ExpandTest, BroadcastsBothWays) {
  const Tensor x = Floats({3, 1}, {1, 2, 3});
  Tensor y = RunOk(NodeRunner("Expand").Input(x).Input(Int64s({2, 1, 2})));
  ExpectDoubles(y, {2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  // A requested 1 keeps the input's larger dimension.
  EXPECT_EQ(RunOk(NodeRunner("Expand").Input(x).Input(Int64s({1, 1}))).shape(), (Shape{3, 1}));
  ExpectError(NodeRunner("Expand").Input(x).Input(Int64s({2, 2})), "broadcast");
}

}  // namespace
}  // namespace parity::ops::tensor
