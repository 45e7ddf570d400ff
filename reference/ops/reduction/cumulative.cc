// CumSum (opset 11) and CumProd (opset 26): running sums / products along
// the axis given by a one-element integer input. `exclusive` leaves out the
// element itself (starting from 0 / 1); `reverse` runs from the end.
// Floats accumulate in double and round each output once; integers wrap.
#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

StatusOr<std::vector<Value>> Cumulative(const KernelContext& ctx, bool product) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireNumeric(ctx, *x, "input x"));
  PARITY_ASSIGN_OR_RETURN(const Tensor* axis_tensor, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(int64_t raw_axis, ScalarInt(ctx, *axis_tensor, "axis"));
  if (x->rank() == 0) return ctx.Error("input x must have rank >= 1");
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, raw_axis, x->rank()));
  const bool exclusive = ctx.GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.GetInt("reverse", 0) != 0;
  const AxisSplit s = SplitAtAxis(x->shape(), axis);
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, x->dtype(), x->shape()));
  const bool is_float = IsFloatingPoint(x->dtype());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double facc = product ? 1.0 : 0.0;
      uint64_t iacc = product ? 1 : 0;
      for (int64_t step = 0; step < s.dim; ++step) {
        const int64_t k = reverse ? s.dim - 1 - step : step;
        const int64_t idx = s.At(o, k, i);
        if (exclusive) {
          if (is_float) out.SetDouble(idx, facc);
          else out.SetUint64(idx, iacc);
        }
        if (is_float) {
          const double v = x->GetDouble(idx);
          facc = product ? facc * v : facc + v;
        } else {
          const uint64_t v = x->GetUint64(idx);
          iacc = product ? WrapMul(iacc, v) : WrapAdd(iacc, v);
        }
        if (!exclusive) {
          if (is_float) out.SetDouble(idx, facc);
          else out.SetUint64(idx, iacc);
        }
      }
    }
  }
  return Single(std::move(out));
}

}  // namespace

StatusOr<std::vector<Value>> CumSumKernel(const KernelContext& ctx) { return Cumulative(ctx, false); }
StatusOr<std::vector<Value>> CumProdKernel(const KernelContext& ctx) { return Cumulative(ctx, true); }

}  // namespace parity::ops
