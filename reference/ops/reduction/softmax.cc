// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to
// 2-D at `axis` (default 1): the operator works on rows of
// prod(shape[axis:]) elements. From opset 13 it works along the one axis
// `axis` (default -1). Computed in double with the row maximum subtracted.
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

StatusOr<std::vector<Value>> SoftmaxLike(const KernelContext& ctx, SoftmaxKind kind) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input"));
  const bool coerce_2d = ctx.opset() < 13;
  const int64_t rank = x->rank();
  AxisSplit s;
  if (coerce_2d) {
    // axis may equal rank here (rows of one element), as the 2-D coercion allows.
    const int64_t raw = ctx.GetInt("axis", 1);
    const int64_t axis = raw < 0 ? raw + rank : raw;
    if (axis < 0 || axis > rank) return ctx.Error("axis ", raw, " is out of range for rank ", rank);
    s.outer = Product(x->shape(), 0, static_cast<size_t>(axis));
    s.dim = Product(x->shape(), static_cast<size_t>(axis), x->shape().size());
    s.inner = 1;
  } else {
    PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -1), rank));
    s = SplitAtAxis(x->shape(), axis);
  }
  const std::vector<double> in = x->ToDoubles();
  std::vector<double> out(in.size(), 0.0);
  const Summation summation(ctx, x->dtype());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      // The maximum, and its first index (NaN counts as largest, as numpy's argmax).
      double m = -INFINITY;
      int64_t arg = 0;
      for (int64_t k = 0; k < s.dim; ++k) {
        const double v = in[s.At(o, k, i)];
        if (std::isnan(m)) break;
        if (std::isnan(v) || v > m || k == 0) {
          m = v;
          arg = k;
        }
      }
      if (kind == SoftmaxKind::kHardmax) {
        if (s.dim > 0) out[s.At(o, arg, i)] = 1.0;
        continue;
      }
      double sum = 0.0;
      for (int64_t k = 0; k < s.dim; ++k) sum = summation.Add(sum, summation.Term(std::exp(in[s.At(o, k, i)] - m)));
      for (int64_t k = 0; k < s.dim; ++k) {
        const double shifted = in[s.At(o, k, i)] - m;
        out[s.At(o, k, i)] = kind == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum : shifted - std::log(sum);
      }
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value result, MakeResult(ctx, x->dtype(), x->shape(), out));
  return std::vector<Value>{std::move(result)};
}

}  // namespace

StatusOr<std::vector<Value>> SoftmaxKernel(const KernelContext& ctx) { return SoftmaxLike(ctx, SoftmaxKind::kSoftmax); }
StatusOr<std::vector<Value>> LogSoftmaxKernel(const KernelContext& ctx) {
  return SoftmaxLike(ctx, SoftmaxKind::kLogSoftmax);
}
StatusOr<std::vector<Value>> HardmaxKernel(const KernelContext& ctx) { return SoftmaxLike(ctx, SoftmaxKind::kHardmax); }

}  // namespace parity::ops
