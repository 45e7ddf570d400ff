// Pieces the contrib attention kernels share: the attributes of the causal
// cache-attention ops, the softmax over a row of scores, and the outputs a
// node asks for.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/eval/kernel.h"

namespace parity::ops::contrib {

// scale (default 1/sqrt(head size)), softcap (0: none) and local_window_size
// (-1: none; else the keys kept, the query's own included), as
// GroupQueryAttention and PagedAttention define them.
struct CausalAttentionAttributes {
  double scale = 1.0;
  double softcap = 0.0;
  int64_t window = -1;
};
StatusOr<CausalAttentionAttributes> ReadCausalAttentionAttributes(const KernelContext& ctx, int64_t head_size);

// Replaces scores[first..last] (inclusive) by their softmax weights: the
// largest is subtracted before exp, then each is divided by the sum.
void SoftmaxInPlace(std::vector<double>& scores, int64_t first, int64_t last);

// The node's outputs in order: y, then the second and third values when the
// node names that many outputs (present or updated key and value).
StatusOr<std::vector<Value>> AttentionOutputs(const KernelContext& ctx, DataType dtype, Shape y_shape,
                                              const std::vector<double>& y, Shape k_shape,
                                              const std::vector<double>& k, Shape v_shape,
                                              const std::vector<double>& v);

}  // namespace parity::ops::contrib
