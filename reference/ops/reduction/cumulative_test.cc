// Tests of CumSum and CumProd: exclusive, reverse, axis input, integers.
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::Int64Tensor;
using testing::Make;
using testing::RunOutput;

TEST(CumulativeTest, CumSumModes) {
  const Tensor x = Floats({4}, {1, 2, 3, 4});
  const Tensor axis = Int64Tensor({}, {0});
  ExpectNear(RunOutput(NodeRunner("CumSum").Opset(14).Input(x).Input(axis)), {4}, {1, 3, 6, 10});
  ExpectNear(RunOutput(NodeRunner("CumSum").Opset(14).Input(x).Input(axis).Attr("exclusive", int64_t{1})), {4},
             {0, 1, 3, 6});
  ExpectNear(RunOutput(NodeRunner("CumSum").Opset(14).Input(x).Input(axis).Attr("reverse", int64_t{1})), {4},
             {10, 9, 7, 4});
  ExpectNear(RunOutput(NodeRunner("CumSum")
                           .Opset(14)
                           .Input(x)
                           .Input(axis)
                           .Attr("reverse", int64_t{1})
                           .Attr("exclusive", int64_t{1})),
             {4}, {9, 7, 4, 0});
}

TEST(CumulativeTest, CumProdAlongNegativeAxisInt32) {
  Tensor y = RunOutput(
      NodeRunner("CumProd").Opset(26).Input(Make(DataType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6})).Input(Int64Tensor({1}, {-1})));
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.ToInt64s(), (std::vector<int64_t>{1, 2, 6, 4, 20, 120}));
}

TEST(CumulativeTest, ExclusiveCumProdStartsAtOne) {
  ExpectNear(RunOutput(NodeRunner("CumProd").Opset(26).Input(Floats({3}, {2, 3, 4})).Input(Int64Tensor({}, {0})).Attr(
                 "exclusive", int64_t{1})),
             {3}, {1, 2, 6});
}

TEST(CumulativeTest, AxisMustBeOneElement) {
  EXPECT_FALSE(NodeRunner("CumSum").Opset(14).Input(Floats({3}, {1, 2, 3})).Input(Int64Tensor({2}, {0, 0})).Run().ok());
}

}  // namespace
}  // namespace parity::ops
