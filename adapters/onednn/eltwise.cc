// The oneDNN lowering of unary element-wise operators on oneDNN's eltwise primitive.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddEltwiseLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
