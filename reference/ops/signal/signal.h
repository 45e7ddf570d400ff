// Kernels of the signal-processing family: DFT, STFT, the Hann, Hamming and
// Blackman windows, MelWeightMatrix.
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::signal {

StatusOr<std::vector<Value>> Dft(const KernelContext& ctx);
StatusOr<std::vector<Value>> Stft(const KernelContext& ctx);
StatusOr<std::vector<Value>> HannWindow(const KernelContext& ctx);
StatusOr<std::vector<Value>> HammingWindow(const KernelContext& ctx);
StatusOr<std::vector<Value>> BlackmanWindow(const KernelContext& ctx);
StatusOr<std::vector<Value>> MelWeightMatrix(const KernelContext& ctx);

}  // namespace parity::ops::signal
