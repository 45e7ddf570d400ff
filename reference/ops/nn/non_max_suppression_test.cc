// Tests of NonMaxSuppression (non_max_suppression.cc).
#include "reference/ops/nn/test_support.h"

namespace parity::ops::nn {
namespace {

using testing::Floats;
using testing::I;
using testing::Make;
using testing::RunOk;

// Box 1 overlaps box 0 with IoU 0.9 / 1.1; box 2 is disjoint.
Tensor Boxes() { return Floats({1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3}); }

NodeRunner Nms(std::vector<double> scores, int64_t max_boxes) {
  NodeRunner r("NonMaxSuppression");
  r.Opset(11)
      .Input(Boxes())
      .Input(Floats({1, 1, 3}, scores))
      .Input(Make(DataType::kInt64, {1}, {static_cast<double>(max_boxes)}))
      .Input(Floats({1}, {0.5}));
  return r;
}

TEST(NonMaxSuppression, SuppressesOverlapsInScoreOrder) {
  Tensor y = RunOk(Nms({0.9, 0.8, 0.7}, 3));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.ToInt64s(), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST(NonMaxSuppression, TiesPreferTheLowerIndexAndLimitApplies) {
  Tensor y = RunOk(Nms({0.5, 0.9, 0.9}, 2));
  EXPECT_EQ(y.ToInt64s(), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
}

TEST(NonMaxSuppression, ScoreThresholdIsStrict) {
  NodeRunner r = Nms({0.9, 0.8, 0.7}, 3);
  r.Input(Floats({1}, {0.7}));
  EXPECT_EQ(RunOk(r).ToInt64s(), (std::vector<int64_t>{0, 0, 0}));
}

TEST(NonMaxSuppression, CenterPointBoxesAndNoLimitInput) {
  NodeRunner centre("NonMaxSuppression");
  centre.Opset(10)
      .Input(Floats({1, 2, 4}, {0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1}))
      .Input(Floats({1, 1, 2}, {0.9, 0.8}))
      .Input(Make(DataType::kInt64, {1}, {5}))
      .Input(Floats({1}, {0.5}))
      .Attr("center_point_box", I(1));
  EXPECT_EQ(RunOk(centre).ToInt64s(), (std::vector<int64_t>{0, 0, 0}));
  NodeRunner none("NonMaxSuppression");
  none.Opset(11).Input(Boxes()).Input(Floats({1, 1, 3}, {0.9, 0.8, 0.7}));
  EXPECT_EQ(RunOk(none).shape(), (Shape{0, 3}));
}

}  // namespace
}  // namespace parity::ops::nn
