// Body consistency for the org.onnxparity.contrib attention functions
// (spec/functions/multi_head_attention, group_query_attention,
// paged_attention): each case runs one node with the
// direct kernel and with prefer_function_bodies, and compares every
// requested output under the tolerance policy (spec/tolerance.json).
// Inputs come from seeded generators.
#include <gtest/gtest.h>

#include <optional>

#include "spec/functions/body_check_test_util.h"
#include "reference/eval/function_library.h"

namespace parity {
namespace {

using testing_util::BodyComparison;
using testing_util::ContribCase;
using testing_util::ContribNode;
using testing_util::Draw;
using testing_util::FloatAttr;
using testing_util::IntAttr;
using testing_util::kContribDomain;
using testing_util::kFloatTypes;
using testing_util::SingleNode;
using testing_util::SpecTolerancePolicy;

// As for ai.onnx Attention (spec/functions/attention.md), the policy's
// narrow-type bound assumes a backend that accumulates in float32 and
// rounds once, while the body rounds to T after each of its steps: on the
// way to the output a score passes through up to eight roundings in T (the
// mask sum, the first MatMul, the scale, the bias, Softmax, the second
// MatMul, ...). float16 and bfloat16 therefore get 8 ULP and an absolute
// error of 8 unit roundoffs of T (2^-11 and 2^-8; outputs are of magnitude
// about 1). float32 needs nothing beyond the policy.
constexpr int kContribAttentionNarrowSteps = 8;

Tolerance ToleranceFor(const ContribCase &c, DataType dtype) {
  Tolerance tol = SpecTolerancePolicy().For(c.op, dtype, c.facts);
  if (dtype == DataType::kFloat16 || dtype == DataType::kBfloat16) {
    tol = testing_util::AllowStepwiseRounding(tol, dtype, kContribAttentionNarrowSteps,
                                              "the body rounds in T after each of its steps "
                                              "(multi_head_attention.md)");
  }
  return tol;
}

// Runs every case both ways and expects each requested output to match;
// returns the number of outputs compared.
int ExpectAttentionBodiesMatchKernels(const std::vector<ContribCase> &cases) {
  int compared = 0;
  for (const ContribCase &c : cases) {
    SCOPED_TRACE(c.op + " " + c.label);
    BodyComparison how;
    how.tolerance = [&](DataType dtype) { return ToleranceFor(c, dtype); };
    compared += testing_util::ExpectBodyMatchesKernel(ContribNode(c, "contrib_attention_body_check"), how);
  }
  return compared;
}

// int32 flags of `shape`, 0 with probability 1/3, but 1 at key 0 so that
// no query has every key blocked.
Tensor Flags(Draw &draw, const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % shape.back() == 0 || draw.Int(0, 2) != 0) ? 1 : 0;
  return *Tensor::FromDoubles(DataType::kInt32, shape, v);
}

TEST(ContribAttentionBodiesTest, StandardLibraryDefinesEachFunction) {
  for (const char *op : {"MultiHeadAttention", "GroupQueryAttention"}) {
    EXPECT_NE(testing_util::StandardBodies().Find(kContribDomain, op), nullptr) << op << " has no body in spec/functions";
  }
}

enum class Mask { kNone, kLengths, kFlags2D, kFlags3D };

// MultiHeadAttention over B=2, N=2, S=3, head 4, value head 3 (L=3 new
// keys, P=0 or 2 cached): every mask form x unidirectional x past, then
// attention_bias [B, N, S, T] and [1, 1, S, T], scale, mask_filter_value
// and the present outputs. Values in [-1, 1].
TEST(ContribAttentionBodiesTest, MultiHeadAttentionBodyMatchesKernel) {
  Draw draw(41001);
  const int64_t batch = 2, heads = 2, q_len = 3, kv_len = 3, head = 4, v_head = 3;
  std::vector<ContribCase> cases;
  int expected_outputs = 0;
  auto add = [&](DataType dtype, Mask mask, bool causal, int64_t past, int bias_kind, bool presents,
                 std::vector<onnx::AttributeProto> attrs, const std::string &extra) {
    const int64_t total = past + kv_len;
    ContribCase c{
        "mask=" + std::to_string(static_cast<int>(mask)) + (causal ? " causal" : "") + " past=" + std::to_string(past) +
            " bias=" + std::to_string(bias_kind) + extra + " " + std::string(DataTypeName(dtype)),
        "MultiHeadAttention",
        std::move(attrs),
        {draw.Make(dtype, {batch, q_len, heads * head}, -1, 1), draw.Make(dtype, {batch, kv_len, heads * head}, -1, 1),
         draw.Make(dtype, {batch, kv_len, heads * v_head}, -1, 1), std::nullopt},
        {true, presents, presents},
        {}};
    c.attributes.push_back(IntAttr("num_heads", heads));
    if (causal) c.attributes.push_back(IntAttr("unidirectional", 1));
    switch (mask) {
      case Mask::kNone:
        c.inputs.push_back(std::nullopt);
        break;
      case Mask::kLengths:
        c.inputs.push_back(*Tensor::FromDoubles(DataType::kInt32, {batch}, {2, double(total)}));
        break;
      case Mask::kFlags2D:
        c.inputs.push_back(Flags(draw, {batch, total}));
        break;
      case Mask::kFlags3D:
        c.inputs.push_back(Flags(draw, {batch, q_len, total}));
        break;
    }
    if (bias_kind == 0) c.inputs.push_back(std::nullopt);
    if (bias_kind == 1) c.inputs.push_back(draw.Make(dtype, {batch, heads, q_len, total}, -1, 1));
    if (bias_kind == 2) c.inputs.push_back(draw.Make(dtype, {1, 1, q_len, total}, -1, 1));
    if (past > 0) {
      c.inputs.push_back(draw.Make(dtype, {batch, heads, past, head}, -1, 1));
      c.inputs.push_back(draw.Make(dtype, {batch, heads, past, v_head}, -1, 1));
    }
    while (!c.inputs.back()) c.inputs.pop_back();
    c.facts.reduced_length = total;
    c.facts.inner_dim = head;
    expected_outputs += presents ? 3 : 1;
    cases.push_back(std::move(c));
  };
  for (DataType dtype : kFloatTypes) {
    for (Mask mask : {Mask::kNone, Mask::kLengths, Mask::kFlags2D, Mask::kFlags3D}) {
      for (bool causal : {false, true}) {
        for (int64_t past : {0, 2}) add(dtype, mask, causal, past, 0, past > 0, {}, "");
      }
    }
    add(dtype, Mask::kFlags2D, true, 2, 1, true, {}, "");
    add(dtype, Mask::kNone, false, 0, 2, false, {}, "");
    add(dtype, Mask::kLengths, false, 0, 0, true, {FloatAttr("scale", 0.3f)}, " scale=0.3");
    add(dtype, Mask::kFlags2D, true, 0, 1, false, {FloatAttr("mask_filter_value", -1000.0f)}, " filter=-1000");
  }
  EXPECT_EQ(ExpectAttentionBodiesMatchKernels(cases), expected_outputs);
}


// GroupQueryAttention over B=2, N=4 query heads and Nkv=2 key/value heads
// of size 4: a 3-query prompt without cache, a 1-query decode step and a
// 2-query chunk over a 4-row cache whose entries hold different numbers of
// valid rows (total_sequence_length equal to, or beyond, the cache), each
// plain, with local_window_size 1 and 2, softcap 0.5 and scale 0.3.
TEST(ContribAttentionBodiesTest, GroupQueryAttentionBodyMatchesKernel) {
  Draw draw(41002);
  const int64_t batch = 2, heads = 4, kv_heads = 2, head = 4;
  std::vector<ContribCase> cases;
  int expected_outputs = 0;
  struct Step {
    const char *name;
    int64_t q_len, past;
    std::vector<double> seqlens_k;
    int64_t total;
  };
  const Step steps[] = {{"prompt", 3, 0, {2, 2}, 3},
                        {"decode", 1, 4, {2, 4}, 5},
                        {"chunk", 2, 4, {3, 5}, 6},
                        {"decode_in_buffer", 1, 4, {1, 3}, 4}};
  for (DataType dtype : kFloatTypes) {
    for (const Step &step : steps) {
      std::vector<std::pair<std::string, std::vector<onnx::AttributeProto>>> variants = {
          {"", {}},
          {" window=1", {IntAttr("local_window_size", 1)}},
          {" window=2", {IntAttr("local_window_size", 2)}},
          {" softcap=0.5", {FloatAttr("softcap", 0.5f)}},
          {" scale=0.3", {FloatAttr("scale", 0.3f)}}};
      for (auto &[extra, attrs] : variants) {
        ContribCase c{std::string(step.name) + extra + " " + std::string(DataTypeName(dtype)),
                        "GroupQueryAttention",
                        attrs,
                        {draw.Make(dtype, {batch, step.q_len, heads * head}, -1, 1),
                         draw.Make(dtype, {batch, step.q_len, kv_heads * head}, -1, 1),
                         draw.Make(dtype, {batch, step.q_len, kv_heads * head}, -1, 1)},
                        {true, true, true},
                        {}};
        c.attributes.push_back(IntAttr("num_heads", heads));
        c.attributes.push_back(IntAttr("kv_num_heads", kv_heads));
        if (step.past > 0) {
          c.inputs.push_back(draw.Make(dtype, {batch, kv_heads, step.past, head}, -1, 1));
          c.inputs.push_back(draw.Make(dtype, {batch, kv_heads, step.past, head}, -1, 1));
        } else {
          c.inputs.push_back(std::nullopt);
          c.inputs.push_back(std::nullopt);
        }
        c.inputs.push_back(*Tensor::FromDoubles(DataType::kInt32, {batch}, step.seqlens_k));
        c.inputs.push_back(*Tensor::FromDoubles(DataType::kInt32, {}, {double(step.total)}));
        c.facts.reduced_length = step.total;
        c.facts.inner_dim = head;
        expected_outputs += 3;
        cases.push_back(std::move(c));
      }
    }
  }
  EXPECT_EQ(ExpectAttentionBodiesMatchKernels(cases), expected_outputs);
}

// PagedAttention over N=4 query heads and Nkv=2 key/value heads of size 4,
// a cache of 8 blocks of 2 slots, 3 blocks per entry: a prompt of 3 and 2
// tokens, a decode step after 3 and 4 cached keys and a mixed step (2 new
// tokens after 1, 1 after 5), blocks out of order and unused entries -1;
// each plain, with local_window_size 2, softcap 0.5 and scale 0.3.
TEST(ContribAttentionBodiesTest, PagedAttentionBodyMatchesKernel) {
  ASSERT_NE(testing_util::StandardBodies().Find(kContribDomain, "PagedAttention"), nullptr);
  Draw draw(41003);
  const int64_t heads = 4, kv_heads = 2, head = 4, num_blocks = 8, block_size = 2;
  std::vector<ContribCase> cases;
  int expected_outputs = 0;
  struct Step {
    const char *name;
    std::vector<double> cumulative, past, table;
  };
  const Step steps[] = {{"prompt", {0, 3, 5}, {0, 0}, {0, 1, -1, 2, 3, -1}},
                        {"decode", {0, 1, 2}, {3, 4}, {5, 1, -1, 2, 3, 4}},
                        {"mixed", {0, 2, 3}, {1, 5}, {6, 0, -1, 7, 2, 4}}};
  for (DataType dtype : kFloatTypes) {
    for (const Step &step : steps) {
      const int64_t tokens = static_cast<int64_t>(step.cumulative.back());
      std::vector<std::pair<std::string, std::vector<onnx::AttributeProto>>> variants = {
          {"", {}},
          {" window=2", {IntAttr("local_window_size", 2)}},
          {" softcap=0.5", {FloatAttr("softcap", 0.5f)}},
          {" scale=0.3", {FloatAttr("scale", 0.3f)}}};
      for (auto &[extra, attrs] : variants) {
        ContribCase c{std::string(step.name) + extra + " " + std::string(DataTypeName(dtype)),
                        "PagedAttention",
                        attrs,
                        {draw.Make(dtype, {tokens, heads * head}, -1, 1),
                         draw.Make(dtype, {tokens, kv_heads * head}, -1, 1),
                         draw.Make(dtype, {tokens, kv_heads * head}, -1, 1),
                         draw.Make(dtype, {num_blocks, block_size, kv_heads, head}, -1, 1),
                         draw.Make(dtype, {num_blocks, block_size, kv_heads, head}, -1, 1),
                         *Tensor::FromDoubles(DataType::kInt32, {3}, step.cumulative),
                         *Tensor::FromDoubles(DataType::kInt32, {2}, step.past),
                         *Tensor::FromDoubles(DataType::kInt32, {2, 3}, step.table)},
                        {true, true, true},
                        {}};
        c.attributes.push_back(IntAttr("num_heads", heads));
        c.attributes.push_back(IntAttr("kv_num_heads", kv_heads));
        c.facts.reduced_length = 3 * block_size;
        c.facts.inner_dim = head;
        expected_outputs += 3;
        cases.push_back(std::move(c));
      }
    }
  }
  EXPECT_EQ(ExpectAttentionBodiesMatchKernels(cases), expected_outputs);
}

}  // namespace
}  // namespace parity
