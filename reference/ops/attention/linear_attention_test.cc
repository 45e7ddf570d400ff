// Tests of LinearAttention-27: small recurrences worked out by hand from the
// update rules of the spec.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/node_runner.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::attention {
namespace {

using testing_util::ExpectNear;
using testing_util::Floats;
using testing_util::Make;

// A LinearAttention node with `heads` query and `kv_heads` key/value heads.
NodeRunner Node(const std::string& rule, int64_t heads = 1, int64_t kv_heads = 1) {
  NodeRunner runner("LinearAttention");
  runner.Opset(27)
      .Outputs(2)
      .Attr("update_rule", rule)
      .Attr("q_num_heads", heads)
      .Attr("kv_num_heads", kv_heads);
  return runner;
}

TEST(LinearAttention, LinearRuleAccumulatesOuterProducts) {
  // d_k = d_v = 1, scale 1: S1 = 3*5 = 15, o1 = 15; S2 = 15 + 4*6 = 39, o2 = 2*39.
  auto out = Node("linear")
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 2, 1}, {1, 2}))
                 .Input(Floats({1, 2, 1}, {3, 4}))
                 .Input(Floats({1, 2, 1}, {5, 6}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {15, 78});
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({1, 1, 1, 1}));
  ExpectNear((*out)[1].tensor().ToDoubles(), {39});
}

TEST(LinearAttention, DefaultScaleIsOneOverSqrtOfTheHeadSize) {
  // d_k = 4, so scale 1/2; S[0][0] = 1*2 and o = 2/2.
  auto out = Node("linear")
                 .Input(Floats({1, 1, 4}, {1, 0, 0, 0}))
                 .Input(Floats({1, 1, 4}, {1, 0, 0, 0}))
                 .Input(Floats({1, 1, 1}, {2}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {1});
}

TEST(LinearAttention, GatedRuleDecaysThePastState) {
  // S = exp(log 0.5) * 4 + 1*1 = 3; o = 1 * 3.
  auto out = Node("gated")
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1, 1}, {4}))
                 .Input(Floats({1, 1, 1}, {std::log(0.5)}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {3});
  ExpectNear((*out)[1].tensor().ToDoubles(), {3});
}

TEST(LinearAttention, PerKeyFeatureDecayScalesStateRows) {
  // d_k = 2, d_v = 1, past S = [2, 8]; decays exp(0) and exp(log 0.25) give
  // S = [2, 2] before the write of k ⊗ v = [0, 0].
  auto out = Node("gated")
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 1, 2}, {1, 1}))
                 .Input(Floats({1, 1, 2}, {0, 0}))
                 .Input(Floats({1, 1, 1}, {7}))
                 .Input(Floats({1, 1, 2, 1}, {2, 8}))
                 .Input(Floats({1, 1, 2}, {0, std::log(0.25)}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[1].tensor().ToDoubles(), {2, 2});
  ExpectNear((*out)[0].tensor().ToDoubles(), {4});
}

TEST(LinearAttention, DeltaRuleWritesTheScaledCorrection) {
  // retrieved = 2*1, write = 0.5 * (5 - 2) = 1.5, S = 3.5, o = 2 * 3.5.
  auto out = Node("delta")
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 1, 1}, {2}))
                 .Input(Floats({1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1}, {5}))
                 .Input(Floats({1, 1, 1, 1}, {2}))
                 .AbsentInput()
                 .Input(Floats({1, 1, 1}, {0.5}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {7});
  ExpectNear((*out)[1].tensor().ToDoubles(), {3.5});
}

TEST(LinearAttention, GatedDeltaRetrievesFromTheDecayedState) {
  // Decay 4 -> 2; retrieved = 2 (not 4), write = 1 * (6 - 2) = 4, S = 6.
  auto out = Node("gated_delta")
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1}, {6}))
                 .Input(Floats({1, 1, 1, 1}, {4}))
                 .Input(Floats({1, 1, 1}, {std::log(0.5)}))
                 .Input(Floats({1, 1, 1}, {1}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {6});
}

TEST(LinearAttention, QueryHeadsReadTheirGroupsKeyValueHead) {
  // H_q = 4 over H_kv = 2: query heads 0, 1 read state 0 (= 1), heads 2, 3 state 1 (= 2).
  auto out = Node("linear", 4, 2)
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 1, 4}, {1, 1, 1, 1}))
                 .Input(Floats({1, 1, 2}, {1, 1}))
                 .Input(Floats({1, 1, 2}, {1, 2}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {1, 1, 2, 2});
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({1, 2, 1, 1}));
}

TEST(LinearAttention, ABetaOfWidthOneIsSharedByAllHeads) {
  // Two heads, empty state: write = 0.5 * v for both.
  auto out = Node("delta", 2, 2)
                 .Attr("scale", 1.0f)
                 .Input(Floats({1, 1, 2}, {1, 1}))
                 .Input(Floats({1, 1, 2}, {1, 1}))
                 .Input(Floats({1, 1, 2}, {4, 6}))
                 .AbsentInput()
                 .AbsentInput()
                 .Input(Floats({1, 1, 1}, {0.5}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {2, 3});
}

TEST(LinearAttention, PresentStateTakesThePastStatesType) {
  auto out = Node("linear")
                 .Input(Make(DataType::kFloat16, {1, 1, 1}, {1}))
                 .Input(Make(DataType::kFloat16, {1, 1, 1}, {1}))
                 .Input(Make(DataType::kFloat16, {1, 1, 1}, {1}))
                 .Input(Floats({1, 1, 1, 1}, {0.1}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().dtype(), DataType::kFloat16);
  EXPECT_EQ((*out)[1].tensor().dtype(), DataType::kFloat);
  // 1 + float(0.1), rounded once to float.
  EXPECT_EQ((*out)[1].tensor().GetDouble(0), static_cast<double>(static_cast<float>(1.0 + static_cast<double>(0.1f))));
}

TEST(LinearAttention, RejectsInconsistentInputs) {
  const Tensor one = Floats({1, 1, 1}, {1});
  // gated without decay; linear with decay; beta for a non-delta rule.
  EXPECT_FALSE(Node("gated").Input(one).Input(one).Input(one).Run().ok());
  EXPECT_FALSE(Node("linear").Input(one).Input(one).Input(one).AbsentInput().Input(one).Run().ok());
  EXPECT_FALSE(Node("gated").Input(one).Input(one).Input(one).AbsentInput().Input(one).Input(one).Run().ok());
  EXPECT_FALSE(Node("sideways").Input(one).Input(one).Input(one).Run().ok());
  // 3 query heads over 2 kv heads; a key of the wrong width; a past_state of the wrong shape.
  EXPECT_FALSE(Node("linear", 3, 2).Input(Floats({1, 1, 3}, {1, 1, 1})).Input(one).Input(one).Run().ok());
  EXPECT_FALSE(Node("linear").Input(one).Input(Floats({1, 1, 2}, {1, 1})).Input(one).Run().ok());
  EXPECT_FALSE(Node("linear").Input(one).Input(one).Input(one).Input(Floats({1, 1, 2, 1}, {0, 0})).Run().ok());
  // Missing head counts; an integer query.
  EXPECT_FALSE(NodeRunner("LinearAttention").Opset(27).Input(one).Input(one).Input(one).Run().ok());
  const Tensor ints = Tensor::FromInt64s({1, 1, 1}, {1});
  EXPECT_FALSE(Node("linear").Input(ints).Input(ints).Input(ints).Run().ok());
}

}  // namespace
}  // namespace parity::ops::attention
