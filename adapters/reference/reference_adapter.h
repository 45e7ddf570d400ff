// The reference evaluator's adapter table (spec/abi/parity_adapter.h),
// shared by the two libraries that serve it: "reference", which runs every
// model functionally, and "reference_inplace", which honours the model's
// aliasing annotations for the state bindings (spec/aliasing.md).
//
// Header-only because each adapters/<name>/ folder builds its own library
// from its own sources; each library instantiates the table once.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/reference/host_settings.h"
#include "adapters/reference/reference_session.h"
#include "reference/ops/gemm.h"
#include "reference/core/parallel.h"
#include "reference/core/tensor.h"
#include "reference/eval/registry.h"
#include "reference/ops/reference_registry.h"

struct parity_session {
  std::unique_ptr<parity::adapters::ReferenceSession> reference;
  // The last run's copies and device memory, for a backend that counts them.
  std::optional<parity_run_cost> run_cost;
};

namespace parity::adapters {

inline const SessionBackend* NoBackend() { return nullptr; }
inline const char* ReferenceVersion() { return "onnx-parity-reference"; }

// What tells the libraries apart: the reference's two, and each device
// adapter whose backend runs the nodes it lowers on the host's memory
// (adapters/device/), with the reference's kernels for the rest.
struct ReferenceFlavour {
  const char* name;         // parity_adapter_info.name
  const char* description;  // of its one device
  bool in_place;            // ReferenceSession's in-place mode; declared as honours_aliasing
  // The device backend, made on first use; null for the reference itself.
  const SessionBackend* (*backend)() = NoBackend;
  const char* (*backend_version)() = ReferenceVersion;  // parity_adapter_info.backend_version
  const char* device_kind = "cpu";                         // parity_device_info.kind
  // The device's description when it is found at run time (a driver's
  // device); null: `description`.
  const char* (*device_description)() = nullptr;
};

// The table for `kFlavour` (a constant of static storage in the adapter's
// own adapter.cc). Every host from ABI version 1 on can use it: a host reads
// only the slots that struct_size covers.
template <const ReferenceFlavour& kFlavour>
class ReferenceAdapter {
 public:
  static const parity_adapter_api* Query(uint32_t host_abi_version) {
    static const bool limited = ApplyHostMemoryLimit();
    static const bool threaded = ApplyHostThreads();
    (void)limited;
    (void)threaded;
    static const parity_adapter_api kApi = {
        .abi_version = PARITY_ABI_VERSION,
        .struct_size = sizeof(parity_adapter_api),
        .status_code = StatusCodeOf,
        .status_message = StatusMessageOf,
        .release_status = ReleaseStatus,
        .get_info = GetInfo,
        .get_capabilities = GetCapabilities,
        .create_session = CreateSession,
        .run = Run,
        .release_session = ReleaseSession,
        .bind_state = BindState,
        .read_state = ReadState,
        // The reference compiles nothing; a backend reports its lowering.
        .session_cost = kFlavour.backend() ? SessionCost : nullptr,
        // Only a backend with device memory of its own has copies to report.
        .run_cost = kFlavour.backend() && kFlavour.backend()->device_counters ? RunCost : nullptr,
    };
    if (host_abi_version < 1) return nullptr;
    host_abi_version_ = host_abi_version;
    return &kApi;
  }

 private:
  // The version of the host that queried the table: it says which fields of
  // the options the host fills (model_dir from version 3 on).
  static inline uint32_t host_abi_version_ = 0;

  // Every domain the registry has a kernel in, as "domain:*": it tries every
  // operator of them and answers UNSUPPORTED, at run, for the few it has no
  // kernel or function body for. Built once, on first use.
  struct Capabilities {
    std::vector<std::string> domains;
    std::vector<const char*> operators;
    parity_capabilities table{};

    Capabilities() {
      std::set<std::string> names;
      for (const auto& [domain, op] : ReferenceRegistry().Operators()) {
        names.insert((domain.empty() ? std::string("ai.onnx") : domain) + ":*");
      }
      domains.assign(names.begin(), names.end());
      for (const auto& d : domains) operators.push_back(d.c_str());
      table.operator_count = operators.size();
      table.operators = operators.data();
      table.data_type_count = 0;  // every data type
      table.data_types = nullptr;
      // It resolves entries for these targets and runs the result (reference_session.h).
      if (const SessionBackend* backend = kFlavour.backend()) {
        table.variant_target_count = backend->variant_targets.size();
        table.variant_targets = backend->variant_targets.data();
      } else {
        table.variant_target_count = std::size(kReferenceVariantTargets);
        table.variant_targets = kReferenceVariantTargets;
      }
      // Functional: outputs are always fresh buffers. In place: a kept state
      // the annotations alias is written where it lies.
      table.honours_aliasing = kFlavour.in_place ? 1 : 0;
      // The reference never falls back; a backend refuses, with
      // FALLBACK_REQUIRED, a model with a node it does not lower.
      table.can_forbid_fallback = 1;
    }
  };

  static const char* OwnDevice() { return kFlavour.backend() ? kFlavour.backend()->device : "cpu"; }
  static bool IsOurDevice(const char* device) { return !device || !*device || std::strcmp(device, OwnDevice()) == 0; }

  static const char* DeviceDescription() {
    if constexpr (kFlavour.device_description == nullptr) {
      return kFlavour.description;
    } else {
      return kFlavour.device_description();
    }
  }

  static parity_status* GetInfo(const parity_adapter_info** info) {
    static const parity_device_info kDevices[] = {{OwnDevice(), kFlavour.device_kind, DeviceDescription()}};
    static const parity_adapter_info kInfo = {
        kFlavour.name, "1", kFlavour.backend_version(), 1, kDevices};
    *info = &kInfo;
    return nullptr;
  }

  static parity_status* GetCapabilities(const char* device, const parity_capabilities** capabilities) {
    if (!IsOurDevice(device)) {
      return MakeStatus(PARITY_STATUS_DEVICE_UNAVAILABLE,
                        std::string("device '") + device + "' is absent: " + kFlavour.name + " runs on '" +
                            OwnDevice() + "'");
    }
    if (const SessionBackend* backend = kFlavour.backend(); backend && backend->available) {
      if (parity_status* absent = ToAbiStatus(backend->available())) return absent;
    }
    static const Capabilities kCapabilities;
    *capabilities = &kCapabilities.table;
    return nullptr;
  }

  static parity_status* CreateSession(const void* model, size_t model_size, const parity_session_options* options,
                                      parity_session** session, const parity_session_report** report) {
    return Guarded("create_session", [&]() -> parity_status* {
      auto created = ReferenceSession::Create(model, model_size, options, kFlavour.in_place,
                                              ModelDirOf(options, host_abi_version_),
                                              kFlavour.backend());
      if (!created.ok()) return ToAbiStatus(created.status());
      const Partition* partition = (*created)->partition();
      const bool fallback_allowed = !options || options->allow_fallback;
      if (partition && !fallback_allowed && partition->fallback_count() > 0) {
        return MakeStatus(PARITY_STATUS_FALLBACK_REQUIRED,
                          StrCat(options->case_name ? options->case_name : "model", ": fallback is forbidden, and ",
                                 partition->fallback_count(), " of ",
                                 partition->nodes.size(), " nodes are not lowered to ", OwnDevice(), ": ",
                                 partition->FallbackList()));
      }
      auto* s = new parity_session{std::move(created).value(), std::nullopt};
      if (report) *report = s->reference->report();
      *session = s;
      return nullptr;
    });
  }

  static parity_status* Run(parity_session* session, const parity_value* inputs, size_t input_count,
                            const parity_value** outputs, size_t* output_count) {
    return Guarded("run", [&]() -> parity_status* {
      const SessionBackend* backend = kFlavour.backend();
      const bool counted = backend && backend->device_counters;
      parity_run_cost before{};
      if (counted) {
        if (backend->reset_device_peak) backend->reset_device_peak();
        before = backend->device_counters();
      }
      session->run_cost.reset();
      if (parity_status* failed = ToAbiStatus(session->reference->Run(inputs, input_count))) return failed;
      if (counted) {
        const parity_run_cost after = backend->device_counters();
        session->run_cost = parity_run_cost{after.to_device_copies - before.to_device_copies,
                                            after.to_device_bytes - before.to_device_bytes,
                                            after.to_host_copies - before.to_host_copies,
                                            after.to_host_bytes - before.to_host_bytes,
                                            after.device_bytes,
                                            after.device_peak_bytes};
      }
      *outputs = session->reference->outputs();
      *output_count = session->reference->output_count();
      return nullptr;
    });
  }

  static void ReleaseSession(parity_session* session) { delete session; }

  static parity_status* BindState(parity_session* session, const parity_state_binding* bindings, size_t count) {
    return Guarded("bind_state", [&]() { return ToAbiStatus(session->reference->BindState(bindings, count)); });
  }

  static parity_status* SessionCost(parity_session* session, parity_session_cost* cost) {
    const Partition* partition = session->reference->partition();
    if (!partition) return MakeStatus(PARITY_STATUS_UNSUPPORTED, "this session has no backend partition");
    *cost = {partition->compile_ms, partition->lowered_count() - partition->deferred_count, partition->deferred_count};
    return nullptr;
  }

  static parity_status* RunCost(parity_session* session, parity_run_cost* cost) {
    if (!session->run_cost) {
      return MakeStatus(PARITY_STATUS_INVALID_ARGUMENT, "run_cost: the session has no finished run");
    }
    *cost = *session->run_cost;
    return nullptr;
  }

  static parity_status* ReadState(parity_session* session, const char* input, parity_value* value) {
    return Guarded("read_state", [&]() { return ToAbiStatus(session->reference->ReadState(input, value)); });
  }
};

}  // namespace parity::adapters
