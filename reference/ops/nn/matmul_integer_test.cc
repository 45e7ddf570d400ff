// Tests of MatMulInteger and QLinearMatMul (matmul_integer.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::Make;
using testing::RunError;
using testing::RunOk;

TEST(MatMulInteger, PerRowZeroPointOfA) {
  Tensor y = RunOk(NodeRunner("MatMulInteger")
                       .Opset(10)
                       .Input(Make(DataType::kUint8, {2, 2}, {1, 2, 3, 4}))
                       .Input(Make(DataType::kInt8, {2, 1}, {1, 1}))
                       .Input(Make(DataType::kUint8, {2}, {1, 2})));
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 3}));
}

TEST(MatMulInteger, BroadcastsBatchesAndPerColumnZeroPointOfB) {
  Tensor y = RunOk(NodeRunner("MatMulInteger")
                       .Opset(10)
                       .Input(Make(DataType::kInt8, {2, 1, 2}, {1, 2, -1, -2}))
                       .Input(Make(DataType::kUint8, {2, 2}, {10, 20, 10, 20}))
                       .AbsentInput()
                       .Input(Make(DataType::kUint8, {2}, {10, 18})));
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0, 6, 0, -6}));
}

TEST(MatMulInteger, RejectsMismatchedInnerDimension) {
  std::string error = RunError(NodeRunner("MatMulInteger")
                                   .Opset(10)
                                   .Input(Make(DataType::kUint8, {2, 3}, {1, 2, 3, 4, 5, 6}))
                                   .Input(Make(DataType::kUint8, {2, 1}, {1, 1})));
  EXPECT_NE(error.find("do not agree"), std::string::npos) << error;
}

TEST(QLinearMatMul, RoundsThenAddsTheZeroPoint) {
  // Sum 2*1 + 4*1 = 6, times a_scale 0.5 = 3, over y_scale 2 = 1.5 -> 2, plus 1.
  Tensor y = RunOk(NodeRunner("QLinearMatMul")
                       .Opset(10)
                       .Input(Make(DataType::kUint8, {1, 2}, {2, 4}))
                       .Input(Floats({}, {0.5}))
                       .Input(Make(DataType::kUint8, {}, {0}))
                       .Input(Make(DataType::kUint8, {2, 1}, {1, 1}))
                       .Input(Floats({}, {1}))
                       .Input(Make(DataType::kUint8, {}, {0}))
                       .Input(Floats({}, {2}))
                       .Input(Make(DataType::kUint8, {}, {1})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{3}));
}

TEST(QLinearMatMul, Int8SaturatesAndFloat16Scales) {
  Tensor y = RunOk(NodeRunner("QLinearMatMul")
                       .Opset(21)
                       .Input(Make(DataType::kInt8, {1, 2}, {100, 100}))
                       .Input(Make(DataType::kFloat16, {}, {1}))
                       .Input(Make(DataType::kInt8, {}, {0}))
                       .Input(Make(DataType::kInt8, {2, 2}, {1, -1, 1, -1}))
                       .Input(Make(DataType::kFloat16, {}, {1}))
                       .Input(Make(DataType::kInt8, {}, {0}))
                       .Input(Make(DataType::kFloat16, {}, {1}))
                       .Input(Make(DataType::kInt8, {}, {0})));
  EXPECT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{127, -128}));
}

TEST(QLinearMatMul, AnEmptySumIsTheZeroPointWithScalesPerRowAndColumn) {
  // K = 0: every sum is 0, so every output is y_zero_point; the per-row and
  // per-column scales are read all the same (once out of bounds of A and B).
  Tensor y = RunOk(NodeRunner("QLinearMatMul")
                       .Opset(21)
                       .Input(Make(DataType::kUint8, {3, 0}, {}))
                       .Input(Floats({3}, {1, 2, 3}))
                       .Input(Make(DataType::kUint8, {}, {0}))
                       .Input(Make(DataType::kUint8, {0, 2}, {}))
                       .Input(Floats({2}, {0.5, 4}))
                       .Input(Make(DataType::kUint8, {}, {0}))
                       .Input(Floats({}, {2}))
                       .Input(Make(DataType::kUint8, {}, {7})));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>(6, 7)));
}

TEST(QLinearMatMul, PerRowAndPerColumnScalesMultiplyTheirOwnSums) {
  // Row sums 3 and 7 (B is ones); row scales 1 and 2, column scales 1 and 3.
  Tensor y = RunOk(NodeRunner("QLinearMatMul")
                       .Opset(21)
                       .Input(Make(DataType::kUint8, {2, 2}, {1, 2, 3, 4}))
                       .Input(Floats({2}, {1, 2}))
                       .Input(Make(DataType::kUint8, {}, {0}))
                       .Input(Make(DataType::kUint8, {2, 2}, {1, 1, 1, 1}))
                       .Input(Floats({2}, {1, 3}))
                       .Input(Make(DataType::kUint8, {}, {0}))
                       .Input(Floats({}, {1}))
                       .Input(Make(DataType::kUint8, {}, {0})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{3, 9, 14, 42}));
}

}  // namespace
}  // namespace parity::ops::nn
