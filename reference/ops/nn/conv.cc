// Conv (1, 11, 22), ConvInteger (10) and QLinearConv (10): grouped N-D
// convolution with strides, dilations, pads and auto_pad (window.h). Conv
// runs as matrix products in double (conv_gemm.h); the integer forms stay
// on the exact int64 direct loop (convolve.h).
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/gemm.h"
#include "reference/ops/nn/conv_gemm.h"
#include "reference/ops/nn/convolve.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/quant.h"

namespace parity::ops::nn {

namespace {

struct ConvSetup {
  Window window;
  int64_t group = 1;
  int64_t out_channels = 0;
  Shape output_shape;
};

// Checks X [N, C, D...] against W [M, C/group, k...] and resolves the window.
StatusOr<ConvSetup> SetUpConv(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  PARITY_RETURN_IF_ERROR(RequireImage(ctx, x, "X"));
  if (w.rank() != x.rank()) {
    return ctx.Error("W has shape ", ShapeToString(w.shape()), ", expected rank ", x.rank(), " like X ",
                     ShapeToString(x.shape()));
  }
  ConvSetup s;
  s.group = ctx.GetInt("group", 1);
  if (s.group <= 0) return ctx.Error("group must be positive, got ", s.group);
  s.out_channels = w.dim(0);
  if (x.dim(1) != w.dim(1) * s.group || s.out_channels % s.group != 0) {
    return ctx.Error("X ", ShapeToString(x.shape()), " and W ", ShapeToString(w.shape()),
                     " do not agree with group ", s.group, " (need C = W.shape[1] * group and M % group == 0)");
  }
  const std::vector<int64_t> input(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> weight(w.shape().begin() + 2, w.shape().end());
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelShape(ctx, weight));
  PARITY_ASSIGN_OR_RETURN(s.window, ResolveWindow(ctx, input, kernel));
  s.output_shape = {x.dim(0), s.out_channels};
  s.output_shape.insert(s.output_shape.end(), s.window.output.begin(), s.window.output.end());
  return s;
}

// A zero point that is a scalar (or a one-element tensor) or, when
// `per_channel` > 0, a 1-D tensor of that length; expanded to one per channel.
StatusOr<std::vector<int64_t>> ZeroPoints(const KernelContext& ctx, size_t input, DataType expected,
                                          int64_t per_channel, const char* name) {
  const int64_t channels = per_channel > 0 ? per_channel : 1;
  if (!ctx.has_input(input)) return std::vector<int64_t>(static_cast<size_t>(channels), 0);
  PARITY_ASSIGN_OR_RETURN(const Tensor* zp, ctx.RequireTensor(input));
  if (zp->dtype() != expected) {
    return ctx.Error(name, " has type ", DataTypeName(zp->dtype()), ", expected ", DataTypeName(expected));
  }
  if (zp->size() == 1 && zp->rank() <= 1) return std::vector<int64_t>(static_cast<size_t>(channels), zp->GetInt64(0));
  if (per_channel > 0 && zp->rank() == 1 && zp->size() == per_channel) return zp->ToInt64s();
  return ctx.Error(name, " has shape ", ShapeToString(zp->shape()), ", expected a scalar",
                   per_channel > 0 ? StrCat(" or [", per_channel, "]") : std::string());
}

// X or W minus its zero point (per channel along axis 0 when zero has more than one value).
std::vector<int64_t> Shifted(const Tensor& t, const std::vector<int64_t>& zero, bool per_first_axis) {
  std::vector<int64_t> v = t.ToInt64s();
  const int64_t inner = per_first_axis && t.rank() > 0 && t.dim(0) > 0 ? t.size() / t.dim(0) : 1;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] -= per_first_axis ? zero[i / static_cast<size_t>(inner)] : zero[0];
  }
  return v;
}

bool IsEightBit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

}  // namespace

KernelResult Conv(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
  if (!IsFloatingPoint(x->dtype()) || w->dtype() != x->dtype()) {
    return ctx.Error("X and W must share a floating-point type, got ", DataTypeName(x->dtype()), " and ",
                     DataTypeName(w->dtype()));
  }
  PARITY_ASSIGN_OR_RETURN(ConvSetup s, SetUpConv(ctx, *x, *w));
  std::vector<double> bias;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(2));
    if (b->rank() != 1 || b->dim(0) != s.out_channels) {
      return ctx.Error("B has shape ", ShapeToString(b->shape()), ", expected [", s.out_channels, "]");
    }
    bias = b->ToDoubles();
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, x->dtype(), s.output_shape));
  const std::vector<double> wv = w->ToDoubles();
  // im2col multiplies the padding as 0 x w where the direct loop skips it:
  // with an infinity or a NaN in W that gives NaN where the definition gives
  // none, so such a weight keeps the direct loop.
  if (HoldsSpecialValue(wv.data(), w->size())) {
    std::vector<double> y = Convolve(x->ToDoubles(), x->shape(), wv, s.out_channels, s.group, s.window);
    AddChannelBias(y, bias, s.out_channels, Product(s.window.output));
    out.WriteDoubles(0, out.size(), y.data());
    return Single(std::move(out));
  }
  // X checked once here spares every block's product a scan of its columns.
  bool finite = false;
  const DoubleBuffer xv = ReadAllDoubles(*x, &finite);
  // The conventional arithmetic sums in float32 steps where the data is
  // float32 or narrower (spec/tolerance.md, "Error budgets").
  ConvByGemm(xv.get(), x->shape(), wv.data(), s.out_channels, s.group, s.window, bias.empty() ? nullptr : bias.data(),
             &out, finite, ctx.float32_sums() && IsFloat32OrHalf(x->dtype()));
  return Single(std::move(out));
}

KernelResult ConvInteger(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
  if (!IsEightBit(x->dtype()) || !IsEightBit(w->dtype())) {
    return ctx.Error("x and w must be int8 or uint8, got ", DataTypeName(x->dtype()), " and ",
                     DataTypeName(w->dtype()));
  }
  PARITY_ASSIGN_OR_RETURN(ConvSetup s, SetUpConv(ctx, *x, *w));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> x_zero, ZeroPoints(ctx, 2, x->dtype(), 0, "x_zero_point"));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> w_zero,
                          ZeroPoints(ctx, 3, w->dtype(), s.out_channels, "w_zero_point"));
  std::vector<int64_t> y = Convolve(Shifted(*x, x_zero, false), x->shape(), Shifted(*w, w_zero, true),
                                    s.out_channels, s.group, s.window);
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kInt32, s.output_shape));
  for (size_t i = 0; i < y.size(); ++i) out.SetInt64(static_cast<int64_t>(i), y[i]);
  return Single(std::move(out));
}

// y = saturate(round((conv(x - x_zero, w - w_zero) + B) * x_scale * w_scale / y_scale) + y_zero),
// rounding before the zero point is added, as QuantizeLinear does.
KernelResult QLinearConv(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* x_scale, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(3));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w_scale, ctx.RequireTensor(4));
  PARITY_ASSIGN_OR_RETURN(const Tensor* y_scale, ctx.RequireTensor(6));
  if (!IsEightBit(x->dtype()) || !IsEightBit(w->dtype())) {
    return ctx.Error("x and w must be int8 or uint8, got ", DataTypeName(x->dtype()), " and ",
                     DataTypeName(w->dtype()));
  }
  PARITY_ASSIGN_OR_RETURN(ConvSetup s, SetUpConv(ctx, *x, *w));
  if (x_scale->size() != 1 || y_scale->size() != 1) return ctx.Error("x_scale and y_scale must be scalars");
  if (w_scale->size() != 1 && !(w_scale->rank() == 1 && w_scale->dim(0) == s.out_channels)) {
    return ctx.Error("w_scale has shape ", ShapeToString(w_scale->shape()), ", expected a scalar or [",
                     s.out_channels, "]");
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> x_zero, ZeroPoints(ctx, 2, x->dtype(), 0, "x_zero_point"));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> w_zero,
                          ZeroPoints(ctx, 5, w->dtype(), s.out_channels, "w_zero_point"));
  DataType out_type = x->dtype();
  if (ctx.has_input(7)) out_type = ctx.tensor(7).dtype();
  if (!IsEightBit(out_type)) return ctx.Error("y_zero_point must be int8 or uint8");
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> y_zero, ZeroPoints(ctx, 7, out_type, 0, "y_zero_point"));
  std::vector<int64_t> acc = Convolve(Shifted(*x, x_zero, false), x->shape(), Shifted(*w, w_zero, true),
                                      s.out_channels, s.group, s.window);
  std::vector<int64_t> bias(static_cast<size_t>(s.out_channels), 0);
  if (ctx.has_input(8)) {
    const Tensor& b = ctx.tensor(8);
    if (b.dtype() != DataType::kInt32 || b.rank() != 1 || b.dim(0) != s.out_channels) {
      return ctx.Error("B must be int32 of shape [", s.out_channels, "], got ", b.Description());
    }
    bias = b.ToInt64s();
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, out_type, s.output_shape));
  const int64_t plane = Product(s.window.output);
  const double xs = x_scale->GetDouble(0);
  const double ys = y_scale->GetDouble(0);
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t m = (static_cast<int64_t>(i) / plane) % s.out_channels;
    const double ws = w_scale->GetDouble(w_scale->size() == 1 ? 0 : m);
    const double real = static_cast<double>(acc[i] + bias[static_cast<size_t>(m)]) * (xs * ws / ys);
    const double rounded = std::isnan(real) ? 0.0 : std::nearbyint(real);
    out.SetInt64(static_cast<int64_t>(i), RoundAndSaturate(rounded + static_cast<double>(y_zero[0]), out_type));
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::nn
