// Boolean logic (And, Or, Xor, Not), comparisons (Equal, Less, Greater and
// the OrEqual forms), classification (IsNaN, IsInf) and selection (Where).
// Comparisons of floats follow IEEE 754: any comparison with NaN is false.
#include <cmath>
#include <cstring>

#include "reference/ops/elementwise/kernels.h"

namespace parity::ops::elementwise {
namespace {

template <typename F>
Result CompareKernel(const KernelContext& ctx, const OpVersion& version, F&& compare) {
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version));
  return Single(MapBinary(ctx, *in.a, in.b, DataType::kBool, compare));
}

// Equal on strings (Equal-19): byte-wise equality.
StatusOr<Tensor> EqualStrings(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  const Tensor* inputs[] = {&a, &b};
  PARITY_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, inputs));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kBool, plan.shape));
  for (int64_t i = 0; i < plan.size; ++i) {
    out.SetInt64(i, a.strings()[plan.indexers[0](i)] == b.strings()[plan.indexers[1](i)] ? 1 : 0);
  }
  return out;
}

// Copies element i of `from` to element j of `to` (same element type), bit
// for bit: NaN payloads, signed zeros and strings survive.
void CopyElement(const Tensor& from, int64_t i, Tensor& to, int64_t j) {
  if (from.dtype() == DataType::kString) {
    to.mutable_strings()[static_cast<size_t>(j)] = from.strings()[static_cast<size_t>(i)];
    return;
  }
  const size_t size = StorageSize(from.dtype());
  std::memcpy(to.mutable_raw_bytes() + static_cast<size_t>(j) * size, from.raw_bytes() + static_cast<size_t>(i) * size,
              size);
}

}  // namespace

Result And(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](std::integral auto x, std::integral auto y) { return x != 0 && y != 0; });
}

Result Or(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](std::integral auto x, std::integral auto y) { return x != 0 || y != 0; });
}

Result Xor(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](std::integral auto x, std::integral auto y) { return (x != 0) != (y != 0); });
}

Result Not(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  return Single(MapUnary(ctx, *x, DataType::kBool, [](std::integral auto v) { return v == 0; }));
}

Result Equal(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version));
  if (in.a->dtype() == DataType::kString) return Single(EqualStrings(ctx, *in.a, in.b));
  return Single(MapBinary(ctx, *in.a, in.b, DataType::kBool, [](auto x, auto y) { return x == y; }));
}

Result Less(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](auto x, auto y) { return x < y; });
}

Result LessOrEqual(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](auto x, auto y) { return x <= y; });
}

Result Greater(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](auto x, auto y) { return x > y; });
}

Result GreaterOrEqual(const KernelContext& ctx, const OpVersion& version) {
  return CompareKernel(ctx, version, [](auto x, auto y) { return x >= y; });
}

Result IsNaN(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  return Single(MapUnaryAs<double>(ctx, *x, DataType::kBool, [](double v) { return std::isnan(v); }));
}

Result IsInf(const KernelContext& ctx, const OpVersion& version) {
  const bool positive = ctx.GetInt("detect_positive", 1) != 0;
  const bool negative = ctx.GetInt("detect_negative", 1) != 0;
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  return Single(MapUnaryAs<double>(ctx, *x, DataType::kBool, [positive, negative](double v) {
    return std::isinf(v) && (v > 0 ? positive : negative);
  }));
}

// Where(condition, X, Y): X where condition is true, else Y, over the numpy
// broadcast of all three. Elements are copied, not recomputed.
Result Where(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* condition, TypedInput(ctx, 0, types::kBool));
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 1, version.types));
  PARITY_ASSIGN_OR_RETURN(const Tensor* y, TypedInput(ctx, 2, version.types));
  PARITY_RETURN_IF_ERROR(RequireSameType(ctx, 1, *x, 2, *y));
  const Tensor* inputs[] = {condition, x, y};
  PARITY_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, inputs));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, x->dtype(), plan.shape));
  for (int64_t i = 0; i < plan.size; ++i) {
    if (condition->GetInt64(plan.indexers[0](i)) != 0) {
      CopyElement(*x, plan.indexers[1](i), out, i);
    } else {
      CopyElement(*y, plan.indexers[2](i), out, i);
    }
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::elementwise
