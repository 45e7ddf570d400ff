// The geometry of an ONNX convolution in oneDNN's terms, shared by the float
// lowerings (conv.cc: Conv, ConvTranspose) and the integer ones
// (quantized.cc: ConvInteger, QLinearConv), which read the same attributes.
#pragma once

#include <string>
#include <vector>

#include "adapters/onednn/onednn_context.h"

namespace parity::adapters::onednn {

// The attributes of one node that fix its geometry, read once at creation.
struct ConvAttrs {
  bool transpose = false;
  int64_t group = 1;
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel;  // kernel_shape, empty: the weights' spatial dims
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;  // empty: not given
};

// The geometry for one input shape.
struct ConvGeometry {
  std::vector<int64_t> out_dims;             // the whole ONNX output
  dnnl_dims strides, dilates, pad_l, pad_r;  // oneDNN's: dilates = ONNX - 1; pad_r < 0 (transpose) trims the end
};

// The attributes of a Conv-like node (X at input 0, of rank 3 to 5), or why
// oneDNN cannot take them (kUnimplemented).
StatusOr<ConvAttrs> ReadConvAttrs(const NodeView& view, bool transpose);

// ONNX's output extents and pads (Conv's auto_pad and ConvTranspose's
// output-shape formulas) for input dims `x` and weight dims `w`.
StatusOr<ConvGeometry> ResolveConvGeometry(const ConvAttrs& a, const std::vector<int64_t>& x,
                                           const std::vector<int64_t>& w);

}  // namespace parity::adapters::onednn
