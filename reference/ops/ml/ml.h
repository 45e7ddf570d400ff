// Kernels of the ai.onnx.ml family: LabelEncoder, Binarizer,
// ArrayFeatureExtractor, TreeEnsemble.
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::ml {

StatusOr<std::vector<Value>> LabelEncoder(const KernelContext& ctx);  // ai.onnx.ml
StatusOr<std::vector<Value>> Binarizer(const KernelContext& ctx);     // ai.onnx.ml
StatusOr<std::vector<Value>> ArrayFeatureExtractor(const KernelContext& ctx);  // ai.onnx.ml
StatusOr<std::vector<Value>> TreeEnsemble(const KernelContext& ctx);  // ai.onnx.ml

}  // namespace parity::ops::ml
