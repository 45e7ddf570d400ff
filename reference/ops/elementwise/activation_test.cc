// Tests of the activation functions: formulas and defaults of each schema,
// stability at large |x|, NaN propagation, PRelu's slope broadcasting.
#include <cmath>
#include <numbers>

#include "reference/ops/elementwise/test_support.h"

namespace parity::ops {
namespace {

using namespace elementwise_test;

TEST(ActivationTest, ReluOnFloatsAndIntegers) {
  EXPECT_EQ(Doubles(RunOk(Node("Relu", 14, {Make(DataType::kFloat, {-1, 0, 2})}))), (std::vector<double>{0, 0, 2}));
  EXPECT_EQ(Int64s(RunOk(Node("Relu", 14, {MakeInts(DataType::kInt8, {-128, 127})}))), (std::vector<int64_t>{0, 127}));
  EXPECT_NE(RunError(Node("Relu", 13, {MakeInts(DataType::kInt8, {1})})).find("element type int8"),
            std::string::npos);  // integers from Relu-14
  EXPECT_TRUE(std::isnan(Doubles(RunOk(Node("Relu", 14, {Make(DataType::kFloat, {kNaN})})))[0]));
}

TEST(ActivationTest, LeakyReluEluSeluDefaults) {
  const Tensor x = Make(DataType::kDouble, {-1, 2});
  EXPECT_EQ(Doubles(RunOk(Node("LeakyRelu", 16, {x}))), (std::vector<double>{-static_cast<double>(0.01f), 2}));
  EXPECT_EQ(Doubles(RunOk(Node("LeakyRelu", 16, {x}).Attr("alpha", 0.5f))), (std::vector<double>{-0.5, 2}));
  EXPECT_EQ(Doubles(RunOk(Node("Elu", 6, {x}))), (std::vector<double>{std::expm1(-1.0), 2}));
  const double alpha = 1.67326319217681884765625;
  const double gamma = 1.05070102214813232421875;
  EXPECT_EQ(Doubles(RunOk(Node("Selu", 6, {x}))), (std::vector<double>{gamma * alpha * std::expm1(-1.0), gamma * 2}));
}

TEST(ActivationTest, CeluAndThresholdedRelu) {
  const Tensor x = Make(DataType::kDouble, {-2, 0.5, 3});
  EXPECT_EQ(Doubles(RunOk(Node("Celu", 28, {x}).Attr("alpha", 2.0f))),
            (std::vector<double>{2 * std::expm1(-1.0), 0.5, 3}));
  RunError(Node("Celu", 12, {x}));  // Celu-12: float32 only
  EXPECT_TRUE(std::isnan(Doubles(RunOk(Node("Celu", 28, {Make(DataType::kDouble, {kNaN})})))[0]));
  EXPECT_EQ(Doubles(RunOk(Node("ThresholdedRelu", 10, {x}))), (std::vector<double>{0, 0, 3}));
}

TEST(ActivationTest, SigmoidSoftplusMishAreStableAtLargeMagnitudes) {
  const Tensor x = Make(DataType::kDouble, {-800, 800, -40});
  const std::vector<double> sigmoid = Doubles(RunOk(Node("Sigmoid", 13, {x})));
  EXPECT_EQ(sigmoid[0], 0);
  EXPECT_EQ(sigmoid[1], 1);
  EXPECT_DOUBLE_EQ(sigmoid[2], std::exp(-40.0) / (1 + std::exp(-40.0)));
  const std::vector<double> softplus = Doubles(RunOk(Node("Softplus", 1, {x})));
  EXPECT_EQ(softplus[0], 0);
  EXPECT_EQ(softplus[1], 800);  // not inf
  EXPECT_DOUBLE_EQ(softplus[2], std::log1p(std::exp(-40.0)));
  EXPECT_EQ(Doubles(RunOk(Node("Mish", 18, {x})))[1], 800);
}

TEST(ActivationTest, HardSigmoidHardSwishSoftsign) {
  const Tensor x = Make(DataType::kDouble, {-4, 0, 1, 4, kNaN});
  const std::vector<double> hs = Doubles(RunOk(Node("HardSigmoid", 6, {x})));
  EXPECT_EQ(hs[0], 0);
  EXPECT_EQ(hs[1], 0.5);
  EXPECT_EQ(hs[2], static_cast<double>(0.2f) + 0.5);
  EXPECT_EQ(hs[3], 1);
  EXPECT_TRUE(std::isnan(hs[4]));
  const std::vector<double> swish = Doubles(RunOk(Node("HardSwish", 14, {x})));
  EXPECT_EQ(swish[0], 0);
  EXPECT_EQ(swish[2], 1 * (1.0 / 6 + 0.5));
  EXPECT_EQ(swish[3], 4);
  EXPECT_TRUE(std::isnan(swish[4]));
  EXPECT_EQ(Doubles(RunOk(Node("Softsign", 1, {Make(DataType::kDouble, {-3, 1})}))),
            (std::vector<double>{-0.75, 0.5}));
}

TEST(ActivationTest, GeluExactAndTanh) {
  const Tensor x = Make(DataType::kDouble, {-1, 0, 1});
  const std::vector<double> exact = Doubles(RunOk(Node("Gelu", 20, {x})));
  EXPECT_DOUBLE_EQ(exact[2], 0.5 * (1 + std::erf(1 / std::sqrt(2.0))));
  EXPECT_DOUBLE_EQ(exact[0], -0.5 * (1 + std::erf(-1 / std::sqrt(2.0))));
  const std::vector<double> approx = Doubles(RunOk(Node("Gelu", 20, {x}).Attr("approximate", std::string("tanh"))));
  EXPECT_DOUBLE_EQ(approx[2], 0.5 * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (1 + 0.044715))));
  RunError(Node("Gelu", 20, {x}).Attr("approximate", std::string("erf")));
  // Far in the negative tail, x * Phi(x) is tiny but not zero.
  EXPECT_GT(-Doubles(RunOk(Node("Gelu", 20, {Make(DataType::kDouble, {-30})})))[0], 0);
}

TEST(ActivationTest, ShrinkOnFloatsAndIntegers) {
  const Tensor x = Make(DataType::kFloat, {-2, -0.5, 0, 1, 2});
  EXPECT_EQ(Doubles(RunOk(Node("Shrink", 9, {x}).Attr("lambd", 1.5f))), (std::vector<double>{-2, 0, 0, 0, 2}));
  EXPECT_EQ(Doubles(RunOk(Node("Shrink", 9, {x}).Attr("lambd", 0.5f).Attr("bias", 1.5f))),
            (std::vector<double>{-0.5, 0, 0, -0.5, 0.5}));
  EXPECT_EQ(Int64s(RunOk(Node("Shrink", 9, {MakeInts(DataType::kInt32, {-5, 0, 5})}).Attr("bias", 2.0f))),
            (std::vector<int64_t>{-3, 0, 3}));
}

TEST(ActivationTest, SwishUsesAlpha) {
  const Tensor x = Make(DataType::kDouble, {2});
  EXPECT_DOUBLE_EQ(Doubles(RunOk(Node("Swish", 24, {x}).Attr("alpha", 0.5f)))[0], 2 / (1 + std::exp(-1.0)));
}

TEST(PReluTest, SlopeBroadcastsToX) {
  const Tensor x = Make(DataType::kFloat, {2, 2}, {-1, 2, -3, 0});
  const Tensor slope = Make(DataType::kFloat, {2}, {0.5, -2});
  const std::vector<double> out = Doubles(RunOk(Node("PRelu", 16, {x, slope})));
  EXPECT_EQ(out, (std::vector<double>{-0.5, 2, -1.5, 0}));
  EXPECT_FALSE(std::signbit(out[3]));  // x >= 0 gives x, never slope * 0 = -0
}

TEST(PReluTest, SlopeMayNotWidenX) {
  const Tensor x = Make(DataType::kFloat, {2}, {-1, 2});
  const std::string message = RunError(Node("PRelu", 16, {x, Make(DataType::kFloat, {2, 2}, {1, 1, 1, 1})}));
  EXPECT_NE(message.find("slope"), std::string::npos) << message;
}

TEST(PReluTest, IntegersAndChannelSlopesBeforeOpset7) {
  EXPECT_EQ(Int64s(RunOk(Node("PRelu", 9, {MakeInts(DataType::kInt32, {-3, 4}), MakeInts(DataType::kInt32, {2})}))),
            (std::vector<int64_t>{-6, 4}));
  // PRelu-6: a 1-D slope of X's channel count applies per channel (dimension 1).
  const Tensor x = Make(DataType::kFloat, {1, 2, 2}, {-1, -1, -1, -1});
  const Tensor slope = Make(DataType::kFloat, {2}, {1, 2});
  EXPECT_EQ(Doubles(RunOk(Node("PRelu", 6, {x, slope}))), (std::vector<double>{-1, -1, -2, -2}));
  // PRelu-7 broadcasts numpy-style instead: the slope runs along the last dimension.
  EXPECT_EQ(Doubles(RunOk(Node("PRelu", 7, {x, slope}))), (std::vector<double>{-1, -2, -1, -2}));
}

}  // namespace
}  // namespace parity::ops
