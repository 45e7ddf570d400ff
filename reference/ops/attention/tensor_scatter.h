// The in-place form of TensorScatter-24, for the evaluator's in-place
// aliasing (spec/aliasing.md, region "scatter"): the update rows are written
// into the cache's own buffer instead of a copy.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops::attention {

// Where each update row of TensorScatter goes: validated once, then used by
// the functional kernel, the in-place write and a backend's lowering
// (adapters/onednn/tensor_scatter.cc) alike, so all put every row in the
// same place and refuse the same inputs.
struct ScatterPlan {
  bool circular = false;
  int64_t batch = 0;
  int64_t per_batch = 1;  // product of dims 1..axis-1
  int64_t max_len = 0;    // cache length along axis
  int64_t len = 0;        // update length along axis
  int64_t inner = 1;      // product of dims after axis (elements of one row)
  std::vector<int64_t> starts;  // per batch entry
};

// The plan for `ctx` (a TensorScatter node: axis, mode, write_indices?), or
// an error naming what does not fit.
StatusOr<ScatterPlan> PlanScatter(const KernelContext& ctx, const Tensor& cache, const Tensor& update);

// `ctx` is a TensorScatter node with its inputs (past_cache, update,
// write_indices?) and attributes (axis, mode); `cache` must share the buffer
// of input 0 (a copy of that tensor). Writes only the rows the functional
// kernel would change, after the same checks, so the cache then holds what
// the kernel would have returned. On an error nothing has been written.
Status TensorScatterInPlace(const KernelContext& ctx, Tensor& cache);

}  // namespace parity::ops::attention
