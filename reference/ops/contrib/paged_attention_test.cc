// Tests of PagedAttention (org.onnxparity.contrib, version 1): hand-computed
// outputs for the cache writes through the block table, causality over past
// and new keys, the window and the errors.
#include <gtest/gtest.h>

#include "reference/ops/test_builders.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

using testing_util::Floats;
using testing_util::MakeInts;
using testing_util::RunAllOk;
using testing_util::RunError;

Tensor Ints(const std::vector<int64_t> &values) { return MakeInts(DataType::kInt32, values); }

// One head of size 1, every key 0, so each token averages the values it
// sees. Three blocks of two slots; the value cache holds 10 .. 15 in slots
// 0 .. 5. Entry 0 has 1 cached key (block 2) and 1 new token; entry 1 has
// none cached and 2 new tokens (block 0); -1 marks an unused block.
NodeRunner TwoEntries(std::vector<int64_t> table = {2, -1, 0, 1}) {
  return std::move(NodeRunner("PagedAttention", kDomain)
                       .Outputs(3)
                       .Input(Floats({3, 1}, {1, 1, 1}))
                       .Input(Floats({3, 1}, {0, 0, 0}))
                       .Input(Floats({3, 1}, {7, 1, 3}))
                       .Input(Floats({3, 2, 1, 1}, {0, 0, 0, 0, 0, 0}))
                       .Input(Floats({3, 2, 1, 1}, {10, 11, 12, 13, 14, 15}))
                       .Input(Ints({0, 1, 3}))
                       .Input(Ints({1, 0}))
                       .Input(MakeInts(DataType::kInt32, {2, 2}, table))
                       .Attr("num_heads", int64_t{1})
                       .Attr("kv_num_heads", int64_t{1}));
}

TEST(PagedAttentionTest, NewTokensAreWrittenThroughTheBlockTableThenAttended) {
  std::vector<Value> out = RunAllOk(TwoEntries());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{3, 1}));
  // Entry 0 sees slot 4 (14) and its new 7; entry 1's tokens see [1], [1, 3].
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 10.5);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(1), 1.0);
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(2), 2.0);
  EXPECT_EQ(out[1].tensor().shape(), (Shape{3, 2, 1, 1}));
  EXPECT_EQ(out[2].tensor().ToDoubles(), (std::vector<double>{1, 3, 12, 13, 14, 7}));
}

TEST(PagedAttentionTest, LocalWindowKeepsThatManyKeysEndingAtTheToken) {
  // Entry 0 of one: 3 cached keys at positions 0..2 (slots 2, 3, 0 through
  // blocks 1 then 0), the new token at position 3 (slot 1).
  std::vector<Value> out = RunAllOk(NodeRunner("PagedAttention", kDomain)
                                        .Input(Floats({1, 1}, {1}))
                                        .Input(Floats({1, 1}, {0}))
                                        .Input(Floats({1, 1}, {9}))
                                        .Input(Floats({2, 2, 1, 1}, {0, 0, 0, 0}))
                                        .Input(Floats({2, 2, 1, 1}, {5, 0, 1, 3}))
                                        .Input(Ints({0, 1}))
                                        .Input(Ints({3}))
                                        .Input(MakeInts(DataType::kInt32, {1, 2}, {1, 0}))
                                        .Attr("num_heads", int64_t{1})
                                        .Attr("kv_num_heads", int64_t{1})
                                        .Attr("local_window_size", int64_t{2}));
  ASSERT_EQ(out.size(), 1u);
  // Positions 2 (slot 0: 5) and 3 (the new 9).
  EXPECT_DOUBLE_EQ(out[0].tensor().GetDouble(0), 7.0);
}

TEST(PagedAttentionTest, QueryHeadsShareKeyValueHeadsInConsecutiveGroups) {
  std::vector<Value> out = RunAllOk(NodeRunner("PagedAttention", kDomain)
                                        .Input(Floats({1, 4}, {1, 2, 3, 4}))
                                        .Input(Floats({1, 2}, {0, 0}))
                                        .Input(Floats({1, 2}, {5, 6}))
                                        .Input(Floats({1, 1, 2, 1}, {0, 0}))
                                        .Input(Floats({1, 1, 2, 1}, {0, 0}))
                                        .Input(Ints({0, 1}))
                                        .Input(Ints({0}))
                                        .Input(MakeInts(DataType::kInt32, {1, 1}, {0}))
                                        .Attr("num_heads", int64_t{4})
                                        .Attr("kv_num_heads", int64_t{2}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().ToDoubles(), (std::vector<double>{5, 5, 6, 6}));
}

TEST(PagedAttentionTest, RejectsWhatThisVersionDoesNotDefine) {
  EXPECT_NE(RunError(TwoEntries().Attr("do_rotary", int64_t{1})).find("do_rotary"), std::string::npos);
  EXPECT_NE(RunError(TwoEntries().Attr("is_causal", int64_t{0})).find("is_causal"), std::string::npos);
  EXPECT_NE(RunError(TwoEntries().Attr("local_window_size", int64_t{0})).find("local_window_size"), std::string::npos);
  EXPECT_NE(RunError(TwoEntries().Attr("scale", 0.0f)).find("scale 0"), std::string::npos);
  // Entry 0's position 0 in a block outside the cache; both entries
  // writing into block 0.
  EXPECT_NE(RunError(TwoEntries({3, -1, 0, 1})).find("outside the 3 cache blocks"), std::string::npos);
  EXPECT_NE(RunError(TwoEntries({0, -1, 0, 1})).find("its own slot"), std::string::npos);
  EXPECT_NE(RunError(TwoEntries().Input(Floats({1}, {0}))).find("at most 8 inputs"), std::string::npos);
}

}  // namespace
}  // namespace parity::ops::contrib
