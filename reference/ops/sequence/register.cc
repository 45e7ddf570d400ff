// Registration of the sequence family's kernels, at each version where an
// operator's signature or semantics changed.
#include "reference/ops/families.h"
#include "reference/ops/sequence/sequence.h"

namespace parity::ops {

void RegisterSequenceModelOps(OpRegistry& registry) {
  using namespace sequence;
  // One kernel reads the version: 24 adds nonpad_kv_seqlen, 25 the window sizes.
  registry.Register("Attention", 23, Attention);
  registry.Register("RotaryEmbedding", 23, RotaryEmbedding);
  registry.Register("TensorScatter", 24, TensorScatter);
  registry.Register("SwiGLU", 28, SwiGLU);
  registry.Register("LinearAttention", 27, LinearAttention);
  registry.Register("CausalConvWithState", 27, CausalConvWithState);
  registry.Register("ai.onnx.preview", "FlexAttention", 1, FlexAttention);

  // Versions 7 to 22 differ in types, and 14 adds `layout`, read by the kernel.
  registry.Register("RNN", 7, Rnn);
  registry.Register("GRU", 7, Gru);
  registry.Register("LSTM", 7, Lstm);

  // DFT-20 turns the axis attribute into an input; the kernel reads the version.
  registry.Register("DFT", 17, Dft);
  registry.Register("STFT", 17, Stft);
  registry.Register("HannWindow", 17, HannWindow);
  registry.Register("HammingWindow", 17, HammingWindow);
  registry.Register("BlackmanWindow", 17, BlackmanWindow);
  registry.Register("MelWeightMatrix", 17, MelWeightMatrix);

  registry.Register("StringConcat", 20, StringConcat);
  registry.Register("StringSplit", 20, StringSplit);
  registry.Register("StringNormalizer", 10, StringNormalizer);
  registry.Register("RegexFullMatch", 20, RegexFullMatch);
  registry.Register("TfIdfVectorizer", 9, TfIdfVectorizer);

  // LabelEncoder-2 adds float keys/values, 4 the tensor attributes; one kernel.
  registry.Register("ai.onnx.ml", "LabelEncoder", 1, LabelEncoder);
  registry.Register("ai.onnx.ml", "Binarizer", 1, Binarizer);
  registry.Register("ai.onnx.ml", "ArrayFeatureExtractor", 1, ArrayFeatureExtractor);
  registry.Register("ai.onnx.ml", "TreeEnsemble", 5, TreeEnsemble);
}

}  // namespace parity::ops
