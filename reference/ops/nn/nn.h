// Kernels of the nn family: convolution, pooling, quantisation and image
// operators. Each is registered in register.cc at every since_version whose
// semantics it covers; a kernel that differs by version reads ctx.opset().
#pragma once

#include <vector>

#include "reference/eval/kernel.h"

namespace parity::ops::nn {

using KernelResult = StatusOr<std::vector<Value>>;

// conv.cc
KernelResult Conv(const KernelContext& ctx);
KernelResult ConvInteger(const KernelContext& ctx);
KernelResult QLinearConv(const KernelContext& ctx);
// conv_transpose.cc
KernelResult ConvTranspose(const KernelContext& ctx);
// deform_conv.cc
KernelResult DeformConv(const KernelContext& ctx);
// col2im.cc
KernelResult Col2Im(const KernelContext& ctx);
// pool.cc
KernelResult AveragePool(const KernelContext& ctx);
KernelResult MaxPool(const KernelContext& ctx);
KernelResult LpPool(const KernelContext& ctx);
// global_pool.cc
KernelResult GlobalAveragePool(const KernelContext& ctx);
KernelResult GlobalMaxPool(const KernelContext& ctx);
KernelResult GlobalLpPool(const KernelContext& ctx);
KernelResult MaxUnpool(const KernelContext& ctx);
// quantize.cc
KernelResult QuantizeLinear(const KernelContext& ctx);
KernelResult DequantizeLinear(const KernelContext& ctx);
KernelResult DynamicQuantizeLinear(const KernelContext& ctx);
// matmul_integer.cc
KernelResult MatMulInteger(const KernelContext& ctx);
KernelResult QLinearMatMul(const KernelContext& ctx);
// grid_sample.cc
KernelResult GridSample(const KernelContext& ctx);
KernelResult AffineGrid(const KernelContext& ctx);
// roi.cc
KernelResult RoiAlign(const KernelContext& ctx);
KernelResult MaxRoiPool(const KernelContext& ctx);
// non_max_suppression.cc
KernelResult NonMaxSuppression(const KernelContext& ctx);

}  // namespace parity::ops::nn
