// Unary mathematical functions. Each takes the exact value of its input in
// double (or int64_t/uint64_t for the integer types that Abs, Neg and Sign
// allow), and rounds the result once to the input's type.
#include <cmath>

#include "reference/ops/elementwise/kernels.h"

namespace parity::ops::elementwise {

// Abs and Neg of the most negative integer wrap to itself, as in numpy.
Result Abs(const KernelContext& ctx, const OpVersion& version) {
  return UnaryKernel(ctx, version, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return std::fabs(x);
    } else {
      return IsNegative(x) ? WrappingNeg(x) : x;
    }
  });
}

Result Neg(const KernelContext& ctx, const OpVersion& version) {
  return UnaryKernel(ctx, version, [](auto x) { return WrappingNeg(x); });
}

// Sign: -1, 0 or 1; NaN stays NaN and -0 gives 0.
Result Sign(const KernelContext& ctx, const OpVersion& version) {
  return UnaryKernel(ctx, version, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    if (x > 0) return T(1);
    return IsNegative(x) ? static_cast<T>(-1) : T(0);
  });
}

Result Ceil(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::ceil(x); });
}

Result Floor(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::floor(x); });
}

// Round halves to even: nearbyint in the default rounding mode.
Result Round(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::nearbyint(x); });
}

Result Reciprocal(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return 1.0 / x; });
}

Result Sqrt(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::sqrt(x); });
}

Result Exp(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::exp(x); });
}

Result Log(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::log(x); });
}

Result Sin(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::sin(x); });
}

Result Cos(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::cos(x); });
}

Result Tan(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::tan(x); });
}

Result Asin(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::asin(x); });
}

Result Acos(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::acos(x); });
}

Result Atan(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::atan(x); });
}

Result Sinh(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::sinh(x); });
}

Result Cosh(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::cosh(x); });
}

Result Tanh(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::tanh(x); });
}

Result Asinh(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::asinh(x); });
}

Result Acosh(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::acosh(x); });
}

Result Atanh(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::atanh(x); });
}

// Erf-9 also allows integer types: erf of the integer truncated toward zero,
// which is always 0 since |erf| < 1 (as the ONNX reference's astype gives).
Result Erf(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return std::erf(x); });
}

}  // namespace parity::ops::elementwise
