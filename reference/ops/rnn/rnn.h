// Kernels of the recurrent family: RNN, GRU, LSTM, and CausalConvWithState
// (a convolution that carries its state from call to call).
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::rnn {

StatusOr<std::vector<Value>> CausalConvWithState(const KernelContext& ctx);
StatusOr<std::vector<Value>> Rnn(const KernelContext& ctx);
StatusOr<std::vector<Value>> Gru(const KernelContext& ctx);
StatusOr<std::vector<Value>> Lstm(const KernelContext& ctx);

}  // namespace parity::ops::rnn
