// Registration of the signal family's kernels, at each version where an
// operator's signature or semantics changed.
#include "reference/ops/families.h"
#include "reference/ops/signal/signal.h"

namespace parity::ops {

void RegisterSignalOps(OpRegistry& registry) {
  using namespace signal;
  // DFT-20 turns the axis attribute into an input; the kernel reads the version.
  registry.Register("DFT", 17, Dft);
  registry.Register("STFT", 17, Stft);
  registry.Register("HannWindow", 17, HannWindow);
  registry.Register("HammingWindow", 17, HammingWindow);
  registry.Register("BlackmanWindow", 17, BlackmanWindow);
  registry.Register("MelWeightMatrix", 17, MelWeightMatrix);
}

}  // namespace parity::ops
