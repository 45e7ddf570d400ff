// The oneDNN lowering of the Reduce operators on oneDNN's reduction primitive.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddReduceLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
