// Tests of the preview-training optimisers Momentum, Adagrad and Adam.
#include <cmath>

#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::Int64Tensor;

constexpr const char* kTraining = "ai.onnx.preview.training";

StatusOr<std::vector<Value>> RunTraining(NodeRunner& r) { return r.Run(); }

TEST(OptimizerTest, AdagradOneStep) {
  NodeRunner r("Adagrad", kTraining);
  r.Import("", 13).Outputs(2).Input(Floats({}, {0.5})).Input(Int64Tensor({}, {1})).Input(Floats({1}, {1}))
      .Input(Floats({1}, {2})).Input(Floats({1}, {0}))
      .Attr("decay_factor", 1.0f).Attr("epsilon", 0.0f);
  StatusOr<std::vector<Value>> out = RunTraining(r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // rate 0.25, H = 4, X = 1 - 0.25 * 2 / 2.
  ExpectNear((*out)[0].tensor(), {1}, {0.75});
  ExpectNear((*out)[1].tensor(), {1}, {4});
}

TEST(OptimizerTest, MomentumStandardAndNesterov) {
  for (const char* mode : {"standard", "nesterov"}) {
    NodeRunner r("Momentum", kTraining);
    r.Import("", 13).Outputs(2).Input(Floats({}, {0.1})).Input(Int64Tensor({}, {0})).Input(Floats({1}, {1}))
        .Input(Floats({1}, {2})).Input(Floats({1}, {3}))
        .Attr("alpha", 0.5f).Attr("beta", 0.25f).Attr("norm_coefficient", 0.0f).Attr("mode", std::string(mode));
    StatusOr<std::vector<Value>> out = RunTraining(r);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    // T = 0: beta counts as 1, so V = 0.5 * 3 + 2 = 3.5.
    ExpectNear((*out)[1].tensor(), {1}, {3.5});
    const double x = std::string(mode) == "standard" ? 1 - 0.1 * 3.5 : 1 - 0.1 * (2 + 0.5 * 3.5);
    ExpectNear((*out)[0].tensor(), {1}, {x});
  }
}

TEST(OptimizerTest, AdamBiasCorrection) {
  NodeRunner r("Adam", kTraining);
  r.Import("", 13).Outputs(3).Input(Floats({}, {0.1})).Input(Int64Tensor({}, {1})).Input(Floats({1}, {1}))
      .Input(Floats({1}, {2})).Input(Floats({1}, {0})).Input(Floats({1}, {0}))
      .Attr("alpha", 0.5f).Attr("beta", 0.75f).Attr("epsilon", 0.0f);
  StatusOr<std::vector<Value>> out = RunTraining(r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 3u);
  // V = 1, H = 1, rate = 0.1 * sqrt(0.25) / 0.5 = 0.1, X = 1 - 0.1 * 1 / 1.
  ExpectNear((*out)[0].tensor(), {1}, {0.9});
  ExpectNear((*out)[1].tensor(), {1}, {1});
  ExpectNear((*out)[2].tensor(), {1}, {1});
}

TEST(OptimizerTest, WrongInputCountIsAnError) {
  NodeRunner r("Adam", kTraining);
  r.Import("", 13).Input(Floats({}, {0.1})).Input(Int64Tensor({}, {1})).Input(Floats({1}, {1}));
  EXPECT_FALSE(r.Run().ok());
}

}  // namespace
}  // namespace parity::ops
