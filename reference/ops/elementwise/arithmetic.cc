// Binary arithmetic: Add, Sub, Mul, Div, Mod, Pow. Floats compute in double
// and round once; integers compute exactly and wrap to their width, as numpy
// and the ONNX reference do.
#include <cmath>
#include <cstdint>
#include <limits>

#include "reference/ops/elementwise/kernels.h"

namespace parity::ops::elementwise {
namespace {

// Integer division and remainder by zero have no defined result in ONNX;
// the reference refuses them rather than invent one.
Status RequireNonzeroDivisor(const KernelContext& ctx, const Tensor& divisor) {
  for (int64_t i = 0; i < divisor.size(); ++i) {
    if (divisor.GetUint64(i) == 0) {
      return ctx.Error("integer division by zero (element ", i, " of input 1 is 0)");
    }
  }
  return Status::Ok();
}

// Mod of integers: fmod=1 truncates the quotient (C's %), fmod=0 floors it
// (Python's %, the result takes the divisor's sign). `y` is nonzero.
template <typename T>
T IntegerMod(T x, T y, bool floor_quotient) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (y == -1) return 0;  // also avoids INT64_MIN % -1, which overflows in C++
    T r = x % y;
    if (floor_quotient && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  } else {
    return x % y;
  }
}

// Mod of floats. fmod=1 is C's fmod (exact). fmod=0 (defined for floats
// since Mod-28) is x - floor(x / y) * y: fmod's remainder moved into the
// divisor's sign, and a zero result takes the divisor's sign, as the spec's
// special cases require.
double FloatMod(double x, double y, bool floor_quotient) {
  const double r = std::fmod(x, y);
  if (!floor_quotient) return r;
  if (r == 0) return std::copysign(0.0, y);
  if ((r < 0) != (y < 0)) return r + y;
  return r;
}

// base^exponent by squaring, wrapping like repeated multiplication in the
// integer type would.
int64_t WrappingPower(int64_t base, uint64_t exponent) {
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  while (exponent != 0) {
    if (exponent & 1) result *= b;
    b *= b;
    exponent >>= 1;
  }
  return static_cast<int64_t>(result);
}

// Pow with an integer base and an integer exponent, exactly. A negative
// exponent gives the real result truncated toward zero (0 unless the base is
// 1 or -1); 0 to a negative power has no integer result.
StatusOr<Tensor> IntegerPow(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  const Tensor* inputs[] = {&a, &b};
  PARITY_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, inputs));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, a.dtype(), plan.shape));
  const bool unsigned_exponent = IsUnsignedInteger(b.dtype());
  for (int64_t i = 0; i < plan.size; ++i) {
    const int64_t base = a.GetInt64(plan.indexers[0](i));
    const int64_t j = plan.indexers[1](i);
    if (unsigned_exponent) {
      out.SetInt64(i, WrappingPower(base, b.GetUint64(j)));
      continue;
    }
    const int64_t exponent = b.GetInt64(j);
    if (exponent >= 0) {
      out.SetInt64(i, WrappingPower(base, static_cast<uint64_t>(exponent)));
    } else if (base == 0) {
      return ctx.Error("integer 0 raised to the negative power ", exponent, " (element ", i, ")");
    } else if (base == 1 || base == -1) {
      out.SetInt64(i, (base == -1 && (exponent & 1)) ? -1 : 1);
    } else {
      out.SetInt64(i, 0);
    }
  }
  return out;
}

}  // namespace

Result Add(const KernelContext& ctx, const OpVersion& version) {
  return BinaryKernel(ctx, version, [](auto x, auto y) { return WrappingAdd(x, y); });
}

Result Sub(const KernelContext& ctx, const OpVersion& version) {
  return BinaryKernel(ctx, version, [](auto x, auto y) { return WrappingSub(x, y); });
}

Result Mul(const KernelContext& ctx, const OpVersion& version) {
  return BinaryKernel(ctx, version, [](auto x, auto y) { return WrappingMul(x, y); });
}

// Integer division truncates toward zero (Div-14 and the ONNX reference);
// INT64_MIN / -1 wraps to INT64_MIN, and narrower types wrap when stored.
Result Div(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version));
  if (IsInteger(in.a->dtype())) PARITY_RETURN_IF_ERROR(RequireNonzeroDivisor(ctx, in.b));
  return Single(MapBinary(ctx, *in.a, in.b, in.a->dtype(), [](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), int64_t>) {
      if (y == -1) return WrappingNeg(x);
    }
    return x / y;
  }));
}

Result Mod(const KernelContext& ctx, const OpVersion& version) {
  const int64_t fmod = ctx.GetInt("fmod", 0);
  PARITY_KERNEL_CHECK(ctx, fmod == 0 || fmod == 1, "attribute fmod must be 0 or 1, got ", fmod);
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version));
  const bool floor_quotient = fmod == 0;
  if (IsFloatingPoint(in.a->dtype())) {
    // Mod-10 and Mod-13 constrain fmod=0 to integer types; Mod-28 defines it for floats.
    PARITY_KERNEL_CHECK(ctx, !floor_quotient || version.since_version >= 28,
                        "fmod=0 on floating-point input (", DataTypeName(in.a->dtype()),
                        ") is defined only from opset 28; set fmod=1");
  } else {
    PARITY_RETURN_IF_ERROR(RequireNonzeroDivisor(ctx, in.b));
  }
  return Single(MapBinary(ctx, *in.a, in.b, in.a->dtype(), [floor_quotient](auto x, auto y) {
    if constexpr (std::is_same_v<decltype(x), double>) {
      return FloatMod(x, y, floor_quotient);
    } else {
      return IntegerMod(x, y, floor_quotient);
    }
  }));
}

// Pow: the result has the base's type. Before opset 12 base and exponent
// share one type; from Pow-12 the exponent has its own constraint T1.
Result Pow(const KernelContext& ctx, const OpVersion& version) {
  const bool separate_exponent_type = version.since_version >= 12;
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version, !separate_exponent_type));
  if (separate_exponent_type) {
    const TypeSet exponent_types = version.since_version >= 15 ? types::kNumericBf16 : types::kNumeric;
    PARITY_RETURN_IF_ERROR(TypedInput(ctx, 1, exponent_types).status());
  }
  const Tensor& a = *in.a;
  if (IsInteger(a.dtype()) && IsInteger(in.b.dtype())) return Single(IntegerPow(ctx, a, in.b));
  // A float on either side: the power in double, rounded once to the base's
  // type (truncated toward zero for an integer base, as numpy's astype does).
  return Single(MapBinaryAs<double>(ctx, a, in.b, a.dtype(), [](double x, double y) { return std::pow(x, y); }));
}

}  // namespace parity::ops::elementwise
