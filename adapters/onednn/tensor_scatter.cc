// TensorScatter-24 on oneDNN reorders, with the in-place form of
// spec/aliasing.md (region "scatter"): the update rows are copied by a
// reorder into a memory object over the kept cache's own buffer, so a
// decode step writes one row per head and nothing cache-sized. The
// functional form copies the cache first (one more reorder) and writes the
// rows into the copy. Rows are moved as bytes (a reorder of u8 data), so
// every element type of fixed width is copied bit for bit.
#include <algorithm>

#include "adapters/onednn/attention_parts.h"
#include "reference/ops/attention/tensor_scatter.h"
#include "reference/ops/common.h"

namespace parity::adapters::onednn {
namespace {

// Where the update rows go: the reference's own plan
// (reference/ops/attention/tensor_scatter.h), so the same inputs are
// refused; rows are moved as bytes, `inner` elements of the cache's width.
using ops::attention::ScatterPlan;

int64_t RowBytes(const ScatterPlan& g, const Tensor& cache) {
  return g.inner * static_cast<int64_t>(StorageSize(cache.dtype()));
}

class TensorScatterNode final : public LoweredNode {
 public:
  bool in_place() const override { return true; }
  bool deferred() const override { return true; }  // the reorders are made for the shapes met

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(const Tensor* cache, ctx.RequireTensor(0));
    PARITY_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
    PARITY_ASSIGN_OR_RETURN(const ScatterPlan g, ops::attention::PlanScatter(ctx, *cache, *update));
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(cache->dtype(), cache->shape()));
    try {
      if (out.byte_size() > 0) {
        const dnnl::memory::desc all({static_cast<int64_t>(out.byte_size())}, dnnl_dt::u8, {1});
        reorders_.Run(ViewAt(all, cache->raw_bytes(), 0), ViewAt(all, out.raw_bytes(), 0));
      }
      WriteRows(g, *update, out);
      Stream().wait();
    } catch (const dnnl::error& e) {
      return ctx.Error("running its oneDNN reorders failed: ", DnnlError(e));
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

  Status RunInPlace(const KernelContext& ctx, Tensor& buffer) override {
    PARITY_ASSIGN_OR_RETURN(const Tensor* past, ctx.RequireTensor(0));
    if (!past->SharesBufferWith(buffer)) {
      return Internal(ctx.NodeLabel(), ": the in-place target is not the buffer of past_cache");
    }
    PARITY_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
    PARITY_ASSIGN_OR_RETURN(const ScatterPlan g, ops::attention::PlanScatter(ctx, buffer, *update));
    try {
      // An update that views the cache is copied out first: its rows could
      // be overwritten before they are read.
      if (update->SharesBufferWith(buffer)) {
        WriteRows(g, update->Clone(), buffer);
      } else {
        WriteRows(g, *update, buffer);
      }
      Stream().wait();
    } catch (const dnnl::error& e) {
      return ctx.Error("running its oneDNN reorders failed: ", DnnlError(e));
    }
    return Status::Ok();
  }

 private:
  // One reorder per batch entry and contiguous run of positions (two when a
  // circular write wraps): [per_batch, rows, row_bytes] bytes from the
  // update into the cache.
  void WriteRows(const ScatterPlan& g, const Tensor& update, Tensor& target) {
    if (g.len == 0 || RowBytes(g, target) == 0 || g.per_batch == 0) return;
    for (int64_t b = 0; b < g.batch; ++b) {
      const int64_t start = g.starts[static_cast<size_t>(b)];
      const int64_t first = g.circular ? std::min(g.len, g.max_len - start) : g.len;
      Copy(g, update, target, b, 0, start, first);
      if (first < g.len) Copy(g, update, target, b, first, 0, g.len - first);
    }
  }

  void Copy(const ScatterPlan& g, const Tensor& update, Tensor& target, int64_t b, int64_t from_row,
            int64_t to_row, int64_t rows) {
    const int64_t row_bytes = RowBytes(g, target);
    const dnnl::memory::desc from({g.per_batch, rows, row_bytes}, dnnl_dt::u8, {g.len * row_bytes, row_bytes, 1});
    const dnnl::memory::desc to({g.per_batch, rows, row_bytes}, dnnl_dt::u8, {g.max_len * row_bytes, row_bytes, 1});
    reorders_.Run(ViewAt(from, update.raw_bytes(), (b * g.per_batch * g.len + from_row) * row_bytes),
                  ViewAt(to, target.raw_bytes(), (b * g.per_batch * g.max_len + to_row) * row_bytes));
  }

  ReorderCache reorders_;
};

}  // namespace

StatusOr<std::unique_ptr<LoweredNode>> LowerTensorScatter(const NodeView& view) {
  const std::optional<DataType> type = view.input_type(0);
  if (!type) return NotLowered("the type of past_cache is not known before the run");
  if (StorageSize(*type) == 0) return NotLowered("past_cache of type ", DataTypeName(*type), " (not fixed-width)");
  return std::unique_ptr<LoweredNode>(std::make_unique<TensorScatterNode>());
}

}  // namespace parity::adapters::onednn
