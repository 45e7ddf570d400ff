// Tests of the Reduce* kernels: axes as attribute and input, keepdims,
// noop_with_empty_axes, empty-set identities and exact integer arithmetic.
#include <cmath>
#include <limits>

#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::Int64Tensor;
using testing::Make;
using testing::RunOutput;

const std::vector<double> k2x3 = {1, 2, 3, 4, 5, 6};

TEST(ReduceTest, SumAxesInputKeepdims) {
  Tensor y = RunOutput(NodeRunner("ReduceSum").Opset(13).Input(Floats({2, 3}, k2x3)).Input(Int64Tensor({1}, {1})));
  ExpectNear(y, {2, 1}, {6, 15});
}

TEST(ReduceTest, SumAxesAttributeBeforeOpset13) {
  Tensor y = RunOutput(
      NodeRunner("ReduceSum").Opset(11).Input(Floats({2, 3}, k2x3)).Attr("axes", std::vector<int64_t>{0}).Attr("keepdims", int64_t{0}));
  ExpectNear(y, {3}, {5, 7, 9});
}

TEST(ReduceTest, MissingAxesReducesEverything) {
  Tensor y = RunOutput(NodeRunner("ReduceMean").Opset(18).Input(Floats({2, 3}, k2x3)));
  ExpectNear(y, {1, 1}, {3.5});
}

TEST(ReduceTest, NoopWithEmptyAxesReducesSingletons) {
  Tensor y = RunOutput(NodeRunner("ReduceSumSquare")
                           .Opset(18)
                           .Input(Floats({2, 3}, k2x3))
                           .Input(Int64Tensor({0}, {}))
                           .Attr("noop_with_empty_axes", int64_t{1}));
  ExpectNear(y, {2, 3}, {1, 4, 9, 16, 25, 36});
}

TEST(ReduceTest, NegativeAxis) {
  Tensor y = RunOutput(NodeRunner("ReduceMax").Opset(18).Input(Floats({2, 3}, k2x3)).Input(Int64Tensor({1}, {-1})));
  ExpectNear(y, {2, 1}, {3, 6});
}

TEST(ReduceTest, EmptySetIdentities) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor empty = Floats({2, 0, 4}, {});
  struct Case {
    const char* op;
    double expected;
  } cases[] = {{"ReduceSum", 0},       {"ReduceProd", 1},  {"ReduceMax", -inf},      {"ReduceMin", inf},
               {"ReduceLogSum", -inf}, {"ReduceL2", 0},    {"ReduceLogSumExp", -inf}, {"ReduceSumSquare", 0}};
  for (const Case& c : cases) {
    Tensor y = RunOutput(NodeRunner(c.op).Opset(18).Input(empty).Input(Int64Tensor({1}, {1})));
    ASSERT_EQ(y.shape(), (Shape{2, 1, 4})) << c.op;
    EXPECT_EQ(y.GetDouble(0), c.expected) << c.op;
  }
}

TEST(ReduceTest, EmptySetIntegerMaxIsTypeMinimum) {
  Tensor y = RunOutput(NodeRunner("ReduceMax").Opset(20).Input(Make(DataType::kInt32, {0}, {})).Input(Int64Tensor({1}, {0})));
  EXPECT_EQ(y.GetInt64(0), std::numeric_limits<int32_t>::min());
}

TEST(ReduceTest, BoolMaxAndMin) {
  const Tensor b = Make(DataType::kBool, {2, 2}, {1, 0, 0, 0});
  Tensor mx = RunOutput(NodeRunner("ReduceMax").Opset(20).Input(b).Input(Int64Tensor({1}, {1})));
  Tensor mn = RunOutput(NodeRunner("ReduceMin").Opset(20).Input(b).Input(Int64Tensor({1}, {1})));
  EXPECT_EQ(mx.dtype(), DataType::kBool);
  EXPECT_EQ(mx.ToInt64s(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(mn.ToInt64s(), (std::vector<int64_t>{0, 0}));
}

TEST(ReduceTest, Int64SumIsExactBeyondDoublePrecision) {
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor y = RunOutput(NodeRunner("ReduceSum").Opset(13).Input(Int64Tensor({2}, {big, 2})));
  EXPECT_EQ(y.GetInt64(0), big + 2);
}

TEST(ReduceTest, Int32ProdWraps) {
  Tensor y = RunOutput(NodeRunner("ReduceProd").Opset(18).Input(Make(DataType::kInt32, {2}, {65536, 65536})));
  EXPECT_EQ(y.GetInt64(0), 0);  // 2^32 wraps to 0 in int32
}

TEST(ReduceTest, MaxPropagatesNaN) {
  Tensor y = RunOutput(NodeRunner("ReduceMax").Opset(18).Input(Floats({3}, {1, NAN, 2})));
  EXPECT_TRUE(std::isnan(y.GetDouble(0)));
}

TEST(ReduceTest, LogSumExpIsStableForLargeValues) {
  Tensor y = RunOutput(NodeRunner("ReduceLogSumExp").Opset(18).Input(Make(DataType::kDouble, {2}, {1000, 1000})));
  EXPECT_NEAR(y.GetDouble(0), 1000 + std::log(2.0), 1e-12);
}

TEST(ReduceTest, L1AndLogSum) {
  Tensor l1 = RunOutput(NodeRunner("ReduceL1").Opset(18).Input(Floats({3}, {-1, 2, -3})));
  ExpectNear(l1, {1}, {6});
  Tensor ls = RunOutput(NodeRunner("ReduceLogSum").Opset(18).Input(Floats({2}, {1, 2})).Attr("keepdims", int64_t{0}));
  ExpectNear(ls, {}, {std::log(3.0)});
}

TEST(ReduceTest, DuplicateAxisIsAnError) {
  StatusOr<std::vector<Value>> out =
      NodeRunner("ReduceSum").Opset(13).Input(Floats({2, 3}, k2x3)).Input(Int64Tensor({2}, {1, -1})).Run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("twice"), std::string::npos) << out.status().message();
}

TEST(ReduceTest, OutOfRangeAxisIsAnError) {
  EXPECT_FALSE(NodeRunner("ReduceMean").Opset(18).Input(Floats({2, 3}, k2x3)).Input(Int64Tensor({1}, {2})).Run().ok());
}

}  // namespace
}  // namespace parity::ops
