// PagedAttention (org.onnxparity.contrib, version 1): the direct kernel of
// spec/functions/paged_attention.md. The cache writes, scores, soft cap,
// masks, softmax and weighted sum are computed in double from the inputs as
// given; each output is rounded once to T.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "reference/ops/common.h"
#include "reference/ops/contrib/attention_common.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

// Input positions, as ONNX Runtime numbers them; cos_cache (8) and the
// inputs after it are outside the subset this version defines.
enum : size_t {
  kPagedQuery = 0,
  kPagedKey,
  kPagedValue,
  kPagedKeyCache,
  kPagedValueCache,
  kPagedCumulative,
  kPagedPastSeqlens,
  kPagedBlockTable,
  kPagedInputs
};

// Attributes whose only value defined here is ONNX Runtime's default.
Status CheckDefaults(const KernelContext &ctx) {
  if (ctx.GetInt("do_rotary", 0) != 0) {
    return ctx.Error("do_rotary must be 0 (apply ai.onnx RotaryEmbedding to query and key before the call)");
  }
  if (ctx.GetInt("is_causal", 1) != 1) return ctx.Error("is_causal must be 1 (bidirectional drafts are not defined here)");
  if (ctx.GetString("kv_cache_layout", "SEPARATE") != "SEPARATE") {
    return ctx.Error("kv_cache_layout must be SEPARATE (the latent layout is not defined here)");
  }
  for (const char *name : {"k_cache_dtype", "v_cache_dtype"}) {
    if (!ctx.GetString(name, "").empty()) return ctx.Error(name, " is not defined here (caches are of query's type)");
  }
  for (const char *name : {"k_quant_type", "v_quant_type"}) {
    if (ctx.GetString(name, "NONE") != "NONE") return ctx.Error(name, " must be NONE (quantised caches are not defined here)");
  }
  if (ctx.GetInt("v_head_size", 0) != 0) return ctx.Error("v_head_size is not defined here");
  if (ctx.GetInt("rotary_interleaved", 0) != 0 || ctx.GetInt("rotary_offset", 0) != 0) {
    return ctx.Error("rotary_interleaved and rotary_offset are not defined here (do_rotary is 0)");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<Value>> PagedAttention(const KernelContext &ctx) {
  if (ctx.input_count() > kPagedInputs) {
    return ctx.Error("takes at most ", kPagedInputs, " inputs (rotary caches, slot_mapping, head_sink, q/k norms, ",
                     "cache scales and attention_metadata are not defined here), got ", ctx.input_count());
  }
  if (ctx.output_count() > 3) return ctx.Error("has at most 3 outputs, got ", ctx.output_count());
  PARITY_RETURN_IF_ERROR(CheckDefaults(ctx));
  if (!ctx.has_attribute("num_heads") || !ctx.has_attribute("kv_num_heads")) {
    return ctx.Error("attributes 'num_heads' and 'kv_num_heads' are required");
  }
  const int64_t heads = ctx.GetInt("num_heads", 0), kv_heads = ctx.GetInt("kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0) {
    return ctx.Error("num_heads (", heads, ") must be a positive multiple of kv_num_heads (", kv_heads, ")");
  }
  for (size_t i = 0; i < kPagedInputs; ++i) {
    if (!ctx.has_input(i)) {
      return ctx.Error("inputs 0-7 (query, key, value, key_cache, value_cache, cumulative_sequence_length, ",
                       "past_seqlens, block_table) are required (packed QKV and the latent layout are not defined ",
                       "here); input ", i, " is absent");
    }
  }
  PARITY_ASSIGN_OR_RETURN(const Tensor *query, ctx.RequireTensor(kPagedQuery));
  PARITY_ASSIGN_OR_RETURN(const Tensor *key, ctx.RequireTensor(kPagedKey));
  PARITY_ASSIGN_OR_RETURN(const Tensor *value, ctx.RequireTensor(kPagedValue));
  PARITY_ASSIGN_OR_RETURN(const Tensor *key_cache, ctx.RequireTensor(kPagedKeyCache));
  PARITY_ASSIGN_OR_RETURN(const Tensor *value_cache, ctx.RequireTensor(kPagedValueCache));
  PARITY_ASSIGN_OR_RETURN(const Tensor *cumulative_t, ctx.RequireTensor(kPagedCumulative));
  PARITY_ASSIGN_OR_RETURN(const Tensor *past_t, ctx.RequireTensor(kPagedPastSeqlens));
  PARITY_ASSIGN_OR_RETURN(const Tensor *table_t, ctx.RequireTensor(kPagedBlockTable));
  const DataType dtype = query->dtype();
  PARITY_RETURN_IF_ERROR(RequireFloat32OrHalf(ctx, *query, "query"));
  if (query->rank() != 2 || query->dim(1) % heads != 0) {
    return ctx.Error("query must be 2-D [tokens, num_heads * head_size] with num_heads = ", heads, ", got ",
                     query->Description());
  }
  const int64_t tokens = query->dim(0), head = query->dim(1) / heads, group = heads / kv_heads;
  for (const Tensor *t : {key, value}) {
    if (t->dtype() != dtype || t->shape() != Shape{tokens, kv_heads * head}) {
      return ctx.Error("key and value must be [", tokens, ", ", kv_heads * head, "] of query's type, got ",
                       t->Description());
    }
  }
  if (key_cache->rank() != 4) {
    return ctx.Error("key_cache must be 4-D [num_blocks, block_size, kv_num_heads, head_size], got ",
                     key_cache->Description());
  }
  const int64_t num_blocks = key_cache->dim(0), block_size = key_cache->dim(1);
  if (key_cache->dtype() != dtype || key_cache->shape() != Shape{num_blocks, block_size, kv_heads, head} ||
      value_cache->dtype() != dtype || value_cache->shape() != key_cache->shape() || block_size <= 0) {
    return ctx.Error("key_cache ", key_cache->Description(), " and value_cache ", value_cache->Description(),
                     " must be [num_blocks, block_size > 0, ", kv_heads, ", ", head,
                     "] of query's type (quantised caches are not defined here)");
  }
  if (cumulative_t->dtype() != DataType::kInt32 || cumulative_t->rank() != 1 || cumulative_t->dim(0) < 1) {
    return ctx.Error("cumulative_sequence_length must be int32 [batch + 1], got ", cumulative_t->Description());
  }
  const int64_t batch = cumulative_t->dim(0) - 1;
  if (past_t->dtype() != DataType::kInt32 || past_t->shape() != Shape{batch}) {
    return ctx.Error("past_seqlens must be int32 [", batch, "], got ", past_t->Description());
  }
  if (table_t->dtype() != DataType::kInt32 || table_t->rank() != 2 || table_t->dim(0) != batch) {
    return ctx.Error("block_table must be int32 [", batch, ", max_blocks_per_sequence], got ", table_t->Description());
  }
  const int64_t per_entry = table_t->dim(1);
  const std::vector<int64_t> cumulative = cumulative_t->ToInt64s(), past = past_t->ToInt64s();
  const std::vector<int64_t> table = table_t->ToInt64s();
  if (cumulative[0] != 0 || cumulative[batch] != tokens) {
    return ctx.Error("cumulative_sequence_length must start at 0 and end at the ", tokens, " tokens, got ",
                     cumulative[0], " .. ", cumulative[batch]);
  }
  // slot(b, j): the cache row of position j of entry b. Every position an
  // entry uses (below past + new) must lie in a block of the cache, and no
  // two tokens may be written to one slot.
  auto slot = [&](int64_t b, int64_t j) { return table[b * per_entry + j / block_size] * block_size + j % block_size; };
  std::set<int64_t> written;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t fresh = cumulative[b + 1] - cumulative[b];
    if (fresh < 0 || past[b] < 0) {
      return ctx.Error("cumulative_sequence_length must not decrease and past_seqlens must be >= 0 (entry ", b, ")");
    }
    if (past[b] + fresh > per_entry * block_size) {
      return ctx.Error("entry ", b, " holds ", past[b] + fresh, " keys, beyond its ", per_entry, " blocks of ",
                       block_size);
    }
    for (int64_t j = 0; j < past[b] + fresh; j += block_size) {
      const int64_t block = table[b * per_entry + j / block_size];
      if (block < 0 || block >= num_blocks) {
        return ctx.Error("block_table[", b, ", ", j / block_size, "] = ", block, " is outside the ", num_blocks,
                         " cache blocks but covers a position in use");
      }
    }
    for (int64_t j = past[b]; j < past[b] + fresh; ++j) {
      if (!written.insert(slot(b, j)).second) {
        return ctx.Error("two new tokens are written to cache slot ", slot(b, j), " (entry ", b, ", position ", j,
                         "): the block table must give each new token its own slot");
      }
    }
  }
  PARITY_ASSIGN_OR_RETURN(const CausalAttentionAttributes attributes, ReadCausalAttentionAttributes(ctx, head));
  const double scale = attributes.scale, softcap = attributes.softcap;
  const int64_t window = attributes.window;

  const std::vector<double> q = query->ToDoubles(), k = key->ToDoubles(), v = value->ToDoubles();
  // The caches as rows [num_blocks * block_size, Nkv * D]; all writes come
  // before any read.
  std::vector<double> cache_k = key_cache->ToDoubles(), cache_v = value_cache->ToDoubles();
  const int64_t width = kv_heads * head;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = cumulative[b]; r < cumulative[b + 1]; ++r) {
      const int64_t row = slot(b, past[b] + r - cumulative[b]);
      std::copy(k.begin() + r * width, k.begin() + (r + 1) * width, cache_k.begin() + row * width);
      std::copy(v.begin() + r * width, v.begin() + (r + 1) * width, cache_v.begin() + row * width);
    }
  std::vector<double> out(static_cast<size_t>(tokens * heads * head), 0.0);
  std::vector<double> scores(static_cast<size_t>(per_entry * block_size));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = cumulative[b]; r < cumulative[b + 1]; ++r)
      for (int64_t n = 0; n < heads; ++n) {
        // Token r sits at position past + (r - start) and sees the `window`
        // keys that end at it (every key up to it without a window).
        const int64_t position = past[b] + r - cumulative[b];
        const int64_t first = window < 0 ? 0 : std::max<int64_t>(0, position - window + 1);
        const int64_t kv = n / group;
        for (int64_t j = first; j <= position; ++j) {
          double s = 0.0;
          for (int64_t d = 0; d < head; ++d) {
            s += q[(r * heads + n) * head + d] * cache_k[slot(b, j) * width + kv * head + d];
          }
          s *= scale;
          if (softcap > 0.0) s = softcap * std::tanh(s / softcap);
          scores[j] = s;
        }
        SoftmaxInPlace(scores, first, position);
        for (int64_t j = first; j <= position; ++j) {
          const double p = scores[j];
          for (int64_t d = 0; d < head; ++d) {
            out[(r * heads + n) * head + d] += p * cache_v[slot(b, j) * width + kv * head + d];
          }
        }
      }
  return AttentionOutputs(ctx, dtype, {tokens, heads * head}, out, key_cache->shape(), cache_k, value_cache->shape(),
                          cache_v);
}

}  // namespace parity::ops::contrib
