// ConvTranspose (1, 11, 22): the gradient of Conv with respect to its input,
// each input element scattering x * w over a dilated kernel footprint; run
// as matrix products in double and col2im (conv_gemm.h).
// Output shape and pads follow the spec's formulas, with total_padding / 2
// taken as floor division (so a negative total, from an output_shape larger
// than the natural one, leaves the extra rows at the end, as ONNX's tests expect).
#include "reference/ops/common.h"
#include "reference/ops/gemm.h"
#include "reference/ops/nn/conv_gemm.h"
#include "reference/ops/nn/convolve.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

namespace {

// An attribute of n values, or n copies of `fallback` when absent.
StatusOr<std::vector<int64_t>> IntsOr(const KernelContext& ctx, const char* name, size_t n, int64_t fallback) {
  if (!ctx.has_attribute(name)) return std::vector<int64_t>(n, fallback);
  std::vector<int64_t> v = ctx.GetInts(name);
  if (v.size() != n) return ctx.Error("attribute ", name, " has ", v.size(), " values, expected ", n);
  return v;
}

}  // namespace

KernelResult ConvTranspose(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireImage(ctx, *x, "X"));
  if (!IsFloatingPoint(x->dtype()) || w->dtype() != x->dtype()) {
    return ctx.Error("X and W must share a floating-point type, got ", DataTypeName(x->dtype()), " and ",
                     DataTypeName(w->dtype()));
  }
  if (w->rank() != x->rank()) {
    return ctx.Error("W has shape ", ShapeToString(w->shape()), ", expected rank ", x->rank());
  }
  const int64_t group = ctx.GetInt("group", 1);
  if (group <= 0) return ctx.Error("group must be positive, got ", group);
  const int64_t channels = x->dim(1);
  if (w->dim(0) != channels || channels % group != 0) {
    return ctx.Error("W ", ShapeToString(w->shape()), " must have C = ", channels,
                     " as its first dimension, divisible by group ", group);
  }
  const int64_t out_per_group = w->dim(1);
  const int64_t out_channels = out_per_group * group;
  const size_t n = static_cast<size_t>(x->rank() - 2);
  const std::vector<int64_t> input(x->shape().begin() + 2, x->shape().end());
  const std::vector<int64_t> weight(w->shape().begin() + 2, w->shape().end());
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelShape(ctx, weight));
  if (kernel.size() != n) return ctx.Error("kernel_shape has ", kernel.size(), " values, expected ", n);

  std::vector<int64_t> strides, dilations, output_padding;
  PARITY_ASSIGN_OR_RETURN(strides, IntsOr(ctx, "strides", n, 1));
  PARITY_ASSIGN_OR_RETURN(dilations, IntsOr(ctx, "dilations", n, 1));
  PARITY_ASSIGN_OR_RETURN(output_padding, IntsOr(ctx, "output_padding", n, 0));
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0) return ctx.Error("strides and dilations must be positive");
  }
  const std::string auto_pad = ctx.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return ctx.Error("unknown auto_pad '", auto_pad, "'");
  }
  std::vector<int64_t> pad_begin(n, 0), pad_end(n, 0), output(n, 0);
  std::vector<int64_t> natural(n);  // the output extent with no padding at all
  for (size_t i = 0; i < n; ++i) {
    natural[i] = strides[i] * (input[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1;
  }
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (ctx.has_attribute("output_shape") || same) {
    std::vector<int64_t> requested = ctx.GetInts("output_shape");
    if (requested.size() == n + 2) requested.erase(requested.begin(), requested.begin() + 2);
    if (requested.empty()) {
      for (size_t i = 0; i < n; ++i) requested.push_back(input[i] * strides[i]);
    }
    if (requested.size() != n) {
      return ctx.Error("attribute output_shape has ", requested.size(), " values, expected ", n);
    }
    for (size_t i = 0; i < n; ++i) {
      if (requested[i] < 0) return ctx.Error("output_shape values must be non-negative");
      const int64_t total = natural[i] - requested[i];
      const int64_t half = FloorDiv(total, 2);
      pad_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pad_end[i] = total - pad_begin[i];
      output[i] = requested[i];
    }
  } else {
    if (auto_pad == "NOTSET" && ctx.has_attribute("pads")) {
      std::vector<int64_t> pads = ctx.GetInts("pads");
      if (pads.size() != 2 * n) return ctx.Error("attribute pads has ", pads.size(), " values, expected ", 2 * n);
      for (size_t i = 0; i < n; ++i) {
        pad_begin[i] = pads[i];
        pad_end[i] = pads[n + i];
      }
    }
    for (size_t i = 0; i < n; ++i) {
      output[i] = natural[i] - pad_begin[i] - pad_end[i];
      if (output[i] < 0) return ctx.Error("pads leave a negative output extent on spatial axis ", i);
    }
  }

  Shape y_shape = {x->dim(0), out_channels};
  y_shape.insert(y_shape.end(), output.begin(), output.end());
  std::vector<double> bias;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(2));
    if (b->rank() != 1 || b->dim(0) != out_channels) {
      return ctx.Error("B has shape ", ShapeToString(b->shape()), ", expected [", out_channels, "]");
    }
    bias = b->ToDoubles();
  }
  const Window win{input, kernel, strides, dilations, pad_begin, pad_end, output};
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, x->dtype(), y_shape));
  const std::vector<double> wv = w->ToDoubles();
  // The GEMM forms the same products as the direct loop, but with the same
  // rule as Conv a weight with an infinity or a NaN keeps the direct loop,
  // so special values propagate exactly as the definition's loop has them.
  if (HoldsSpecialValue(wv.data(), w->size())) {
    std::vector<double> y = ConvolveTransposed(x->ToDoubles(), x->shape(), wv, out_per_group, group, win);
    AddChannelBias(y, bias, out_channels, Product(output));
    out.WriteDoubles(0, out.size(), y.data());
    return Single(std::move(out));
  }
  // X checked once here spares every block's product a scan of its operands.
  bool finite = false;
  const DoubleBuffer xv = ReadAllDoubles(*x, &finite);
  ConvTransposeByGemm(xv.get(), x->shape(), wv.data(), out_per_group, group, win, bias.empty() ? nullptr : bias.data(),
                      &out, finite);
  return Single(std::move(out));
}

}  // namespace parity::ops::nn
