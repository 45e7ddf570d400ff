// The machinery shared by the elementwise kernels: the element types each
// version of an operator allows (TypeSet, OpVersion), checked inputs, and
// maps over one, two or many broadcast tensors that compute each element in
// its exact arithmetic type and round once to the output type.
//
// Arithmetic types (see VisitArithmetic): every float format is computed in
// double, signed integers and bool in int64_t, unsigned integers in uint64_t.
// A function given to MapUnary/MapBinary/MapNary is usually a generic lambda
// (`auto`, or `std::integral auto` where doubles make no sense) instantiated
// for each of the three it accepts; what it returns decides how the result
// is written (double: rounded once to nearest-even by Tensor::SetDouble;
// int64_t/uint64_t: wrapped to the output width; bool: 0 or 1).
#pragma once

#include <cstdint>
#include <concepts>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"
#include "reference/eval/registry.h"
#include "reference/ops/common.h"

namespace parity::ops {

// A set of element types, as in an ONNX type constraint.
class TypeSet {
 public:
  constexpr TypeSet() = default;
  constexpr TypeSet(std::initializer_list<DataType> types) {
    for (DataType t : types) bits_ |= Bit(t);
  }
  constexpr bool Contains(DataType t) const { return (bits_ & Bit(t)) != 0; }
  constexpr TypeSet operator|(TypeSet other) const { return FromBits(bits_ | other.bits_); }
  // "{float16, float32, float64}"
  std::string ToString() const;

 private:
  static constexpr uint64_t Bit(DataType t) { return uint64_t{1} << static_cast<int32_t>(t); }
  static constexpr TypeSet FromBits(uint64_t bits) {
    TypeSet s;
    s.bits_ = bits;
    return s;
  }
  uint64_t bits_ = 0;  // bit k set: DataType k is allowed (kMaxDataType < 64)
};

// The type sets that recur in the elementwise schemas.
namespace types {
inline constexpr TypeSet kFloats{DataType::kFloat16, DataType::kFloat, DataType::kDouble};
inline constexpr TypeSet kFloatsBf16 = kFloats | TypeSet{DataType::kBfloat16};
inline constexpr TypeSet kFloat8{DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                                 DataType::kFloat8E5M2FNUZ};
inline constexpr TypeSet kSignedInts{DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64};
inline constexpr TypeSet kUnsignedInts{DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64};
inline constexpr TypeSet kInts = kSignedInts | kUnsignedInts;
// The eleven types of the opset 9-12 numeric constraints, and the twelve of opset 13 on.
inline constexpr TypeSet kNumeric = kInts | kFloats;
inline constexpr TypeSet kNumericBf16 = kInts | kFloatsBf16;
inline constexpr TypeSet kBool{DataType::kBool};
inline constexpr TypeSet kString{DataType::kString};
inline constexpr TypeSet kComplex{DataType::kComplex64, DataType::kComplex128};
}  // namespace types

// One registered version of an operator: its since_version and the element
// types of its main type constraint ("T"; "T1" where the input is T1).
struct OpVersion {
  int since_version;
  TypeSet types;
};

// A kernel of this family: it is told which version it runs as.
using ElementwiseKernel = StatusOr<std::vector<Value>> (*)(const KernelContext& ctx, const OpVersion& version);

// Registers `kernel` for each of `versions` of `op_type` (default domain).
void RegisterVersions(OpRegistry& registry, std::string_view op_type, ElementwiseKernel kernel,
                      std::initializer_list<OpVersion> versions);

// Input i as a tensor whose element type is in `allowed`, or an error that
// names the input, its type and the allowed types.
StatusOr<const Tensor*> TypedInput(const KernelContext& ctx, size_t i, TypeSet allowed);
// An error unless inputs i and j have the same element type.
Status RequireSameType(const KernelContext& ctx, size_t i, const Tensor& a, size_t j, const Tensor& b);

// The two operands of a binary operator, type-checked against `version`, with
// B already shaped for numpy broadcasting. `same_type`: B must have A's type.
// Before opset 7 (Add-1/6 and the others with "broadcast" and "axis"
// attributes) only B broadcasts, and only when broadcast=1; see
// LegacyBroadcastOperand.
struct BinaryOperands {
  const Tensor* a;
  Tensor b;
};
StatusOr<BinaryOperands> ReadBinaryOperands(const KernelContext& ctx, const OpVersion& version,
                                            bool same_type = true);

// The limited broadcast of opsets 1-6: with broadcast=0 the shapes must be
// equal; with broadcast=1, B is a one-element tensor, or its shape is a
// contiguous run of A's dimensions starting at `axis` (suffix matching when
// axis is absent). Returns B reshaped so that numpy broadcasting to A's
// shape gives the same result.
StatusOr<Tensor> LegacyBroadcastOperand(const KernelContext& ctx, const Tensor& a, const Tensor& b);

// The numpy broadcast of several tensors: the output shape and, per input,
// the map from an output index to that input's index.
struct BroadcastPlan {
  Shape shape;
  int64_t size = 0;
  std::vector<BroadcastIndexer> indexers;
};
StatusOr<BroadcastPlan> PlanBroadcast(const KernelContext& ctx, std::span<const Tensor* const> inputs);

// --- Element access in an arithmetic type -----------------------------------

// Calls fn(T{}) where T is the arithmetic type of `dtype`: double for the
// float formats, uint64_t for unsigned integers, int64_t for signed integers
// and bool.
template <typename Fn>
decltype(auto) VisitArithmetic(DataType dtype, Fn&& fn) {
  if (IsFloatingPoint(dtype)) return fn(double{});
  if (IsUnsignedInteger(dtype)) return fn(uint64_t{});
  return fn(int64_t{});
}

// Element i of `t` as T (exact: every float format fits in double, every
// integer in int64_t or uint64_t).
template <typename T>
T Load(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, double>) {
    return t.GetDouble(i);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return t.GetUint64(i);
  } else {
    static_assert(std::is_same_v<T, int64_t>, "Load: double, int64_t or uint64_t");
    return t.GetInt64(i);
  }
}

// Writes element i of `t`: a double is rounded once to t's type, an integer
// wrapped to its width, a bool stored as 0 or 1.
template <typename T>
void Store(Tensor& t, int64_t i, T value) {
  if constexpr (std::is_same_v<T, bool>) {
    t.SetInt64(i, value ? 1 : 0);
  } else if constexpr (std::is_same_v<T, double>) {
    t.SetDouble(i, value);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    t.SetUint64(i, value);
  } else {
    static_assert(std::is_same_v<T, int64_t>, "Store: bool, double, int64_t or uint64_t");
    t.SetInt64(i, value);
  }
}

// x < 0, without a comparison that is always false for unsigned types.
template <typename T>
constexpr bool IsNegative(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return false;
  } else {
    return x < 0;
  }
}

// Integer arithmetic that wraps (two's complement) instead of overflowing;
// on double it is ordinary arithmetic.
template <typename T>
T WrappingAdd(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T WrappingSub(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T WrappingMul(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}
template <typename T>
T WrappingNeg(T a) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a));
  } else {
    return -a;
  }
}

// --- Maps ------------------------------------------------------------------
//
// MapUnary, MapBinary and MapNary instantiate `f` only for the arithmetic
// types it accepts, so a lambda constrained to std::integral (the bitwise
// operators) is never compiled for double. Meeting a type that `f` does not
// accept is a bug of the caller's type check (NoArithmeticFor).

// An internal error: a kernel reached a map with a type its function does not take.
Status NoArithmeticFor(const KernelContext& ctx, DataType dtype);

// out[i] = f(x[i]) with x read as T; the output has x's shape and `out_type`.
template <typename T, typename F>
StatusOr<Tensor> MapUnaryAs(const KernelContext& ctx, const Tensor& x, DataType out_type, F&& f) {
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, out_type, x.shape()));
  for (int64_t i = 0; i < x.size(); ++i) Store(out, i, f(Load<T>(x, i)));
  return out;
}

// MapUnaryAs in the arithmetic type of x.
template <typename F>
StatusOr<Tensor> MapUnary(const KernelContext& ctx, const Tensor& x, DataType out_type, F&& f) {
  return VisitArithmetic(x.dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = decltype(tag);
    if constexpr (std::is_invocable_v<F&, T>) {
      return MapUnaryAs<T>(ctx, x, out_type, f);
    } else {
      return NoArithmeticFor(ctx, x.dtype());
    }
  });
}

// out = f(a, b) over the numpy broadcast of a and b, both read as T.
template <typename T, typename F>
StatusOr<Tensor> MapBinaryAs(const KernelContext& ctx, const Tensor& a, const Tensor& b, DataType out_type,
                             F&& f) {
  const Tensor* inputs[] = {&a, &b};
  PARITY_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, inputs));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, out_type, plan.shape));
  for (int64_t i = 0; i < plan.size; ++i) {
    Store(out, i, f(Load<T>(a, plan.indexers[0](i)), Load<T>(b, plan.indexers[1](i))));
  }
  return out;
}

// MapBinaryAs in the arithmetic type of a (b has a's type).
template <typename F>
StatusOr<Tensor> MapBinary(const KernelContext& ctx, const Tensor& a, const Tensor& b, DataType out_type, F&& f) {
  return VisitArithmetic(a.dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = decltype(tag);
    if constexpr (std::is_invocable_v<F&, T, T>) {
      return MapBinaryAs<T>(ctx, a, b, out_type, f);
    } else {
      return NoArithmeticFor(ctx, a.dtype());
    }
  });
}

// out = f(values) over the numpy broadcast of all inputs, where `values`
// (a std::span<const T>) holds one element of each input, in input order.
template <typename T, typename F>
StatusOr<Tensor> MapNaryAs(const KernelContext& ctx, std::span<const Tensor* const> inputs, DataType out_type,
                           F&& f) {
  PARITY_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, inputs));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, out_type, plan.shape));
  std::vector<T> values(inputs.size());
  for (int64_t i = 0; i < plan.size; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k) values[k] = Load<T>(*inputs[k], plan.indexers[k](i));
    Store(out, i, f(std::span<const T>(values)));
  }
  return out;
}

// MapNaryAs in the arithmetic type of the first input (all share its type).
template <typename F>
StatusOr<Tensor> MapNary(const KernelContext& ctx, std::span<const Tensor* const> inputs, DataType out_type, F&& f) {
  return VisitArithmetic(inputs[0]->dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = decltype(tag);
    if constexpr (std::is_invocable_v<F&, std::span<const T>>) {
      return MapNaryAs<T>(ctx, inputs, out_type, f);
    } else {
      return NoArithmeticFor(ctx, inputs[0]->dtype());
    }
  });
}

// The usual shape of a float-only unary operator: input 0 checked against
// `version`, out[i] = f(x[i]) in double, rounded once to x's type.
template <typename F>
StatusOr<std::vector<Value>> UnaryFloatKernel(const KernelContext& ctx, const OpVersion& version, F&& f) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  return Single(MapUnaryAs<double>(ctx, *x, x->dtype(), f));
}

// A unary operator over every allowed type: out[i] = f(x[i]) in x's
// arithmetic type, written back to x's type.
template <typename F>
StatusOr<std::vector<Value>> UnaryKernel(const KernelContext& ctx, const OpVersion& version, F&& f) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  return Single(MapUnary(ctx, *x, x->dtype(), f));
}

// A binary operator whose result has the operands' type: out = f(a, b).
template <typename F>
StatusOr<std::vector<Value>> BinaryKernel(const KernelContext& ctx, const OpVersion& version, F&& f) {
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version));
  return Single(MapBinary(ctx, *in.a, in.b, in.a->dtype(), f));
}

}  // namespace parity::ops
