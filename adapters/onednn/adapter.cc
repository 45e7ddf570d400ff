// The oneDNN CPU adapter: the nodes its lowering claims run as oneDNN
// primitives on the CPU, every other node on the reference's kernels
// (adapters/device/), and the session report says which ran where. The
// table itself is the reference adapter's (reference_adapter.h) with this
// backend plugged in.
#include <omp.h>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/onednn_context.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/reference/reference_adapter.h"

namespace parity::adapters::onednn {

PlanCounts& Counts() {
  static PlanCounts counts;
  return counts;
}

const Lowering& OneDnnLowering() {
  static const Lowering* lowering = [] {
    auto* table = new Lowering;
    AddMatMulLowerings(*table);
    AddEltwiseLowerings(*table);
    AddBinaryLowerings(*table);
    AddSoftmaxLowerings(*table);
    AddConvLowerings(*table);
    AddPoolLowerings(*table);
    AddResizeLowerings(*table);
    AddQuantizedLowerings(*table);
    AddNormLowerings(*table);
    AddReduceLowerings(*table);
    AddLayoutLowerings(*table);
    AddAttentionLowerings(*table);
    AddRotateHalfRegions(*table);
    AddProjectionRegions(*table);
    return table;
  }();
  return *lowering;
}

namespace {

const SessionBackend* Backend() {
  static const SessionBackend backend = [] {
    // PARITY_THREADS (parity run --threads) sizes oneDNN's OpenMP team too.
    if (const std::optional<int64_t> threads = HostNumber("PARITY_THREADS", 1024)) {
      omp_set_num_threads(static_cast<int>(*threads));
    }
    SessionBackend b;
    b.device = "cpu";
    b.lowering = &OneDnnLowering();
    // Entries with no target run here: the lowering takes what it can of
    // the call, and the reference the rest. No Compiled blob is for oneDNN.
    b.variant_targets = {kPortableTarget};
    return b;
  }();
  return &backend;
}

const char* BackendVersion() {
  static const std::string version = [] {
    const dnnl_version_t* v = dnnl_version();
    // The 16-bit floats this CPU computes, read from the ISA now, not assumed.
    return StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " (", v->hash, "); ISA ", IsaName(),
                  ": float32", HasBfloat16() ? ", bfloat16" : "", HasFloat16() ? ", float16" : "");
  }();
  return version.c_str();
}

constexpr ReferenceFlavour kOneDnn = {
    .name = "onednn",
    .description = "the host CPU through oneDNN; nodes it does not lower run on the ONNX Parity reference",
    // The stateful cases' TensorScatter writers run their in-place form
    // (tensor_scatter.cc): the kept cache is written where it lies.
    .in_place = true,
    .backend = Backend,
    .backend_version = BackendVersion,
};

}  // namespace
}  // namespace parity::adapters::onednn

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  return parity::adapters::ReferenceAdapter<parity::adapters::onednn::kOneDnn>::Query(host_abi_version);
}
