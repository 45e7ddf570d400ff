// Registration of the controlflow family's kernels, at each version where an
// operator's signature or semantics changed (type-list-only revisions share
// a kernel and need no entry of their own).
#include "reference/ops/controlflow/controlflow.h"
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterControlFlowOps(OpRegistry& registry) {
  using namespace controlflow;
  registry.Register("If", 1, If);
  registry.Register("Loop", 1, Loop);
  registry.Register("Scan", 8, Scan8);
  registry.Register("Scan", 9, Scan);

  registry.Register("SequenceConstruct", 11, SequenceConstruct);
  registry.Register("SequenceEmpty", 11, SequenceEmpty);
  registry.Register("SequenceInsert", 11, SequenceInsert);
  registry.Register("SequenceErase", 11, SequenceErase);
  registry.Register("SequenceAt", 11, SequenceAt);
  registry.Register("SequenceLength", 11, SequenceLength);
  registry.Register("SplitToSequence", 11, SplitToSequence);
  registry.Register("ConcatFromSequence", 11, ConcatFromSequence);
  registry.Register("SequenceMap", 17, SequenceMap);

  registry.Register("Optional", 15, Optional);
  registry.Register("OptionalHasElement", 15, OptionalHasElement);
  registry.Register("OptionalGetElement", 15, OptionalGetElement);
}

}  // namespace parity::ops
