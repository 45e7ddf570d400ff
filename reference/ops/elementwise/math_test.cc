// Tests of the unary mathematical functions: integer Abs/Neg/Sign, rounding
// modes, domain errors as NaN, single rounding of small floats.
#include <cmath>
#include <limits>

#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

TEST(MathTest, AbsNegSignOnIntegers) {
  const Tensor x = MakeInts(DataType::kInt8, {-128, -3, 0, 5});
  EXPECT_EQ(Int64s(RunOk(Node("Abs", 13, {x}))), (std::vector<int64_t>{-128, 3, 0, 5}));  // wraps like numpy
  EXPECT_EQ(Int64s(RunOk(Node("Neg", 13, {x}))), (std::vector<int64_t>{-128, 3, 0, -5}));
  EXPECT_EQ(Int64s(RunOk(Node("Sign", 13, {x}))), (std::vector<int64_t>{-1, -1, 0, 1}));
  const Tensor u = MakeUint64s({0, UINT64_MAX});
  EXPECT_EQ(RunOk(Node("Abs", 13, {u})).GetUint64(1), UINT64_MAX);
  EXPECT_EQ(Int64s(RunOk(Node("Sign", 13, {u}))), (std::vector<int64_t>{0, 1}));
  const Tensor min64 = MakeInts(DataType::kInt64, {std::numeric_limits<int64_t>::min()});
  EXPECT_EQ(Int64s(RunOk(Node("Neg", 13, {min64}))), Int64s(min64));
  RunError(Node("Neg", 13, {MakeInts(DataType::kUint8, {1})}));  // Neg has no unsigned types
}

TEST(MathTest, SignOfFloats) {
  const std::vector<double> out = Doubles(RunOk(Node("Sign", 13, {Make(DataType::kFloat, {-2.5, -0.0, 0.0, 3, kNaN})})));
  EXPECT_EQ(out[0], -1);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], 1);
  EXPECT_TRUE(std::isnan(out[4]));
}

TEST(MathTest, RoundHalvesToEven) {
  const Tensor x = Make(DataType::kFloat, {0.5, 1.5, 2.5, -2.5, -0.5, 2.3, 0.9, -4.5});
  const std::vector<double> out = Doubles(RunOk(Node("Round", 11, {x})));
  EXPECT_EQ(out, (std::vector<double>{0, 2, 2, -2, -0.0, 2, 1, -4}));
  EXPECT_TRUE(std::signbit(out[4]));
}

TEST(MathTest, CeilFloor) {
  const Tensor x = Make(DataType::kFloat, {-1.5, 1.2, 2});
  EXPECT_EQ(Doubles(RunOk(Node("Ceil", 13, {x}))), (std::vector<double>{-1, 2, 2}));
  EXPECT_EQ(Doubles(RunOk(Node("Floor", 13, {x}))), (std::vector<double>{-2, 1, 2}));
}

TEST(MathTest, DomainErrorsGiveNaNAndInf) {
  const Tensor x = Make(DataType::kFloat, {-1, 0});
  const std::vector<double> sqrt = Doubles(RunOk(Node("Sqrt", 13, {x})));
  EXPECT_TRUE(std::isnan(sqrt[0]));
  EXPECT_EQ(sqrt[1], 0);
  const std::vector<double> log = Doubles(RunOk(Node("Log", 13, {x})));
  EXPECT_TRUE(std::isnan(log[0]));
  EXPECT_EQ(log[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Doubles(RunOk(Node("Reciprocal", 13, {x}))),
            (std::vector<double>{-1, std::numeric_limits<double>::infinity()}));
  EXPECT_TRUE(std::isnan(Doubles(RunOk(Node("Acosh", 9, {Make(DataType::kFloat, {0.5})})))[0]));
}

TEST(MathTest, TranscendentalsRoundOnceToFloat32) {
  const std::vector<double> xs = {0.25, 0.5, 0.75};
  const Tensor x = Make(DataType::kFloat, xs);
  struct Case {
    const char* op;
    int64_t opset;
    double (*f)(double);
  };
  const Case cases[] = {
      {"Exp", 13, [](double v) { return std::exp(v); }},   {"Sin", 7, [](double v) { return std::sin(v); }},
      {"Cos", 7, [](double v) { return std::cos(v); }},    {"Tan", 7, [](double v) { return std::tan(v); }},
      {"Asin", 7, [](double v) { return std::asin(v); }},  {"Acos", 7, [](double v) { return std::acos(v); }},
      {"Atan", 7, [](double v) { return std::atan(v); }},  {"Sinh", 9, [](double v) { return std::sinh(v); }},
      {"Cosh", 9, [](double v) { return std::cosh(v); }},  {"Tanh", 13, [](double v) { return std::tanh(v); }},
      {"Asinh", 9, [](double v) { return std::asinh(v); }}, {"Atanh", 9, [](double v) { return std::atanh(v); }},
      {"Erf", 13, [](double v) { return std::erf(v); }},
  };
  for (const Case& c : cases) {
    const Tensor out = RunOk(Node(c.op, c.opset, {x}));
    for (size_t i = 0; i < xs.size(); ++i) {
      // Make() rounded 0.25/0.5/0.75 exactly, so the expected value is f(x) rounded once.
      EXPECT_EQ(out.data<float>()[i], static_cast<float>(c.f(xs[i]))) << c.op << " at " << xs[i];
    }
  }
}

TEST(MathTest, IntegerErfTruncatesToZero) {
  EXPECT_EQ(Int64s(RunOk(Node("Erf", 9, {MakeInts(DataType::kInt32, {-3, 0, 3})}))), (std::vector<int64_t>{0, 0, 0}));
  RunError(Node("Erf", 13, {MakeInts(DataType::kInt32, {1})}));
}

TEST(MathTest, Bfloat16ResultIsRoundedFromDouble) {
  // exp(1) = 2.71828...: bfloat16 neighbours are 2.703125 and 2.71875; nearest is 2.71875.
  EXPECT_EQ(Doubles(RunOk(Node("Exp", 13, {Make(DataType::kBfloat16, {1})}))), (std::vector<double>{2.71875}));
  EXPECT_EQ(Doubles(RunOk(Node("Cos", 22, {Make(DataType::kBfloat16, {0})}))), (std::vector<double>{1}));
}

}  // namespace
}  // namespace parity::ops
