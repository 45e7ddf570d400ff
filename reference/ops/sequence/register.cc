// Registration of the sequence family's kernels.
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterSequenceModelOps(OpRegistry& registry) {}

}  // namespace parity::ops
