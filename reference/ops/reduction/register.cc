// Registration of the reduction family's kernels.
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterReductionOps(OpRegistry& registry) {}

}  // namespace parity::ops
