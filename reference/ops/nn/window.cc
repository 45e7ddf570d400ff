// Window geometry for convolution and pooling (ONNX Conv and AveragePool
// specs, "auto_pad" and the output shape formulas).
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

namespace {

// An attribute of n positive values, or n copies of 1 when absent.
StatusOr<std::vector<int64_t>> PositiveInts(const KernelContext& ctx, const char* name, size_t n) {
  if (!ctx.has_attribute(name)) return std::vector<int64_t>(n, 1);
  std::vector<int64_t> values = ctx.GetInts(name);
  if (values.size() != n) {
    return ctx.Error("attribute ", name, " has ", values.size(), " values, expected ", n);
  }
  for (int64_t v : values) {
    if (v <= 0) return ctx.Error("attribute ", name, " must be positive, got ", v);
  }
  return values;
}

}  // namespace

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (size_t i = index.size(); i-- > 0;) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

Status RequireImage(const KernelContext& ctx, const Tensor& x, const char* name) {
  if (x.rank() < 3) {
    return ctx.Error("input ", name, " must have rank >= 3 (N, C, spatial...), got shape ",
                     ShapeToString(x.shape()));
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> KernelShape(const KernelContext& ctx, const std::vector<int64_t>& weight_spatial) {
  if (!ctx.has_attribute("kernel_shape")) {
    if (weight_spatial.empty()) return ctx.Error("attribute kernel_shape is required");
    return weight_spatial;
  }
  std::vector<int64_t> kernel = ctx.GetInts("kernel_shape");
  for (int64_t k : kernel) {
    if (k <= 0) return ctx.Error("kernel_shape values must be positive, got ", k);
  }
  if (!weight_spatial.empty() && kernel != weight_spatial) {
    return ctx.Error("kernel_shape ", ShapeToString(kernel), " does not match the weight's spatial shape ",
                     ShapeToString(weight_spatial));
  }
  return kernel;
}

StatusOr<Window> ResolveWindow(const KernelContext& ctx, const std::vector<int64_t>& input,
                               const std::vector<int64_t>& kernel, bool ceil_mode) {
  const size_t n = input.size();
  if (kernel.size() != n) {
    return ctx.Error("kernel_shape has ", kernel.size(), " values for ", n, " spatial dimensions");
  }
  Window w;
  w.input = input;
  w.kernel = kernel;
  PARITY_ASSIGN_OR_RETURN(w.strides, PositiveInts(ctx, "strides", n));
  PARITY_ASSIGN_OR_RETURN(w.dilations, PositiveInts(ctx, "dilations", n));
  w.pad_begin.assign(n, 0);
  w.pad_end.assign(n, 0);
  w.output.assign(n, 0);
  const std::string auto_pad = ctx.GetString("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      w.output[i] = (input[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (w.output[i] - 1) * w.strides[i] + w.Extent(i) - input[i]);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    }
    return w;
  }
  if (auto_pad == "NOTSET") {
    if (ctx.has_attribute("pads")) {
      std::vector<int64_t> pads = ctx.GetInts("pads");
      if (pads.size() != 2 * n) {
        return ctx.Error("attribute pads has ", pads.size(), " values, expected ", 2 * n);
      }
      for (size_t i = 0; i < n; ++i) {
        if (pads[i] < 0 || pads[n + i] < 0) return ctx.Error("pads must be non-negative, got ", ShapeToString(pads));
        w.pad_begin[i] = pads[i];
        w.pad_end[i] = pads[n + i];
      }
    }
  } else if (auto_pad != "VALID") {
    return ctx.Error("unknown auto_pad '", auto_pad, "'");
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t span = input[i] + w.pad_begin[i] + w.pad_end[i] - w.Extent(i);
    if (span < 0) {
      return ctx.Error("window of extent ", w.Extent(i), " does not fit spatial axis ", i, " of size ", input[i],
                       " with pads ", w.pad_begin[i], "+", w.pad_end[i]);
    }
    int64_t out = span / w.strides[i] + 1;
    if (ceil_mode && span % w.strides[i] != 0) {
      ++out;
      // The last window must start inside the input or its begin padding.
      if ((out - 1) * w.strides[i] >= input[i] + w.pad_begin[i]) --out;
    }
    w.output[i] = out;
  }
  return w;
}

}  // namespace parity::ops::nn
