// Tests of GroupQueryAttention (org.onnxparity.contrib, version 1): hand-
// computed outputs for the cache update, grouped heads, causality, the
// window, the soft cap and the errors.
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

Tensor Lengths(const std::vector<int64_t> &seqlens_k) { return MakeInts(DataType::kInt32, seqlens_k); }
Tensor Total(int64_t total) { return MakeInts(DataType::kInt32, {}, {total}); }

// A prompt of S queries with one head of size 1, no cache: every key is 0,
// so each query averages the values it sees.
NodeRunner Prompt(const std::vector<double> &values, int64_t kv_heads = 1) {
  const int64_t s = static_cast<int64_t>(values.size());
  return std::move(NodeRunner("GroupQueryAttention", kDomain)
                       .Input(Floats({1, s, 1}, std::vector<double>(values.size(), 1.0)))
                       .Input(Floats({1, s, 1}, std::vector<double>(values.size(), 0.0)))
                       .Input(Floats({1, s, 1}, values))
                       .AbsentInput()
                       .AbsentInput()
                       .Input(Lengths({s - 1}))
                       .Input(Total(s))
                       .Attr("num_heads", int64_t{1})
                       .Attr("kv_num_heads", kv_heads));
}

TEST(GroupQueryAttentionTest, PromptIsCausal) {
  std::vector<Value> out = RunAllOk(Prompt({5, 7, 9}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{1, 3, 1}));
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 5.0);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(1), 6.0);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(2), 7.0);
}

TEST(GroupQueryAttentionTest, LocalWindowKeepsThatManyKeysEndingAtTheQuery) {
  std::vector<Value> out = RunAllOk(Prompt({5, 7, 9}).Attr("local_window_size", int64_t{2}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 5.0);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(1), 6.0);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(2), 8.0);
}

TEST(GroupQueryAttentionTest, NewKeysAreWrittenAfterEachEntrysValidCache) {
  // Two entries, a 2-row cache; entry 0 holds no valid cached key, entry 1
  // holds 2. total_sequence_length 3 makes the present 3 rows long; rows
  // after an entry's valid length are zero.
  std::vector<Value> out = RunAllOk(NodeRunner("GroupQueryAttention", kDomain)
                                        .Outputs(3)
                                        .Input(Floats({2, 1, 1}, {1, 1}))
                                        .Input(Floats({2, 1, 1}, {0, 0}))
                                        .Input(Floats({2, 1, 1}, {7, 9}))
                                        .Input(Floats({2, 1, 2, 1}, {0, 0, 0, 0}))
                                        .Input(Floats({2, 1, 2, 1}, {1, 2, 3, 4}))
                                        .Input(Lengths({0, 2}))
                                        .Input(Total(3))
                                        .Attr("num_heads", int64_t{1})
                                        .Attr("kv_num_heads", int64_t{1}));
  ASSERT_EQ(out.size(), 3u);
  // Entry 0 sees [7]; entry 1 sees [3, 4, 9].
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 7.0);
  EXPECT_NEAR(out[0].tensor().GetDouble(1), 16.0 / 3.0, 1e-6);
  EXPECT_EQ(out[1].tensor().shape(), (Shape{2, 1, 3, 1}));
  EXPECT_EQ(out[2].tensor().ToDoubles(), (std::vector<double>{7, 0, 0, 3, 4, 9}));
}

TEST(GroupQueryAttentionTest, QueryHeadsShareKeyValueHeadsInConsecutiveGroups) {
  std::vector<Value> out = RunAllOk(NodeRunner("GroupQueryAttention", kDomain)
                                        .Input(Floats({1, 1, 4}, {1, 2, 3, 4}))
                                        .Input(Floats({1, 1, 2}, {0, 0}))
                                        .Input(Floats({1, 1, 2}, {5, 6}))
                                        .AbsentInput()
                                        .AbsentInput()
                                        .Input(Lengths({0}))
                                        .Input(Total(1))
                                        .Attr("num_heads", int64_t{4})
                                        .Attr("kv_num_heads", int64_t{2}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().ToDoubles(), (std::vector<double>{5, 5, 6, 6}));
}

TEST(GroupQueryAttentionTest, SoftcapFollowsTheScale) {
  // One cached key 2 and one new key 0 for query 1: scores 2 and 0, capped
  // to tanh(2) and 0.
  std::vector<Value> out = RunAllOk(NodeRunner("GroupQueryAttention", kDomain)
                                        .Input(Floats({1, 1, 1}, {1}))
                                        .Input(Floats({1, 1, 1}, {0}))
                                        .Input(Floats({1, 1, 1}, {3}))
                                        .Input(Floats({1, 1, 1, 1}, {2}))
                                        .Input(Floats({1, 1, 1, 1}, {1}))
                                        .Input(Lengths({1}))
                                        .Input(Total(2))
                                        .Attr("num_heads", int64_t{1})
                                        .Attr("kv_num_heads", int64_t{1})
                                        .Attr("scale", 1.0f)
                                        .Attr("softcap", 1.0f));
  ASSERT_EQ(out.size(), 1u);
  const double w0 = 1 / (1 + std::exp(-std::tanh(2.0)));
  EXPECT_NEAR(out[0].tensor().GetDouble(0), w0 + (1 - w0) * 3, 1e-6);
}

TEST(GroupQueryAttentionTest, RejectsWhatThisVersionDoesNotDefine) {
  EXPECT_NE(RunError(Prompt({5, 7}).Attr("do_rotary", int64_t{1})).find("do_rotary"), std::string::npos);
  EXPECT_NE(RunError(Prompt({5, 7}).Attr("scale", 0.0f)).find("scale 0"), std::string::npos);
  EXPECT_NE(RunError(Prompt({5, 7}, 2)).find("multiple of kv_num_heads"), std::string::npos);
  EXPECT_NE(RunError(Prompt({5, 7}).Outputs(4)).find("output_qk"), std::string::npos);
  EXPECT_NE(RunError(Prompt({5, 7}).Attr("local_window_size", int64_t{0})).find("local_window_size"),
            std::string::npos);
  // A right-padded prompt (1 valid key for 2 queries) and a length beyond
  // total_sequence_length.
  NodeRunner padded = std::move(NodeRunner("GroupQueryAttention", kDomain)
                                    .Input(Floats({1, 2, 1}, {1, 1}))
                                    .Input(Floats({1, 2, 1}, {0, 0}))
                                    .Input(Floats({1, 2, 1}, {5, 7}))
                                    .AbsentInput()
                                    .AbsentInput()
                                    .Input(Lengths({0}))
                                    .Input(Total(2))
                                    .Attr("num_heads", int64_t{1})
                                    .Attr("kv_num_heads", int64_t{1}));
  EXPECT_NE(RunError(padded).find("right-padded"), std::string::npos);
  EXPECT_NE(RunError(Prompt({5, 7}).Input(Floats({1}, {0}))).find("at most 7 inputs"), std::string::npos);
}

}  // namespace
}  // namespace parity::ops::contrib
