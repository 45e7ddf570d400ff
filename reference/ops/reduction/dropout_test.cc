// Tests of Dropout: inference identity and mask, mask type by opset, and
// the reproducible training mode (numpy's legacy MT19937 draws).
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

using testing::ExpectNear;
using testing::Floats;
using testing::Make;
using testing::RunOutput;

TEST(DropoutTest, InferenceIsIdentityWithTrueMask) {
  StatusOr<std::vector<Value>> out =
      NodeRunner("Dropout").Opset(13).Outputs(2).Input(Floats({3}, {1, -2, 3})).Input(Floats({}, {0.7})).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor(), {3}, {1, -2, 3});
  EXPECT_EQ((*out)[1].tensor().dtype(), DataType::kBool);
  EXPECT_EQ((*out)[1].tensor().ToInt64s(), (std::vector<int64_t>{1, 1, 1}));
}

TEST(DropoutTest, MaskHasInputTypeInOpset7) {
  StatusOr<std::vector<Value>> out = NodeRunner("Dropout").Opset(7).Outputs(2).Input(Floats({2}, {1, 2})).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[1].tensor().dtype(), DataType::kFloat);
}

TEST(DropoutTest, TrainingModeDrawsLikeNumpySeed0) {
  // numpy: np.random.seed(0); np.random.uniform(0, 1, 3) = [0.5488, 0.7152, 0.6028].
  StatusOr<std::vector<Value>> out = NodeRunner("Dropout")
                                         .Opset(13)
                                         .Outputs(2)
                                         .Input(Floats({3}, {1, 2, 3}))
                                         .Input(Floats({}, {0.6}))
                                         .Input(Make(DataType::kBool, {}, {1}))
                                         .Attr("seed", int64_t{0})
                                         .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor(), {3}, {0, 2 / 0.4, 3 / 0.4}, 1e-5);
  EXPECT_EQ((*out)[1].tensor().ToInt64s(), (std::vector<int64_t>{0, 1, 1}));
}

TEST(DropoutTest, RatioOneInTrainingIsAnError) {
  EXPECT_FALSE(NodeRunner("Dropout")
                   .Opset(13)
                   .Input(Floats({1}, {1}))
                   .Input(Floats({}, {1.0}))
                   .Input(Make(DataType::kBool, {}, {1}))
                   .Run()
                   .ok());
}

}  // namespace
}  // namespace parity::ops
