// MultiHeadAttention (org.onnxparity.contrib, version 1): the direct kernel
// of spec/functions/multi_head_attention.md. Scores, masks, softmax and the
// weighted sum are computed in double from the inputs as given; each output
// is rounded once to T.
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/contrib/attention_common.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

// Input positions, as ONNX Runtime numbers them; bias (3) and the inputs
// after past_value are outside the subset this version defines.
enum : size_t {
  kMhaQuery = 0,
  kMhaKey,
  kMhaValue,
  kMhaBias,
  kMhaPaddingMask,
  kMhaAttentionBias,
  kMhaPastKey,
  kMhaPastValue,
  kMhaInputs
};

Status RequireType(const KernelContext &ctx, const Tensor &t, DataType dtype, const char *what) {
  if (t.dtype() != dtype) {
    return ctx.Error(what, " must have query's type (", DataTypeName(dtype), "), got ", t.Description());
  }
  return Status::Ok();
}

// The value `v` takes once stored in `dtype` (the body adds the filter value
// as a constant of T).
double RoundedTo(DataType dtype, double v) {
  StatusOr<Tensor> t = Tensor::FromDoubles(dtype, {1}, {v});
  return t.ok() ? t->GetDouble(0) : v;
}

}  // namespace

StatusOr<std::vector<Value>> MultiHeadAttention(const KernelContext &ctx) {
  if (ctx.input_count() > kMhaInputs) {
    return ctx.Error("takes at most ", kMhaInputs, " inputs (past_sequence_length and cache_indirection are not ",
                     "defined here), got ", ctx.input_count());
  }
  if (ctx.output_count() > 3) {
    return ctx.Error("has at most 3 outputs (the qk output is not defined here), got ", ctx.output_count());
  }
  if (ctx.has_input(kMhaBias)) return ctx.Error("input 'bias' (packed projection bias) is not defined here");
  if (!ctx.has_attribute("num_heads")) return ctx.Error("attribute 'num_heads' is required");
  const int64_t heads = ctx.GetInt("num_heads", 0);
  if (heads <= 0) return ctx.Error("num_heads must be positive, got ", heads);
  PARITY_ASSIGN_OR_RETURN(const Tensor *query, ctx.RequireTensor(kMhaQuery));
  if (!ctx.has_input(kMhaKey) || !ctx.has_input(kMhaValue)) {
    return ctx.Error(
        "key and value are required (packed QKV/KV layouts are "
        "not defined here)");
  }
  PARITY_ASSIGN_OR_RETURN(const Tensor *key, ctx.RequireTensor(kMhaKey));
  PARITY_ASSIGN_OR_RETURN(const Tensor *value, ctx.RequireTensor(kMhaValue));
  const DataType dtype = query->dtype();
  PARITY_RETURN_IF_ERROR(RequireFloat32OrHalf(ctx, *query, "query"));
  PARITY_RETURN_IF_ERROR(RequireType(ctx, *key, dtype, "key"));
  PARITY_RETURN_IF_ERROR(RequireType(ctx, *value, dtype, "value"));
  if (query->rank() != 3 || key->rank() != 3 || value->rank() != 3) {
    return ctx.Error("query, key and value must be 3-D [batch, seq, heads * size], got ", query->Description(), ", ",
                     key->Description(), ", ", value->Description());
  }
  const int64_t batch = query->dim(0), q_len = query->dim(1), kv_len = key->dim(1);
  if (query->dim(2) % heads != 0 || value->dim(2) % heads != 0) {
    return ctx.Error("the hidden sizes of query (", query->dim(2), ") and value (", value->dim(2),
                     ") must be multiples of num_heads (", heads, ")");
  }
  const int64_t head = query->dim(2) / heads, v_head = value->dim(2) / heads;
  if (key->dim(0) != batch || value->dim(0) != batch || key->dim(2) != query->dim(2) || value->dim(1) != kv_len) {
    return ctx.Error("key ", key->Description(), " and value ", value->Description(), " do not fit query ",
                     query->Description());
  }
  if (ctx.has_input(kMhaPastKey) != ctx.has_input(kMhaPastValue)) {
    return ctx.Error("past_key and past_value must be given together");
  }
  int64_t past_len = 0;
  std::vector<double> past_k, past_v;
  if (ctx.has_input(kMhaPastKey)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor *pk, ctx.RequireTensor(kMhaPastKey));
    PARITY_ASSIGN_OR_RETURN(const Tensor *pv, ctx.RequireTensor(kMhaPastValue));
    PARITY_RETURN_IF_ERROR(RequireType(ctx, *pk, dtype, "past_key"));
    PARITY_RETURN_IF_ERROR(RequireType(ctx, *pv, dtype, "past_value"));
    past_len = pk->rank() == 4 ? pk->dim(2) : -1;
    if (pk->shape() != Shape{batch, heads, past_len, head} || pv->shape() != Shape{batch, heads, past_len, v_head}) {
      return ctx.Error("past_key ", pk->Description(), " and past_value ", pv->Description(), " must be [", batch, ", ",
                       heads, ", past_len, ", head, "] and [", batch, ", ", heads, ", past_len, ", v_head, "]");
    }
    past_k = pk->ToDoubles();
    past_v = pv->ToDoubles();
  }
  const int64_t total = past_len + kv_len;

  // blocked[b][i][j]: key j is padded or in query i's future.
  std::vector<char> blocked(static_cast<size_t>(batch * q_len * total), 0);
  auto block_at = [&](int64_t b, int64_t i, int64_t j) -> char & { return blocked[(b * q_len + i) * total + j]; };
  if (ctx.has_input(kMhaPaddingMask)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor *mask, ctx.RequireTensor(kMhaPaddingMask));
    if (mask->dtype() != DataType::kInt32)
      return ctx.Error("key_padding_mask must be int32, got ", mask->Description());
    const std::vector<int64_t> m = mask->ToInt64s();
    if (mask->shape() == Shape{batch}) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < q_len; ++i)
          for (int64_t j = m[b] < 0 ? 0 : m[b]; j < total; ++j) block_at(b, i, j) = 1;
    } else if (mask->shape() == Shape{batch, total} || mask->shape() == Shape{batch, q_len, total}) {
      const bool per_query = mask->rank() == 3;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < q_len; ++i)
          for (int64_t j = 0; j < total; ++j) {
            if (m[(per_query ? b * q_len + i : b) * total + j] == 0) block_at(b, i, j) = 1;
          }
    } else {
      return ctx.Error("key_padding_mask must be [", batch, "] (lengths), [", batch, ", ", total, "] or [", batch, ", ",
                       q_len, ", ", total, "] (0 = padding), got ", mask->Description());
    }
  }
  if (ctx.GetInt("unidirectional", 0) != 0) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < q_len; ++i)
        for (int64_t j = past_len + i + 1; j < total; ++j) block_at(b, i, j) = 1;
  }
  std::vector<double> attn_bias;
  Shape bias_shape;
  if (ctx.has_input(kMhaAttentionBias)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor *ab, ctx.RequireTensor(kMhaAttentionBias));
    PARITY_RETURN_IF_ERROR(RequireType(ctx, *ab, dtype, "attention_bias"));
    if (ab->rank() != 4 || (ab->dim(0) != batch && ab->dim(0) != 1) || (ab->dim(1) != heads && ab->dim(1) != 1) ||
        ab->dim(2) != q_len || ab->dim(3) != total) {
      return ctx.Error("attention_bias must be [", batch, " or 1, ", heads, " or 1, ", q_len, ", ", total, "], got ",
                       ab->Description());
    }
    attn_bias = ab->ToDoubles();
    bias_shape = ab->shape();
  }
  const double filter = RoundedTo(dtype, ctx.GetFloat("mask_filter_value", -10000.0f));
  const bool scale_given = ctx.has_attribute("scale");
  const double scale = scale_given ? ctx.GetFloat("scale", 0.0f) : 1.0 / std::sqrt(static_cast<double>(head));
  if (scale_given && scale == 0.0) {
    return ctx.Error(
        "scale 0 is not defined here (ONNX Runtime reads it as "
        "the default 1/sqrt(head_size))");
  }

  const std::vector<double> q = query->ToDoubles(), k = key->ToDoubles(), v = value->ToDoubles();
  // present_key [B, N, T, D] and present_value [B, N, T, Dv]: past ++ new.
  std::vector<double> pres_k(static_cast<size_t>(batch * heads * total * head));
  std::vector<double> pres_v(static_cast<size_t>(batch * heads * total * v_head));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t n = 0; n < heads; ++n)
      for (int64_t t = 0; t < total; ++t) {
        const int64_t row = (b * heads + n) * total + t;
        for (int64_t d = 0; d < head; ++d) {
          pres_k[row * head + d] = t < past_len ? past_k[((b * heads + n) * past_len + t) * head + d]
                                                : k[((b * kv_len + t - past_len) * heads + n) * head + d];
        }
        for (int64_t d = 0; d < v_head; ++d) {
          pres_v[row * v_head + d] = t < past_len ? past_v[((b * heads + n) * past_len + t) * v_head + d]
                                                  : v[((b * kv_len + t - past_len) * heads + n) * v_head + d];
        }
      }
  std::vector<double> out(static_cast<size_t>(batch * q_len * heads * v_head), 0.0);
  std::vector<double> scores(static_cast<size_t>(total));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t n = 0; n < heads; ++n)
      for (int64_t i = 0; i < q_len; ++i) {
        for (int64_t j = 0; j < total; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < head; ++d) {
            s += q[((b * q_len + i) * heads + n) * head + d] * pres_k[((b * heads + n) * total + j) * head + d];
          }
          s *= scale;
          if (!attn_bias.empty()) {
            const int64_t bb = bias_shape[0] == 1 ? 0 : b, nn = bias_shape[1] == 1 ? 0 : n;
            s += attn_bias[((bb * bias_shape[1] + nn) * q_len + i) * total + j];
          }
          if (block_at(b, i, j)) s += filter;
          scores[j] = s;
        }
        SoftmaxInPlace(scores, 0, total - 1);
        for (int64_t j = 0; j < total; ++j) {
          const double p = scores[j];
          for (int64_t d = 0; d < v_head; ++d) {
            out[((b * q_len + i) * heads + n) * v_head + d] += p * pres_v[((b * heads + n) * total + j) * v_head + d];
          }
        }
      }
  return AttentionOutputs(ctx, dtype, {batch, q_len, heads * v_head}, out, {batch, heads, total, head}, pres_k,
                          {batch, heads, total, v_head}, pres_v);
}

}  // namespace parity::ops::contrib
