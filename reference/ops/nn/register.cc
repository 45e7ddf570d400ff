// Registration of the nn family's kernels.
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterNnOps(OpRegistry& registry) {}

}  // namespace parity::ops
