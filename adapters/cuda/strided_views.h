// The strided views (kernel_math.h) the lowering gives its kernels, made
// from shapes on the host: broadcasting and transposition.
#pragma once

#include <algorithm>
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

// A reduction of `input` over the axes marked in `reduced`: the output's
// elements walked over the kept dims (kept), each one's group over the
// reduced dims (group), both with input's strides; `out_dims` keeps the
// reduced dims as 1 when keepdims. Precondition: rank at most kMaxRank.
struct ReduceViews {
  StridedView kept, group;
  Shape out_dims;
  int64_t out_count = 1;
};
inline ReduceViews MakeReduceViews(const Shape& input, const std::vector<bool>& reduced, bool keepdims) {
  ReduceViews r;
  const std::vector<int64_t> strides = RowMajorStrides(input);
  for (size_t i = 0; i < input.size(); ++i) {
    StridedView& view = reduced[i] ? r.group : r.kept;
    view.dims[view.rank] = input[i];
    view.strides[view.rank] = strides[i];
    ++view.rank;
    if (!reduced[i]) {
      r.out_dims.push_back(input[i]);
      r.out_count *= input[i];
    } else if (keepdims) {
      r.out_dims.push_back(1);
    }
  }
  return r;
}

// One axis of Slice (numpy rules, as the reference's SliceMap): the first
// index taken and how many, for `step` (nonzero) from `start` to `end`.
struct SliceAxis {
  int64_t first = 0, count = 0;
};
inline SliceAxis SliceOf(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  SliceAxis s;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    s.first = start;
    // ceil((end - start) / step), computed without overflow for large steps
    s.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, -1, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    s.first = start;
    s.count = start > end ? (start - end - 1) / (-step) + 1 : 0;
  }
  return s;
}

}  // namespace parity::adapters::cuda
