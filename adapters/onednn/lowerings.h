// The oneDNN adapter's lowering table, one Add*Lowerings per operator family
// (each in its own file of adapters/onednn/), and the whole table built once.
#pragma once

#include "adapters/device/lowering.h"

namespace parity::adapters::onednn {

void AddMatMulLowerings(Lowering& lowering);  // matmul.cc: MatMul, Gemm
void AddEltwiseLowerings(Lowering& lowering);  // eltwise.cc: unary element-wise operators on oneDNN's eltwise primitive
void AddBinaryLowerings(Lowering& lowering);  // binary.cc: binary operators with broadcasting and comparisons on oneDNN's binary primitive
void AddSoftmaxLowerings(Lowering& lowering);  // softmax.cc: Softmax and LogSoftmax on oneDNN's softmax primitive
void AddConvLowerings(Lowering& lowering);  // conv.cc: Conv and ConvTranspose on oneDNN's convolution and deconvolution primitives
void AddPoolLowerings(Lowering& lowering);  // pool.cc: MaxPool, AveragePool and the global pools on oneDNN's pooling primitive
void AddResizeLowerings(Lowering& lowering);  // resize.cc: Resize on oneDNN's resampling primitive
void AddQuantizedLowerings(Lowering& lowering);  // quantized.cc: quantized MatMul and Conv: QDQ regions and the integer operators, int8 and uint8
void AddNormLowerings(Lowering& lowering);  // norm.cc: LayerNormalization, BatchNormalization and RMSNormalization
void AddReduceLowerings(Lowering& lowering);  // reduce.cc: the Reduce operators on oneDNN's reduction primitive
void AddLayoutLowerings(Lowering& lowering);  // layout.cc: Concat, Transpose as a reorder, and the shape-only operators as views
void AddAttentionLowerings(Lowering& lowering);  // attention.cc: Attention (opsets 23 to 25), TensorScatter in place and RotaryEmbedding
void AddRotateHalfRegions(Lowering& lowering);  // rotate_half.cc: the rotary embedding exporters write as Mul, Split, Neg, Concat, Mul, Add
void AddProjectionRegions(Lowering& lowering);  // projections.cc: sibling MatMuls of one input with their Reshape and Transpose as one matmul

// Every family's entries; built on first use.
const Lowering& OneDnnLowering();

}  // namespace parity::adapters::onednn
