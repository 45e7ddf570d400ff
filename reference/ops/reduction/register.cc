// Registration of the reduction family's kernels. A kernel is registered at
// each since_version where the operator's signature or semantics changed;
// versions that only widened the type constraints share the earlier kernel.
#include "reference/ops/families.h"
#include "reference/ops/reduction/reduction.h"

namespace parity::ops {

void RegisterReductionOps(OpRegistry& registry) {
  // Reductions: axes became an input at ReduceSum-13 and the others' 18;
  // ReduceMax/Min-12 and -20 added types (int8/uint8, bool); 18 fixed the
  // empty-set results. One kernel per operator reads ctx.opset().
  registry.Register("ReduceSum", 1, ReduceSumKernel);
  registry.Register("ReduceSum", 13, ReduceSumKernel);
  const struct {
    const char* name;
    Kernel kernel;
  } reductions[] = {
      {"ReduceMean", ReduceMeanKernel},       {"ReduceMax", ReduceMaxKernel},
      {"ReduceMin", ReduceMinKernel},         {"ReduceProd", ReduceProdKernel},
      {"ReduceL1", ReduceL1Kernel},           {"ReduceL2", ReduceL2Kernel},
      {"ReduceLogSum", ReduceLogSumKernel},   {"ReduceLogSumExp", ReduceLogSumExpKernel},
      {"ReduceSumSquare", ReduceSumSquareKernel},
  };
  for (const auto& r : reductions) {
    registry.Register(r.name, 1, r.kernel);
    registry.Register(r.name, 18, r.kernel);
  }
  // ArgMax/ArgMin: 11 allowed negative axes, 12 added select_last_index.
  for (int v : {1, 11, 12}) {
    registry.Register("ArgMax", v, ArgMaxKernel);
    registry.Register("ArgMin", v, ArgMinKernel);
  }
  registry.Register("CumSum", 11, CumSumKernel);
  registry.Register("CumProd", 26, CumProdKernel);

  registry.Register("MatMul", 1, MatMulKernel);
  // Gemm: 7 dropped `broadcast`, 11 made C optional.
  for (int v : {1, 7, 11}) registry.Register("Gemm", v, GemmKernel);
  registry.Register("Einsum", 12, EinsumKernel);

  // Softmax family: 13 replaced the 2-D coercion by a single axis.
  for (int v : {1, 13}) {
    registry.Register("Softmax", v, SoftmaxKernel);
    registry.Register("LogSoftmax", v, LogSoftmaxKernel);
    registry.Register("Hardmax", v, HardmaxKernel);
  }

  registry.Register("LayerNormalization", 17, LayerNormalizationKernel);
  registry.Register("RMSNormalization", 23, RMSNormalizationKernel);
  // GroupNormalization: 21 changed scale and bias from per group to per channel.
  registry.Register("GroupNormalization", 18, GroupNormalizationKernel);
  registry.Register("GroupNormalization", 21, GroupNormalizationKernel);
  registry.Register("InstanceNormalization", 1, InstanceNormalizationKernel);
  registry.Register("MeanVarianceNormalization", 9, MeanVarianceNormalizationKernel);
  registry.Register("LpNormalization", 1, LpNormalizationKernel);
  // BatchNormalization: 7 dropped is_test, 9 dropped spatial, 14 added training_mode.
  for (int v : {1, 7, 9, 14}) registry.Register("BatchNormalization", v, BatchNormalizationKernel);
  registry.Register("LRN", 1, LRNKernel);
  registry.Register("Det", 11, DetKernel);

  registry.Register("NegativeLogLikelihoodLoss", 12, NegativeLogLikelihoodLossKernel);
  registry.Register("SoftmaxCrossEntropyLoss", 12, SoftmaxCrossEntropyLossKernel);
  // Dropout: 7 dropped is_test, 10 made the mask bool, 12 moved ratio to an input.
  for (int v : {1, 7, 10, 12}) registry.Register("Dropout", v, DropoutKernel);

  constexpr const char* kTraining = "ai.onnx.preview.training";
  registry.Register(kTraining, "Momentum", 1, MomentumKernel);
  registry.Register(kTraining, "Adagrad", 1, AdagradKernel);
  registry.Register(kTraining, "Adam", 1, AdamKernel);
}

}  // namespace parity::ops
