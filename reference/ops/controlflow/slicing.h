// Whole-tensor data movement that the control-flow and sequence kernels
// share: taking one slice along an axis, stacking slices, concatenating and
// splitting along an axis. Every helper works for every element type
// (strings included), copying storage slots without converting values.
#pragma once

#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops::controlflow {

// Copies `count` consecutive elements of `src` from `src_offset` into `dst`
// at `dst_offset` (same dtype; the caller checks the bounds).
void CopyElements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count);

// The slice `index` of `tensor` along `axis`, with that axis removed.
StatusOr<Tensor> TakeSlice(const KernelContext& ctx, const Tensor& tensor, int64_t axis, int64_t index);

// Tensors of one dtype and shape stacked along a new axis `axis` (0..rank).
// `dtype` and `element_shape` describe the result when `parts` is empty.
StatusOr<Tensor> Stack(const KernelContext& ctx, const std::vector<Tensor>& parts, int64_t axis, DataType dtype,
                       const Shape& element_shape);

// Tensors of one dtype and rank concatenated along existing axis `axis`;
// the other dimensions must agree.
StatusOr<Tensor> Concatenate(const KernelContext& ctx, const std::vector<Tensor>& parts, int64_t axis);

// Elements [begin, begin + length) of `tensor` along `axis`, axis kept.
StatusOr<Tensor> Narrow(const KernelContext& ctx, const Tensor& tensor, int64_t axis, int64_t begin, int64_t length);

}  // namespace parity::ops::controlflow
