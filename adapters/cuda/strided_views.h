// The strided views (kernel_math.h) the lowering gives its kernels, made
// from shapes on the host: broadcasting and transposition.
#pragma once

#include <vector>

#include "adapters/cuda/kernel_math.h"
#include "reference/core/tensor.h"

namespace parity::adapters::cuda {

// The row-major strides of `dims`, in elements.
inline std::vector<int64_t> RowMajorStrides(const Shape& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// `input` read along `out_dims` (numpy broadcasting: its dims of 1 and the
// dims it lacks in front step by 0). Precondition: input broadcasts to
// out_dims, whose rank is at most kMaxRank.
inline StridedView BroadcastView(const Shape& input, const Shape& out_dims) {
  StridedView view;
  view.rank = static_cast<int>(out_dims.size());
  const std::vector<int64_t> strides = RowMajorStrides(input);
  const size_t lead = out_dims.size() - input.size();
  for (size_t i = 0; i < out_dims.size(); ++i) {
    view.dims[i] = out_dims[i];
    view.strides[i] = i < lead || input[i - lead] == 1 ? 0 : strides[i - lead];
  }
  return view;
}

// `input` read in the order of `perm` (Transpose): output dim i is input
// dim perm[i]. Precondition: perm is a permutation of input's axes.
inline StridedView TransposeView(const Shape& input, const std::vector<int64_t>& perm) {
  StridedView view;
  view.rank = static_cast<int>(input.size());
  const std::vector<int64_t> strides = RowMajorStrides(input);
  for (size_t i = 0; i < perm.size(); ++i) {
    view.dims[i] = input[static_cast<size_t>(perm[i])];
    view.strides[i] = strides[static_cast<size_t>(perm[i])];
  }
  return view;
}

}  // namespace parity::adapters::cuda
