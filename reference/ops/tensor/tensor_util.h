// Helpers shared by the tensor family's kernels: copying elements of any
// type between tensors of the same dtype, reading integer lists from inputs
// or attributes, normalising axes and indices, and walking multi-indices.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops::tensor {

// Copies single elements from `src` to `dst`, which must have the same dtype
// (strings included). Holds raw pointers: both tensors must outlive it, and
// `dst` must be a tensor the kernel has just created.
class ElementCopier {
 public:
  ElementCopier(const Tensor& src, Tensor& dst);
  void operator()(int64_t src_index, int64_t dst_index) const {
    if (src_strings_) {
      (*dst_strings_)[static_cast<size_t>(dst_index)] = (*src_strings_)[static_cast<size_t>(src_index)];
    } else {
      std::memcpy(dst_ + dst_index * width_, src_ + src_index * width_, width_);
    }
  }

 private:
  const uint8_t* src_ = nullptr;
  uint8_t* dst_ = nullptr;
  int64_t width_ = 0;
  const std::vector<std::string>* src_strings_ = nullptr;
  std::vector<std::string>* dst_strings_ = nullptr;
};

// Writes `value` (a tensor of the same dtype, element `index`) into every
// element of `dst`.
void FillWith(Tensor& dst, const Tensor& value, int64_t index);

// The values of integer input `i` (int32 or int64, any rank; flattened), or an
// error naming `what` when the input is absent, not a tensor, or not integer.
StatusOr<std::vector<int64_t>> ReadIntegerInput(const KernelContext& ctx, size_t i, std::string_view what);

// Each axis in [-rank, rank) made non-negative; an error on an axis out of
// range or (when `allow_duplicates` is false) one named twice.
StatusOr<std::vector<int64_t>> NormalizeAxes(const KernelContext& ctx, const std::vector<int64_t>& axes,
                                             int64_t rank, bool allow_duplicates = false);

// Index `i` made non-negative for an axis of size `dim`, or an error.
inline StatusOr<int64_t> CheckIndex(const KernelContext& ctx, int64_t i, int64_t dim) {
  if (i < -dim || i >= dim) return ctx.Error("index ", i, " is out of range for an axis of size ", dim);
  return i < 0 ? i + dim : i;
}

// Advances a row-major multi-index over `shape`; returns false after the last.
inline bool NextIndex(std::vector<int64_t>& index, const Shape& shape) {
  for (int64_t axis = static_cast<int64_t>(shape.size()) - 1; axis >= 0; --axis) {
    if (++index[static_cast<size_t>(axis)] < shape[static_cast<size_t>(axis)]) return true;
    index[static_cast<size_t>(axis)] = 0;
  }
  return false;
}

// A copy of `src` with its own storage (so that a kernel may write into it).
StatusOr<Tensor> CloneTensor(const KernelContext& ctx, const Tensor& src);

// A result of one tensor with a rank-0 int64 scalar helper.
inline Tensor Int64Scalar(int64_t value) { return Tensor::FromInt64s({}, {value}); }

}  // namespace parity::ops::tensor
