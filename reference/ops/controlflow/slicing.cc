// Slicing, stacking, concatenation and narrowing of tensors of any dtype.
#include "reference/ops/controlflow/slicing.h"

#include <cstring>

#include "reference/ops/common.h"

namespace parity::ops::controlflow {
namespace {

// Product of dims [begin, end) of a shape.
int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

}  // namespace

void CopyElements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::kString) {
    const auto& in = src.strings();
    auto& out = dst.mutable_strings();
    for (int64_t i = 0; i < count; ++i) out[dst_offset + i] = in[src_offset + i];
    return;
  }
  const size_t width = StorageSize(src.dtype());
  std::memcpy(dst.mutable_raw_bytes() + static_cast<size_t>(dst_offset) * width,
              src.raw_bytes() + static_cast<size_t>(src_offset) * width, static_cast<size_t>(count) * width);
}

StatusOr<Tensor> TakeSlice(const KernelContext& ctx, const Tensor& tensor, int64_t axis, int64_t index) {
  if (axis < 0 || axis >= tensor.rank()) {
    return ctx.Error("axis ", axis, " is out of range for ", tensor.Description());
  }
  if (index < 0 || index >= tensor.dim(axis)) {
    return ctx.Error("index ", index, " is out of range for axis ", axis, " of ", tensor.Description());
  }
  Shape shape = tensor.shape();
  shape.erase(shape.begin() + axis);
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, tensor.dtype(), shape));
  const int64_t outer = Product(tensor.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = Product(tensor.shape(), static_cast<size_t>(axis) + 1, tensor.shape().size());
  const int64_t dim = tensor.dim(axis);
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(tensor, (o * dim + index) * inner, out, o * inner, inner);
  }
  return out;
}

StatusOr<Tensor> Stack(const KernelContext& ctx, const std::vector<Tensor>& parts, int64_t axis, DataType dtype,
                       const Shape& element_shape) {
  const Shape& part_shape = parts.empty() ? element_shape : parts[0].shape();
  const DataType type = parts.empty() ? dtype : parts[0].dtype();
  if (axis < 0 || axis > static_cast<int64_t>(part_shape.size())) {
    return ctx.Error("stacking axis ", axis, " is out of range for rank ", part_shape.size());
  }
  for (const Tensor& p : parts) {
    if (p.dtype() != type || p.shape() != part_shape) {
      return ctx.Error("cannot stack ", p.Description(), " with ", parts[0].Description(),
                       ": every slice must have the same type and shape");
    }
  }
  Shape shape = part_shape;
  shape.insert(shape.begin() + axis, static_cast<int64_t>(parts.size()));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, type, shape));
  const int64_t outer = Product(part_shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(part_shape, static_cast<size_t>(axis), part_shape.size());
  const int64_t n = static_cast<int64_t>(parts.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < n; ++k) {
      CopyElements(parts[static_cast<size_t>(k)], o * inner, out, (o * n + k) * inner, inner);
    }
  }
  return out;
}

StatusOr<Tensor> Concatenate(const KernelContext& ctx, const std::vector<Tensor>& parts, int64_t axis) {
  if (parts.empty()) return ctx.Error("cannot concatenate an empty list of tensors");
  const Tensor& first = parts[0];
  if (axis < 0 || axis >= first.rank()) {
    return ctx.Error("concatenation axis ", axis, " is out of range for ", first.Description());
  }
  Shape shape = first.shape();
  shape[static_cast<size_t>(axis)] = 0;
  for (const Tensor& p : parts) {
    bool same = p.dtype() == first.dtype() && p.rank() == first.rank();
    for (int64_t d = 0; same && d < p.rank(); ++d) {
      if (d != axis && p.dim(d) != first.dim(d)) same = false;
    }
    if (!same) {
      return ctx.Error("cannot concatenate ", p.Description(), " with ", first.Description(), " along axis ", axis);
    }
    shape[static_cast<size_t>(axis)] += p.dim(axis);
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, first.dtype(), shape));
  const int64_t outer = Product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(shape, static_cast<size_t>(axis) + 1, shape.size());
  const int64_t out_block = shape[static_cast<size_t>(axis)] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t at = o * out_block;
    for (const Tensor& p : parts) {
      const int64_t block = p.dim(axis) * inner;
      CopyElements(p, o * block, out, at, block);
      at += block;
    }
  }
  return out;
}

StatusOr<Tensor> Narrow(const KernelContext& ctx, const Tensor& tensor, int64_t axis, int64_t begin, int64_t length) {
  if (axis < 0 || axis >= tensor.rank() || begin < 0 || length < 0 || begin + length > tensor.dim(axis)) {
    return ctx.Error("range [", begin, ", ", begin + length, ") along axis ", axis, " is outside ",
                     tensor.Description());
  }
  Shape shape = tensor.shape();
  shape[static_cast<size_t>(axis)] = length;
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, tensor.dtype(), shape));
  const int64_t outer = Product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(shape, static_cast<size_t>(axis) + 1, shape.size());
  const int64_t dim = tensor.dim(axis);
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(tensor, (o * dim + begin) * inner, out, o * length * inner, length * inner);
  }
  return out;
}

}  // namespace parity::ops::controlflow
