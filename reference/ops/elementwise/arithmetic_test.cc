// Tests of Add, Sub, Mul, Div, Mod and Pow: integer wrapping, truncating
// division, both kinds of modulo, mixed-type powers.
#include <cmath>
#include <limits>

#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

TEST(ArithmeticTest, IntegerResultsWrapToTheirWidth) {
  const Tensor a = MakeInts(DataType::kInt8, {127, -128, 100});
  const Tensor b = MakeInts(DataType::kInt8, {1, -1, 2});
  EXPECT_EQ(Int64s(RunOk(Node("Add", 14, {a, b}))), (std::vector<int64_t>{-128, 127, 102}));
  EXPECT_EQ(Int64s(RunOk(Node("Mul", 14, {a, b}))), (std::vector<int64_t>{127, -128, -56}));
  const Tensor u = MakeInts(DataType::kUint32, {1, 0});
  const Tensor v = MakeInts(DataType::kUint32, {2, 1});
  EXPECT_EQ(Int64s(RunOk(Node("Sub", 14, {u, v}))), (std::vector<int64_t>{4294967295, 4294967295}));
  const Tensor big = MakeInts(DataType::kInt64, {kInt64Max, kInt64Min});
  EXPECT_EQ(Int64s(RunOk(Node("Add", 14, {big, MakeInts(DataType::kInt64, {1, -1})}))),
            (std::vector<int64_t>{kInt64Min, kInt64Max}));
}

TEST(ArithmeticTest, Uint64KeepsItsFullRange) {
  const Tensor a = MakeUint64s({UINT64_MAX - 1, 1ull << 63});
  const Tensor b = MakeUint64s({1, 3});
  const Tensor sum = RunOk(Node("Add", 14, {a, b}));
  EXPECT_EQ(sum.GetUint64(0), UINT64_MAX);
  EXPECT_EQ(sum.GetUint64(1), (1ull << 63) + 3);
  const Tensor quotient = RunOk(Node("Div", 14, {a, b}));
  EXPECT_EQ(quotient.GetUint64(0), UINT64_MAX - 1);
  EXPECT_EQ(quotient.GetUint64(1), (1ull << 63) / 3);
}

TEST(ArithmeticTest, FloatResultsRoundOnce) {
  // 1/3 in float32 is the double quotient rounded once.
  const Tensor out = RunOk(Node("Div", 14, {Make(DataType::kFloat, {1}), Make(DataType::kFloat, {3})}));
  EXPECT_EQ(out.data<float>()[0], static_cast<float>(1.0 / 3.0));
  // float16: 2049 is not representable; 2048 + 1 rounds to even (2048).
  const Tensor h = RunOk(Node("Add", 14, {Make(DataType::kFloat16, {2048}), Make(DataType::kFloat16, {1})}));
  EXPECT_EQ(Doubles(h)[0], 2048);
}

TEST(DivTest, IntegerDivisionTruncatesTowardZero) {
  const Tensor a = MakeInts(DataType::kInt32, {7, -7, 7, -7, 0});
  const Tensor b = MakeInts(DataType::kInt32, {2, 2, -2, -2, 5});
  EXPECT_EQ(Int64s(RunOk(Node("Div", 14, {a, b}))), (std::vector<int64_t>{3, -3, -3, 3, 0}));
}

TEST(DivTest, MostNegativeByMinusOneWraps) {
  EXPECT_EQ(Int64s(RunOk(Node("Div", 14, {MakeInts(DataType::kInt64, {kInt64Min}), MakeInts(DataType::kInt64, {-1})}))),
            (std::vector<int64_t>{kInt64Min}));
  EXPECT_EQ(Int64s(RunOk(Node("Div", 14, {MakeInts(DataType::kInt8, {-128}), MakeInts(DataType::kInt8, {-1})}))),
            (std::vector<int64_t>{-128}));
}

TEST(DivTest, IntegerDivisionByZeroIsAnError) {
  const std::string message =
      RunError(Node("Div", 14, {MakeInts(DataType::kInt32, {1, 2}), MakeInts(DataType::kInt32, {1, 0})}));
  EXPECT_NE(message.find("division by zero"), std::string::npos) << message;
  // Floats divide by zero to inf and NaN.
  const Tensor out = RunOk(Node("Div", 14, {Make(DataType::kFloat, {1, 0}), Make(DataType::kFloat, {0, 0})}));
  EXPECT_TRUE(std::isinf(Doubles(out)[0]));
  EXPECT_TRUE(std::isnan(Doubles(out)[1]));
}

TEST(ModTest, IntegerModTakesTheDivisorsSign) {
  const Tensor a = MakeInts(DataType::kInt32, {-4, 7, 5, 4, -7, 8});
  const Tensor b = MakeInts(DataType::kInt32, {2, -3, 8, -2, 3, 5});
  EXPECT_EQ(Int64s(RunOk(Node("Mod", 13, {a, b}))), (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
  EXPECT_EQ(Int64s(RunOk(Node("Mod", 13, {a, b}).Attr("fmod", int64_t{1}))),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
}

TEST(ModTest, MostNegativeModMinusOneIsZero) {
  const Tensor a = MakeInts(DataType::kInt64, {kInt64Min});
  const Tensor b = MakeInts(DataType::kInt64, {-1});
  EXPECT_EQ(Int64s(RunOk(Node("Mod", 13, {a, b}))), (std::vector<int64_t>{0}));
  EXPECT_EQ(Int64s(RunOk(Node("Mod", 13, {a, b}).Attr("fmod", int64_t{1}))), (std::vector<int64_t>{0}));
}

TEST(ModTest, FloatFmodZeroIsDefinedOnlyFromOpset28) {
  const Tensor a = Make(DataType::kDouble, {-4.5, 7.5, 4.0, 4.0});
  const Tensor b = Make(DataType::kDouble, {2.0, -2.0, 2.0, -2.0});
  const std::string message = RunError(Node("Mod", 13, {a, b}));
  EXPECT_NE(message.find("opset 28"), std::string::npos) << message;
  const Tensor out = RunOk(Node("Mod", 28, {a, b}));
  EXPECT_EQ(Doubles(out), (std::vector<double>{1.5, -0.5, 0.0, 0.0}));
  EXPECT_FALSE(std::signbit(Doubles(out)[2]));
  EXPECT_TRUE(std::signbit(Doubles(out)[3]));  // a zero result takes the divisor's sign
  EXPECT_EQ(Doubles(RunOk(Node("Mod", 13, {a, b}).Attr("fmod", int64_t{1}))),
            (std::vector<double>{-0.5, 1.5, 0.0, 0.0}));
}

TEST(ModTest, FloatSpecialCases) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor a = Make(DataType::kFloat, {-0.0, inf, 3.0, 3.0, -3.0, nan});
  const Tensor b = Make(DataType::kFloat, {2.0, 2.0, 0.0, inf, inf, 1.0});
  const std::vector<double> out = Doubles(RunOk(Node("Mod", 28, {a, b})));
  EXPECT_EQ(out[0], 0.0);
  EXPECT_FALSE(std::signbit(out[0]));  // ±0 with the sign of y
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 3.0);  // same signs: x
  EXPECT_EQ(out[4], inf);  // different signs: y
  EXPECT_TRUE(std::isnan(out[5]));
}

TEST(ModTest, BadFmodAndZeroDivisor) {
  const Tensor a = MakeInts(DataType::kInt32, {1});
  EXPECT_NE(RunError(Node("Mod", 13, {a, a}).Attr("fmod", int64_t{2})).find("fmod must be 0 or 1, got 2"),
            std::string::npos);
  EXPECT_NE(RunError(Node("Mod", 13, {a, MakeInts(DataType::kInt32, {0})})).find("integer division by zero"),
            std::string::npos);
}

TEST(PowTest, IntegerPowersAreExactAndWrap) {
  const Tensor a = MakeInts(DataType::kInt32, {2, 3, -2, 2, 7});
  const Tensor b = MakeInts(DataType::kInt32, {10, 3, 3, 31, 0});
  EXPECT_EQ(Int64s(RunOk(Node("Pow", 15, {a, b}))), (std::vector<int64_t>{1024, 27, -8, -2147483648, 1}));
  const Tensor big = MakeInts(DataType::kInt64, {3});
  EXPECT_EQ(Int64s(RunOk(Node("Pow", 15, {big, MakeInts(DataType::kInt64, {39})}))),
            (std::vector<int64_t>{4052555153018976267}));  // 3^39 < 2^63, beyond double's 2^53
}

TEST(PowTest, NegativeIntegerExponentTruncates) {
  const Tensor a = MakeInts(DataType::kInt64, {1, -1, -1, 2});
  const Tensor b = MakeInts(DataType::kInt64, {-5, -3, -2, -1});
  EXPECT_EQ(Int64s(RunOk(Node("Pow", 15, {a, b}))), (std::vector<int64_t>{1, -1, 1, 0}));
  RunError(Node("Pow", 15, {MakeInts(DataType::kInt64, {0}), MakeInts(DataType::kInt64, {-1})}));
}

TEST(PowTest, MixedTypesTakeTheBasesType) {
  const Tensor f = Make(DataType::kFloat, {1, 2, 3});
  const Tensor out = RunOk(Node("Pow", 15, {f, MakeUint64s({4, 5, 6})}));
  EXPECT_EQ(out.dtype(), DataType::kFloat);
  EXPECT_EQ(Doubles(out), (std::vector<double>{1, 32, 729}));
  // Integer base, float exponent: the double power truncated toward zero.
  const Tensor i = RunOk(Node("Pow", 15, {MakeInts(DataType::kInt32, {2, 9}), Make(DataType::kFloat, {0.5, 0.5})}));
  EXPECT_EQ(i.dtype(), DataType::kInt32);
  EXPECT_EQ(Int64s(i), (std::vector<int64_t>{1, 3}));
}

TEST(PowTest, BeforeOpset12BaseAndExponentShareAType) {
  const Tensor f = Make(DataType::kFloat, {2});
  RunError(Node("Pow", 7, {f, Make(DataType::kDouble, {2})}));
  EXPECT_EQ(Doubles(RunOk(Node("Pow", 7, {f, Make(DataType::kFloat, {-1})}))), (std::vector<double>{0.5}));
  // Pow-13 exponents have no bfloat16; Pow-15 adds it.
  RunError(Node("Pow", 13, {f, Make(DataType::kBfloat16, {2})}));
  RunOk(Node("Pow", 15, {f, Make(DataType::kBfloat16, {2})}));
}

}  // namespace
}  // namespace parity::ops
