// Kernels of the attention family: Attention, FlexAttention (ai.onnx.preview),
// LinearAttention, RotaryEmbedding, SwiGLU and TensorScatter (the key/value
// cache write; its in-place form is in tensor_scatter.h).
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::attention {

StatusOr<std::vector<Value>> Attention(const KernelContext& ctx);
StatusOr<std::vector<Value>> RotaryEmbedding(const KernelContext& ctx);
StatusOr<std::vector<Value>> TensorScatter(const KernelContext& ctx);
StatusOr<std::vector<Value>> SwiGLU(const KernelContext& ctx);
StatusOr<std::vector<Value>> LinearAttention(const KernelContext& ctx);
StatusOr<std::vector<Value>> FlexAttention(const KernelContext& ctx);  // ai.onnx.preview

}  // namespace parity::ops::attention
