// ArgMax and ArgMin: the index of the largest / smallest element along an
// axis, first occurrence unless select_last_index (opset 12+). NaN counts as
// more extreme than any number for both, as numpy's argmax/argmin do.
// Integers compare exactly (no conversion to double).
#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

#include <cmath>

namespace parity::ops {
namespace {

// True when candidate `v` replaces the current best `b` in the search.
bool FloatBetter(double v, double b, bool want_max, bool last) {
  if (std::isnan(b)) return last && std::isnan(v);
  if (std::isnan(v)) return true;
  if (v == b) return last;
  return want_max ? v > b : v < b;
}

bool IntBetter(DataType dt, uint64_t v, uint64_t b, bool want_max, bool last) {
  if (v == b) return last;
  return want_max ? IntLess(dt, b, v) : IntLess(dt, v, b);
}

StatusOr<std::vector<Value>> ArgExtreme(const KernelContext& ctx, bool want_max) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (!(IsFloatingPoint(x->dtype()) || IsExactInteger(x->dtype()))) {
    return ctx.Error("unsupported input type ", x->Description());
  }
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), std::max<int64_t>(x->rank(), 1)));
  const bool keepdims = ctx.GetInt("keepdims", 1) != 0;
  const bool last = ctx.opset() >= 12 && ctx.GetInt("select_last_index", 0) != 0;
  const AxisSplit s = SplitAtAxis(x->shape(), axis);
  if (s.dim == 0) return ctx.Error("cannot take the arg-extreme of an empty axis ", axis);
  Shape out_shape;
  for (int64_t i = 0; i < x->rank(); ++i) {
    if (i != axis) out_shape.push_back(x->dim(i));
    else if (keepdims) out_shape.push_back(1);
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kInt64, out_shape));
  const bool is_float = IsFloatingPoint(x->dtype());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < s.dim; ++k) {
        const int64_t vi = s.At(o, k, i);
        const int64_t bi = s.At(o, best, i);
        const bool better = is_float
                                ? FloatBetter(x->GetDouble(vi), x->GetDouble(bi), want_max, last)
                                : IntBetter(x->dtype(), x->GetUint64(vi), x->GetUint64(bi), want_max, last);
        if (better) best = k;
      }
      out.SetInt64(o * s.inner + i, best);
    }
  }
  return Single(std::move(out));
}

}  // namespace

StatusOr<std::vector<Value>> ArgMaxKernel(const KernelContext& ctx) { return ArgExtreme(ctx, true); }
StatusOr<std::vector<Value>> ArgMinKernel(const KernelContext& ctx) { return ArgExtreme(ctx, false); }

}  // namespace parity::ops
