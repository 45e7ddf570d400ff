// The reference adapter: the reference evaluator behind the adapter C ABI
// (spec/abi/parity_adapter.h), so the harness can run it like any backend.
// It runs every model functionally: aliasing annotations are ignored, which
// the spec allows (spec/aliasing.md); reference_inplace honours them.
#include "adapters/reference/reference_adapter.h"

namespace {

constexpr parity::adapters::ReferenceFlavour kReference = {
    .name = "reference",
    .description = "the ONNX Parity reference evaluator: double precision, one rounding per operator",
    .in_place = false,
};

}  // namespace

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  return parity::adapters::ReferenceAdapter<kReference>::Query(host_abi_version);
}
