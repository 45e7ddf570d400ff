// Kernels of the sequence-model family: attention and its helpers
// (Attention, RotaryEmbedding, TensorScatter, SwiGLU, LinearAttention,
// CausalConvWithState, FlexAttention), recurrent networks (RNN, GRU, LSTM), signal
// processing (DFT, STFT, windows, MelWeightMatrix), strings and the
// ai.onnx.ml operators LabelEncoder, Binarizer, ArrayFeatureExtractor and
// TreeEnsemble.
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::sequence {

StatusOr<std::vector<Value>> Attention(const KernelContext& ctx);
StatusOr<std::vector<Value>> RotaryEmbedding(const KernelContext& ctx);
StatusOr<std::vector<Value>> TensorScatter(const KernelContext& ctx);
StatusOr<std::vector<Value>> SwiGLU(const KernelContext& ctx);
StatusOr<std::vector<Value>> LinearAttention(const KernelContext& ctx);
StatusOr<std::vector<Value>> CausalConvWithState(const KernelContext& ctx);
StatusOr<std::vector<Value>> FlexAttention(const KernelContext& ctx);  // ai.onnx.preview

StatusOr<std::vector<Value>> Rnn(const KernelContext& ctx);
StatusOr<std::vector<Value>> Gru(const KernelContext& ctx);
StatusOr<std::vector<Value>> Lstm(const KernelContext& ctx);

StatusOr<std::vector<Value>> Dft(const KernelContext& ctx);
StatusOr<std::vector<Value>> Stft(const KernelContext& ctx);
StatusOr<std::vector<Value>> HannWindow(const KernelContext& ctx);
StatusOr<std::vector<Value>> HammingWindow(const KernelContext& ctx);
StatusOr<std::vector<Value>> BlackmanWindow(const KernelContext& ctx);
StatusOr<std::vector<Value>> MelWeightMatrix(const KernelContext& ctx);

StatusOr<std::vector<Value>> StringConcat(const KernelContext& ctx);
StatusOr<std::vector<Value>> StringSplit(const KernelContext& ctx);
StatusOr<std::vector<Value>> StringNormalizer(const KernelContext& ctx);
StatusOr<std::vector<Value>> RegexFullMatch(const KernelContext& ctx);
StatusOr<std::vector<Value>> TfIdfVectorizer(const KernelContext& ctx);

StatusOr<std::vector<Value>> LabelEncoder(const KernelContext& ctx);  // ai.onnx.ml
StatusOr<std::vector<Value>> Binarizer(const KernelContext& ctx);     // ai.onnx.ml
StatusOr<std::vector<Value>> ArrayFeatureExtractor(const KernelContext& ctx);  // ai.onnx.ml
StatusOr<std::vector<Value>> TreeEnsemble(const KernelContext& ctx);  // ai.onnx.ml

}  // namespace parity::ops::sequence
