// ReferenceRegistry: every kernel of the reference evaluator, built once.
#include "reference/ops/reference_registry.h"

#include "reference/ops/families.h"

namespace parity {

const OpRegistry& ReferenceRegistry() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    ops::RegisterElementwiseOps(*r);
    ops::RegisterTensorOps(*r);
    ops::RegisterReductionOps(*r);
    ops::RegisterNnOps(*r);
    ops::RegisterControlFlowOps(*r);
    ops::RegisterAttentionOps(*r);
    ops::RegisterRnnOps(*r);
    ops::RegisterSignalOps(*r);
    ops::RegisterTextOps(*r);
    ops::RegisterMlOps(*r);
    ops::RegisterContribOps(*r);
    return r;
  }();
  return *registry;
}

}  // namespace parity
