// Tests of Softmax, LogSoftmax and Hardmax: axis semantics before and after
// opset 13, stability for large inputs, first-maximum rule of Hardmax.
#include <cmath>

#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::RunOutput;

TEST(SoftmaxTest, LastAxisFromOpset13) {
  const double e = std::exp(1.0);
  Tensor y = RunOutput(NodeRunner("Softmax").Opset(13).Input(Floats({2, 2}, {0, 1, 1, 1})));
  ExpectNear(y, {2, 2}, {1 / (1 + e), e / (1 + e), 0.5, 0.5});
}

TEST(SoftmaxTest, CoercesTo2DBeforeOpset13) {
  // Opset 11, axis 1 on [1, 2, 2]: one row of four elements.
  Tensor y = RunOutput(NodeRunner("Softmax").Opset(11).Input(Floats({1, 2, 2}, {0, 0, 0, 0})));
  ExpectNear(y, {1, 2, 2}, {0.25, 0.25, 0.25, 0.25});
  // Opset 13 with axis 1 normalises pairs along axis 1 only.
  Tensor z = RunOutput(NodeRunner("Softmax").Opset(13).Input(Floats({1, 2, 2}, {0, 0, 0, 0})).Attr("axis", int64_t{1}));
  ExpectNear(z, {1, 2, 2}, {0.5, 0.5, 0.5, 0.5});
}

TEST(SoftmaxTest, LargeInputsDoNotOverflow) {
  Tensor y = RunOutput(NodeRunner("LogSoftmax").Opset(13).Input(Floats({2}, {10000, 10000})));
  ExpectNear(y, {2}, {-std::log(2.0), -std::log(2.0)});
}

TEST(HardmaxTest, FirstMaximumWins) {
  Tensor y = RunOutput(NodeRunner("Hardmax").Opset(13).Input(Floats({2, 3}, {3, 3, 1, 0, 2, 2})));
  ExpectNear(y, {2, 3}, {1, 0, 0, 0, 1, 0});
}

TEST(SoftmaxTest, IntegerInputIsAnError) {
  EXPECT_FALSE(NodeRunner("Softmax").Opset(13).Input(testing::Int64Tensor({2}, {1, 2})).Run().ok());
}

}  // namespace
}  // namespace parity::ops
