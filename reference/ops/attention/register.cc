// Registration of the attention family's kernels, at each version where an
// operator's signature or semantics changed.
#include "reference/ops/families.h"
#include "reference/ops/attention/attention.h"
#include "reference/ops/attention/tensor_scatter.h"

namespace parity::ops {

void RegisterAttentionOps(OpRegistry& registry) {
  using namespace attention;
  // One kernel reads the version: 24 adds nonpad_kv_seqlen, 25 the window sizes.
  registry.Register("Attention", 23, Attention);
  registry.Register("RotaryEmbedding", 23, RotaryEmbedding);
  registry.Register("TensorScatter", 24, TensorScatter);
  // The key/value cache written in place (spec/aliasing.md, region scatter).
  registry.RegisterInPlace("TensorScatter", 24, TensorScatterInPlace);
  registry.Register("SwiGLU", 28, SwiGLU);
  registry.Register("LinearAttention", 27, LinearAttention);
  registry.Register("ai.onnx.preview", "FlexAttention", 1, FlexAttention);
}

}  // namespace parity::ops
