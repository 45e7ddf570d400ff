// Tests of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: reductions,
// weights, ignore_index and the optional log-probability output.
#include <cmath>

#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::Int64Tensor;
using testing::RunOutput;

// Input (N=2, C=3) log-probabilities.
const std::vector<double> kInput = {-1, -2, -3, -4, -5, -6};

TEST(NllLossTest, Reductions) {
  const Tensor x = Floats({2, 3}, kInput);
  const Tensor target = Int64Tensor({2}, {0, 2});
  auto run = [&](const char* reduction) {
    return RunOutput(NodeRunner("NegativeLogLikelihoodLoss").Opset(13).Input(x).Input(target).Attr("reduction", std::string(reduction)));
  };
  ExpectNear(run("none"), {2}, {1, 6});
  ExpectNear(run("sum"), {}, {7});
  ExpectNear(run("mean"), {}, {3.5});
}

TEST(NllLossTest, WeightedMeanDividesByTotalWeight) {
  Tensor y = RunOutput(NodeRunner("NegativeLogLikelihoodLoss")
                           .Opset(13)
                           .Input(Floats({2, 3}, kInput))
                           .Input(Int64Tensor({2}, {0, 2}))
                           .Input(Floats({3}, {1, 0, 3})));
  ExpectNear(y, {}, {(1 + 18) / 4.0});
}

TEST(NllLossTest, IgnoreIndexMayBeOutOfRange) {
  Tensor y = RunOutput(NodeRunner("NegativeLogLikelihoodLoss")
                           .Opset(13)
                           .Input(Floats({2, 3}, kInput))
                           .Input(Int64Tensor({2}, {-1, 1}))
                           .Attr("ignore_index", int64_t{-1}));
  ExpectNear(y, {}, {5});
}

TEST(NllLossTest, OutOfRangeTargetIsAnError) {
  EXPECT_FALSE(
      NodeRunner("NegativeLogLikelihoodLoss").Opset(13).Input(Floats({2, 3}, kInput)).Input(Int64Tensor({2}, {0, 3})).Run().ok());
}

TEST(SoftmaxCrossEntropyTest, LossAndLogProb) {
  StatusOr<std::vector<Value>> out = NodeRunner("SoftmaxCrossEntropyLoss")
                                         .Opset(13)
                                         .Outputs(2)
                                         .Input(Floats({1, 2}, {0, 0}))
                                         .Input(Int64Tensor({1}, {1}))
                                         .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  ExpectNear((*out)[0].tensor(), {}, {std::log(2.0)});
  ExpectNear((*out)[1].tensor(), {1, 2}, {-std::log(2.0), -std::log(2.0)});
}

TEST(SoftmaxCrossEntropyTest, SpatialDimensions) {
  // (N=1, C=2, d=2): position 0 logits (0, 0), position 1 logits (0, ln 3).
  Tensor y = RunOutput(NodeRunner("SoftmaxCrossEntropyLoss")
                           .Opset(13)
                           .Input(Floats({1, 2, 2}, {0, 0, 0, std::log(3.0)}))
                           .Input(Int64Tensor({1, 2}, {0, 1}))
                           .Attr("reduction", std::string("none")));
  ExpectNear(y, {1, 2}, {std::log(2.0), std::log(4.0 / 3.0)});
}

}  // namespace
}  // namespace parity::ops
