// Tests of QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (quantize.cc).
#include <cmath>

#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Make;
using testing::RunAll;
using testing::RunError;
using testing::RunOk;

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  Tensor y = RunOk(NodeRunner("QuantizeLinear")
                       .Opset(10)
                       .Input(Floats({6}, {0, 1, 2.5, 3.5, -1, 1000}))
                       .Input(Floats({}, {1})));
  EXPECT_EQ(y.dtype(), DataType::kUint8);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{0, 1, 2, 4, 0, 255}));
}

TEST(QuantizeLinear, ZeroPointIsAddedAfterRounding) {
  Tensor y = RunOk(NodeRunner("QuantizeLinear")
                       .Opset(13)
                       .Input(Floats({2}, {0.5, 1.5}))
                       .Input(Floats({}, {1}))
                       .Input(Make(DataType::kInt8, {}, {1})));
  EXPECT_EQ(y.dtype(), DataType::kInt8);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 3}));
}

TEST(QuantizeLinear, PerAxis) {
  Tensor y = RunOk(NodeRunner("QuantizeLinear")
                       .Opset(13)
                       .Input(Floats({2, 2}, {1, 2, 3, 4}))
                       .Input(Floats({2}, {1, 2}))
                       .Input(Make(DataType::kUint8, {2}, {0, 10}))
                       .Attr("axis", I(0)));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 2, 12, 12}));
}

TEST(QuantizeLinear, BlockedWithARemainderBlock) {
  Tensor y = RunOk(NodeRunner("QuantizeLinear")
                       .Opset(21)
                       .Input(Floats({1, 5}, {1, 2, 3, 4, 5}))
                       .Input(Floats({1, 3}, {1, 2, 5}))
                       .Attr("axis", I(1))
                       .Attr("block_size", I(2)));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{1, 2, 2, 2, 1}));
}

TEST(QuantizeLinear, RejectsBlockSizeThatDoesNotMatchTheScale) {
  std::string error = RunError(NodeRunner("QuantizeLinear")
                                   .Opset(21)
                                   .Input(Floats({1, 5}, {1, 2, 3, 4, 5}))
                                   .Input(Floats({1, 2}, {1, 2}))
                                   .Attr("axis", I(1))
                                   .Attr("block_size", I(2)));
  EXPECT_NE(error.find("block_size"), std::string::npos) << error;
}

TEST(QuantizeLinear, Int4AndInt2Saturate) {
  Tensor y4 = RunOk(NodeRunner("QuantizeLinear")
                        .Opset(21)
                        .Input(Floats({2}, {100, -100}))
                        .Input(Floats({}, {1}))
                        .Input(Make(DataType::kInt4, {}, {0})));
  EXPECT_EQ(y4.ToDoubles(), (std::vector<double>{7, -8}));
  Tensor y2 = RunOk(NodeRunner("QuantizeLinear")
                        .Opset(25)
                        .Input(Floats({2}, {100, -100}))
                        .Input(Floats({}, {1}))
                        .Attr("output_dtype", I(static_cast<int64_t>(DataType::kInt2))));
  EXPECT_EQ(y2.dtype(), DataType::kInt2);
  EXPECT_EQ(y2.ToDoubles(), (std::vector<double>{1, -2}));
}

TEST(QuantizeLinear, Float8SaturatesUnlessAskedNotTo) {
  auto run = [](int64_t saturate) {
    return RunOk(NodeRunner("QuantizeLinear")
                     .Opset(21)
                     .Input(Floats({1}, {1000}))
                     .Input(Floats({}, {1}))
                     .Attr("output_dtype", I(static_cast<int64_t>(DataType::kFloat8E4M3FN)))
                     .Attr("saturate", saturate));
  };
  EXPECT_EQ(run(1).GetDouble(0), 448);
  EXPECT_TRUE(std::isnan(run(0).GetDouble(0)));
}

TEST(QuantizeLinear, DivisionHappensInTheScalePrecision) {
  // 0.25 / float16(0.1) = 2.50061...: exactly it rounds to 3, but in float16
  // the quotient is 2.5, which rounds half to even to 2.
  Tensor y = RunOk(NodeRunner("QuantizeLinear")
                       .Opset(21)
                       .Input(Make(DataType::kFloat16, {1}, {0.25}))
                       .Input(Make(DataType::kFloat16, {}, {0.1})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{2}));
}

TEST(QuantizeLinear, RejectsZeroPointTypeConflictingWithOutputDtype) {
  std::string error = RunError(NodeRunner("QuantizeLinear")
                                   .Opset(21)
                                   .Input(Floats({1}, {1}))
                                   .Input(Floats({}, {1}))
                                   .Input(Make(DataType::kUint8, {}, {0}))
                                   .Attr("output_dtype", I(static_cast<int64_t>(DataType::kInt8))));
  EXPECT_NE(error.find("output_dtype"), std::string::npos) << error;
}

TEST(DequantizeLinear, SubtractsZeroPointAndScales) {
  Tensor y = RunOk(NodeRunner("DequantizeLinear")
                       .Opset(10)
                       .Input(Make(DataType::kInt8, {2}, {-128, 127}))
                       .Input(Floats({}, {0.5}))
                       .Input(Make(DataType::kInt8, {}, {-1})));
  EXPECT_EQ(y.dtype(), DataType::kFloat);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{-63.5, 64}));
}

TEST(DequantizeLinear, BlockedAndOutputDtype) {
  Tensor y = RunOk(NodeRunner("DequantizeLinear")
                       .Opset(23)
                       .Input(Make(DataType::kUint4, {3, 1}, {1, 2, 3}))
                       .Input(Floats({2, 1}, {2, 10}))
                       .Attr("axis", I(0))
                       .Attr("block_size", I(2))
                       .Attr("output_dtype", I(static_cast<int64_t>(DataType::kFloat16))));
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{2, 4, 30}));
}

TEST(DequantizeLinear, Float8Input) {
  Tensor y = RunOk(NodeRunner("DequantizeLinear")
                       .Opset(19)
                       .Input(Make(DataType::kFloat8E5M2, {2}, {0.5, -3}))
                       .Input(Floats({}, {4})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{2, -12}));
}

TEST(DynamicQuantizeLinear, ScaleZeroPointAndValues) {
  StatusOr<std::vector<Value>> out =
      RunAll(NodeRunner("DynamicQuantizeLinear").Opset(11).Outputs(3).Input(Floats({3}, {-255, 0, 0})));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().ToDoubles(), (std::vector<double>{0, 255, 255}));
  EXPECT_EQ((*out)[1].tensor().ToDoubles(), (std::vector<double>{1}));
  EXPECT_EQ((*out)[2].tensor().ToDoubles(), (std::vector<double>{255}));
}

TEST(DynamicQuantizeLinear, AllZerosUsesScaleOneOver255) {
  StatusOr<std::vector<Value>> out =
      RunAll(NodeRunner("DynamicQuantizeLinear").Opset(11).Outputs(3).Input(Floats({2}, {0, 0})));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().ToDoubles(), (std::vector<double>{0, 0}));
  EXPECT_EQ((*out)[1].tensor().GetDouble(0), static_cast<double>(1.0f / 255.0f));
}

}  // namespace
}  // namespace parity::ops::nn
