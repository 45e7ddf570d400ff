// Registration of the contrib family's kernels, in domain
// org.onnxparity.contrib at version 1.
#include "reference/ops/contrib/contrib.h"
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterContribOps(OpRegistry& registry) {
  registry.Register(contrib::kDomain, "SimplifiedLayerNormalization", 1, contrib::SimplifiedLayerNormalization);
  registry.Register(contrib::kDomain, "SkipLayerNormalization", 1, contrib::SkipLayerNormalization);
  registry.Register(contrib::kDomain, "SkipSimplifiedLayerNormalization", 1, contrib::SkipSimplifiedLayerNormalization);
  registry.Register(contrib::kDomain, "MultiHeadAttention", 1, contrib::MultiHeadAttention);
  registry.Register(contrib::kDomain, "GroupQueryAttention", 1, contrib::GroupQueryAttention);
  registry.Register(contrib::kDomain, "PagedAttention", 1, contrib::PagedAttention);
}

}  // namespace parity::ops
