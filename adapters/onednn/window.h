// The sliding-window geometry that Conv, ConvInteger, QLinearConv and the
// pools share: their attributes read once at the claim (checked there, so
// that a claimed node meets no attribute error at run), and the pads and
// output extents of one input shape, by ONNX's formulas (the Conv and
// AveragePool specs, "auto_pad"), as the reference's window.cc computes them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/device/lowering.h"
#include "adapters/onednn/onednn_context.h"

namespace parity::adapters::onednn {

struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel;  // kernel_shape; empty: from the weight
  std::vector<int64_t> strides, dilations, pads;
  bool ceil_mode = false;
};

// One input shape's geometry; output position o along axis i reads input
// positions o * strides[i] - pad_begin[i] + j * dilations[i].
struct WindowGeometry {
  std::vector<int64_t> kernel, pad_begin, pad_end, output;
};

// Reads the window attributes of a node whose spatial rank is `spatial`;
// NotLowered naming the attribute when one is not of ONNX's form (the node
// then runs on the reference, whose kernel reports it).
inline StatusOr<WindowAttrs> ReadWindowAttrs(const NodeView& view, size_t spatial) {
  WindowAttrs w;
  w.auto_pad = view.GetString("auto_pad", "NOTSET");
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER") {
    return NotLowered("auto_pad '", w.auto_pad, "' is not one of ONNX's");
  }
  auto positive = [&](const char* name, std::vector<int64_t>& out) -> Status {
    out = view.GetInts(name).value_or(std::vector<int64_t>(spatial, 1));
    if (out.size() != spatial) return NotLowered(name, " has ", out.size(), " values for ", spatial, " spatial axes");
    for (int64_t v : out) {
      if (v <= 0) return NotLowered(name, " has a value ", v, " that is not positive");
    }
    return Status::Ok();
  };
  PARITY_RETURN_IF_ERROR(positive("strides", w.strides));
  PARITY_RETURN_IF_ERROR(positive("dilations", w.dilations));
  if (view.attribute("kernel_shape")) PARITY_RETURN_IF_ERROR(positive("kernel_shape", w.kernel));
  w.pads = view.GetInts("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if (w.auto_pad != "NOTSET") w.pads.assign(2 * spatial, 0);  // auto_pad decides them
  if (w.pads.size() != 2 * spatial) return NotLowered("pads has ", w.pads.size(), " values for ", spatial, " spatial axes");
  for (int64_t p : w.pads) {
    if (p < 0) return NotLowered("a negative pad (", p, ")");
  }
  w.ceil_mode = view.GetInt("ceil_mode", 0) != 0;
  return w;
}

// The geometry of `input` (spatial dims) under `attrs` with `kernel`; an
// error when the window does not fit. `pool`: ceil_mode applies, with
// ONNX's rule that a last window must start inside the input or its begin
// padding.
inline StatusOr<WindowGeometry> ResolveGeometry(const WindowAttrs& attrs, const std::vector<int64_t>& input,
                                                const std::vector<int64_t>& kernel, bool pool) {
  const size_t n = input.size();
  if (kernel.size() != n) return InvalidArgument("a kernel of ", kernel.size(), " dims for ", n, " spatial axes");
  if (!attrs.kernel.empty() && attrs.kernel != kernel) {
    return InvalidArgument("kernel_shape does not match the weight's spatial dims");
  }
  WindowGeometry g{kernel, std::vector<int64_t>(n), std::vector<int64_t>(n), std::vector<int64_t>(n)};
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = attrs.strides[i];
    const int64_t extent = (kernel[i] - 1) * attrs.dilations[i] + 1;
    if (attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER") {
      g.output[i] = (input[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.output[i] - 1) * s + extent - input[i]);
      g.pad_begin[i] = attrs.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    g.pad_begin[i] = attrs.pads[i];
    g.pad_end[i] = attrs.pads[n + i];
    const int64_t span = input[i] + g.pad_begin[i] + g.pad_end[i] - extent;
    if (span < 0) return InvalidArgument("a window of extent ", extent, " does not fit spatial axis ", i);
    g.output[i] = span / s + 1;
    if (pool && attrs.ceil_mode && span % s != 0 && g.output[i] * s < input[i] + g.pad_begin[i]) ++g.output[i];
  }
  return g;
}

// oneDNN's dilation is ONNX's minus one (0: taps next to each other).
inline dnnl_dims OneDnnDilations(const std::vector<int64_t>& dilations) {
  dnnl_dims out;
  for (int64_t d : dilations) out.push_back(d - 1);
  return out;
}

// The end padding oneDNN needs so that its window count, floor((in + pl +
// pr - extent) / s) + 1, is `output`: the pads ONNX gives, or more where
// ceil_mode added a last window.
inline dnnl_dims OneDnnPadEnd(const WindowGeometry& g, const std::vector<int64_t>& input,
                              const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  dnnl_dims out;
  for (size_t i = 0; i < input.size(); ++i) {
    const int64_t extent = (g.kernel[i] - 1) * dilations[i] + 1;
    out.push_back(std::max<int64_t>(0, (g.output[i] - 1) * strides[i] + extent - input[i] - g.pad_begin[i]));
  }
  return out;
}

// The weights of `group` groups as oneDNN's [G, O/G, I/G, k...] over a
// buffer whose dims are [O, I/G, k...] (Conv) or [I, O/G, k...]
// (ConvTranspose, `transposed`).
inline dnnl::memory::desc GroupedWeights(const std::vector<int64_t>& w, int64_t group, bool transposed, dnnl_dt type) {
  const std::vector<int64_t> spatial(w.begin() + 2, w.end());
  int64_t k = 1;
  for (int64_t d : spatial) k *= d;
  const int64_t out_per_group = transposed ? w[1] : w[0] / group;
  const int64_t in_per_group = transposed ? w[0] / group : w[1];
  dnnl_dims dims = {out_per_group, in_per_group}, strides;
  if (transposed) {
    strides = {k, out_per_group * k};
  } else {
    strides = {in_per_group * k, k};
  }
  dnnl_dims spatial_strides(spatial.size());  // row-major
  int64_t stride = 1;
  for (size_t i = spatial.size(); i-- > 0;) {
    spatial_strides[i] = stride;
    stride *= std::max<int64_t>(spatial[i], 1);
  }
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  strides.insert(strides.end(), spatial_strides.begin(), spatial_strides.end());
  if (group > 1) {
    dims.insert(dims.begin(), group);
    strides.insert(strides.begin(), out_per_group * in_per_group * k);
  }
  return dnnl::memory::desc(dims, type, strides);
}

}  // namespace parity::adapters::onednn
