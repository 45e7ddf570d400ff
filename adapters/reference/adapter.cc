// The reference adapter: the reference evaluator behind the adapter C ABI
// (spec/abi/parity_adapter.h), so the harness can run it like any backend.
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "reference/eval/registry.h"

#include "adapters/reference/reference_session.h"

struct parity_session {
  std::unique_ptr<parity::adapters::ReferenceSession> reference;
};

namespace {

using parity::adapters::Guarded;
using parity::adapters::MakeStatus;
using parity::adapters::ToAbiStatus;

const parity_device_info kDevices[] = {
    {"cpu", "cpu", "the ONNX Parity reference evaluator: double precision, one rounding per operator"},
};

const parity_adapter_info kInfo = {"reference", "1", "onnx-parity-reference", 1, kDevices};

// Every domain the registry has a kernel in, as "domain:*": it tries every
// operator of them and answers UNSUPPORTED, at run, for the few it has no
// kernel or function body for. Built once, on first use.
struct Capabilities {
  std::vector<std::string> domains;
  std::vector<const char*> operators;
  parity_capabilities table{};

  Capabilities() {
    std::set<std::string> names;
    for (const auto& [domain, op] : parity::ReferenceRegistry().Operators()) {
      names.insert((domain.empty() ? std::string("ai.onnx") : domain) + ":*");
    }
    domains.assign(names.begin(), names.end());
    for (const auto& d : domains) operators.push_back(d.c_str());
    table.operator_count = operators.size();
    table.operators = operators.data();
    table.data_type_count = 0;  // every data type
    table.data_types = nullptr;
    // It resolves entries for these targets and runs the result (reference_session.h).
    table.variant_target_count = std::size(parity::adapters::kReferenceVariantTargets);
    table.variant_targets = parity::adapters::kReferenceVariantTargets;
    table.honours_aliasing = 0;     // outputs are always fresh buffers
    table.can_forbid_fallback = 1;  // it never falls back
  }
};

bool IsOurDevice(const char* device) { return !device || !*device || std::strcmp(device, "cpu") == 0; }

parity_status* GetInfo(const parity_adapter_info** info) {
  *info = &kInfo;
  return nullptr;
}

parity_status* GetCapabilities(const char* device, const parity_capabilities** capabilities) {
  if (!IsOurDevice(device)) {
    return MakeStatus(PARITY_STATUS_DEVICE_UNAVAILABLE,
                      std::string("device '") + device + "' is absent: the reference runs on 'cpu'");
  }
  static const Capabilities kCapabilities;
  *capabilities = &kCapabilities.table;
  return nullptr;
}

parity_status* CreateSession(const void* model, size_t model_size, const parity_session_options* options,
                             parity_session** session, const parity_session_report** report) {
  return Guarded("create_session", [&]() -> parity_status* {
    auto created = parity::adapters::ReferenceSession::Create(model, model_size, options);
    if (!created.ok()) return ToAbiStatus(created.status());
    auto* s = new parity_session{std::move(created).value()};
    if (report) *report = s->reference->report();
    *session = s;
    return nullptr;
  });
}

parity_status* Run(parity_session* session, const parity_value* inputs, size_t input_count,
                   const parity_value** outputs, size_t* output_count) {
  return Guarded("run", [&]() -> parity_status* {
    if (parity_status* failed = ToAbiStatus(session->reference->Run(inputs, input_count))) return failed;
    *outputs = session->reference->outputs();
    *output_count = session->reference->output_count();
    return nullptr;
  });
}

void ReleaseSession(parity_session* session) { delete session; }

const parity_adapter_api kApi = {
    .abi_version = PARITY_ABI_VERSION,
    .struct_size = sizeof(parity_adapter_api),
    .status_code = parity::adapters::StatusCodeOf,
    .status_message = parity::adapters::StatusMessageOf,
    .release_status = parity::adapters::ReleaseStatus,
    .get_info = GetInfo,
    .get_capabilities = GetCapabilities,
    .create_session = CreateSession,
    .run = Run,
    .release_session = ReleaseSession,
};

}  // namespace

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  // Every host from version 1 on can use this table: a newer host reads only
  // the slots that struct_size covers.
  return host_abi_version >= 1 ? &kApi : nullptr;
}
