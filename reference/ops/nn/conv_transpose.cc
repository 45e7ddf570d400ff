// ConvTranspose (1, 11, 22): the gradient of Conv with respect to its input,
// each input element scattering x * w over a dilated kernel footprint.
// Output shape and pads follow the spec's formulas, with total_padding / 2
// taken as floor division (so a negative total, from an output_shape larger
// than the natural one, leaves the extra rows at the end, as ONNX's tests expect).
#include "reference/ops/common.h"
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
  const int64_t in_per_group = channels / group;
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

  const int64_t batch = x->dim(0);
  const int64_t in_size = Product(input);
  const int64_t out_size = Product(output);
  const int64_t kernel_size = Product(kernel);
  std::vector<int64_t> out_strides(n, 1);
  for (size_t i = n; i-- > 1;) out_strides[i - 1] = out_strides[i] * output[i];
  Shape y_shape = {batch, out_channels};
  y_shape.insert(y_shape.end(), output.begin(), output.end());
  PARITY_ASSIGN_OR_RETURN(int64_t y_count, ElementCount(y_shape));
  std::vector<double> y(static_cast<size_t>(y_count), 0.0);
  const std::vector<double> xv = x->ToDoubles();
  const std::vector<double> wv = w->ToDoubles();

  std::vector<int64_t> i_idx(n, 0), k_idx(n, 0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t g = c / in_per_group;
      std::fill(i_idx.begin(), i_idx.end(), 0);
      for (int64_t ii = 0; ii < in_size; ++ii, NextIndex(i_idx, input)) {
        const double value = xv[static_cast<size_t>((b * channels + c) * in_size + ii)];
        std::fill(k_idx.begin(), k_idx.end(), 0);
        for (int64_t kk = 0; kk < kernel_size; ++kk, NextIndex(k_idx, kernel)) {
          int64_t offset = 0;
          bool inside = true;
          for (size_t a = 0; a < n; ++a) {
            const int64_t pos = i_idx[a] * strides[a] - pad_begin[a] + k_idx[a] * dilations[a];
            if (pos < 0 || pos >= output[a]) {
              inside = false;
              break;
            }
            offset += pos * out_strides[a];
          }
          if (!inside) continue;
          for (int64_t m = 0; m < out_per_group; ++m) {
            const int64_t oc = g * out_per_group + m;
            y[static_cast<size_t>((b * out_channels + oc) * out_size + offset)] +=
                value * wv[static_cast<size_t>((c * out_per_group + m) * kernel_size + kk)];
          }
        }
      }
    }
  }
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* bias, ctx.RequireTensor(2));
    if (bias->rank() != 1 || bias->dim(0) != out_channels) {
      return ctx.Error("B has shape ", ShapeToString(bias->shape()), ", expected [", out_channels, "]");
    }
    for (size_t i = 0; i < y.size(); ++i) {
      y[i] += bias->GetDouble((static_cast<int64_t>(i) / std::max<int64_t>(out_size, 1)) % out_channels);
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value v, MakeResult(ctx, x->dtype(), y_shape, y));
  return std::vector<Value>{v};
}

}  // namespace parity::ops::nn
