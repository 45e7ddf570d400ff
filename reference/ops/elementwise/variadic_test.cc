// Tests of Max, Min, Sum, Mean (any number of inputs, broadcasting, NaN)
// and Clip (attribute bounds before opset 11, input bounds after).
#include <cmath>
#include <limits>

#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

TEST(VariadicTest, MaxMinOverThreeBroadcastInputs) {
  const Tensor a = Make(DataType::kFloat, {3}, {3, 2, 1});
  const Tensor b = Make(DataType::kFloat, {1}, {2});
  const Tensor c = Make(DataType::kFloat, {2, 1}, {0, 5});
  const Tensor max = RunOk(Node("Max", 13, {a, b, c}));
  EXPECT_EQ(max.shape(), (Shape{2, 3}));
  EXPECT_EQ(Doubles(max), (std::vector<double>{3, 2, 2, 5, 5, 5}));
  EXPECT_EQ(Doubles(RunOk(Node("Min", 13, {a, b, c}))), (std::vector<double>{0, 0, 0, 2, 2, 1}));
}

TEST(VariadicTest, OneInputIsACopy) {
  const Tensor a = MakeInts(DataType::kInt8, {-1, 4});
  EXPECT_EQ(Int64s(RunOk(Node("Max", 13, {a}))), (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(Doubles(RunOk(Node("Sum", 13, {Make(DataType::kFloat, {1.5})}))), (std::vector<double>{1.5}));
}

TEST(VariadicTest, MaxMinPropagateNaN) {
  const Tensor a = Make(DataType::kDouble, {kNaN, 1});
  const Tensor b = Make(DataType::kDouble, {1, kNaN});
  for (const char* op : {"Max", "Min"}) {
    const std::vector<double> out = Doubles(RunOk(Node(op, 13, {a, b})));
    EXPECT_TRUE(std::isnan(out[0])) << op;
    EXPECT_TRUE(std::isnan(out[1])) << op;
  }
}

TEST(VariadicTest, IntegersCompareExactly) {
  const Tensor a = MakeUint64s({UINT64_MAX, 1});
  const Tensor b = MakeUint64s({UINT64_MAX - 1, 2});
  const Tensor out = RunOk(Node("Max", 13, {a, b}));
  EXPECT_EQ(out.GetUint64(0), UINT64_MAX);
  EXPECT_EQ(out.GetUint64(1), 2u);
  RunError(Node("Max", 8, {MakeInts(DataType::kInt32, {1})}));  // integers from Max-12
}

TEST(VariadicTest, SumAndMeanRoundOnce) {
  // In float16, ((2048 + 1) + 1) rounds twice to 2048; the exact sum 2050 is representable.
  const Tensor a = Make(DataType::kFloat16, {2048});
  const Tensor one = Make(DataType::kFloat16, {1});
  EXPECT_EQ(Doubles(RunOk(Node("Sum", 13, {a, one, one}))), (std::vector<double>{2050}));
  EXPECT_EQ(Doubles(RunOk(Node("Mean", 13, {Make(DataType::kFloat, {1, 2}), Make(DataType::kFloat, {2, 2}),
                                              Make(DataType::kFloat, {3, 5})}))),
            (std::vector<double>{2, 3}));
}

TEST(VariadicTest, BeforeOpset8ShapesMustMatch) {
  const Tensor a = Make(DataType::kFloat, {1, 2});
  const Tensor b = Make(DataType::kFloat, {1});
  const std::string message = RunError(Node("Sum", 6, {a, b}));
  EXPECT_NE(message.find("same shape"), std::string::npos) << message;
  EXPECT_EQ(Doubles(RunOk(Node("Sum", 8, {a, b}))), (std::vector<double>{2, 3}));
}

TEST(VariadicTest, MixedTypesAreAnError) {
  EXPECT_NE(RunError(Node("Min", 13, {Make(DataType::kFloat, {1}), Make(DataType::kDouble, {1})}))
                .find("same element type, got float32 and float64"),
            std::string::npos);
}

TEST(ClipTest, Opset6DefaultsClipFloat64AtFloatMax) {
  // Clip-6's schema defaults min/max to -+FLT_MAX; Clip-1 has no default.
  Tensor x = Make(DataType::kDouble, {3}, {-1e300, 0.5, 1e300});
  const double fmax = static_cast<double>(std::numeric_limits<float>::max());
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 6, {x}))), (std::vector<double>{-fmax, 0.5, fmax}));
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 1, {x}))), (std::vector<double>{-1e300, 0.5, 1e300}));
}

TEST(ClipTest, InputBounds) {
  const Tensor x = Make(DataType::kFloat, {-2, 0, 2});
  const Tensor lo = Make(DataType::kFloat, {}, {-1});
  const Tensor hi = Make(DataType::kFloat, {}, {1});
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 13, {x, lo, hi}))), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 13, {x, lo}))), (std::vector<double>{-1, 0, 2}));
  NodeRunner max_only("Clip");
  max_only.Opset(13).Input(x).AbsentInput().Input(hi);
  EXPECT_EQ(Doubles(RunOk(max_only)), (std::vector<double>{-2, 0, 1}));
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 13, {x}))), (std::vector<double>{-2, 0, 2}));
}

TEST(ClipTest, MinAboveMaxGivesMax) {
  const Tensor x = Make(DataType::kFloat, {-2, 0, 6});
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 13, {x, Make(DataType::kFloat, {}, {2}), Make(DataType::kFloat, {}, {1})}))),
            (std::vector<double>{1, 1, 1}));
}

TEST(ClipTest, IntegersAndNaN) {
  const Tensor x = MakeInts(DataType::kInt8, {-128, 0, 127});
  EXPECT_EQ(Int64s(RunOk(Node("Clip", 13, {x, MakeInts(DataType::kInt8, {}, {0})}))),
            (std::vector<int64_t>{0, 0, 127}));
  RunError(Node("Clip", 11, {x}));  // integers from Clip-12
  const Tensor n = Make(DataType::kFloat, {kNaN});
  EXPECT_TRUE(std::isnan(Doubles(RunOk(Node("Clip", 13, {n, Make(DataType::kFloat, {}, {0})})))[0]));
}

TEST(ClipTest, BoundsMustBeScalarsOfTheInputsType) {
  const Tensor x = Make(DataType::kFloat, {1, 2});
  RunError(Node("Clip", 13, {x, Make(DataType::kFloat, {0, 1})}));
  RunError(Node("Clip", 13, {x, Make(DataType::kDouble, {}, {0})}));
}

TEST(ClipTest, AttributeBoundsBeforeOpset11) {
  const Tensor x = Make(DataType::kDouble, {-1e300, 0.5, 1e300});
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 6, {x}).Attr("min", -1.0f).Attr("max", 1.0f))),
            (std::vector<double>{-1, 0.5, 1}));
  // An absent max takes Clip-6's schema default, FLT_MAX (spec/findings.md, ELT-3).
  EXPECT_EQ(Doubles(RunOk(Node("Clip", 6, {x}).Attr("min", 0.0f))),
            (std::vector<double>{0, 0.5, static_cast<double>(std::numeric_limits<float>::max())}));
}

}  // namespace
}  // namespace parity::ops
