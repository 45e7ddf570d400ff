// A test-only adapter: the reference evaluator with faults injected into
// chosen cases, so that tests can check that the worker and the harness turn
// each misbehaviour into the right result state.
//
// PARITY_FAULTS=GLOB=FAULT[,GLOB=FAULT...]: GLOB (fnmatch) is matched against
// the session's case_name; the first matching entry applies. FAULT is one of
// the names in kFaultNames below. An entry that does not parse, or names an
// unknown fault, makes every create_session fail with INVALID_ARGUMENT.
//
// PARITY_FAULTS_ABI=1: serve a version-1 table, which ends before bind_state,
// so that tests can check that the worker carries a stateful session's
// values itself for an adapter that cannot. PARITY_FAULTS_ABI=2: a version-2
// table, whose adapter knows no parity_session_options.model_dir.
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>

#include "adapters/reference/reference_session.h"

namespace {

enum class Fault {
  kNone,
  kCrash,        // raise(SIGSEGV) in run
  kAbort,        // std::abort() in create_session
  kExit,         // _exit(7) in run
  kHang,         // sleep forever in run
  kHangCreate,   // sleep forever in create_session
  kLeak,         // 64 MiB allocated and touched per create_session, never freed
  kWrongShape,   // the first tensor output gets one more element in its first dimension
  kGarbage,      // tensor outputs keep their shape, filled with pseudo-random bytes
  kError,        // run fails with INTERNAL
  kUnsupported,  // create_session fails with UNSUPPORTED
  kStdoutNoise,  // junk on stdout in create_session and run, which then work
  kFellBack,     // the report places the first node on "cpu-fallback"
  kWrongVariant, // the report says the first variant entry went the other way than it did
  // Only for a model without variant entries (of a case with entries, its
  // stripped twin, which the harness creates after the outputs are compared):
  kHangStripped,  // sleep forever in create_session
  kFailStripped,  // create_session fails with INTERNAL
  // Stateful sessions: at the start of the third run (after the second run's
  // state was read back), one element of the first kept state changes, so
  // results go wrong from the third step on. Declares honours_aliasing, as
  // an adapter that keeps its caches in place and corrupts one would.
  kCorruptState,
};

struct FaultName {
  const char* name;
  Fault fault;
};

constexpr FaultName kFaultNames[] = {
    {"crash", Fault::kCrash},
    {"abort", Fault::kAbort},
    {"exit", Fault::kExit},
    {"hang", Fault::kHang},
    {"hang_create", Fault::kHangCreate},
    {"leak", Fault::kLeak},
    {"wrong_shape", Fault::kWrongShape},
    {"garbage", Fault::kGarbage},
    {"error", Fault::kError},
    {"unsupported", Fault::kUnsupported},
    {"stdout_noise", Fault::kStdoutNoise},
    {"fell_back", Fault::kFellBack},
    {"wrong_variant", Fault::kWrongVariant},
    {"hang_stripped", Fault::kHangStripped},
    {"fail_stripped", Fault::kFailStripped},
    {"corrupt_state", Fault::kCorruptState},
};

constexpr size_t kLeakBytes = size_t{64} << 20;

// The host's ABI version (parity_adapter_query), and the version of the table
// served: an adapter built against version 2 reads no model_dir, whatever the host.
uint32_t g_host_abi_version = 0;
uint32_t g_served_abi_version = PARITY_ABI_VERSION;

struct FaultRule {
  std::string glob;
  Fault fault;
};

std::string Trim(std::string s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

parity::StatusOr<std::vector<FaultRule>> ParseFaults(const char* spec) {
  std::vector<FaultRule> rules;
  if (!spec) return rules;
  const std::string all(spec);
  size_t start = 0;
  while (start <= all.size()) {
    size_t comma = all.find(',', start);
    if (comma == std::string::npos) comma = all.size();
    const std::string entry = Trim(all.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) continue;
    const size_t equals = entry.rfind('=');
    if (equals == std::string::npos || equals == 0) {
      return parity::InvalidArgument("PARITY_FAULTS entry '", entry, "' is not GLOB=FAULT");
    }
    const std::string name = Trim(entry.substr(equals + 1));
    const FaultName* found = nullptr;
    for (const FaultName& f : kFaultNames) {
      if (name == f.name) found = &f;
    }
    if (!found) {
      std::string known;
      for (const FaultName& f : kFaultNames) known += std::string(known.empty() ? "" : ", ") + f.name;
      return parity::InvalidArgument("PARITY_FAULTS entry '", entry, "' names the unknown fault '", name,
                                     "' (known: ", known, ")");
    }
    rules.push_back({Trim(entry.substr(0, equals)), found->fault});
  }
  return rules;
}

Fault FaultFor(const std::vector<FaultRule>& rules, const char* case_name) {
  for (const FaultRule& rule : rules) {
    if (fnmatch(rule.glob.c_str(), case_name, 0) == 0) return rule.fault;
  }
  return Fault::kNone;
}

[[noreturn]] void SleepForever() {
  for (;;) pause();
}

// Through stdio and straight to fd 1, both of which the worker points at stderr.
void PrintNoise(const char* where) {
  std::printf("fault injection: noise on stdout in %s\n%c%c%c%c", where, 0x10, 0x00, 0x00, 0x00);
  std::fflush(stdout);
  const char junk[] = "\x7f\xff\xff\xff junk that is not a frame\n";
  if (write(1, junk, sizeof junk - 1) < 0) std::perror("fault injection: write to stdout");
}

void Leak() {
  static auto* leaked = new std::vector<void*>();
  void* block = std::malloc(kLeakBytes);
  if (!block) return;
  std::memset(block, 0x5a, kLeakBytes);  // touched, so it counts in the resident size
  leaked->push_back(block);
}

using parity::adapters::ReferenceSession;

parity::Status GrowFirstDimension(ReferenceSession::Output& out) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(out.bytes)) return parity::Internal("output '", out.name, "' does not parse");
  PARITY_ASSIGN_OR_RETURN(parity::Tensor tensor, parity::TensorFromProto(proto));
  parity::Shape shape = tensor.shape();
  if (shape.empty()) {
    shape = {2};  // a scalar becomes two elements
  } else {
    shape[0] += 1;
  }
  PARITY_ASSIGN_OR_RETURN(parity::Tensor grown, parity::Tensor::Create(tensor.dtype(), shape));
  if (tensor.dtype() == parity::DataType::kString) {
    std::copy(tensor.strings().begin(), tensor.strings().end(), grown.mutable_strings().begin());
  } else if (tensor.byte_size() > 0) {
    std::memcpy(grown.mutable_raw_bytes(), tensor.raw_bytes(), tensor.byte_size());
  }
  onnx::TensorProto result;
  parity::TensorToProto(grown, &result);
  result.set_name(out.name);
  out.bytes = result.SerializeAsString();
  return parity::Status::Ok();
}

parity::Status FillWithNoise(ReferenceSession::Output& out, std::mt19937_64& random) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(out.bytes)) return parity::Internal("output '", out.name, "' does not parse");
  for (std::string& s : *proto.mutable_string_data()) {
    for (char& c : s) c = static_cast<char>('a' + random() % 26);
  }
  for (char& c : *proto.mutable_raw_data()) c = static_cast<char>(random());
  out.bytes = proto.SerializeAsString();
  return parity::Status::Ok();
}

// Changes element 0 of the value kept for `input` so that no tolerance
// can hide it: a number becomes v + 1 + 2|v| (never v again, in any
// rounding), a bool flips, a string gains a character.
parity::Status CorruptState(ReferenceSession& reference, const std::string& input) {
  parity::Value* kept = reference.kept_state(input);
  if (!kept || !kept->is_tensor()) return parity::Status::Ok();  // nothing this fault can alter
  parity::Tensor& tensor = kept->mutable_tensor();
  if (tensor.size() == 0) return parity::Status::Ok();
  if (tensor.dtype() == parity::DataType::kString) {
    tensor.mutable_strings()[0] += "!";
  } else if (tensor.dtype() == parity::DataType::kBool) {
    tensor.SetInt64(0, tensor.GetInt64(0) == 0 ? 1 : 0);
  } else {
    const double v = tensor.GetDouble(0);
    tensor.SetDouble(0, std::isfinite(v) ? v + 1 + 2 * std::fabs(v) : 1.0, /*saturate=*/true);
  }
  std::fprintf(stderr, "fault injection: changed element 0 of the state kept for '%s'\n", input.c_str());
  return parity::Status::Ok();
}

}  // namespace

struct parity_session {
  std::unique_ptr<ReferenceSession> reference;
  Fault fault = Fault::kNone;
  std::string first_bound_input;  // the state corrupt_state alters
};

namespace {

using parity::adapters::Guarded;
using parity::adapters::MakeStatus;
using parity::adapters::ToAbiStatus;

const parity_device_info kDevices[] = {{"cpu", "cpu", "the reference evaluator with injected faults (tests only)"}};
const parity_adapter_info kInfo = {"fault_injection", "1", "onnx-parity-reference", 1, kDevices};
const char* const kOperators[] = {"ai.onnx:*", "ai.onnx.ml:*", "com.microsoft:*"};
const parity_capabilities kFunctionalCapabilities = {
    .operator_count = 3,
    .operators = kOperators,
    .data_type_count = 0,  // every data type
    .data_types = nullptr,
    // The reference's own, so a lie about selection (wrong_variant) has a selection to lie about.
    .variant_target_count = std::size(parity::adapters::kReferenceVariantTargets),
    .variant_targets = parity::adapters::kReferenceVariantTargets,
    .honours_aliasing = 0,     // outputs are always fresh buffers
    .can_forbid_fallback = 1,  // it never falls back
};

parity_status* GetInfo(const parity_adapter_info** info) {
  *info = &kInfo;
  return nullptr;
}

// The same, declaring honours_aliasing: for PARITY_FAULTS that name corrupt_state.
parity_capabilities InPlaceCapabilities() {
  parity_capabilities caps = kFunctionalCapabilities;
  caps.honours_aliasing = 1;
  return caps;
}

parity_status* GetCapabilities(const char* device, const parity_capabilities** capabilities) {
  static const parity_capabilities kInPlace = InPlaceCapabilities();
  // Capabilities are per device, not per case: any rule naming the fault declares it.
  const auto rules = ParseFaults(std::getenv("PARITY_FAULTS"));
  const bool corrupts = rules.ok() && std::any_of(rules->begin(), rules->end(), [](const FaultRule& rule) {
    return rule.fault == Fault::kCorruptState;
  });
  *capabilities = corrupts ? &kInPlace : &kFunctionalCapabilities;
  return nullptr;
}

parity_status* CreateSession(const void* model, size_t model_size, const parity_session_options* options,
                             parity_session** session, const parity_session_report** report) {
  return Guarded("create_session", [&]() -> parity_status* {
    const auto rules = ParseFaults(std::getenv("PARITY_FAULTS"));
    if (!rules.ok()) return ToAbiStatus(rules.status());
    const char* case_name = options && options->case_name ? options->case_name : "";
    const Fault fault = FaultFor(*rules, case_name);
    switch (fault) {
      case Fault::kAbort: std::abort();
      case Fault::kHangCreate: SleepForever();
      case Fault::kLeak: Leak(); break;
      case Fault::kStdoutNoise: PrintNoise("create_session"); break;
      case Fault::kUnsupported:
        return MakeStatus(PARITY_STATUS_UNSUPPORTED,
                          std::string("fault injection: case '") + case_name + "' declared unsupported");
      default: break;
    }
    auto created = ReferenceSession::Create(model, model_size, options, /*in_place=*/false,
                                            parity::adapters::ModelDirOf(options, std::min(g_host_abi_version, g_served_abi_version)));
    if (!created.ok()) return ToAbiStatus(created.status());
    if ((fault == Fault::kHangStripped || fault == Fault::kFailStripped) &&
        (*created)->variant_decisions().empty()) {
      if (fault == Fault::kHangStripped) SleepForever();
      return MakeStatus(PARITY_STATUS_INTERNAL, "fault injection: an injected error creating a model without entries");
    }
    auto* s = new parity_session{std::move(created).value(), fault, ""};
    if (fault == Fault::kFellBack) s->reference->PlaceNode(0, "cpu-fallback");
    if (fault == Fault::kWrongVariant && !s->reference->variant_decisions().empty()) {
      const parity::EntryDecision& first = s->reference->variant_decisions().front();
      s->reference->ReportVariant(0, first.selected ? "main" : first.call);
    }
    if (report) *report = s->reference->report();
    *session = s;
    return nullptr;
  });
}

parity_status* Run(parity_session* session, const parity_value* inputs, size_t input_count,
                   const parity_value** outputs, size_t* output_count) {
  return Guarded("run", [&]() -> parity_status* {
    switch (session->fault) {
      case Fault::kCrash: std::raise(SIGSEGV); break;
      case Fault::kExit: _exit(7);
      case Fault::kHang: SleepForever();
      case Fault::kStdoutNoise: PrintNoise("run"); break;
      case Fault::kError: return MakeStatus(PARITY_STATUS_INTERNAL, "fault injection: an injected error in run");
      default: break;
    }
    ReferenceSession& reference = *session->reference;
    if (session->fault == Fault::kCorruptState && reference.stateful() && reference.runs() == 2) {
      if (parity_status* failed = ToAbiStatus(CorruptState(reference, session->first_bound_input))) return failed;
    }
    if (parity_status* failed = ToAbiStatus(reference.Run(inputs, input_count))) return failed;
    if (session->fault == Fault::kWrongShape || session->fault == Fault::kGarbage) {
      std::mt19937_64 random(0x5eed);  // the same garbage on every run
      for (ReferenceSession::Output& out : reference.mutable_outputs()) {
        if (out.kind != PARITY_VALUE_TENSOR) continue;
        if (session->fault == Fault::kWrongShape) {
          if (parity_status* failed = ToAbiStatus(GrowFirstDimension(out))) return failed;
          break;  // the first tensor output only
        }
        if (parity_status* failed = ToAbiStatus(FillWithNoise(out, random))) return failed;
      }
      reference.Publish();
    }
    *outputs = reference.outputs();
    *output_count = reference.output_count();
    return nullptr;
  });
}

void ReleaseSession(parity_session* session) { delete session; }

parity_status* BindState(parity_session* session, const parity_state_binding* bindings, size_t count) {
  return Guarded("bind_state", [&]() -> parity_status* {
    if (parity_status* failed = ToAbiStatus(session->reference->BindState(bindings, count))) return failed;
    if (count > 0 && bindings[0].input) session->first_bound_input = bindings[0].input;
    return nullptr;
  });
}

parity_status* ReadState(parity_session* session, const char* input, parity_value* value) {
  return Guarded("read_state", [&]() { return ToAbiStatus(session->reference->ReadState(input, value)); });
}

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
    .bind_state = BindState,
    .read_state = ReadState,
    .session_cost = nullptr,  // the reference compiles nothing
    .run_cost = nullptr,      // nor keeps values on a device
};

// kApi as an adapter built against ABI version 1 would have it: the table
// ends before bind_state, so a host must not read those slots.
parity_adapter_api VersionOneApi() {
  parity_adapter_api api = kApi;
  api.abi_version = 1;
  api.struct_size = offsetof(parity_adapter_api, bind_state);
  // Poisoned: a host that reads past struct_size calls these and crashes.
  api.bind_state = reinterpret_cast<decltype(api.bind_state)>(uintptr_t{1});
  api.read_state = reinterpret_cast<decltype(api.read_state)>(uintptr_t{1});
  return api;
}

// kApi as an adapter built against ABI version 2 would have it: the same
// slots. Such an adapter never reads parity_session_options.model_dir, so a
// model with external data fails its creation ("not loaded from a folder").
parity_adapter_api VersionTwoApi() {
  parity_adapter_api api = kApi;
  api.abi_version = 2;
  return api;
}

}  // namespace

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  static const parity_adapter_api kVersionOne = VersionOneApi();
  static const parity_adapter_api kVersionTwo = VersionTwoApi();
  if (host_abi_version < 1) return nullptr;
  g_host_abi_version = host_abi_version;
  const char* abi = std::getenv("PARITY_FAULTS_ABI");
  const parity_adapter_api* api = &kApi;
  if (abi && std::strcmp(abi, "1") == 0) api = &kVersionOne;
  if (abi && std::strcmp(abi, "2") == 0) api = &kVersionTwo;
  g_served_abi_version = api->abi_version;
  return api;
}
