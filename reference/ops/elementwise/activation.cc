// Activation functions. Each is the formula of its ONNX schema evaluated in
// double (with float attributes taken at their exact float value) and
// rounded once; where the textbook form loses accuracy in double (exp(x)-1
// near 0, log(1+exp(x)) for large x, 1+erf(x) for very negative x) an
// equivalent stable form is used.
#include <cmath>
#include <numbers>
#include <string>

#include "reference/ops/elementwise/kernels.h"

namespace parity::ops::elementwise {
namespace {

double StableSigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

// min(1, max(0, v)), keeping NaN (std::fmin/fmax would drop it).
double Clamp01(double v) { return v < 0 ? 0.0 : (v > 1 ? 1.0 : v); }

// log(1 + exp(x)) without overflow for large x.
double StableSoftplus(double x) {
  if (x > 0) return x + std::log1p(std::exp(-x));
  return std::log1p(std::exp(x));
}

// Unidirectional broadcast of PRelu's slope to X's shape (PRelu-7 and
// later). PRelu-1/6 took a slope of one element or, as their Caffe2 origin
// did, one slope per channel (dimension 1); other shapes follow the same
// unidirectional rule.
StatusOr<Tensor> ShapeSlope(const KernelContext& ctx, const OpVersion& version, const Tensor& x,
                            const Tensor& slope) {
  Tensor shaped = slope;
  if (version.since_version < 7) {
    if (slope.size() == 1) {
      shaped = slope.Reshaped({});
    } else if (slope.rank() == 1 && x.rank() >= 2 && slope.dim(0) == x.dim(1)) {
      Shape channel(static_cast<size_t>(x.rank() - 1), 1);
      channel[0] = slope.dim(0);
      shaped = slope.Reshaped(std::move(channel));
    }
  }
  PARITY_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx, {x.shape(), shaped.shape()}));
  if (shape != x.shape()) {
    return ctx.Error("slope of shape ", ShapeToString(slope.shape()), " does not broadcast to X's shape ",
                     ShapeToString(x.shape()));
  }
  return shaped;
}

}  // namespace

// Relu: max(0, x); NaN and -0 pass through.
Result Relu(const KernelContext& ctx, const OpVersion& version) {
  return UnaryKernel(ctx, version, [](auto x) { return IsNegative(x) ? decltype(x)(0) : x; });
}

Result LeakyRelu(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 0.01f);
  return UnaryFloatKernel(ctx, version, [alpha](double x) { return x < 0 ? alpha * x : x; });
}

// PRelu: slope * x for x < 0, x otherwise (so 0 stays +0 whatever the slope).
Result PRelu(const KernelContext& ctx, const OpVersion& version) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, TypedInput(ctx, 0, version.types));
  PARITY_ASSIGN_OR_RETURN(const Tensor* slope, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireSameType(ctx, 0, *x, 1, *slope));
  PARITY_ASSIGN_OR_RETURN(Tensor shaped, ShapeSlope(ctx, version, *x, *slope));
  return Single(MapBinary(ctx, *x, shaped, x->dtype(),
                          [](auto v, auto s) { return IsNegative(v) ? WrappingMul(s, v) : v; }));
}

Result Elu(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 1.0f);
  return UnaryFloatKernel(ctx, version, [alpha](double x) { return x < 0 ? alpha * std::expm1(x) : x; });
}

// Selu's defaults are the float values that the schema writes.
Result Selu(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.GetFloat("gamma", 1.05070102214813232421875f);
  return UnaryFloatKernel(ctx, version,
                          [alpha, gamma](double x) { return x > 0 ? gamma * x : gamma * alpha * std::expm1(x); });
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Result Celu(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 1.0f);
  PARITY_KERNEL_CHECK(ctx, alpha != 0, "attribute alpha must not be 0");
  return UnaryFloatKernel(ctx, version, [alpha](double x) {
    if (std::isnan(x)) return x;
    return std::fmax(0.0, x) + std::fmin(0.0, alpha * std::expm1(x / alpha));
  });
}

Result ThresholdedRelu(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 1.0f);
  return UnaryFloatKernel(ctx, version, [alpha](double x) { return x > alpha ? x : 0.0; });
}

Result Sigmoid(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, StableSigmoid);
}

// HardSigmoid: max(0, min(1, alpha * x + beta)).
Result HardSigmoid(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 0.2f);
  const double beta = ctx.GetFloat("beta", 0.5f);
  return UnaryFloatKernel(ctx, version,
                          [alpha, beta](double x) { return Clamp01(alpha * x + beta); });
}

// HardSwish: x * max(0, min(1, x / 6 + 1/2)).
Result HardSwish(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version,
                          [](double x) { return x * Clamp01(x / 6.0 + 0.5); });
}

Result Softplus(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, StableSoftplus);
}

Result Softsign(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return x / (1.0 + std::fabs(x)); });
}

// Mish: x * tanh(softplus(x)).
Result Mish(const KernelContext& ctx, const OpVersion& version) {
  return UnaryFloatKernel(ctx, version, [](double x) { return x * std::tanh(StableSoftplus(x)); });
}

// Gelu: x * Phi(x) = x/2 * erfc(-x / sqrt(2)) (equal to x/2 * (1 + erf(x /
// sqrt(2))), without the cancellation for negative x), or with
// approximate="tanh": x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
Result Gelu(const KernelContext& ctx, const OpVersion& version) {
  const std::string approximate = ctx.GetString("approximate", "none");
  if (approximate == "none") {
    return UnaryFloatKernel(ctx, version,
                            [](double x) { return 0.5 * x * std::erfc(-x * (0.5 * std::numbers::sqrt2)); });
  }
  PARITY_KERNEL_CHECK(ctx, approximate == "tanh", "attribute approximate must be \"none\" or \"tanh\", got \"",
                      approximate, "\"");
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return UnaryFloatKernel(ctx, version, [k](double x) {
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  });
}

// Shrink: x + bias below -lambd, x - bias above lambd, else 0. Integer
// inputs compute in double and truncate back (wrapping where out of range).
Result Shrink(const KernelContext& ctx, const OpVersion& version) {
  const double bias = ctx.GetFloat("bias", 0.0f);
  const double lambd = ctx.GetFloat("lambd", 0.5f);
  return UnaryFloatKernel(ctx, version, [bias, lambd](double x) {
    if (x < -lambd) return x + bias;
    if (x > lambd) return x - bias;
    return 0.0;
  });
}

// Swish: x * sigmoid(alpha * x).
Result Swish(const KernelContext& ctx, const OpVersion& version) {
  const double alpha = ctx.GetFloat("alpha", 1.0f);
  return UnaryFloatKernel(ctx, version, [alpha](double x) { return x * StableSigmoid(alpha * x); });
}

}  // namespace parity::ops::elementwise
