// Tests of BatchNormalization (inference, training-mode outputs, spatial=0
// before opset 9) and LRN.
#include <cmath>

#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::RunOutput;

NodeRunner BatchNorm(int64_t opset, const Tensor& x, double mean, double var) {
  NodeRunner r("BatchNormalization");
  r.Opset(opset)
      .Input(x)
      .Input(Floats({1}, {2}))
      .Input(Floats({1}, {1}))
      .Input(Floats({1}, {mean}))
      .Input(Floats({1}, {var}))
      .Attr("epsilon", 0.0f);
  return r;
}

TEST(BatchNormTest, InferenceUsesGivenStatistics) {
  Tensor y = RunOutput(BatchNorm(15, Floats({1, 1, 2}, {1, 3}), 1, 4));
  ExpectNear(y, {1, 1, 2}, {1, 3});  // 2 * (x - 1) / 2 + 1
}

TEST(BatchNormTest, TrainingModeUsesBatchStatisticsAndUpdatesRunningOnes) {
  NodeRunner r = BatchNorm(15, Floats({2, 1, 1}, {1, 3}), 0, 1);
  r.Outputs(3).Attr("training_mode", int64_t{1}).Attr("momentum", 0.5f);
  StatusOr<std::vector<Value>> out = r.Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  ExpectNear((*out)[0].tensor(), {2, 1, 1}, {-1, 3});  // batch mean 2, var 1
  ExpectNear((*out)[1].tensor(), {1}, {1});            // 0 * 0.5 + 2 * 0.5
  ExpectNear((*out)[2].tensor(), {1}, {1});            // 1 * 0.5 + 1 * 0.5
}

TEST(BatchNormTest, PerActivationStatisticsWithSpatialZero) {
  NodeRunner r("BatchNormalization");
  r.Opset(7)
      .Input(Floats({1, 1, 2}, {1, 3}))
      .Input(Floats({1, 2}, {1, 1}))
      .Input(Floats({1, 2}, {0, 0}))
      .Input(Floats({1, 2}, {1, 3}))
      .Input(Floats({1, 2}, {1, 1}))
      .Attr("spatial", int64_t{0})
      .Attr("epsilon", 0.0f);
  ExpectNear(RunOutput(r), {1, 1, 2}, {0, 0});
}

TEST(BatchNormTest, WrongParameterShapeIsAnError) {
  NodeRunner r("BatchNormalization");
  r.Opset(15)
      .Input(Floats({1, 2, 1}, {1, 3}))
      .Input(Floats({1}, {1}))
      .Input(Floats({1}, {0}))
      .Input(Floats({1}, {0}))
      .Input(Floats({1}, {1}));
  EXPECT_FALSE(r.Run().ok());
}

TEST(LrnTest, WindowAcrossChannels) {
  // size 3: channel c sums squares of c-1..c+1.
  Tensor y = RunOutput(NodeRunner("LRN")
                           .Opset(13)
                           .Input(Floats({1, 3, 1, 1}, {1, 2, 3}))
                           .Attr("size", int64_t{3})
                           .Attr("alpha", 3.0f)
                           .Attr("beta", 1.0f)
                           .Attr("bias", 1.0f));
  ExpectNear(y, {1, 3, 1, 1}, {1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-6);
}

}  // namespace
}  // namespace parity::ops
