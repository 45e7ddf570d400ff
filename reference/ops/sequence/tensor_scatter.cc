// TensorScatter-24 (Operators.md): writes `update` into a copy of the cache
// along `axis`, starting for batch b at write_indices[b] (0 when absent);
// mode "circular" wraps positions modulo the cache length, "linear" requires
// them to fit.
#include "reference/ops/common.h"
#include "reference/ops/sequence/sequence.h"

namespace parity::ops::sequence {

StatusOr<std::vector<Value>> TensorScatter(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* cache, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
  const std::string mode = ctx.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.Error("mode '", mode, "' is not linear or circular");
  if (cache->rank() < 2) return ctx.Error("past_cache must have rank >= 2, got ", cache->Description());
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -2), cache->rank()));
  if (axis == 0) return ctx.Error("axis must not be the batch axis 0");
  if (update->dtype() != cache->dtype() || update->rank() != cache->rank()) {
    return ctx.Error("update ", update->Description(), " does not match past_cache ", cache->Description());
  }
  for (int64_t d = 0; d < cache->rank(); ++d) {
    if (d == axis ? update->dim(d) > cache->dim(d) : update->dim(d) != cache->dim(d)) {
      return ctx.Error("update ", update->Description(), " does not fit past_cache ", cache->Description(),
                       " along axis ", d);
    }
  }
  const int64_t batch = cache->dim(0);
  std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(2));
    if (indices->size() != batch || !IsInteger(indices->dtype())) {
      return ctx.Error("write_indices must hold ", batch, " integers, got ", indices->Description());
    }
    starts = indices->ToInt64s();
  }
  const int64_t max_len = cache->dim(axis);
  const int64_t len = update->dim(axis);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = starts[static_cast<size_t>(b)];
    if (start < 0 || (mode == "linear" && start + len > max_len) || (mode == "circular" && start >= max_len && max_len > 0)) {
      return ctx.Error("write_indices[", b, "] = ", start, " with ", len, " updates does not fit the cache length ",
                       max_len, " in mode ", mode);
    }
  }
  // Copy the cache, then each update row into its position.
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, cache->dtype(), cache->shape()));
  for (int64_t i = 0; i < cache->size(); ++i) {
    if (cache->dtype() == DataType::kString) out.mutable_strings()[static_cast<size_t>(i)] = cache->strings()[static_cast<size_t>(i)];
  }
  if (cache->dtype() != DataType::kString) {
    std::copy(cache->raw_bytes(), cache->raw_bytes() + cache->byte_size(), out.mutable_raw_bytes());
  }
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < cache->rank(); ++d) inner *= cache->dim(d);
  int64_t per_batch = 1;  // product of dims 1..axis-1
  for (int64_t d = 1; d < axis; ++d) per_batch *= cache->dim(d);
  const size_t width = StorageSize(cache->dtype());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t m = 0; m < per_batch; ++m) {
      const int64_t outer = b * per_batch + m;
      for (int64_t s = 0; s < len; ++s) {
        int64_t pos = starts[static_cast<size_t>(b)] + s;
        if (mode == "circular") pos %= max_len;
        const int64_t dst = (outer * max_len + pos) * inner;
        const int64_t src = (outer * len + s) * inner;
        if (cache->dtype() == DataType::kString) {
          for (int64_t e = 0; e < inner; ++e) {
            out.mutable_strings()[static_cast<size_t>(dst + e)] = update->strings()[static_cast<size_t>(src + e)];
          }
        } else {
          std::copy(update->raw_bytes() + static_cast<size_t>(src) * width,
                    update->raw_bytes() + static_cast<size_t>(src + inner) * width,
                    out.mutable_raw_bytes() + static_cast<size_t>(dst) * width);
        }
      }
    }
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::sequence
