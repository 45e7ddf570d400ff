// Operators over any number of inputs (Max, Min, Sum, Mean) and Clip, which
// is Min(max, Max(input, min)). Max and Min propagate NaN, as numpy's
// maximum/minimum and the ONNX reference do.
#include <cmath>
#include <limits>
#include <optional>

#include "reference/ops/elementwise/kernels.h"

namespace parity::ops::elementwise {
namespace {

template <typename T>
T NanMax(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b > a ? b : a;
}

template <typename T>
T NanMin(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

// All inputs of a variadic operator: each present, of an allowed type and
// of the first one's type. Before opset 8 they must also share one shape;
// from opset 8 they broadcast.
StatusOr<std::vector<const Tensor*>> ReadVariadicInputs(const KernelContext& ctx, const OpVersion& version) {
  PARITY_KERNEL_CHECK(ctx, ctx.input_count() >= 1, "needs at least one input");
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, TypedInput(ctx, i, version.types));
    if (i > 0) {
      PARITY_RETURN_IF_ERROR(RequireSameType(ctx, 0, *inputs[0], i, *t));
      PARITY_KERNEL_CHECK(ctx, version.since_version >= 8 || t->shape() == inputs[0]->shape(),
                          "before opset 8 all inputs must have the same shape; input ", i, " is ",
                          ShapeToString(t->shape()), ", input 0 is ", ShapeToString(inputs[0]->shape()));
    }
    inputs.push_back(t);
  }
  return inputs;
}

template <typename F>
Result VariadicKernel(const KernelContext& ctx, const OpVersion& version, F&& f) {
  PARITY_ASSIGN_OR_RETURN(std::vector<const Tensor*> inputs, ReadVariadicInputs(ctx, version));
  return Single(MapNary(ctx, inputs, inputs[0]->dtype(), f));
}

// A bound of Clip-11 and later: an optional input of the input's type with one element.
template <typename T>
StatusOr<std::optional<T>> ReadBound(const KernelContext& ctx, size_t i, const Tensor& x) {
  if (!ctx.has_input(i)) return std::optional<T>();
  PARITY_ASSIGN_OR_RETURN(const Tensor* bound, ctx.RequireTensor(i));
  PARITY_RETURN_IF_ERROR(RequireSameType(ctx, 0, x, i, *bound));
  PARITY_KERNEL_CHECK(ctx, bound->size() == 1, "input ", i, " (", i == 1 ? "min" : "max",
                      ") must be a scalar, got shape ", ShapeToString(bound->shape()));
  return std::optional<T>(Load<T>(*bound, 0));
}

template <typename T>
StatusOr<Tensor> ClipAs(const KernelContext& ctx, const Tensor& x, std::optional<T> lo, std::optional<T> hi) {
  return MapUnaryAs<T>(ctx, x, x.dtype(), [lo, hi](T v) {
    if (lo) v = NanMax(v, *lo);
    if (hi) v = NanMin(v, *hi);
    return v;
  });
}

}  // namespace

Result Max(const KernelContext& ctx, const OpVersion& version) {
  return VariadicKernel(ctx, version, [](auto values) {
    auto m = values[0];
    for (auto v : values.subspan(1)) m = NanMax(m, v);
    return m;
  });
}

Result Min(const KernelContext& ctx, const OpVersion& version) {
  return VariadicKernel(ctx, version, [](auto values) {
    auto m = values[0];
    for (auto v : values.subspan(1)) m = NanMin(m, v);
    return m;
  });
}

// Sum and Mean allow only float types: the sum is taken in double and
// rounded once.
Result Sum(const KernelContext& ctx, const OpVersion& version) {
  return VariadicKernel(ctx, version, [](std::span<const double> values) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum;
  });
}

Result Mean(const KernelContext& ctx, const OpVersion& version) {
  return VariadicKernel(ctx, version, [](std::span<const double> values) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  });
}

// Clip-1 and Clip-6 take the bounds as float attributes; from Clip-11 they
// are optional scalar inputs of the input's type. An absent attribute does
// not bound in Clip-1, while Clip-6's schema gives defaults of -+FLT_MAX
// (so a float64 input beyond them is clipped: spec/findings.md, ELT-3).
Result Clip(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  if (version.since_version < 11) {
    std::optional<double> lo, hi;
    if (version.since_version >= 6) {
      lo = -static_cast<double>(std::numeric_limits<float>::max());
      hi = static_cast<double>(std::numeric_limits<float>::max());
    }
    if (ctx.has_attribute("min")) lo = ctx.GetFloat("min", 0.0f);
    if (ctx.has_attribute("max")) hi = ctx.GetFloat("max", 0.0f);
    return Single(ClipAs<double>(ctx, *x, lo, hi));
  }
  return Single(VisitArithmetic(x->dtype(), [&](auto tag) -> StatusOr<Tensor> {
    using T = decltype(tag);
    PARITY_ASSIGN_OR_RETURN(std::optional<T> lo, ReadBound<T>(ctx, 1, *x));
    PARITY_ASSIGN_OR_RETURN(std::optional<T> hi, ReadBound<T>(ctx, 2, *x));
    return ClipAs<T>(ctx, *x, lo, hi);
  }));
}

}  // namespace parity::ops::elementwise
