// Tests of Det: pivoting, singular and batched matrices.
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::RunOutput;

TEST(DetTest, NeedsPivotingAndBatches) {
  // [[0, 1], [1, 0]] (det -1, zero first pivot) and [[1, 2], [2, 4]] (singular).
  Tensor y = RunOutput(NodeRunner("Det").Opset(22).Input(Floats({2, 2, 2}, {0, 1, 1, 0, 1, 2, 2, 4})));
  ExpectNear(y, {2}, {-1, 0}, 1e-12);
}

TEST(DetTest, ThreeByThree) {
  Tensor y = RunOutput(NodeRunner("Det").Opset(22).Input(Floats({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2})));
  ExpectNear(y, {}, {6}, 1e-6);
}

TEST(DetTest, NonSquareIsAnError) {
  EXPECT_FALSE(NodeRunner("Det").Opset(22).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})).Run().ok());
}

}  // namespace
}  // namespace parity::ops
