// Tests of the shared elementwise machinery: type sets and per-version type
// checks, numpy and legacy (opset < 7) broadcasting, single rounding.
#include "reference/ops/elementwise/elementwise.h"

#include <cmath>

#include "reference/core/float_formats.h"
#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

TEST(TypeSetTest, ContainsAndPrints) {
  constexpr TypeSet set = types::kFloats | TypeSet{DataType::kInt8};
  EXPECT_TRUE(set.Contains(DataType::kFloat16));
  EXPECT_TRUE(set.Contains(DataType::kInt8));
  EXPECT_FALSE(set.Contains(DataType::kBfloat16));
  EXPECT_FALSE(set.Contains(DataType::kString));
  EXPECT_EQ(set.ToString(), "{float32, int8, float16, float64}");  // in DataType order
}

TEST(ElementwiseTypesTest, EachVersionAcceptsOnlyItsTypes) {
  const Tensor a = MakeInts(DataType::kInt8, {1, 2});
  // Add-13 has no int8; Add-14 adds it.
  const std::string message = RunError(Node("Add", 13, {a, a}));
  EXPECT_NE(message.find("int8"), std::string::npos) << message;
  EXPECT_EQ(Int64s(RunOk(Node("Add", 14, {a, a}))), (std::vector<int64_t>{2, 4}));
  // bfloat16 arrives in Sin-22.
  const Tensor b = Make(DataType::kBfloat16, {0.5});
  RunError(Node("Sin", 21, {b}));
  RunOk(Node("Sin", 22, {b}));
}

TEST(ElementwiseTypesTest, OperandsMustShareAType) {
  const std::string message =
      RunError(Node("Add", 14, {Make(DataType::kFloat, {1}), Make(DataType::kDouble, {1})}));
  EXPECT_NE(message.find("same element type"), std::string::npos) << message;
}

TEST(ElementwiseBroadcastTest, NumpyBroadcastOfBothOperands) {
  const Tensor a = Make(DataType::kFloat, {3, 1}, {1, 2, 3});
  const Tensor b = Make(DataType::kFloat, {1, 2}, {10, 20});
  const Tensor out = RunOk(Node("Add", 14, {a, b}));
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(Doubles(out), (std::vector<double>{11, 21, 12, 22, 13, 23}));
}

TEST(ElementwiseBroadcastTest, IncompatibleShapesAreAnError) {
  const std::string message =
      RunError(Node("Mul", 14, {Make(DataType::kFloat, {1, 2, 3}), Make(DataType::kFloat, {1, 2})}));
  EXPECT_NE(message.find("broadcast"), std::string::npos) << message;
}

TEST(ElementwiseBroadcastTest, EmptyTensorsGiveEmptyResults) {
  const Tensor a = Make(DataType::kFloat, {0, 3}, {});
  const Tensor out = RunOk(Node("Add", 14, {a, Make(DataType::kFloat, {1, 3}, {1, 2, 3})}));
  EXPECT_EQ(out.shape(), (Shape{0, 3}));
}

TEST(LegacyBroadcastTest, WithoutBroadcastAttributeShapesMustMatch) {
  const Tensor a = Make(DataType::kFloat, {2, 3}, {0, 1, 2, 3, 4, 5});
  const Tensor b = Make(DataType::kFloat, {3}, {1, 1, 1});
  const std::string message = RunError(Node("Add", 6, {a, b}));
  EXPECT_NE(message.find("broadcast=1"), std::string::npos) << message;
}

TEST(LegacyBroadcastTest, SuffixMatching) {
  const Tensor a = Make(DataType::kFloat, {2, 3}, {0, 1, 2, 3, 4, 5});
  const Tensor b = Make(DataType::kFloat, {3}, {10, 20, 30});
  const Tensor out = RunOk(Node("Sub", 6, {a, b}).Attr("broadcast", int64_t{1}));
  EXPECT_EQ(Doubles(out), (std::vector<double>{-10, -19, -28, -7, -16, -25}));
}

TEST(LegacyBroadcastTest, AxisPlacesB) {
  // shape(A) = (2, 3, 2), shape(B) = (3), axis = 1: B runs along dimension 1.
  const Tensor a = Make(DataType::kFloat, {2, 3, 2}, std::vector<double>(12, 0));
  const Tensor b = Make(DataType::kFloat, {3}, {1, 2, 3});
  const Tensor out = RunOk(Node("Add", 1, {a, b}).Attr("broadcast", int64_t{1}).Attr("axis", int64_t{1}));
  EXPECT_EQ(Doubles(out), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(LegacyBroadcastTest, OneElementBAndMismatches) {
  const Tensor a = Make(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  const Tensor one = Make(DataType::kFloat, {1, 1}, {2});
  EXPECT_EQ(Doubles(RunOk(Node("Mul", 6, {a, one}).Attr("broadcast", int64_t{1}))),
            (std::vector<double>{2, 4, 6, 8}));
  // B may not broadcast A, nor be a non-contiguous match.
  const Tensor wide = Make(DataType::kFloat, {2, 2, 2}, std::vector<double>(8, 1));
  RunError(Node("Add", 6, {a, wide}).Attr("broadcast", int64_t{1}));
  const Tensor column = Make(DataType::kFloat, {2, 1}, {1, 2});
  RunError(Node("Add", 6, {a, column}).Attr("broadcast", int64_t{1}));
  // Opset 7 broadcasts numpy-style with no attribute.
  EXPECT_EQ(Doubles(RunOk(Node("Add", 7, {a, column}))), (std::vector<double>{2, 3, 5, 6}));
}

TEST(ElementwiseRoundingTest, Float16ComputedFromExactValueAndRoundedOnce) {
  // sigmoid(x) for every finite float16 x equals the double result rounded once.
  std::vector<double> xs;
  for (uint32_t bits = 0; bits < 0x10000; bits += 7) {
    const double v = DecodeSmallFloat(DataType::kFloat16, bits);
    if (std::isfinite(v)) xs.push_back(v);
  }
  const Tensor x = Make(DataType::kFloat16, xs);
  const Tensor out = RunOk(Node("Sigmoid", 13, {x}));
  for (size_t i = 0; i < xs.size(); ++i) {
    const double expected = 1.0 / (1.0 + std::exp(-xs[i]));
    ASSERT_EQ(out.data<uint16_t>()[i], EncodeSmallFloat(DataType::kFloat16, expected)) << "x = " << xs[i];
  }
}

TEST(ElementwiseInputsTest, MissingInputIsAnError) {
  NodeRunner runner("Add");
  runner.Opset(14).Input(Make(DataType::kFloat, {1}));
  const std::string message = RunError(runner);
  EXPECT_NE(message.find("has 1 inputs; Add-14 needs at least 2"), std::string::npos) << message;
}

}  // namespace
}  // namespace parity::ops
