// RotaryEmbedding-23 (Operators.md): rotates pairs of each head's first
// rotary_embedding_dim features by position-dependent angles given as cos and
// sin caches. Pairs are (x[k], x[k + dim/2]) by default and (x[2k], x[2k+1])
// when interleaved; features past rotary_embedding_dim pass through.
#include "reference/ops/common.h"
#include "reference/ops/attention/attention.h"

namespace parity::ops::attention {

StatusOr<std::vector<Value>> RotaryEmbedding(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* cos_cache, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* sin_cache, ctx.RequireTensor(2));
  const Tensor* position_ids = nullptr;
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(position_ids, ctx.RequireTensor(3));
  }
  const bool interleaved = ctx.GetInt("interleaved", 0) != 0;
  const int64_t num_heads_attr = ctx.GetInt("num_heads", 0);

  // Logical layout [batch, seq, heads, head_size] over either input layout:
  // 4-D input is [batch, heads, seq, head_size]; 3-D is [batch, seq, heads * head_size].
  int64_t batch = 0, seq = 0, heads = 0, head_size = 0;
  if (x->rank() == 4) {
    batch = x->dim(0), heads = x->dim(1), seq = x->dim(2), head_size = x->dim(3);
  } else if (x->rank() == 3) {
    if (num_heads_attr <= 0) return ctx.Error("a 3-D input needs a positive num_heads attribute");
    if (x->dim(2) % num_heads_attr != 0) {
      return ctx.Error("hidden size ", x->dim(2), " is not a multiple of num_heads ", num_heads_attr);
    }
    batch = x->dim(0), seq = x->dim(1), heads = num_heads_attr, head_size = x->dim(2) / num_heads_attr;
  } else {
    return ctx.Error("input must be 3-D or 4-D, got ", x->Description());
  }
  auto flat_index = [&](int64_t b, int64_t s, int64_t h, int64_t d) {
    return x->rank() == 4 ? ((b * heads + h) * seq + s) * head_size + d : ((b * seq + s) * heads + h) * head_size + d;
  };
  int64_t rotary_dim = ctx.GetInt("rotary_embedding_dim", 0);
  if (rotary_dim == 0) rotary_dim = head_size;
  if (rotary_dim < 0 || rotary_dim > head_size || rotary_dim % 2 != 0) {
    return ctx.Error("rotary_embedding_dim ", rotary_dim, " must be even and at most the head size ", head_size);
  }
  const int64_t half = rotary_dim / 2;
  if (cos_cache->shape() != sin_cache->shape() || cos_cache->rank() < 1 || cos_cache->dim(cos_cache->rank() - 1) != half) {
    return ctx.Error("cos_cache ", cos_cache->Description(), " and sin_cache ", sin_cache->Description(),
                     " must have the same shape with last dimension ", half);
  }
  // Row of the caches for (b, s).
  std::vector<int64_t> cache_row(static_cast<size_t>(batch * seq));
  if (position_ids) {
    if (cos_cache->rank() != 2) return ctx.Error("with position_ids the caches must be 2-D, got ", cos_cache->Description());
    if (position_ids->shape() != Shape({batch, seq})) {
      return ctx.Error("position_ids ", position_ids->Description(), " must have shape [", batch, ", ", seq, "]");
    }
    for (int64_t i = 0; i < batch * seq; ++i) {
      const int64_t p = position_ids->GetInt64(i);
      if (p < 0 || p >= cos_cache->dim(0)) return ctx.Error("position id ", p, " is outside the cache of ", cos_cache->dim(0));
      cache_row[static_cast<size_t>(i)] = p;
    }
  } else {
    if (cos_cache->shape() != Shape({batch, seq, half})) {
      return ctx.Error("without position_ids the caches must have shape [", batch, ", ", seq, ", ", half, "], got ",
                       cos_cache->Description());
    }
    for (int64_t i = 0; i < batch * seq; ++i) cache_row[static_cast<size_t>(i)] = i;
  }

  const std::vector<double> in = x->ToDoubles();
  std::vector<double> out = in;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t row = cache_row[static_cast<size_t>(b * seq + s)];
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t k = 0; k < half; ++k) {
          const double c = cos_cache->GetDouble(row * half + k);
          const double sn = sin_cache->GetDouble(row * half + k);
          const int64_t i1 = flat_index(b, s, h, interleaved ? 2 * k : k);
          const int64_t i2 = flat_index(b, s, h, interleaved ? 2 * k + 1 : k + half);
          const double x1 = in[static_cast<size_t>(i1)], x2 = in[static_cast<size_t>(i2)];
          out[static_cast<size_t>(i1)] = c * x1 - sn * x2;
          out[static_cast<size_t>(i2)] = sn * x1 + c * x2;
        }
    }
  PARITY_ASSIGN_OR_RETURN(Value result, MakeResult(ctx, x->dtype(), x->shape(), out));
  return std::vector<Value>{std::move(result)};
}

}  // namespace parity::ops::attention
