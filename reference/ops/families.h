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
void RegisterAttentionOps(OpRegistry& registry);      // attention/: Attention, FlexAttention, rotary, KV cache writes
void RegisterRnnOps(OpRegistry& registry);            // rnn/: RNN, GRU, LSTM, stateful convolution
void RegisterSignalOps(OpRegistry& registry);         // signal/: DFT, STFT, windows, mel filters
void RegisterTextOps(OpRegistry& registry);           // text/: string operators
void RegisterMlOps(OpRegistry& registry);             // ml/: ai.onnx.ml operators
void RegisterContribOps(OpRegistry& registry);        // contrib/: org.onnxparity.contrib (ONNX Runtime contrib ops)

}  // namespace parity::ops
