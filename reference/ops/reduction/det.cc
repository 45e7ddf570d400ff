// Det (opset 11): determinants of the square matrices in the last two axes,
// by LU decomposition with partial pivoting in double.
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {

StatusOr<std::vector<Value>> DetKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input X"));
  const int64_t rank = x->rank();
  if (rank < 2 || x->dim(rank - 1) != x->dim(rank - 2)) {
    return ctx.Error("input must be a batch of square matrices (..., M, M), got ", x->Description());
  }
  const int64_t n = x->dim(rank - 1);
  const Shape out_shape(x->shape().begin(), x->shape().end() - 2);
  const int64_t batches = Product(out_shape, 0, out_shape.size());
  const std::vector<double> in = x->ToDoubles();
  std::vector<double> det(static_cast<size_t>(batches), 1.0);
  std::vector<double> lu(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < batches; ++b) {
    std::copy(in.begin() + b * n * n, in.begin() + (b + 1) * n * n, lu.begin());
    double d = 1.0;
    for (int64_t col = 0; col < n; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < n; ++r) {
        if (std::fabs(lu[r * n + col]) > std::fabs(lu[pivot * n + col])) pivot = r;
      }
      if (lu[pivot * n + col] == 0.0) {
        d = 0.0;
        break;
      }
      if (pivot != col) {
        for (int64_t k = 0; k < n; ++k) std::swap(lu[pivot * n + k], lu[col * n + k]);
        d = -d;
      }
      const double diag = lu[col * n + col];
      d *= diag;
      for (int64_t r = col + 1; r < n; ++r) {
        const double f = lu[r * n + col] / diag;
        for (int64_t k = col; k < n; ++k) lu[r * n + k] -= f * lu[col * n + k];
      }
    }
    det[b] = d;
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), out_shape, det));
  return std::vector<Value>{std::move(out)};
}

}  // namespace parity::ops
