// Tests of LayerNormalization, RMSNormalization, GroupNormalization,
// InstanceNormalization, MeanVarianceNormalization and LpNormalization.
#include <cmath>

#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::RunOutput;

TEST(LayerNormTest, ScaleBiasAndZeroVariance) {
  // Rows [1, 3] and [2, 2]: variances 1 and 0 (0 * inf gives NaN with epsilon 0).
  StatusOr<std::vector<Value>> out = NodeRunner("LayerNormalization")
                                         .Opset(17)
                                         .Outputs(3)
                                         .Input(Floats({2, 2}, {1, 3, 2, 2}))
                                         .Input(Floats({2}, {1, 2}))
                                         .Input(Floats({2}, {0, 1}))
                                         .Attr("epsilon", 0.0f)
                                         .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  ExpectNear((*out)[0].tensor(), {2, 2}, {-1, 3, NAN, NAN});
}

TEST(LayerNormTest, StatisticsShapeAndValues) {
  StatusOr<std::vector<Value>> out = NodeRunner("LayerNormalization")
                                         .Opset(17)
                                         .Outputs(3)
                                         .Input(Floats({2, 2}, {1, 3, 0, 4}))
                                         .Input(Floats({2}, {1, 1}))
                                         .Attr("epsilon", 0.0f)
                                         .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor(), {2, 2}, {-1, 1, -1, 1});
  ExpectNear((*out)[1].tensor(), {2, 1}, {2, 2});
  ExpectNear((*out)[2].tensor(), {2, 1}, {1, 0.5});
}

TEST(RmsNormTest, DividesByRootMeanSquare) {
  Tensor y = RunOutput(NodeRunner("RMSNormalization")
                           .Opset(23)
                           .Input(Floats({1, 2}, {3, 4}))
                           .Input(Floats({2}, {1, 2}))
                           .Attr("epsilon", 0.0f));
  const double rms = std::sqrt(12.5);
  ExpectNear(y, {1, 2}, {3 / rms, 8 / rms});
}

TEST(GroupNormTest, PerChannelScaleFromOpset21) {
  // One sample, 4 channels, 2 groups, spatial size 1: groups {0,2} and {4,6}.
  Tensor y = RunOutput(NodeRunner("GroupNormalization")
                           .Opset(21)
                           .Input(Floats({1, 4, 1}, {0, 2, 4, 6}))
                           .Input(Floats({4}, {1, 2, 3, 4}))
                           .Input(Floats({4}, {0, 0, 0, 1}))
                           .Attr("num_groups", int64_t{2})
                           .Attr("epsilon", 0.0f));
  ExpectNear(y, {1, 4, 1}, {-1, 2, -3, 5});
}

TEST(GroupNormTest, PerGroupScaleInOpset18) {
  Tensor y = RunOutput(NodeRunner("GroupNormalization")
                           .Opset(18)
                           .Input(Floats({1, 4, 1}, {0, 2, 4, 6}))
                           .Input(Floats({2}, {1, 3}))
                           .Input(Floats({2}, {0, 1}))
                           .Attr("num_groups", int64_t{2})
                           .Attr("epsilon", 0.0f));
  ExpectNear(y, {1, 4, 1}, {-1, 1, -2, 4});
}

TEST(GroupNormTest, GroupsMustDivideChannels) {
  EXPECT_FALSE(NodeRunner("GroupNormalization")
                   .Opset(21)
                   .Input(Floats({1, 3, 1}, {0, 1, 2}))
                   .Input(Floats({3}, {1, 1, 1}))
                   .Input(Floats({3}, {0, 0, 0}))
                   .Attr("num_groups", int64_t{2})
                   .Run()
                   .ok());
}

TEST(InstanceNormTest, NormalisesEachChannel) {
  Tensor y = RunOutput(NodeRunner("InstanceNormalization")
                           .Opset(6)
                           .Input(Floats({1, 2, 2}, {1, 3, 5, 5}))
                           .Input(Floats({2}, {2, 1}))
                           .Input(Floats({2}, {0, 7}))
                           .Attr("epsilon", 0.0f));
  // Channel 1 has zero variance: 0 * inf is NaN, as (x - mean) / sqrt(0) gives.
  ExpectNear(y, {1, 2, 2}, {-2, 2, NAN, NAN});
}

TEST(MvnTest, DefaultAxes) {
  Tensor y = RunOutput(NodeRunner("MeanVarianceNormalization").Opset(13).Input(Floats({2, 1, 1, 1}, {1, 3})));
  ExpectNear(y, {2, 1, 1, 1}, {-1, 1}, 1e-6);
}

TEST(LpNormTest, L1AndL2AndZeroRows) {
  ExpectNear(RunOutput(NodeRunner("LpNormalization").Opset(22).Input(Floats({2, 2}, {3, 4, 0, 0}))), {2, 2},
             {0.6, 0.8, 0, 0});
  ExpectNear(RunOutput(NodeRunner("LpNormalization").Opset(22).Input(Floats({2}, {-1, 3})).Attr("p", int64_t{1})), {2},
             {-0.25, 0.75});
}

}  // namespace
}  // namespace parity::ops
