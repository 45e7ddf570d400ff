// Shared helpers of the reduction family.
#include "reference/ops/reduction/reduction_util.h"

#include "reference/ops/common.h"

namespace parity::ops {

Status RequireFloat(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (IsFloatingPoint(t.dtype())) return Status::Ok();
  return ctx.Error(what, " must be a floating-point tensor, got ", t.Description());
}

Status RequireNumeric(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (IsFloatingPoint(t.dtype()) || IsInteger(t.dtype())) return Status::Ok();
  return ctx.Error(what, " must be a numeric tensor, got ", t.Description());
}

AxisSplit SplitAtAxis(const Shape& shape, int64_t axis) {
  AxisSplit s;
  const size_t a = static_cast<size_t>(axis);
  s.outer = Product(shape, 0, a);
  s.dim = a < shape.size() ? shape[a] : 1;
  s.inner = Product(shape, a + 1, shape.size());
  return s;
}

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

StatusOr<int64_t> ScalarInt(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.size() != 1 || !IsInteger(t.dtype())) {
    return ctx.Error(what, " must be a one-element integer tensor, got ", t.Description());
  }
  return t.GetInt64(0);
}

StatusOr<double> ScalarDouble(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.size() != 1 || !(IsFloatingPoint(t.dtype()) || IsInteger(t.dtype()))) {
    return ctx.Error(what, " must be a one-element numeric tensor, got ", t.Description());
  }
  return t.GetDouble(0);
}

}  // namespace parity::ops
