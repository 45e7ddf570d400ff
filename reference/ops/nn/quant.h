// Rounding helpers for the quantised operators (QuantizeLinear, QLinearConv,
// QLinearMatMul, DynamicQuantizeLinear): round half to even, then saturate.
#pragma once

#include <cmath>
#include <cstdint>

#include "reference/core/dtype.h"
#include "reference/core/tensor.h"

namespace parity::ops::nn {

// `value` rounded half to even and clamped to the range of integer type
// `type` (int2 .. int64). NaN has no integer: it becomes 0, our choice
// (numpy's rint+astype leaves it undefined).
inline int64_t RoundAndSaturate(double value, DataType type) {
  if (std::isnan(value)) return 0;
  const double lo = static_cast<double>(IntegerMin(type));
  const double hi = static_cast<double>(IntegerMax(type));
  const double r = std::nearbyint(value);  // default rounding mode: to nearest even
  if (r <= lo) return IntegerMin(type);
  if (r >= hi) return static_cast<int64_t>(IntegerMax(type));
  return static_cast<int64_t>(r);
}

// Writes `value` as element i of a quantised tensor: integer types round half
// to even and saturate; float types round once to nearest even, saturating
// out-of-range values when `saturate` (float8 Cast rules, float_formats.h).
inline void StoreQuantized(Tensor& t, int64_t i, double value, bool saturate) {
  if (IsInteger(t.dtype())) {
    t.SetInt64(i, RoundAndSaturate(value, t.dtype()));
  } else {
    t.SetDouble(i, value, saturate);
  }
}

}  // namespace parity::ops::nn
