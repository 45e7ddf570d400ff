// One registration function per operator family; each lives in
// reference/ops/<family>/register.cc and adds that family's kernels.
#pragma once

#include "reference/eval/registry.h"

namespace parity::ops {

void RegisterElementwiseOps(OpRegistry& registry);    // elementwise/: math, logic, activations
void RegisterTensorOps(OpRegistry& registry);         // tensor/: shape, data movement, casts
void RegisterReductionOps(OpRegistry& registry);      // reduction/: reductions, products, normalisation
void RegisterNnOps(OpRegistry& registry);             // nn/: convolution, pooling, quantisation, image ops
void RegisterControlFlowOps(OpRegistry& registry);    // controlflow/: If, Loop, Scan, sequences, optionals
void RegisterSequenceModelOps(OpRegistry& registry);  // sequence/: attention, RNNs, signal, strings
void RegisterContribOps(OpRegistry& registry);        // contrib/: org.onnxparity.contrib (ONNX Runtime contrib ops)

}  // namespace parity::ops
