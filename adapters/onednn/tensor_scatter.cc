// TensorScatter-24 on oneDNN reorders, with the in-place form of
// spec/aliasing.md (region "scatter"): the update rows are copied by a
// reorder into a memory object over the kept cache's own buffer, so a
// decode step writes one row per head and nothing cache-sized. The
// functional form copies the cache first (one more reorder) and writes the
// rows into the copy. Rows are moved as bytes (a reorder of u8 data), so
// every element type of fixed width is copied bit for bit.
#include <algorithm>

#include "adapters/onednn/attention_parts.h"
#include "reference/ops/common.h"

namespace parity::adapters::onednn {
namespace {

// Where the update rows go, checked as the reference checks them
// (reference/ops/attention/tensor_scatter.cc): the same inputs are refused.
struct ScatterGeometry {
  bool circular = false;
  int64_t batch = 0, per_batch = 1, max_len = 0, len = 0;
  int64_t row_bytes = 0;  // bytes of one row: the dims after the axis times the element width
  std::vector<int64_t> starts;
};

StatusOr<ScatterGeometry> Geometry(const KernelContext& ctx, const Tensor& cache, const Tensor& update) {
  const std::string mode = ctx.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.Error("mode '", mode, "' is not linear or circular");
  if (cache.rank() < 2) return ctx.Error("past_cache must have rank >= 2, got ", cache.Description());
  PARITY_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx, ctx.GetInt("axis", -2), cache.rank()));
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
  ScatterGeometry g;
  g.circular = mode == "circular";
  g.batch = cache.dim(0);
  g.starts.assign(static_cast<size_t>(g.batch), 0);
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(2));
    if (indices->size() != g.batch || !IsInteger(indices->dtype())) {
      return ctx.Error("write_indices must hold ", g.batch, " integers, got ", indices->Description());
    }
    g.starts = indices->ToInt64s();
  }
  g.max_len = cache.dim(axis);
  g.len = update.dim(axis);
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t start = g.starts[static_cast<size_t>(b)];
    if (start < 0 || (!g.circular && start + g.len > g.max_len) ||
        (g.circular && start >= g.max_len && g.max_len > 0)) {
      return ctx.Error("write_indices[", b, "] = ", start, " with ", g.len,
                       " updates does not fit the cache length ", g.max_len, " in mode ", mode);
    }
  }
  g.row_bytes = static_cast<int64_t>(StorageSize(cache.dtype()));
  for (int64_t d = axis + 1; d < cache.rank(); ++d) g.row_bytes *= cache.dim(d);
  for (int64_t d = 1; d < axis; ++d) g.per_batch *= cache.dim(d);
  return g;
}

class TensorScatterNode final : public LoweredNode {
 public:
  bool in_place() const override { return true; }
  bool deferred() const override { return true; }  // the reorders are made for the shapes met

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(const Tensor* cache, ctx.RequireTensor(0));
    PARITY_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
    PARITY_ASSIGN_OR_RETURN(const ScatterGeometry g, Geometry(ctx, *cache, *update));
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
    PARITY_ASSIGN_OR_RETURN(const ScatterGeometry g, Geometry(ctx, buffer, *update));
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
  void WriteRows(const ScatterGeometry& g, const Tensor& update, Tensor& target) {
    if (g.len == 0 || g.row_bytes == 0 || g.per_batch == 0) return;
    for (int64_t b = 0; b < g.batch; ++b) {
      const int64_t start = g.starts[static_cast<size_t>(b)];
      const int64_t first = g.circular ? std::min(g.len, g.max_len - start) : g.len;
      Copy(g, update, target, b, 0, start, first);
      if (first < g.len) Copy(g, update, target, b, first, 0, g.len - first);
    }
  }

  void Copy(const ScatterGeometry& g, const Tensor& update, Tensor& target, int64_t b, int64_t from_row,
            int64_t to_row, int64_t rows) {
    const dnnl::memory::desc from({g.per_batch, rows, g.row_bytes}, dnnl_dt::u8, {g.len * g.row_bytes, g.row_bytes, 1});
    const dnnl::memory::desc to({g.per_batch, rows, g.row_bytes}, dnnl_dt::u8,
                                {g.max_len * g.row_bytes, g.row_bytes, 1});
    reorders_.Run(ViewAt(from, update.raw_bytes(), (b * g.per_batch * g.len + from_row) * g.row_bytes),
                  ViewAt(to, target.raw_bytes(), (b * g.per_batch * g.max_len + to_row) * g.row_bytes));
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
