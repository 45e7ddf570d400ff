// The oneDNN lowering of Resize on oneDNN's resampling primitive.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddResizeLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
