// Registration of the tensor family's kernels.
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterTensorOps(OpRegistry& registry) {}

}  // namespace parity::ops
