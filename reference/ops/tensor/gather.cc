// Kernels that read elements at given indices: Gather, GatherElements and
// GatherND. Negative indices count from the back; an index out of range is
// an error naming it.
#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

StatusOr<const Tensor*> RequireIndices(const KernelContext& ctx, size_t i) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (t->dtype() != DataType::kInt32 && t->dtype() != DataType::kInt64) {
    return ctx.Error("indices must be int32 or int64, got ", t->Description());
  }
  return t;
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t a = begin; a < end; ++a) p *= shape[a];
  return p;
}

}  // namespace

KernelResult GatherKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, RequireIndices(ctx, 1));
  if (data->rank() == 0) return ctx.Error("data must have rank >= 1");
  PARITY_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), data->rank()));
  const Shape& ds = data->shape();
  Shape shape(ds.begin(), ds.begin() + axis);
  shape.insert(shape.end(), indices->shape().begin(), indices->shape().end());
  shape.insert(shape.end(), ds.begin() + axis + 1, ds.end());
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, data->dtype(), shape));
  const int64_t outer = Product(ds, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(ds, static_cast<size_t>(axis) + 1, ds.size());
  const int64_t dim = ds[static_cast<size_t>(axis)];
  const int64_t count = indices->size();
  std::vector<int64_t> idx(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    PARITY_ASSIGN_OR_RETURN(idx[static_cast<size_t>(j)], CheckIndex(ctx, indices->GetInt64(j), dim));
  }
  ElementCopier copy(*data, out);
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t src = (o * dim + idx[static_cast<size_t>(j)]) * inner;
      for (int64_t i = 0; i < inner; ++i) copy(src + i, dst++);
    }
  }
  return Single(std::move(out));
}

KernelResult GatherElementsKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, RequireIndices(ctx, 1));
  const int64_t rank = data->rank();
  if (rank == 0 || indices->rank() != rank) {
    return ctx.Error("data ", data->Description(), " and indices ", indices->Description(),
                     " must have the same rank >= 1");
  }
  PARITY_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), rank));
  for (int64_t a = 0; a < rank; ++a) {
    if (a != axis && indices->dim(a) > data->dim(a)) {
      return ctx.Error("indices ", indices->Description(), " exceed data ", data->Description(), " on axis ", a);
    }
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, data->dtype(), indices->shape()));
  if (out.size() == 0) return Single(std::move(out));
  const std::vector<int64_t> strides = Strides(data->shape());
  ElementCopier copy(*data, out);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t dst = 0; dst < out.size(); ++dst) {
    PARITY_ASSIGN_OR_RETURN(const int64_t k, CheckIndex(ctx, indices->GetInt64(dst), data->dim(axis)));
    int64_t src = 0;
    for (int64_t a = 0; a < rank; ++a) src += (a == axis ? k : index[static_cast<size_t>(a)]) * strides[static_cast<size_t>(a)];
    copy(src, dst);
    NextIndex(index, indices->shape());
  }
  return Single(std::move(out));
}

KernelResult GatherNDKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(1));
  if (indices->dtype() != DataType::kInt64) return ctx.Error("indices must be int64, got ", indices->Description());
  const int64_t r = data->rank();
  const int64_t q = indices->rank();
  const int64_t b = ctx.GetInt("batch_dims", 0);  // opset 12
  if (r < 1 || q < 1) return ctx.Error("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q)) return ctx.Error("batch_dims ", b, " must be in [0, min(rank(data), rank(indices)))");
  const int64_t m = indices->dim(q - 1);
  if (m < 1 || m > r - b) return ctx.Error("indices' last dimension ", m, " must be in [1, ", r - b, "]");
  for (int64_t a = 0; a < b; ++a) {
    if (data->dim(a) != indices->dim(a)) return ctx.Error("batch dimension ", a, " differs between data and indices");
  }
  const Shape& ds = data->shape();
  const Shape& is = indices->shape();
  Shape shape(is.begin(), is.end() - 1);
  shape.insert(shape.end(), ds.begin() + b + m, ds.end());
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, data->dtype(), shape));
  const int64_t batches = Product(is, 0, static_cast<size_t>(b));
  const int64_t per_batch = Product(is, static_cast<size_t>(b), static_cast<size_t>(q - 1));  // tuples per batch
  const int64_t slice = Product(ds, static_cast<size_t>(b + m), ds.size());
  const int64_t batch_stride = Product(ds, static_cast<size_t>(b), ds.size());
  const std::vector<int64_t> strides = Strides(ds);
  ElementCopier copy(*data, out);
  int64_t dst = 0;
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t t = 0; t < per_batch; ++t) {
      const int64_t tuple = (n * per_batch + t) * m;
      int64_t src = n * batch_stride;
      for (int64_t j = 0; j < m; ++j) {
        PARITY_ASSIGN_OR_RETURN(const int64_t k, CheckIndex(ctx, indices->GetInt64(tuple + j), ds[static_cast<size_t>(b + j)]));
        src += k * strides[static_cast<size_t>(b + j)];
      }
      for (int64_t i = 0; i < slice; ++i) copy(src + i, dst++);
    }
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::tensor
