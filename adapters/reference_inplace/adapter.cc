// The reference evaluator in in-place mode: a stateful session's kept
// tensors are written where they lie when the model's aliasing annotations
// say an output shares its input's buffer (spec/aliasing.md). Results are
// the functional ones; a case that differs from "reference" shows a bug in
// the annotations' rules or in the evaluator's in-place mode.
#include "adapters/reference/reference_adapter.h"

namespace {

constexpr parity::adapters::ReferenceFlavour kReferenceInPlace = {
    .name = "reference_inplace",
    .description = "the ONNX Parity reference evaluator, updating aliased state in place",
    .in_place = true,
};

}  // namespace

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  return parity::adapters::ReferenceAdapter<kReferenceInPlace>::Query(host_abi_version);
}
