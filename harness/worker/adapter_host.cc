// Loading a native adapter and answering the worker protocol for it.
#include "harness/worker/adapter_host.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

namespace parity::worker {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string OrEmpty(const char* s) { return s ? std::string(s) : std::string(); }

const char* SlotName(size_t offset) {
  switch (offset) {
    case offsetof(parity_adapter_api, status_code): return "status_code";
    case offsetof(parity_adapter_api, status_message): return "status_message";
    case offsetof(parity_adapter_api, release_status): return "release_status";
    case offsetof(parity_adapter_api, get_info): return "get_info";
    case offsetof(parity_adapter_api, get_capabilities): return "get_capabilities";
    case offsetof(parity_adapter_api, create_session): return "create_session";
    case offsetof(parity_adapter_api, run): return "run";
    case offsetof(parity_adapter_api, release_session): return "release_session";
    case offsetof(parity_adapter_api, bind_state): return "bind_state";
    case offsetof(parity_adapter_api, read_state): return "read_state";
  }
  return "?";
}

// The slots every adapter must fill; get_capabilities is optional.
constexpr size_t kRequiredSlots[] = {
    offsetof(parity_adapter_api, status_code),     offsetof(parity_adapter_api, status_message),
    offsetof(parity_adapter_api, release_status),  offsetof(parity_adapter_api, get_info),
    offsetof(parity_adapter_api, create_session),  offsetof(parity_adapter_api, run),
    offsetof(parity_adapter_api, release_session),
};

// Reads the slot at `offset` only when struct_size covers it: a table from an
// older adapter may end before it, and the bytes after its end are not ours.
const void* SlotAt(const parity_adapter_api* api, size_t offset) {
  if (offset + sizeof(void (*)()) > api->struct_size) return nullptr;
  void (*slot)() = nullptr;
  const auto* bytes = reinterpret_cast<const unsigned char*>(api);
  std::memcpy(&slot, bytes + offset, sizeof slot);
  return reinterpret_cast<const void*>(slot);
}

// A slot as its function pointer type; null when the table lacks it.
template <typename Fn>
Fn SlotFunction(const parity_adapter_api* api, size_t offset) {
  const void* slot = SlotAt(api, offset);
  Fn fn = nullptr;
  static_assert(sizeof fn == sizeof slot);
  std::memcpy(&fn, &slot, sizeof fn);
  return fn;
}

WireResponse InvalidResponse(std::string message) {
  return WireResponse::Error(WireCode::kInvalidArgument, std::move(message));
}
WireResponse InternalResponse(std::string message) {
  return WireResponse::Error(WireCode::kInternal, std::move(message));
}

}  // namespace

AdapterHost::AdapterHost(std::string path, void* library, const parity_adapter_api* api)
    : path_(std::move(path)), library_(library), api_(api) {}

AdapterHost::~AdapterHost() { ReleaseAllSessions(); }

StatusOr<std::unique_ptr<AdapterHost>> AdapterHost::Load(const std::string& path) {
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) return NotFound("cannot load adapter library '", path, "': ", OrEmpty(dlerror()));
  // From here on, an error closes the library again.
  auto fail = [&](Status status) -> StatusOr<std::unique_ptr<AdapterHost>> {
    dlclose(library);
    return status;
  };
  auto query = reinterpret_cast<parity_adapter_query_fn>(dlsym(library, PARITY_ADAPTER_QUERY_SYMBOL));
  if (!query) {
    return fail(InvalidArgument("adapter library '", path, "' does not export ", PARITY_ADAPTER_QUERY_SYMBOL,
                                ": not a parity adapter, or built without spec/abi/parity_adapter.map"));
  }
  const parity_adapter_api* api = nullptr;
  try {
    api = query(PARITY_ABI_VERSION);
  } catch (const std::exception& e) {
    return fail(Internal("adapter library '", path, "': ", PARITY_ADAPTER_QUERY_SYMBOL, " threw: ", e.what()));
  } catch (...) {
    return fail(Internal("adapter library '", path, "': ", PARITY_ADAPTER_QUERY_SYMBOL, " threw"));
  }
  if (!api) {
    return fail(InvalidArgument("adapter library '", path, "' cannot serve ABI version ", PARITY_ABI_VERSION, ": ",
                                PARITY_ADAPTER_QUERY_SYMBOL, " returned no table"));
  }
  if (api->abi_version < 1 || api->abi_version > PARITY_ABI_VERSION) {
    return fail(InvalidArgument("adapter library '", path, "' returned a table of ABI version ", api->abi_version,
                                "; this worker speaks versions 1 to ", PARITY_ABI_VERSION));
  }
  for (size_t offset : kRequiredSlots) {
    if (SlotAt(api, offset) == nullptr) {
      const bool covered = offset + sizeof(void (*)()) <= api->struct_size;
      return fail(InvalidArgument(
          "adapter library '", path, "' lacks the required slot ", SlotName(offset),
          covered ? ": it is null" : StrCat(": the table's struct_size ", api->struct_size, " ends before it")));
    }
  }
  std::unique_ptr<AdapterHost> host(new AdapterHost(path, library, api));
  host->has_capabilities_ = SlotAt(api, offsetof(parity_adapter_api, get_capabilities)) != nullptr;
  // Version 2's state slots; without them the host carries a stateful session's values itself.
  host->bind_state_ =
      SlotFunction<decltype(parity_adapter_api::bind_state)>(api, offsetof(parity_adapter_api, bind_state));
  host->read_state_ =
      SlotFunction<decltype(parity_adapter_api::read_state)>(api, offsetof(parity_adapter_api, read_state));
  if ((host->bind_state_ == nullptr) != (host->read_state_ == nullptr)) {
    // One without the other cannot serve return_kept: the host keeps the state.
    host->bind_state_ = nullptr;
    host->read_state_ = nullptr;
  }

  const parity_adapter_info* info = nullptr;
  WireResponse failed;
  try {
    parity_status* status = api->get_info(&info);
    if (status) failed = host->FromAdapterStatus(status, "get_info");
  } catch (const std::exception& e) {
    failed = InternalResponse(StrCat("get_info threw: ", e.what()));
  } catch (...) {
    failed = InternalResponse("get_info threw");
  }
  if (failed.status) {
    host.reset();
    return fail(InvalidArgument("adapter library '", path, "': get_info failed: ", failed.status->second));
  }
  if (!info || (info->device_count > 0 && !info->devices)) {
    host.reset();
    return fail(InvalidArgument("adapter library '", path, "': get_info returned ",
                                info ? "devices without their array" : "no information"));
  }
  WireAdapterInfo& out = host->info_;
  out.name = OrEmpty(info->name);
  out.version = OrEmpty(info->version);
  out.backend_version = OrEmpty(info->backend_version);
  for (size_t i = 0; i < info->device_count; ++i) {
    const parity_device_info& d = info->devices[i];
    out.devices.push_back({OrEmpty(d.name), OrEmpty(d.kind), OrEmpty(d.description)});
  }
  out.abi_version = api->abi_version;
  out.pid = static_cast<uint64_t>(getpid());
  return host;
}

WireResponse AdapterHost::FromAdapterStatus(parity_status* status, const std::string& context) {
  const parity_status_code code = api_->status_code(status);
  std::string message = OrEmpty(api_->status_message(status));
  api_->release_status(status);
  if (code == PARITY_STATUS_OK) {
    return InternalResponse(
        StrCat(context, " returned a status object with code OK (success is a null status): ", message));
  }
  if (code < PARITY_STATUS_UNSUPPORTED || code > PARITY_STATUS_INTERNAL) {
    return InternalResponse(
        StrCat(context, " returned the unknown status code ", static_cast<int>(code), ": ", message));
  }
  return WireResponse::Error(static_cast<WireCode>(code), std::move(message));
}

const std::string& AdapterHost::DefaultDevice() const {
  static const std::string kNone;
  return info_.devices.empty() ? kNone : info_.devices.front().name;
}

WireResponse AdapterHost::Handle(const WireRequest& request) {
  try {
    switch (request.kind) {
      case WireRequest::Kind::kHello: return Hello(request);
      case WireRequest::Kind::kGetCapabilities: return GetCapabilities(request);
      case WireRequest::Kind::kCreateSession: return CreateSession(request);
      case WireRequest::Kind::kRun: return Run(request);
      case WireRequest::Kind::kReleaseSession: return ReleaseSession(request);
      case WireRequest::Kind::kShutdown: ReleaseAllSessions(); return WireResponse();
      case WireRequest::Kind::kNone: break;
    }
    return InvalidResponse(
        "the request sets none of the kinds this worker knows (hello, get_capabilities, "
        "create_session, run, release_session, shutdown)");
  } catch (const std::bad_alloc&) {
    return WireResponse::Error(WireCode::kOutOfMemory, "out of memory (std::bad_alloc) while serving the request");
  } catch (const std::exception& e) {
    return InternalResponse(StrCat("the adapter threw a C++ exception: ", e.what()));
  } catch (...) {
    return InternalResponse("the adapter threw a C++ exception of unknown type");
  }
}

WireResponse AdapterHost::Hello(const WireRequest& request) {
  if (request.protocol_version != kProtocolVersion) {
    return InvalidResponse(StrCat("hello asks for protocol version ", request.protocol_version,
                                  "; this worker speaks version ", kProtocolVersion));
  }
  WireResponse response;
  response.info = info_;
  return response;
}

WireResponse AdapterHost::GetCapabilities(const WireRequest& request) {
  WireResponse response;
  WireCapabilities& caps = response.capabilities.emplace();
  if (!has_capabilities_) return response;  // declared = false: the adapter tries every case
  const std::string device = request.device.empty() ? DefaultDevice() : request.device;
  const parity_capabilities* declared = nullptr;
  if (parity_status* status = api_->get_capabilities(device.c_str(), &declared)) {
    return FromAdapterStatus(status, "get_capabilities");
  }
  if (!declared) return response;
  if ((declared->operator_count > 0 && !declared->operators) ||
      (declared->data_type_count > 0 && !declared->data_types) ||
      (declared->variant_target_count > 0 && !declared->variant_targets)) {
    return InternalResponse("get_capabilities returned a count without its array");
  }
  caps.declared = true;
  for (size_t i = 0; i < declared->operator_count; ++i) caps.operators.push_back(OrEmpty(declared->operators[i]));
  caps.data_types.assign(declared->data_types, declared->data_types + declared->data_type_count);
  for (size_t i = 0; i < declared->variant_target_count; ++i) {
    caps.variant_targets.push_back(OrEmpty(declared->variant_targets[i]));
  }
  caps.honours_aliasing = declared->honours_aliasing != 0;
  caps.can_forbid_fallback = declared->can_forbid_fallback != 0;
  return response;
}

WireResponse AdapterHost::CreateSession(const WireRequest& request) {
  if (request.warm_repeats > kMaxWarmRepeats) {
    return InvalidResponse(StrCat("create_session asks for ", request.warm_repeats, " warm repeats; at most ",
                                  kMaxWarmRepeats, " are allowed"));
  }
  const WireSessionOptions& o = request.options;
  const std::string device = o.device.empty() ? DefaultDevice() : o.device;
  std::vector<const char*> targets;
  for (const std::string& t : o.variant_targets) targets.push_back(t.c_str());
  parity_session_options options{};
  options.device = device.c_str();
  options.allow_fallback = o.allow_fallback ? 1 : 0;
  options.variant_target_count = targets.size();
  options.variant_targets = targets.data();
  options.case_name = o.case_name.c_str();
  // ABI version 3; adapters built against an older header never read it.
  options.model_dir = request.model_dir.c_str();

  // Times one create_session call alone: parsing the request and copying
  // the report are outside the measurement.
  auto create = [&](parity_session** session, const parity_session_report** report, double* ms) {
    const auto start = Clock::now();
    parity_status* status = api_->create_session(request.model.data(), request.model.size(), &options, session, report);
    *ms = MillisecondsSince(start);
    return status;
  };

  WireResponse response;
  WireSessionCreated& created = response.session.emplace();
  parity_session* session = nullptr;
  const parity_session_report* report = nullptr;
  if (parity_status* status = create(&session, &report, &created.load_ms_cold)) {
    return FromAdapterStatus(status, "create_session");
  }
  if (!session) return InternalResponse("create_session succeeded but returned no session");
  // The backend's compile step (ABI version 4), when the table has the slot.
  const auto session_cost =
      SlotFunction<decltype(parity_adapter_api::session_cost)>(api_, offsetof(parity_adapter_api, session_cost));
  auto cost_of = [&](parity_session* s) -> std::optional<parity_session_cost> {
    parity_session_cost cost{};
    if (!session_cost) return std::nullopt;
    if (parity_status* failed = session_cost(s, &cost)) {
      api_->release_status(failed);
      return std::nullopt;
    }
    return cost;
  };
  if (const std::optional<parity_session_cost> cost = cost_of(session)) {
    created.compile_ms_cold = cost->compile_ms;
    created.kernels_compiled = cost->kernels_compiled;
    created.kernels_deferred = cost->kernels_deferred;
  }
  if (report) {
    for (size_t i = 0; i < report->variant_count && report->variants; ++i) {
      created.variants.emplace_back(OrEmpty(report->variants[i].entry), OrEmpty(report->variants[i].chosen));
    }
    for (size_t i = 0; i < report->node_count && report->nodes; ++i) {
      created.placement.emplace_back(OrEmpty(report->nodes[i].node), OrEmpty(report->nodes[i].device));
    }
  }
  // Warm repeats run while the cold session is still open, each created and
  // released at once; the session kept is the cold one.
  for (uint32_t i = 0; i < request.warm_repeats; ++i) {
    parity_session* warm = nullptr;
    const parity_session_report* warm_report = nullptr;
    double ms = 0;
    if (parity_status* status = create(&warm, &warm_report, &ms)) {
      api_->release_session(session);
      return FromAdapterStatus(status, "create_session");
    }
    if (warm) {
      if (const std::optional<parity_session_cost> cost = cost_of(warm)) created.compile_ms_warm.push_back(cost->compile_ms);
      api_->release_session(warm);
    }
    created.load_ms_warm.push_back(ms);
  }
  created.session_id = next_session_id_++;
  sessions_[created.session_id].session = session;
  return response;
}

namespace {

std::string DescribeBindings(const std::vector<std::pair<std::string, std::string>>& bindings) {
  std::string text;
  for (const auto& [output, input] : bindings) {
    text += StrCat(text.empty() ? "" : ", ", "'", output, "'->'", input, "'");
  }
  return text.empty() ? "none" : text;
}

// The payload of a value that has exactly one (checked by the caller).
const std::string& PayloadOf(const WireValue& v) {
  return v.tensor ? *v.tensor : v.sequence ? *v.sequence : *v.optional;
}
std::string& MutablePayloadOf(WireValue& v) { return v.tensor ? *v.tensor : v.sequence ? *v.sequence : *v.optional; }
parity_value_kind KindOf(const WireValue& v) {
  return v.tensor ? PARITY_VALUE_TENSOR : v.sequence ? PARITY_VALUE_SEQUENCE : PARITY_VALUE_OPTIONAL;
}

// `bytes` as the payload of kind `kind`; false for a kind the ABI does not define.
bool SetPayload(WireValue& v, parity_value_kind kind, std::string bytes) {
  switch (kind) {
    case PARITY_VALUE_TENSOR: v.tensor = std::move(bytes); return true;
    case PARITY_VALUE_SEQUENCE: v.sequence = std::move(bytes); return true;
    case PARITY_VALUE_OPTIONAL: v.optional = std::move(bytes); return true;
  }
  return false;
}

}  // namespace

WireResponse AdapterHost::Bind(OpenSession& open, const WireRequest& request) {
  using Bindings = std::vector<std::pair<std::string, std::string>>;
  const Bindings& keep = request.keep;
  if (keep.empty()) {
    if (!open.stateful) return WireResponse();
    return InvalidResponse(StrCat("run: session ", request.session_id, " is stateful (it keeps ",
                                  DescribeBindings(open.bindings),
                                  "); every later run must name the same bindings, and this one names none"));
  }
  for (size_t i = 0; i < keep.size(); ++i) {
    if (keep[i].first.empty() || keep[i].second.empty()) {
      return InvalidResponse(StrCat("run: binding ", i, " ('", keep[i].first, "'->'", keep[i].second,
                                    "') must name both an output and an input"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (keep[j].second == keep[i].second) {
        return InvalidResponse(StrCat("run: input '", keep[i].second, "' is bound twice ('", keep[j].first,
                                      "' and '", keep[i].first, "'); each binding must name its own input"));
      }
    }
  }
  if (open.stateful) {
    // The same bindings, in any order; outputs keep the first run's order.
    auto missing_from = [](const Bindings& from, const Bindings& in) {
      Bindings missing;
      for (const auto& b : from) {
        if (std::find(in.begin(), in.end(), b) == in.end()) missing.push_back(b);
      }
      return missing;
    };
    const Bindings dropped = missing_from(open.bindings, keep);
    const Bindings added = missing_from(keep, open.bindings);
    if (dropped.empty() && added.empty()) return WireResponse();
    std::string difference;
    if (!dropped.empty()) difference = StrCat("it leaves out ", DescribeBindings(dropped));
    if (!added.empty()) {
      difference += StrCat(difference.empty() ? "it " : " and ", "adds ", DescribeBindings(added));
    }
    return InvalidResponse(StrCat("run: session ", request.session_id, " keeps ", DescribeBindings(open.bindings),
                                  " and every later run must name the same bindings; ", difference));
  }
  // The first run that names bindings. bind_state is called at most once,
  // before the adapter's first run (spec/abi/parity_adapter.h): a session
  // that ran before, or whose bind_state refused other bindings, has its
  // values carried by the host.
  if (bind_state_ && open.runs == 0 && !open.bind_state_called) {
    std::vector<parity_state_binding> bindings;
    for (const auto& [output, input] : keep) bindings.push_back({output.c_str(), input.c_str()});
    open.bind_state_called = true;
    if (parity_status* status = bind_state_(open.session, bindings.data(), bindings.size())) {
      return FromAdapterStatus(status, "bind_state");
    }
    open.adapter_keeps = true;
  }
  open.stateful = true;
  open.bindings = keep;
  return WireResponse();
}

WireResponse AdapterHost::ReturnKept(OpenSession& open, WireRunDone& done) {
  for (const auto& [output, input] : open.bindings) {
    WireValue& v = done.outputs.emplace_back();
    v.name = output;
    if (!open.adapter_keeps) {
      const auto kept = open.kept.find(input);
      if (kept == open.kept.end()) return InternalResponse(StrCat("run: no value is kept for input '", input, "'"));
      SetPayload(v, kept->second.kind, kept->second.bytes);
      continue;
    }
    parity_value value{};
    if (parity_status* status = read_state_(open.session, input.c_str(), &value)) {
      return FromAdapterStatus(status, StrCat("read_state('", input, "')"));
    }
    if (value.size > 0 && !value.data) {
      return InternalResponse(StrCat("read_state('", input, "') returned ", value.size, " bytes with no data"));
    }
    std::string bytes(static_cast<const char*>(value.data), value.size);
    if (!SetPayload(v, value.kind, std::move(bytes))) {
      return InternalResponse(StrCat("read_state('", input, "') returned a value of unknown kind ",
                                     static_cast<int>(value.kind), " (known: 1 tensor, 2 sequence, 3 optional)"));
    }
  }
  return WireResponse();
}

WireResponse AdapterHost::Run(const WireRequest& request) {
  const auto it = sessions_.find(request.session_id);
  if (it == sessions_.end()) {
    return InvalidResponse(StrCat("run: no open session has id ", request.session_id));
  }
  OpenSession& open = it->second;
  std::vector<parity_value> inputs;
  inputs.reserve(request.inputs.size() + open.bindings.size());
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const WireValue& v = request.inputs[i];
    const int set = int{v.tensor.has_value()} + int{v.sequence.has_value()} + int{v.optional.has_value()};
    if (set != 1) {
      return InvalidResponse(StrCat("run: input '", v.name, "' (index ", i, ") sets ",
                                    set == 0 ? "none" : "more than one",
                                    " of tensor, sequence and optional; exactly one must be set"));
    }
    const std::string& data = PayloadOf(v);
    inputs.push_back({v.name.c_str(), KindOf(v), data.data(), data.size()});
  }
  if (WireResponse bound = Bind(open, request); bound.status) return bound;
  // The values the host keeps feed the bound inputs this run leaves out;
  // an input sent anyway replaces the kept one.
  const bool host_keeps = open.stateful && !open.adapter_keeps;
  if (host_keeps) {
    for (const auto& [input, kept] : open.kept) {
      // Lambdas capture a plain reference: clang before 16 cannot capture a structured binding.
      const std::string& name = input;
      const bool given = std::any_of(request.inputs.begin(), request.inputs.end(),
                                     [&](const WireValue& v) { return v.name == name; });
      if (!given) inputs.push_back({input.c_str(), kept.kind, kept.bytes.data(), kept.bytes.size()});
    }
  }

  const parity_value* outputs = nullptr;
  size_t output_count = 0;
  WireResponse response;
  WireRunDone& done = response.run.emplace();
  const bool peak_reset = ResetPeakRss();
  const auto start = Clock::now();
  parity_status* status = api_->run(open.session, inputs.data(), inputs.size(), &outputs, &output_count);
  done.run_ms = MillisecondsSince(start);
  const RunMemory memory = ReadRunMemory(peak_reset);
  done.run_peak_rss_kb = memory.peak_kb;
  done.rss_kb = memory.rss_kb;
  if (status) return FromAdapterStatus(status, "run");
  // What the run copied and held on the device (ABI version 5), read right
  // after it, before anything else calls the adapter; a failed answer
  // leaves the figures out.
  if (const auto run_cost = SlotFunction<decltype(parity_adapter_api::run_cost)>(api_, offsetof(parity_adapter_api, run_cost))) {
    parity_run_cost cost{};
    if (parity_status* failed = run_cost(open.session, &cost)) {
      api_->release_status(failed);
    } else {
      done.cost = WireRunCost{cost.to_device_copies, cost.to_device_bytes, cost.to_host_copies,
                              cost.to_host_bytes,    cost.device_bytes,    cost.device_peak_bytes};
    }
  }
  if (output_count > 0 && !outputs)
    return InternalResponse(StrCat("run returned ", output_count, " outputs but no array"));
  for (size_t i = 0; i < output_count; ++i) {
    const parity_value& out = outputs[i];
    if (out.size > 0 && !out.data) {
      return InternalResponse(
          StrCat("run returned output ", i, " ('", OrEmpty(out.name), "') of ", out.size, " bytes with no data"));
    }
    WireValue& v = done.outputs.emplace_back();
    v.name = OrEmpty(out.name);
    if (!SetPayload(v, out.kind, std::string(static_cast<const char*>(out.data), out.size))) {
      return InternalResponse(StrCat("run returned output ", i, " ('", v.name, "') of unknown kind ",
                                     static_cast<int>(out.kind), " (known: 1 tensor, 2 sequence, 3 optional)"));
    }
  }
  if (host_keeps) {
    // The bound outputs become the next run's inputs, kept here; only the
    // unbound ones go back (then, with return_kept, the kept ones).
    std::map<std::string, KeptValue> next;
    for (size_t i = 0; i < open.bindings.size(); ++i) {
      // Plain references, not a structured binding: lambdas capture `output`.
      const std::string& output = open.bindings[i].first;
      const std::string& input = open.bindings[i].second;
      const auto produced = std::find_if(done.outputs.begin(), done.outputs.end(),
                                         [&](const WireValue& v) { return v.name == output; });
      if (produced == done.outputs.end()) {
        return InvalidResponse(StrCat("run returned no output '", output, "', which the binding '", output, "'->'",
                                      input, "' keeps (outputs: ", output_count, ")"));
      }
      // The bytes move unless a later binding keeps the same output too.
      const bool used_again = std::any_of(open.bindings.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                          open.bindings.end(), [&](const auto& b) { return b.first == output; });
      std::string& bytes = MutablePayloadOf(*produced);
      next[input] = KeptValue{KindOf(*produced), used_again ? bytes : std::move(bytes)};
    }
    std::erase_if(done.outputs, [&](const WireValue& v) {
      return std::any_of(open.bindings.begin(), open.bindings.end(), [&](const auto& b) { return b.first == v.name; });
    });
    open.kept = std::move(next);
  }
  ++open.runs;
  if (open.stateful && request.return_kept) {
    if (WireResponse failed = ReturnKept(open, done); failed.status) return failed;
  }
  return response;
}

WireResponse AdapterHost::ReleaseSession(const WireRequest& request) {
  const auto it = sessions_.find(request.session_id);
  if (it == sessions_.end()) {
    return InvalidResponse(StrCat("release_session: no open session has id ", request.session_id));
  }
  parity_session* session = it->second.session;
  sessions_.erase(it);
  api_->release_session(session);
  return WireResponse();
}

void AdapterHost::ReleaseAllSessions() {
  // Taken out of the map first, so that an exception leaves no session behind twice.
  std::map<uint64_t, OpenSession> open;
  open.swap(sessions_);
  for (const auto& [id, session] : open) api_->release_session(session.session);
}

int AdapterHost::Serve(int in_fd, int out_fd) {
  for (;;) {
    std::string frame;
    const Status read = ReadRawFrame(in_fd, &frame);
    if (!read.ok()) {
      // The harness has gone: a release that hangs must not leave an orphan
      // worker behind, so an alarm ends the worker if releasing takes long.
      alarm(30);
      const bool clean = read.code() == StatusCode::kUnavailable;
      if (!clean) std::fprintf(stderr, "parity-worker: the request stream broke: %s\n", read.ToString().c_str());
      try {
        ReleaseAllSessions();
      } catch (...) {
        std::fprintf(stderr, "parity-worker: release_session threw while shutting down\n");
      }
      return clean ? kExitOk : kExitProtocolBroken;
    }
    WireRequest request;
    WireResponse response;
    if (const Status parsed = ParseRequest(frame, &request); !parsed.ok()) {
      request.kind = WireRequest::Kind::kNone;
      response = InvalidResponse("a request frame is not a valid parity.protocol.Request: " + parsed.message());
    } else {
      response = Handle(request);
    }
    response.peak_rss_kb = PeakRssKb();
    if (const Status wrote = WriteRawFrame(out_fd, SerializeResponse(response)); !wrote.ok()) {
      std::fprintf(stderr, "parity-worker: cannot write a response: %s\n", wrote.ToString().c_str());
      alarm(30);
      ReleaseAllSessions();
      return kExitProtocolBroken;
    }
    if (request.kind == WireRequest::Kind::kShutdown) return kExitOk;
  }
}

Status ProtectStandardStreams(int* protocol_in, int* protocol_out) {
  const int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
  const int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0) return IoError("cannot duplicate the standard input and output");
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(2, 1) < 0) {
    return IoError("cannot point standard input at /dev/null and standard output at standard error");
  }
  close(devnull);
  *protocol_in = in;
  *protocol_out = out;
  return Status::Ok();
}

namespace {

// The high-water marks of /proc/self/status seen before each reset, folded:
// with them, PeakRssKb stays the peak of the whole process although each
// run resets VmHWM.
uint64_t peak_before_resets_kb = 0;

// VmHWM and VmRSS now, in KiB; absent where /proc cannot be read.
RunMemory ReadProcStatus() {
  RunMemory memory;
  std::FILE* status = std::fopen("/proc/self/status", "re");
  if (!status) return memory;
  char line[256];
  while (std::fgets(line, sizeof line, status)) {
    unsigned long long kb = 0;  // the file gives "VmHWM:\t    1234 kB"
    if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) memory.peak_kb = kb;
    if (std::sscanf(line, "VmRSS: %llu kB", &kb) == 1) memory.rss_kb = kb;
  }
  std::fclose(status);
  return memory;
}

}  // namespace

bool ResetPeakRss() {
  peak_before_resets_kb = std::max(peak_before_resets_kb, ReadProcStatus().peak_kb.value_or(0));
  // "5" resets the high-water mark of the resident set (proc(5), clear_refs).
  const int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool reset = write(fd, "5", 1) == 1;
  close(fd);
  return reset;
}

RunMemory ReadRunMemory(bool peak_was_reset) {
  RunMemory memory = ReadProcStatus();
  if (!peak_was_reset) memory.peak_kb.reset();
  return memory;
}

uint64_t PeakRssKb() {
  // VmHWM belongs to this process image: getrusage's ru_maxrss would also
  // count the resident size of the harness that forked the worker.
  if (const std::optional<uint64_t> now = ReadProcStatus().peak_kb) return std::max(peak_before_resets_kb, *now);
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss);  // KiB on Linux
}

}  // namespace parity::worker
