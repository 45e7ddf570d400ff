// Tests of Conv, ConvInteger and QLinearConv (conv.cc).
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Ints;
using testing::Iota;
using testing::Make;
using testing::RunError;
using testing::RunOk;

TEST(Conv, SumsTwoByTwoWindows) {
  Tensor y = RunOk(NodeRunner("Conv").Opset(22).Input(Iota({1, 1, 3, 3})).Input(Floats({1, 1, 2, 2}, {1, 1, 1, 1})));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{8, 12, 20, 24}));
}

TEST(Conv, PadsAndStrides) {
  // 3x3 ones over a 1-padded 3x3 input with stride 2: the four corner windows.
  Tensor y = RunOk(NodeRunner("Conv")
                       .Opset(11)
                       .Input(Iota({1, 1, 3, 3}))
                       .Input(Floats({1, 1, 3, 3}, std::vector<double>(9, 1.0)))
                       .Attr("pads", Ints({1, 1, 1, 1}))
                       .Attr("strides", Ints({2, 2})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{8, 12, 20, 24}));
}

TEST(Conv, GroupsAndBias) {
  Tensor y = RunOk(NodeRunner("Conv")
                       .Opset(22)
                       .Input(Floats({1, 2, 1, 2}, {1, 1, 2, 2}))
                       .Input(Floats({2, 1, 1, 1}, {3, 5}))
                       .Input(Floats({2}, {100, 200}))
                       .Attr("group", I(2)));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{103, 103, 210, 210}));
}

TEST(Conv, DilatedOneDimensional) {
  Tensor y = RunOk(NodeRunner("Conv")
                       .Opset(22)
                       .Input(Iota({1, 1, 5}))
                       .Input(Floats({1, 1, 2}, {1, 1}))
                       .Attr("dilations", Ints({2})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{2, 4, 6}));
}

TEST(Conv, SameUpperPadsTheEndSameLowerTheBeginning) {
  auto run = [](const char* mode) {
    return RunOk(NodeRunner("Conv")
                     .Opset(22)
                     .Input(Floats({1, 1, 4}, {1, 2, 3, 4}))
                     .Input(Floats({1, 1, 2}, {1, 1}))
                     .Attr("auto_pad", std::string(mode)))
        .ToDoubles();
  };
  EXPECT_EQ(run("SAME_UPPER"), (std::vector<double>{3, 5, 7, 4}));
  EXPECT_EQ(run("SAME_LOWER"), (std::vector<double>{1, 3, 5, 7}));
  EXPECT_EQ(run("VALID"), (std::vector<double>{3, 5, 7}));
}

TEST(Conv, ThreeDimensionalAndFloat16) {
  Tensor y = RunOk(NodeRunner("Conv")
                       .Opset(22)
                       .Input(Make(DataType::kFloat16, {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))
                       .Input(Make(DataType::kFloat16, {1, 1, 2, 2, 2}, std::vector<double>(8, 0.5))));
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{18}));
}

TEST(Conv, RejectsChannelMismatch) {
  std::string error = RunError(NodeRunner("Conv").Opset(22).Input(Iota({1, 2, 3, 3})).Input(Iota({1, 3, 2, 2})));
  EXPECT_NE(error.find("group"), std::string::npos) << error;
}

TEST(Conv, RejectsKernelThatDoesNotFit) {
  std::string error = RunError(NodeRunner("Conv").Opset(22).Input(Iota({1, 1, 2, 2})).Input(Iota({1, 1, 3, 3})));
  EXPECT_NE(error.find("does not fit"), std::string::npos) << error;
}

TEST(ConvInteger, SubtractsZeroPointsAndReturnsInt32) {
  Tensor y = RunOk(NodeRunner("ConvInteger")
                       .Opset(10)
                       .Input(Make(DataType::kUint8, {1, 1, 2, 2}, {2, 3, 4, 5}))
                       .Input(Make(DataType::kInt8, {1, 1, 1, 1}, {2}))
                       .Input(Make(DataType::kUint8, {}, {1})));
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{2, 4, 6, 8}));
}

TEST(ConvInteger, PerChannelWeightZeroPoint) {
  Tensor y = RunOk(NodeRunner("ConvInteger")
                       .Opset(10)
                       .Input(Make(DataType::kUint8, {1, 1, 1, 1}, {3}))
                       .Input(Make(DataType::kUint8, {2, 1, 1, 1}, {10, 10}))
                       .AbsentInput()
                       .Input(Make(DataType::kUint8, {2}, {1, 2})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{27, 24}));
}

TEST(QLinearConv, RoundsHalfToEvenBeforeAddingTheZeroPoint) {
  // Real results 0 and 5; 5 / y_scale 2 = 2.5 rounds to 2, plus zero point 3.
  Tensor y = RunOk(NodeRunner("QLinearConv")
                       .Opset(10)
                       .Input(Make(DataType::kUint8, {1, 1, 1, 2}, {10, 20}))
                       .Input(Floats({}, {0.5}))
                       .Input(Make(DataType::kUint8, {}, {10}))
                       .Input(Make(DataType::kInt8, {1, 1, 1, 1}, {4}))
                       .Input(Floats({}, {0.25}))
                       .Input(Make(DataType::kInt8, {}, {0}))
                       .Input(Floats({}, {2}))
                       .Input(Make(DataType::kUint8, {}, {3})));
  EXPECT_EQ(y.dtype(), DataType::kUint8);
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{3, 5}));
}

TEST(QLinearConv, BiasAndSaturation) {
  Tensor y = RunOk(NodeRunner("QLinearConv")
                       .Opset(10)
                       .Input(Make(DataType::kInt8, {1, 1, 1, 2}, {100, -100}))
                       .Input(Floats({}, {1}))
                       .Input(Make(DataType::kInt8, {}, {0}))
                       .Input(Make(DataType::kInt8, {1, 1, 1, 1}, {2}))
                       .Input(Floats({}, {1}))
                       .Input(Make(DataType::kInt8, {}, {0}))
                       .Input(Floats({}, {1}))
                       .Input(Make(DataType::kInt8, {}, {0}))
                       .Input(Make(DataType::kInt32, {1}, {-50})));
  EXPECT_EQ(y.ToDoubles(), (std::vector<double>{127, -128}));
}

}  // namespace
}  // namespace parity::ops::nn

namespace parity::ops::nn {
namespace {

// Conv's kernel on its own context, so that the conventional arithmetic
// (float32_sums) can be chosen.
Tensor RunConvKernel(const Tensor& x, const Tensor& w, bool float32_sums) {
  onnx::NodeProto node;
  node.set_op_type("Conv");
  node.add_input("x");
  node.add_input("w");
  node.add_output("y");
  const Value vx = Value::FromTensor(x), vw = Value::FromTensor(w);
  KernelContext ctx(node, {&vx, &vw}, 22, nullptr);
  ctx.set_float32_sums(float32_sums);
  StatusOr<std::vector<Value>> out = Conv(ctx);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)[0].tensor() : Tensor();
}

TEST(Conv, TheConventionalArithmeticSumsTheWindowInFloat32Steps) {
  // 1e8 + 1 is 1e8 in float32, so float32 steps lose the 1 that the exact sum keeps.
  const Tensor x = Floats({1, 1, 3}, {1e8, 1, -1e8});
  const Tensor w = Floats({1, 1, 3}, {1, 1, 1});
  EXPECT_EQ(RunConvKernel(x, w, false).ToDoubles(), std::vector<double>{1});
  EXPECT_EQ(RunConvKernel(x, w, true).ToDoubles(), std::vector<double>{0});
}

}  // namespace
}  // namespace parity::ops::nn
