// The Level Zero NPU adapter: the model's nodes that the NPU driver runs
// (its layer query over the model's OpenVINO IR) are compiled by the
// driver into one graph per region and run in command lists on the NPU;
// a variant entry's Compiled call for this NPU is created from its blob,
// with no compilation; every other node runs on the reference's kernels on
// the host, and the session report says which ran where. With no Level
// Zero NPU driver, every session is DEVICE_UNAVAILABLE (SKIP), saying so.
#include "adapters/level_zero/npu_device.h"
#include "adapters/level_zero/npu_lowering.h"
#include "adapters/reference/reference_adapter.h"

namespace parity::adapters::level_zero {
namespace {

StatusOr<NpuDevice*> Npu() { return NpuDevice::Get(); }

const SessionBackend* Backend() {
  static const SessionBackend backend = [] {
    SessionBackend b;
    b.device = "npu";
    // Found once: the NPU's own target first (its blobs), then portable
    // entries, which run like the rest of the graph.
    static std::string target;
    if (StatusOr<NpuDevice*> npu = Npu(); npu.ok()) target = (*npu)->description().target;
    if (!target.empty()) b.variant_targets.push_back(target.c_str());
    b.variant_targets.push_back(kPortableTarget);
    b.available = [] { return Npu().status(); };
    // Each run's copies into and out of the graphs' argument buffers, and
    // the bytes those hold (parity_run_cost).
    b.device_counters = [] {
      parity_run_cost counters{};
      StatusOr<NpuDevice*> npu = Npu();
      if (!npu.ok()) return counters;
      const NpuDevice::Traffic& t = (*npu)->traffic();
      counters = {t.in_copies, t.in_bytes, t.out_copies, t.out_bytes, t.held_bytes, t.peak_bytes};
      return counters;
    };
    b.reset_device_peak = [] {
      if (StatusOr<NpuDevice*> npu = Npu(); npu.ok()) (*npu)->ResetPeak();
    };
    b.lowering_for = [](const LoadedModel& model) -> StatusOr<SessionBackend::ModelLowering> {
      PARITY_ASSIGN_OR_RETURN(NpuDevice * npu, Npu());
      const auto start = std::chrono::steady_clock::now();
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<const Lowering> lowering, MakeNpuLowering(model, *npu));
      return SessionBackend::ModelLowering{
          std::move(lowering), std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()};
    };
    // A Compiled entry for this NPU whose blob another compiler made is
    // not taken: its region stays in the main graph, compiled from IR.
    b.refuse_entry = [](const VariantEntry& entry) -> std::string {
      if (!entry.compiled) return "";
      StatusOr<NpuDevice*> npu = Npu();
      if (!npu.ok()) return npu.status().message();
      for (const auto& attr : entry.proto->attribute()) {
        if (attr.name() == kIdentifierAttr && attr.s() != (*npu)->description().blob_identifier) {
          return StrCat("blob '", attr.s(), "' is not for this NPU's compiler (",
                        (*npu)->description().blob_identifier, ")");
        }
      }
      return "";
    };
    return b;
  }();
  return &backend;
}

const char* BackendVersion() {
  static const std::string version = [] {
    StatusOr<NpuDevice*> npu = Npu();
    if (!npu.ok()) return StrCat("Level Zero: ", npu.status().message());
    const NpuDescription& d = (*npu)->description();
    return StrCat(d.device_name, "; ", d.driver, "; graph extension ", ZE_MAJOR_VERSION(d.graph_extension), ".",
                  ZE_MINOR_VERSION(d.graph_extension), "; OpenVINO ONNX frontend for the IR");
  }();
  return version.c_str();
}

const char* DeviceDescription() {
  static const std::string description = [] {
    StatusOr<NpuDevice*> npu = Npu();
    return npu.ok() ? (*npu)->description().device : StrCat("absent: ", npu.status().message());
  }();
  return description.c_str();
}

constexpr ReferenceFlavour kLevelZero = {
    .name = "level_zero",
    .description = "a Level Zero NPU",
    // The worker carries a stateful case's kept values: the NPU's graphs
    // take fresh argument buffers each run.
    .in_place = false,
    .backend = Backend,
    .backend_version = BackendVersion,
    .device_kind = "npu",
    .device_description = DeviceDescription,
};

}  // namespace
}  // namespace parity::adapters::level_zero

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  return parity::adapters::ReferenceAdapter<parity::adapters::level_zero::kLevelZero>::Query(host_abi_version);
}
