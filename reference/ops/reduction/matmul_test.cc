// Tests of MatMul (1-D operands, batch broadcasting, integers) and Gemm
// (transposes, alpha/beta, C broadcast, optional C, single rounding).
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::Int64Tensor;
using testing::RunOutput;

TEST(MatMulTest, VectorTimesMatrixDropsTheAddedAxis) {
  Tensor y = RunOutput(NodeRunner("MatMul").Opset(13).Input(Floats({2}, {1, 2})).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})));
  ExpectNear(y, {3}, {9, 12, 15});
}

TEST(MatMulTest, VectorDotVectorIsScalar) {
  Tensor y = RunOutput(NodeRunner("MatMul").Opset(13).Input(Floats({3}, {1, 2, 3})).Input(Floats({3}, {4, 5, 6})));
  ExpectNear(y, {}, {32});
}

TEST(MatMulTest, BatchBroadcast) {
  // A: [2,1,2] batch of two 1x2; B: [2,1] shared.
  Tensor y = RunOutput(NodeRunner("MatMul").Opset(13).Input(Floats({2, 1, 2}, {1, 2, 3, 4})).Input(Floats({2, 1}, {1, 1})));
  ExpectNear(y, {2, 1, 1}, {3, 7});
}

TEST(MatMulTest, Int64IsExact) {
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor y = RunOutput(NodeRunner("MatMul").Opset(13).Input(Int64Tensor({1, 2}, {big, 1})).Input(Int64Tensor({2, 1}, {1, 1})));
  EXPECT_EQ(y.GetInt64(0), big + 1);
}

TEST(MatMulTest, InnerDimensionMismatchIsAnError) {
  EXPECT_FALSE(NodeRunner("MatMul").Opset(13).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})).Input(Floats({2}, {1, 2})).Run().ok());
}

TEST(MatMulTest, FloatSumRoundsOnce) {
  // 1 + 2^-24 + 2^-24 in float32 steps would give 1 twice; in double it is 1 + 2^-23.
  const double tiny = 1.0 / (1 << 24);
  Tensor y = RunOutput(NodeRunner("MatMul").Opset(13).Input(Floats({1, 3}, {1, tiny, tiny})).Input(Floats({3, 1}, {1, 1, 1})));
  EXPECT_EQ(y.GetDouble(0), 1.0 + 2 * tiny);
}

TEST(GemmTest, TransposesAlphaBetaAndVectorBias) {
  // A' = [[1,2],[3,4]] given transposed; B' = I given transposed.
  Tensor y = RunOutput(NodeRunner("Gemm")
                           .Opset(13)
                           .Input(Floats({2, 2}, {1, 3, 2, 4}))
                           .Input(Floats({2, 2}, {1, 0, 0, 1}))
                           .Input(Floats({2}, {10, 20}))
                           .Attr("transA", int64_t{1})
                           .Attr("transB", int64_t{1})
                           .Attr("alpha", 2.0f)
                           .Attr("beta", 0.5f));
  ExpectNear(y, {2, 2}, {7, 14, 11, 18});
}

TEST(GemmTest, OptionalBias) {
  Tensor y = RunOutput(NodeRunner("Gemm").Opset(13).Input(Floats({1, 2}, {1, 2})).Input(Floats({2, 1}, {3, 4})));
  ExpectNear(y, {1, 1}, {11});
}

TEST(GemmTest, BiasThatDoesNotBroadcastIsAnError) {
  EXPECT_FALSE(NodeRunner("Gemm")
                   .Opset(13)
                   .Input(Floats({1, 2}, {1, 2}))
                   .Input(Floats({2, 1}, {3, 4}))
                   .Input(Floats({3}, {1, 2, 3}))
                   .Run()
                   .ok());
}

}  // namespace
}  // namespace parity::ops
