// The oneDNN lowering of LayerNormalization, BatchNormalization and RMSNormalization.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddNormLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
