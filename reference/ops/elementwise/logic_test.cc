// Tests of And/Or/Xor/Not, the comparisons, IsNaN/IsInf and Where.
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LogicTest, BooleanOperatorsWithBroadcast) {
  const Tensor a = MakeBools({2, 2}, {0, 0, 1, 1});
  const Tensor b = MakeBools({2}, {0, 1});
  EXPECT_EQ(Int64s(RunOk(Node("And", 7, {a, b}))), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(Int64s(RunOk(Node("Or", 7, {a, b}))), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(Int64s(RunOk(Node("Xor", 7, {a, b}))), (std::vector<int64_t>{0, 1, 1, 0}));
  const Tensor n = RunOk(Node("Not", 1, {a}));
  EXPECT_EQ(n.dtype(), DataType::kBool);
  EXPECT_EQ(Int64s(n), (std::vector<int64_t>{1, 1, 0, 0}));
  RunError(Node("And", 7, {MakeInts(DataType::kInt32, {1}), MakeInts(DataType::kInt32, {1})}));
}

TEST(CompareTest, ComparisonsGiveBool) {
  const Tensor a = Make(DataType::kFloat, {1, 2, 3});
  const Tensor b = Make(DataType::kFloat, {2});
  const Tensor less = RunOk(Node("Less", 13, {a, b}));
  EXPECT_EQ(less.dtype(), DataType::kBool);
  EXPECT_EQ(Int64s(less), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("LessOrEqual", 16, {a, b}))), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("Greater", 13, {a, b}))), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(Int64s(RunOk(Node("GreaterOrEqual", 16, {a, b}))), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(Int64s(RunOk(Node("Equal", 19, {a, b}))), (std::vector<int64_t>{0, 1, 0}));
}

TEST(CompareTest, NaNComparesFalseAndSignedZerosAreEqual) {
  const Tensor a = Make(DataType::kDouble, {kNaN, kNaN, -0.0});
  const Tensor b = Make(DataType::kDouble, {kNaN, 1.0, 0.0});
  EXPECT_EQ(Int64s(RunOk(Node("Equal", 13, {a, b}))), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(Int64s(RunOk(Node("Less", 13, {a, b}))), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("GreaterOrEqual", 16, {a, b}))), (std::vector<int64_t>{0, 0, 1}));
}

TEST(CompareTest, IntegersCompareExactly) {
  // 2^53 and 2^53 + 1 are equal as doubles but not as int64.
  const Tensor a = MakeInts(DataType::kInt64, {int64_t{1} << 53});
  const Tensor b = MakeInts(DataType::kInt64, {(int64_t{1} << 53) + 1});
  EXPECT_EQ(Int64s(RunOk(Node("Less", 13, {a, b}))), (std::vector<int64_t>{1}));
  EXPECT_EQ(Int64s(RunOk(Node("Equal", 13, {a, b}))), (std::vector<int64_t>{0}));
  EXPECT_EQ(Int64s(RunOk(Node("Greater", 13, {MakeUint64s({UINT64_MAX}), MakeUint64s({1})}))),
            (std::vector<int64_t>{1}));
}

TEST(CompareTest, EqualOnStringsFromOpset19) {
  const Tensor a = MakeStrings({2, 2}, {"a", "b", "c", ""});
  const Tensor b = MakeStrings({2}, {"a", ""});
  RunError(Node("Equal", 13, {a, b}));
  EXPECT_EQ(Int64s(RunOk(Node("Equal", 19, {a, b}))), (std::vector<int64_t>{1, 0, 0, 1}));
}

TEST(CompareTest, EqualOnBoolAndPerVersionTypes) {
  const Tensor t = MakeBools({2}, {0, 1});
  EXPECT_EQ(Int64s(RunOk(Node("Equal", 7, {t, MakeBools({2}, {0, 0})}))), (std::vector<int64_t>{1, 0}));
  const Tensor f = Make(DataType::kFloat, {1});
  RunError(Node("Equal", 7, {f, f}));  // Equal-7: bool, int32, int64
  RunOk(Node("Equal", 11, {f, f}));
}

TEST(ClassifyTest, IsNaNAndIsInf) {
  const Tensor x = Make(DataType::kFloat, {kNaN, kInf, -kInf, 1.0, 0.0});
  EXPECT_EQ(Int64s(RunOk(Node("IsNaN", 13, {x}))), (std::vector<int64_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("IsInf", 10, {x}))), (std::vector<int64_t>{0, 1, 1, 0, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("IsInf", 10, {x}).Attr("detect_negative", int64_t{0}))),
            (std::vector<int64_t>{0, 1, 0, 0, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("IsInf", 10, {x}).Attr("detect_positive", int64_t{0}))),
            (std::vector<int64_t>{0, 0, 1, 0, 0}));
}

TEST(ClassifyTest, Float8AndFloat16FromOpset20) {
  const Tensor f8 = Make(DataType::kFloat8E5M2, {kNaN, kInf, 1.0});
  RunError(Node("IsNaN", 13, {f8}));
  EXPECT_EQ(Int64s(RunOk(Node("IsNaN", 20, {f8}))), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(Int64s(RunOk(Node("IsInf", 20, {f8}))), (std::vector<int64_t>{0, 1, 0}));
  RunError(Node("IsInf", 10, {Make(DataType::kFloat16, {1.0})}));  // IsInf-10: float32, float64
}

TEST(WhereTest, SelectsWithThreeWayBroadcast) {
  const Tensor condition = MakeBools({2, 1}, {1, 0});
  const Tensor x = Make(DataType::kFloat, {1, 2}, {1, 2});
  const Tensor y = Make(DataType::kFloat, {}, {9});
  const Tensor out = RunOk(Node("Where", 16, {condition, x, y}));
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(Doubles(out), (std::vector<double>{1, 2, 9, 9}));
}

TEST(WhereTest, CopiesBitsAndStrings) {
  const Tensor condition = MakeBools({2}, {1, 0});
  const Tensor x = Make(DataType::kDouble, {-0.0, 0.0});
  const Tensor y = Make(DataType::kDouble, {1.0, kNaN});
  const std::vector<double> out = Doubles(RunOk(Node("Where", 16, {condition, x, y})));
  EXPECT_TRUE(std::signbit(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  const Tensor s = RunOk(Node("Where", 9, {condition, MakeStrings({2}, {"a", "b"}), MakeStrings({2}, {"c", "d"})}));
  EXPECT_EQ(s.strings(), (std::vector<std::string>{"a", "d"}));
}

TEST(WhereTest, TypeErrors) {
  const Tensor x = Make(DataType::kFloat, {1});
  EXPECT_NE(RunError(Node("Where", 16, {MakeInts(DataType::kInt32, {1}), x, x})).find("allows {bool}"),
            std::string::npos);  // condition must be bool
  EXPECT_NE(RunError(Node("Where", 16, {MakeBools({1}, {1}), x, Make(DataType::kDouble, {1})}))
                .find("must have the same element type, got float32 and float64"),
            std::string::npos);
  RunError(Node("Where", 9, {MakeBools({1}, {1}), Make(DataType::kBfloat16, {1}), Make(DataType::kBfloat16, {1})}));
}

}  // namespace
}  // namespace parity::ops
