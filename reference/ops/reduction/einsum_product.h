// Einsum of two operands as a batched matrix product (GemmDouble,
// reference/ops/gemm.h): the path einsum.cc takes when the equation is a
// contraction with no diagonal and no label summed inside one operand.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops {

// The labels of A, B and the output in the four roles of a batched product
// C[batch, m, n] = sum over k of A[batch, m, k] * B[batch, k, n]. Labels are
// the ids of einsum.cc (letters, then one id per ellipsis dimension).
struct EinsumProductPlan {
  std::vector<int> batch;  // in A, B and the output
  std::vector<int> m;      // in A and the output only
  std::vector<int> n;      // in B and the output only
  std::vector<int> k;      // in A and B, not in the output
};

// The plan for terms `a` and `b` (ellipses already expanded) and the output
// labels, or nothing when the equation is not one batched product: a label
// repeated inside a term (a diagonal) or a label of one term that is neither
// in the other nor in the output (a sum of its own).
std::optional<EinsumProductPlan> PlanEinsumProduct(const std::vector<int>& a, const std::vector<int>& b,
                                                   const std::vector<int>& out);

// Runs the plan on floating operands `a` and `b` (labels as in the plan,
// size-1 dimensions broadcasting to the label's extent): every product and
// sum in double, one rounding to the output type. `extent` holds each
// label's size; the output has the labels `out`.
StatusOr<Value> RunEinsumProduct(const KernelContext& ctx, const EinsumProductPlan& plan, const Tensor& a,
                                 const std::vector<int>& a_labels, const Tensor& b, const std::vector<int>& b_labels,
                                 const std::vector<int>& out, const std::map<int, int64_t>& extent);

}  // namespace parity::ops
