// Tests of Cast, CastLike and BitCast: single rounding, saturation, the
// small formats, and string formatting/parsing.
#include <cmath>
#include <limits>

#include "reference/ops/tensor/tensor_test_util.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

NodeRunner CastTo(DataType to, Tensor x, int opset = 25) {
  NodeRunner r("Cast");
  r.Opset(opset).Input(std::move(x)).Attr("to", static_cast<int64_t>(to));
  return r;
}

TEST(CastTest, Int64ToFloatRoundsOnce) {
  // 2^62 + 2^38 + 1 lies just above the midpoint between two float32s; going
  // through double would land on the midpoint and round down to 2^62.
  const int64_t v = (int64_t{1} << 62) + (int64_t{1} << 38) + 1;
  Tensor y = RunOk(CastTo(DataType::kFloat, Ints({1}, {v})));
  EXPECT_EQ(y.data<float>()[0], std::ldexp(1.0f, 62) + std::ldexp(1.0f, 39));
}

TEST(CastTest, Float8SaturateAndFloat16Overflow) {
  const Tensor x = Floats({2}, {1000, -1e6});
  ExpectDoubles(RunOk(CastTo(DataType::kFloat8E4M3FN, x)), {2}, {448, -448});
  Tensor nosat = RunOk(CastTo(DataType::kFloat8E4M3FN, x).Attr("saturate", int64_t{0}));
  EXPECT_TRUE(std::isnan(nosat.GetDouble(0)));
  Tensor e5 = RunOk(CastTo(DataType::kFloat8E5M2, x).Attr("saturate", int64_t{0}));
  EXPECT_EQ(e5.GetDouble(1), -std::numeric_limits<double>::infinity());
  // `saturate` applies to float8 only: float16 still overflows to infinity.
  Tensor h = RunOk(CastTo(DataType::kFloat16, Floats({1}, {1e6})));
  EXPECT_TRUE(std::isinf(h.GetDouble(0)));
}

TEST(CastTest, E8M0RoundMode) {
  const Tensor x = Floats({1}, {3.0});
  EXPECT_EQ(RunOk(CastTo(DataType::kFloat8E8M0, x).Attr("round_mode", std::string("up"))).GetDouble(0), 4.0);
  EXPECT_EQ(RunOk(CastTo(DataType::kFloat8E8M0, x).Attr("round_mode", std::string("down"))).GetDouble(0), 2.0);
  ExpectError(CastTo(DataType::kFloat8E8M0, x).Attr("round_mode", std::string("sideways")), "round_mode");
}

TEST(CastTest, IntegersWrapAndFloatsTruncate) {
  StatusOr<Tensor> i16 = Tensor::FromDoubles(DataType::kInt16, {2}, {200, -300});
  ExpectInts(RunOk(CastTo(DataType::kInt8, *i16)), {2}, {-56, -44});
  ExpectInts(RunOk(CastTo(DataType::kInt4, Floats({3}, {-9, 1.7, -1.7}))), {3}, {7, 1, -1});
  ExpectInts(RunOk(CastTo(DataType::kBool, Floats({3}, {0, -0.0, std::nan("")}))), {3}, {0, 0, 1});
}

TEST(CastTest, TypesFollowTheOpset) {
  ExpectError(CastTo(DataType::kFloat8E4M3FN, Floats({1}, {1}), 13), "not supported at opset 13");
  ExpectError(CastTo(DataType::kInt2, Floats({1}, {1}), 24), "not supported at opset 24");
  ExpectError(CastTo(DataType::kComplex64, Floats({1}, {1})), "not supported");
}

TEST(CastTest, NumbersToStringsAsNumpyPrintsThem) {
  const Tensor x = Floats({8}, {0.47892547, 1e-7, 1e6, -0.0, std::nan(""), -INFINITY, 100, 999999});
  Tensor s = RunOk(CastTo(DataType::kString, x));
  const std::vector<std::string> expected = {"0.47892547", "1e-07", "1e+06", "-0.0", "nan", "-inf", "100.0", "999999.0"};
  EXPECT_EQ(s.strings(), expected);
  Tensor d = RunOk(CastTo(DataType::kString, Floats({2}, {0.1, 1e16}, DataType::kDouble)));
  EXPECT_EQ(d.strings(), (std::vector<std::string>{"0.1", "1e+16"}));
  Tensor h = RunOk(CastTo(DataType::kString, Floats({2}, {65504, 0.333}, DataType::kFloat16)));
  EXPECT_EQ(h.strings(), (std::vector<std::string>{"6.55e+04", "0.333"}));
  StatusOr<Tensor> b = Tensor::FromDoubles(DataType::kBool, {2}, {1, 0});
  EXPECT_EQ(RunOk(CastTo(DataType::kString, *b)).strings(), (std::vector<std::string>{"True", "False"}));
  EXPECT_EQ(RunOk(CastTo(DataType::kString, Ints({1}, {std::numeric_limits<int64_t>::min()}))).strings()[0],
            "-9223372036854775808");
}

TEST(CastTest, StringsToNumbers) {
  Tensor f = RunOk(CastTo(DataType::kFloat, Strings({6}, {"3.14", "1e-5", "+INF", "-inf", "NaN", " 2 "})));
  EXPECT_EQ(f.data<float>()[0], 3.14f);
  EXPECT_EQ(f.data<float>()[1], 1e-5f);
  EXPECT_EQ(f.GetDouble(2), INFINITY);
  EXPECT_EQ(f.GetDouble(3), -INFINITY);
  EXPECT_TRUE(std::isnan(f.GetDouble(4)));
  EXPECT_EQ(f.GetDouble(5), 2.0);
  ExpectInts(RunOk(CastTo(DataType::kInt64, Strings({3}, {"123456789012345678", "100.5", "-7"}))), {3},
             {123456789012345678, 100, -7});
  ExpectError(CastTo(DataType::kFloat, Strings({1}, {"Hello World!"})), "cannot cast string");
}

TEST(CastTest, OpsetOneNamesTheTypeAsAString) {
  ExpectInts(RunOk(NodeRunner("Cast").Opset(1).Input(Floats({1}, {2.5})).Attr("to", std::string("INT32"))), {1}, {2});
}

TEST(CastLikeTest, TakesTheSecondInputsType) {
  Tensor y = RunOk(NodeRunner("CastLike").Input(Floats({2}, {1.5, -2.5})).Input(Ints({0}, {})));
  EXPECT_EQ(y.dtype(), DataType::kInt64);
  ExpectInts(y, {2}, {1, -2});
}

TEST(BitCastTest, ReinterpretsBits) {
  Tensor y = RunOk(NodeRunner("BitCast").Opset(26).Input(Floats({1}, {1.0})).Attr("to", int64_t{6}));
  ExpectInts(y, {1}, {0x3f800000});
  StatusOr<Tensor> i4 = Tensor::FromDoubles(DataType::kInt4, {2}, {-1, 7});
  Tensor u4 = RunOk(NodeRunner("BitCast").Opset(26).Input(*i4).Attr("to", static_cast<int64_t>(DataType::kUint4)));
  ExpectInts(u4, {2}, {15, 7});
  ExpectError(NodeRunner("BitCast").Opset(26).Input(Floats({1}, {1.0})).Attr("to", int64_t{7}), "cannot reinterpret");
}

}  // namespace
}  // namespace parity::ops::tensor
