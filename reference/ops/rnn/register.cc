// Registration of the rnn family's kernels, at each version where an
// operator's signature or semantics changed.
#include "reference/ops/families.h"
#include "reference/ops/rnn/rnn.h"

namespace parity::ops {

void RegisterRnnOps(OpRegistry& registry) {
  using namespace rnn;
  // Versions 7 to 22 differ in types, and 14 adds `layout`, read by the kernel.
  registry.Register("RNN", 7, Rnn);
  registry.Register("GRU", 7, Gru);
  registry.Register("LSTM", 7, Lstm);
  registry.Register("CausalConvWithState", 27, CausalConvWithState);
}

}  // namespace parity::ops
