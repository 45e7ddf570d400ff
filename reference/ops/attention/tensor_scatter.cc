// TensorScatter-24 (Operators.md): writes `update` into a copy of the cache
// along `axis`, starting for batch b at write_indices[b] (0 when absent);
// mode "circular" wraps positions modulo the cache length, "linear" requires
// them to fit. TensorScatterInPlace writes the same rows into the cache's
// own buffer, for the evaluator's in-place aliasing (region scatter).
#include "reference/ops/common.h"
#include "reference/ops/attention/attention.h"
#include "reference/ops/attention/tensor_scatter.h"

namespace parity::ops::attention {

StatusOr<ScatterPlan> PlanScatter(const KernelContext& ctx, const Tensor& cache, const Tensor& update) {
  const std::string mode = ctx.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.Error("mode '", mode, "' is not linear or circular");
  if (cache.rank() < 2) return ctx.Error("past_cache must have rank >= 2, got ", cache.Description());
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -2), cache.rank()));
  if (axis == 0) return ctx.Error("axis must not be the batch axis 0");
  if (update.dtype() != cache.dtype() || update.rank() != cache.rank()) {
    return ctx.Error("update ", update.Description(), " does not match past_cache ", cache.Description());
  }
  for (int64_t d = 0; d < cache.rank(); ++d) {
    if (d == axis ? update.dim(d) > cache.dim(d) : update.dim(d) != cache.dim(d)) {
      return ctx.Error("update ", update.Description(), " does not fit past_cache ", cache.Description(),
                       " along axis ", d);
    }
  }
  ScatterPlan plan;
  plan.circular = mode == "circular";
  plan.batch = cache.dim(0);
  plan.starts.assign(static_cast<size_t>(plan.batch), 0);
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(2));
    if (indices->size() != plan.batch || !IsInteger(indices->dtype())) {
      return ctx.Error("write_indices must hold ", plan.batch, " integers, got ", indices->Description());
    }
    plan.starts = indices->ToInt64s();
  }
  plan.max_len = cache.dim(axis);
  plan.len = update.dim(axis);
  for (int64_t b = 0; b < plan.batch; ++b) {
    const int64_t start = plan.starts[static_cast<size_t>(b)];
    if (start < 0 || (!plan.circular && start + plan.len > plan.max_len) ||
        (plan.circular && start >= plan.max_len && plan.max_len > 0)) {
      return ctx.Error("write_indices[", b, "] = ", start, " with ", plan.len,
                       " updates does not fit the cache length ", plan.max_len, " in mode ", mode);
    }
  }
  for (int64_t d = axis + 1; d < cache.rank(); ++d) plan.inner *= cache.dim(d);
  for (int64_t d = 1; d < axis; ++d) plan.per_batch *= cache.dim(d);
  return plan;
}

namespace {

// Writes every update row into `target` (the cache's shape) at its planned position.
void WriteRows(const ScatterPlan& plan, const Tensor& update, Tensor& target) {
  const size_t width = StorageSize(target.dtype());
  const bool strings = target.dtype() == DataType::kString;
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (int64_t m = 0; m < plan.per_batch; ++m) {
      const int64_t outer = b * plan.per_batch + m;
      for (int64_t s = 0; s < plan.len; ++s) {
        int64_t pos = plan.starts[static_cast<size_t>(b)] + s;
        if (plan.circular) pos %= plan.max_len;
        const int64_t dst = (outer * plan.max_len + pos) * plan.inner;
        const int64_t src = (outer * plan.len + s) * plan.inner;
        if (strings) {
          for (int64_t e = 0; e < plan.inner; ++e) {
            target.mutable_strings()[static_cast<size_t>(dst + e)] = update.strings()[static_cast<size_t>(src + e)];
          }
        } else {
          std::copy(update.raw_bytes() + static_cast<size_t>(src) * width,
                    update.raw_bytes() + static_cast<size_t>(src + plan.inner) * width,
                    target.mutable_raw_bytes() + static_cast<size_t>(dst) * width);
        }
      }
    }
  }
}

}  // namespace

StatusOr<std::vector<Value>> TensorScatter(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* cache, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(ScatterPlan plan, PlanScatter(ctx, *cache, *update));
  // Copy the cache, then each update row into its position.
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, cache->dtype(), cache->shape()));
  if (cache->dtype() == DataType::kString) {
    out.mutable_strings() = cache->strings();
  } else {
    std::copy(cache->raw_bytes(), cache->raw_bytes() + cache->byte_size(), out.mutable_raw_bytes());
  }
  WriteRows(plan, *update, out);
  return Single(std::move(out));
}

Status TensorScatterInPlace(const KernelContext& ctx, Tensor& cache) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* past, ctx.RequireTensor(0));
  if (!past->SharesBufferWith(cache)) {
    return Internal(ctx.NodeLabel(), ": the in-place target is not the buffer of past_cache");
  }
  PARITY_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(ScatterPlan plan, PlanScatter(ctx, cache, *update));
  // Rows read from the buffer being written could be overwritten before they
  // are read: an update that views the cache is copied out first.
  if (update->SharesBufferWith(cache)) {
    WriteRows(plan, update->Clone(), cache);
  } else {
    WriteRows(plan, *update, cache);
  }
  return Status::Ok();
}

}  // namespace parity::ops::attention
