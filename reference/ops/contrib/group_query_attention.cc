// GroupQueryAttention (org.onnxparity.contrib, version 1): the direct kernel
// of spec/functions/group_query_attention.md. The cache update, scores,
// soft cap, masks, softmax and weighted sum are computed in double from the
// inputs as given; each output is rounded once to T.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/contrib/attention_common.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

// Input positions, as ONNX Runtime numbers them; cos_cache (7) and the
// inputs after it are outside the subset this version defines.
enum : size_t {
  kGqaQuery = 0,
  kGqaKey,
  kGqaValue,
  kGqaPastKey,
  kGqaPastValue,
  kGqaSeqlensK,
  kGqaTotalLength,
  kGqaInputs
};

}  // namespace

StatusOr<std::vector<Value>> GroupQueryAttention(const KernelContext &ctx) {
  if (ctx.input_count() > kGqaInputs) {
    return ctx.Error("takes at most ", kGqaInputs, " inputs (rotary caches, position_ids, attention_bias, head_sink ",
                     "and cache scales are not defined here), got ", ctx.input_count());
  }
  if (ctx.output_count() > 3) {
    return ctx.Error("has at most 3 outputs (output_qk is not defined here), got ", ctx.output_count());
  }
  if (ctx.GetInt("do_rotary", 0) != 0) {
    return ctx.Error("do_rotary must be 0 (apply ai.onnx RotaryEmbedding to query and key before the call)");
  }
  if (ctx.GetInt("smooth_softmax", -1) > 0) return ctx.Error("smooth_softmax is not defined here");
  if (ctx.GetInt("qk_output", 0) != 0) return ctx.Error("qk_output is not defined here");
  if (!ctx.has_attribute("num_heads") || !ctx.has_attribute("kv_num_heads")) {
    return ctx.Error("attributes 'num_heads' and 'kv_num_heads' are required");
  }
  const int64_t heads = ctx.GetInt("num_heads", 0), kv_heads = ctx.GetInt("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) {
    return ctx.Error("num_heads (", heads, ") must be a positive multiple of kv_num_heads (", kv_heads, ")");
  }
  PARITY_ASSIGN_OR_RETURN(const Tensor *query, ctx.RequireTensor(kGqaQuery));
  if (!ctx.has_input(kGqaKey) || !ctx.has_input(kGqaValue)) {
    return ctx.Error("key and value are required (the packed QKV layout is not defined here)");
  }
  PARITY_ASSIGN_OR_RETURN(const Tensor *key, ctx.RequireTensor(kGqaKey));
  PARITY_ASSIGN_OR_RETURN(const Tensor *value, ctx.RequireTensor(kGqaValue));
  const DataType dtype = query->dtype();
  PARITY_RETURN_IF_ERROR(RequireFloat32OrHalf(ctx, *query, "query"));
  if (key->dtype() != dtype || value->dtype() != dtype) {
    return ctx.Error("key ", key->Description(), " and value ", value->Description(), " must have query's type");
  }
  if (query->rank() != 3 || key->rank() != 3 || value->rank() != 3) {
    return ctx.Error("query, key and value must be 3-D [batch, seq, heads * size], got ", query->Description(), ", ",
                     key->Description(), ", ", value->Description());
  }
  const int64_t batch = query->dim(0), q_len = query->dim(1);
  if (query->dim(2) % heads != 0) {
    return ctx.Error("query's hidden size (", query->dim(2), ") must be a multiple of num_heads (", heads, ")");
  }
  const int64_t head = query->dim(2) / heads, group = heads / kv_heads;
  if (key->shape() != Shape{batch, q_len, kv_heads * head} || value->shape() != key->shape()) {
    return ctx.Error("key ", key->Description(), " and value ", value->Description(), " must be [", batch, ", ", q_len,
                     ", ", kv_heads * head, "] (as many new keys as queries, kv_num_heads heads of query's size)");
  }
  if (ctx.has_input(kGqaPastKey) != ctx.has_input(kGqaPastValue)) {
    return ctx.Error("past_key and past_value must be given together");
  }
  int64_t past_len = 0;
  std::vector<double> past_k, past_v;
  if (ctx.has_input(kGqaPastKey)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor *pk, ctx.RequireTensor(kGqaPastKey));
    PARITY_ASSIGN_OR_RETURN(const Tensor *pv, ctx.RequireTensor(kGqaPastValue));
    past_len = pk->rank() == 4 ? pk->dim(2) : -1;
    if (pk->dtype() != dtype || pv->dtype() != dtype || pk->shape() != Shape{batch, kv_heads, past_len, head} ||
        pv->shape() != pk->shape()) {
      return ctx.Error("past_key ", pk->Description(), " and past_value ", pv->Description(), " must be [", batch,
                       ", ", kv_heads, ", past_len, ", head, "] of query's type (quantised caches are not defined here)");
    }
    past_k = pk->ToDoubles();
    past_v = pv->ToDoubles();
  }
  if (!ctx.has_input(kGqaSeqlensK) || !ctx.has_input(kGqaTotalLength)) {
    return ctx.Error("seqlens_k and total_sequence_length are required");
  }
  PARITY_ASSIGN_OR_RETURN(const Tensor *seqlens, ctx.RequireTensor(kGqaSeqlensK));
  PARITY_ASSIGN_OR_RETURN(const Tensor *total_t, ctx.RequireTensor(kGqaTotalLength));
  if (seqlens->dtype() != DataType::kInt32 || seqlens->shape() != Shape{batch}) {
    return ctx.Error("seqlens_k must be int32 [", batch, "], got ", seqlens->Description());
  }
  if (total_t->dtype() != DataType::kInt32 || total_t->size() != 1) {
    return ctx.Error("total_sequence_length must be an int32 scalar, got ", total_t->Description());
  }
  const int64_t total = total_t->ToInt64s()[0];
  const std::vector<int64_t> seqlens_k = seqlens->ToInt64s();
  // valid[b] keys in all for entry b; the first valid[b] - S come from the
  // cache, which must hold them.
  std::vector<int64_t> valid(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    valid[b] = seqlens_k[b] + 1;
    if (valid[b] < q_len || valid[b] - q_len > past_len || valid[b] > total) {
      return ctx.Error("seqlens_k[", b, "] + 1 = ", valid[b], " must be at least the ", q_len,
                       " new keys, at most past_len + new keys = ", past_len + q_len,
                       " and at most total_sequence_length = ", total,
                       " (right-padded prompts are not defined here)");
    }
  }
  const int64_t present_len = std::max(past_len, total);
  PARITY_ASSIGN_OR_RETURN(const CausalAttentionAttributes attributes, ReadCausalAttentionAttributes(ctx, head));
  const double scale = attributes.scale, softcap = attributes.softcap;
  const int64_t window = attributes.window;

  const std::vector<double> q = query->ToDoubles(), k = key->ToDoubles(), v = value->ToDoubles();
  // present [B, Nkv, present_len, D]: the valid[b] - S cached rows, the new
  // rows at valid[b] - S .. valid[b] - 1, zeros after.
  std::vector<double> pres_k(static_cast<size_t>(batch * kv_heads * present_len * head), 0.0);
  std::vector<double> pres_v(pres_k.size(), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t n = 0; n < kv_heads; ++n) {
      const int64_t base = (b * kv_heads + n) * present_len;
      for (int64_t t = 0; t < valid[b] - q_len; ++t)
        for (int64_t d = 0; d < head; ++d) {
          pres_k[(base + t) * head + d] = past_k[((b * kv_heads + n) * past_len + t) * head + d];
          pres_v[(base + t) * head + d] = past_v[((b * kv_heads + n) * past_len + t) * head + d];
        }
      for (int64_t s = 0; s < q_len; ++s)
        for (int64_t d = 0; d < head; ++d) {
          const int64_t row = base + valid[b] - q_len + s;
          pres_k[row * head + d] = k[((b * q_len + s) * kv_heads + n) * head + d];
          pres_v[row * head + d] = v[((b * q_len + s) * kv_heads + n) * head + d];
        }
    }
  std::vector<double> out(static_cast<size_t>(batch * q_len * heads * head), 0.0);
  std::vector<double> scores(static_cast<size_t>(present_len));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t n = 0; n < heads; ++n)
      for (int64_t i = 0; i < q_len; ++i) {
        // Query i sits at key position valid[b] - S + i and sees the
        // `window` keys that end at it (all keys up to it without a window).
        const int64_t position = valid[b] - q_len + i;
        const int64_t first = window < 0 ? 0 : std::max<int64_t>(0, position - window + 1);
        const int64_t base = (b * kv_heads + n / group) * present_len;
        for (int64_t j = first; j <= position; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < head; ++d) {
            s += q[((b * q_len + i) * heads + n) * head + d] * pres_k[(base + j) * head + d];
          }
          s *= scale;
          if (softcap > 0.0) s = softcap * std::tanh(s / softcap);
          scores[j] = s;
        }
        SoftmaxInPlace(scores, first, position);
        for (int64_t j = first; j <= position; ++j) {
          const double p = scores[j];
          for (int64_t d = 0; d < head; ++d) {
            out[((b * q_len + i) * heads + n) * head + d] += p * pres_v[(base + j) * head + d];
          }
        }
      }
  return AttentionOutputs(ctx, dtype, {batch, q_len, heads * head}, out, {batch, kv_heads, present_len, head}, pres_k,
                          {batch, kv_heads, present_len, head}, pres_v);
}

}  // namespace parity::ops::contrib
