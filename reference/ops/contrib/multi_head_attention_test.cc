// Tests of MultiHeadAttention (org.onnxparity.contrib, version 1): hand-
// computed outputs for the masks, causality, the cache and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/test_builders.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

using testing_util::Floats;
using testing_util::MakeInts;
using testing_util::RunAllOk;
using testing_util::RunError;

// One head of size 2, one query [1, 0] and two keys [1, 0] and [0, 1] with
// values 1 and 3: the scores are 1/sqrt(2) and 0.
NodeRunner TwoKeys() {
  return std::move(NodeRunner("MultiHeadAttention", kDomain)
                       .Input(Floats({1, 1, 2}, {1, 0}))
                       .Input(Floats({1, 2, 2}, {1, 0, 0, 1}))
                       .Input(Floats({1, 2, 1}, {1, 3}))
                       .Attr("num_heads", int64_t{1}));
}

TEST(MultiHeadAttentionTest, SoftmaxOfScaledScoresWeighsValues) {
  std::vector<Value> out = RunAllOk(TwoKeys());
  ASSERT_EQ(out.size(), 1u);
  const double w0 = 1 / (1 + std::exp(-1 / std::sqrt(2.0)));
  EXPECT_EQ(out[0].tensor().shape(), (Shape{1, 1, 1}));
  EXPECT_NEAR(out[0].tensor().GetDouble(0), w0 * 1 + (1 - w0) * 3, 1e-6);
}

TEST(MultiHeadAttentionTest, ScaleAttributeReplacesDefault) {
  std::vector<Value> out = RunAllOk(TwoKeys().Attr("scale", 2.0f));
  ASSERT_EQ(out.size(), 1u);
  const double w0 = 1 / (1 + std::exp(-2.0));
  EXPECT_NEAR(out[0].tensor().GetDouble(0), w0 + (1 - w0) * 3, 1e-6);
}

TEST(MultiHeadAttentionTest, BlockedKeysGetMaskFilterValueNotMinusInfinity) {
  // Lengths [1] block key 1: with the default -10000 its weight is exp(-10000)
  // = 0.
  std::vector<Value> out = RunAllOk(TwoKeys().AbsentInput().Input(MakeInts(DataType::kInt32, {1}, {1})));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 1.0);
  // With mask_filter_value -1 the blocked key keeps weight: scores 1/sqrt(2)
  // and -1.
  out = RunAllOk(
      TwoKeys().Attr("mask_filter_value", -1.0f).AbsentInput().Input(MakeInts(DataType::kInt32, {1, 2}, {1, 0})));
  ASSERT_EQ(out.size(), 1u);
  const double w0 = 1 / (1 + std::exp(-1 - 1 / std::sqrt(2.0)));
  EXPECT_NEAR(out[0].tensor().GetDouble(0), w0 + (1 - w0) * 3, 1e-6);
}

TEST(MultiHeadAttentionTest, AttentionBiasIsAddedToScaledScores) {
  std::vector<Value> out =
      RunAllOk(TwoKeys().AbsentInput().AbsentInput().Input(Floats({1, 1, 1, 2}, {0, 1})).Attr("scale", 1.0f));
  ASSERT_EQ(out.size(), 1u);
  // Scores 1 + 0 and 0 + 1 are equal: the mean of the values.
  EXPECT_NEAR(out[0].tensor().GetDouble(0), 2.0, 1e-6);
}

TEST(MultiHeadAttentionTest, UnidirectionalCountsCachedKeys) {
  // Two queries, two new keys, no cache: query 0 sees key 0 only.
  NodeRunner self = std::move(NodeRunner("MultiHeadAttention", kDomain)
                                  .Input(Floats({1, 2, 1}, {1, 1}))
                                  .Input(Floats({1, 2, 1}, {0, 0}))
                                  .Input(Floats({1, 2, 1}, {5, 7}))
                                  .Attr("num_heads", int64_t{1})
                                  .Attr("unidirectional", int64_t{1}));
  std::vector<Value> out = RunAllOk(self);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 5.0);
  EXPECT_NEAR(out[0].tensor().GetDouble(1), 6.0, 1e-12);
  // One query after one cached key sits at position 1 and sees both keys;
  // the present outputs are past ++ new in [B, N, T, D].
  out = RunAllOk(NodeRunner("MultiHeadAttention", kDomain)
                     .Outputs(3)
                     .Input(Floats({1, 1, 1}, {1}))
                     .Input(Floats({1, 1, 1}, {0}))
                     .Input(Floats({1, 1, 1}, {7}))
                     .AbsentInput()
                     .AbsentInput()
                     .AbsentInput()
                     .Input(Floats({1, 1, 1, 1}, {0}))
                     .Input(Floats({1, 1, 1, 1}, {5}))
                     .Attr("num_heads", int64_t{1})
                     .Attr("unidirectional", int64_t{1}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NEAR(out[0].tensor().GetDouble(0), 6.0, 1e-12);
  EXPECT_EQ(out[1].tensor().shape(), (Shape{1, 1, 2, 1}));
  EXPECT_EQ(out[2].tensor().ToDoubles(), (std::vector<double>{5, 7}));
}

TEST(MultiHeadAttentionTest, HeadsSplitTheHiddenAxis) {
  // Two heads of size 1: head 0 attends to key 0 (score 4 vs -4), head 1 to
  // key 1; the value heads are read from the same split.
  std::vector<Value> out = RunAllOk(NodeRunner("MultiHeadAttention", kDomain)
                                        .Input(Floats({1, 1, 2}, {1, -1}))
                                        .Input(Floats({1, 2, 2}, {40, 40, -40, -40}))
                                        .Input(Floats({1, 2, 2}, {1, 2, 3, 4}))
                                        .Attr("num_heads", int64_t{2}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].tensor().GetDouble(0), 1.0, 1e-12);
  EXPECT_NEAR(out[0].tensor().GetDouble(1), 4.0, 1e-12);
}

TEST(MultiHeadAttentionTest, RejectsWhatThisVersionDoesNotDefine) {
  EXPECT_NE(RunError(TwoKeys().Input(Floats({3}, {0, 0, 0}))).find("bias"), std::string::npos);
  EXPECT_NE(RunError(TwoKeys().Attr("scale", 0.0f)).find("scale 0"), std::string::npos);
  EXPECT_NE(
      RunError(TwoKeys().AbsentInput().Input(MakeInts(DataType::kInt32, {1, 3}, {1, 1, 1}))).find("key_padding_mask"),
      std::string::npos);
  EXPECT_NE(RunError(TwoKeys().Outputs(4)).find("qk"), std::string::npos);
  EXPECT_NE(RunError(NodeRunner("MultiHeadAttention", kDomain)
                         .Input(Floats({1, 1, 2}, {1, 0}))
                         .Input(Floats({1, 2, 2}, {1, 0, 0, 1}))
                         .Input(Floats({1, 2, 1}, {1, 3})))
                .find("num_heads"),
            std::string::npos);
  EXPECT_NE(RunError(NodeRunner("MultiHeadAttention", kDomain)
                         .Input(Floats({1, 1, 2}, {1, 0}))
                         .Input(Floats({1, 2, 2}, {1, 0, 0, 1}))
                         .Input(Floats({1, 2, 1}, {1, 3}))
                         .Attr("num_heads", int64_t{3}))
                .find("multiples of num_heads"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::ops::contrib
