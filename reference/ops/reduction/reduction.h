// Kernels of the reduction family: reductions, arg-extremes, cumulative
// sums and products, matrix products, softmax-like and normalisation
// operators, losses, Dropout and the preview-training optimisers.
// Each is registered in register.cc at the versions where its signature or
// semantics changed; one kernel reads ctx.opset() where it serves several.
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops {

// reduce.cc — ReduceSum, ReduceMean, ... (axes attribute or input).
StatusOr<std::vector<Value>> ReduceSumKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceMeanKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceMaxKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceMinKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceProdKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceL1Kernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceL2Kernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceLogSumKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceLogSumExpKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ReduceSumSquareKernel(const KernelContext& ctx);

// arg_extreme.cc
StatusOr<std::vector<Value>> ArgMaxKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> ArgMinKernel(const KernelContext& ctx);

// cumulative.cc
StatusOr<std::vector<Value>> CumSumKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> CumProdKernel(const KernelContext& ctx);

// matmul.cc
StatusOr<std::vector<Value>> MatMulKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> GemmKernel(const KernelContext& ctx);

// einsum.cc
StatusOr<std::vector<Value>> EinsumKernel(const KernelContext& ctx);

// softmax.cc — Softmax, LogSoftmax, Hardmax (2-D coercion before opset 13).
StatusOr<std::vector<Value>> SoftmaxKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> LogSoftmaxKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> HardmaxKernel(const KernelContext& ctx);

// layer_norm.cc — normalisation over trailing axes or groups.
StatusOr<std::vector<Value>> LayerNormalizationKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> RMSNormalizationKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> GroupNormalizationKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> InstanceNormalizationKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> MeanVarianceNormalizationKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> LpNormalizationKernel(const KernelContext& ctx);

// batch_norm.cc — BatchNormalization and LRN (per-channel operators).
StatusOr<std::vector<Value>> BatchNormalizationKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> LRNKernel(const KernelContext& ctx);

// det.cc
StatusOr<std::vector<Value>> DetKernel(const KernelContext& ctx);

// loss.cc
StatusOr<std::vector<Value>> NegativeLogLikelihoodLossKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> SoftmaxCrossEntropyLossKernel(const KernelContext& ctx);

// dropout.cc
StatusOr<std::vector<Value>> DropoutKernel(const KernelContext& ctx);

// optimizers.cc — domain ai.onnx.preview.training, version 1.
StatusOr<std::vector<Value>> MomentumKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> AdagradKernel(const KernelContext& ctx);
StatusOr<std::vector<Value>> AdamKernel(const KernelContext& ctx);

}  // namespace parity::ops
