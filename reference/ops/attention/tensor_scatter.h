// The in-place form of TensorScatter-24, for the evaluator's in-place
// aliasing (spec/aliasing.md, region "scatter"): the update rows are written
// into the cache's own buffer instead of a copy.
#pragma once

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops::attention {

// `ctx` is a TensorScatter node with its inputs (past_cache, update,
// write_indices?) and attributes (axis, mode); `cache` must share the buffer
// of input 0 (a copy of that tensor). Writes only the rows the functional
// kernel would change, after the same checks, so the cache then holds what
// the kernel would have returned. On an error nothing has been written.
Status TensorScatterInPlace(const KernelContext& ctx, Tensor& cache);

}  // namespace parity::ops::attention
