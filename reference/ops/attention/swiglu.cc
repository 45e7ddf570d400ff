// SwiGLU-28 (Operators.md): Y = A * sigmoid(alpha * A) * B, elementwise on
// inputs of identical shape (no broadcasting).
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/attention/attention.h"

namespace parity::ops::attention {

StatusOr<std::vector<Value>> SwiGLU(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  if (a->shape() != b->shape() || a->dtype() != b->dtype() || !IsFloatingPoint(a->dtype())) {
    return ctx.Error("A ", a->Description(), " and B ", b->Description(), " must be float tensors of one type and shape");
  }
  const double alpha = static_cast<double>(ctx.GetFloat("alpha", 1.0f));
  std::vector<double> y(static_cast<size_t>(a->size()));
  for (int64_t i = 0; i < a->size(); ++i) {
    const double x = a->GetDouble(i);
    y[static_cast<size_t>(i)] = x / (1.0 + std::exp(-alpha * x)) * b->GetDouble(i);
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, a->dtype(), a->shape(), y));
  return std::vector<Value>{std::move(out)};
}

}  // namespace parity::ops::attention
