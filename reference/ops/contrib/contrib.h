// Kernels of the contrib family: ONNX Runtime contrib operators proposed for
// standardisation, defined in our own domain org.onnxparity.contrib
// (version 1) by the function bodies in spec/functions/.
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::contrib {

// The domain of this family's operators.
inline constexpr const char* kDomain = "org.onnxparity.contrib";

// skip_norm.cc
StatusOr<std::vector<Value>> SimplifiedLayerNormalization(const KernelContext& ctx);
StatusOr<std::vector<Value>> SkipLayerNormalization(const KernelContext& ctx);
StatusOr<std::vector<Value>> SkipSimplifiedLayerNormalization(const KernelContext& ctx);

// multi_head_attention.cc
StatusOr<std::vector<Value>> MultiHeadAttention(const KernelContext& ctx);

// group_query_attention.cc
StatusOr<std::vector<Value>> GroupQueryAttention(const KernelContext& ctx);

// paged_attention.cc
StatusOr<std::vector<Value>> PagedAttention(const KernelContext& ctx);

}  // namespace parity::ops::contrib
