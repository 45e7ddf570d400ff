// parity-worker's core: loads one native adapter (spec/abi/parity_adapter.h)
// and serves the worker protocol (spec/protocol/README.md) for it.
//
// Thread safety: none; the worker serves one request at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/worker/protocol_codec.h"
#include "reference/core/status.h"
#include "spec/abi/parity_adapter.h"

namespace parity::worker {

// Exit statuses of parity-worker (spec/protocol/README.md).
inline constexpr int kExitOk = 0;              // shutdown, or end of input
inline constexpr int kExitUsage = 2;           // wrong command line
inline constexpr int kExitLoadFailed = 3;      // the adapter could not be loaded
inline constexpr int kExitProtocolBroken = 4;  // a corrupt request stream, or responses cannot be written

// The largest warm_repeats a create_session may ask for.
inline constexpr uint32_t kMaxWarmRepeats = 1000;

class AdapterHost {
 public:
  // dlopen()s the library, calls parity_adapter_query with
  // PARITY_ABI_VERSION, checks the table's version, size and required slots,
  // and reads the adapter's information. Errors name the library.
  static StatusOr<std::unique_ptr<AdapterHost>> Load(const std::string& path);

  AdapterHost(const AdapterHost&) = delete;
  AdapterHost& operator=(const AdapterHost&) = delete;
  ~AdapterHost();  // releases the sessions still open; the library stays loaded

  // Answers each request read from `in_fd` with one response on `out_fd`
  // until a shutdown or the end of input; returns the worker's exit status.
  int Serve(int in_fd, int out_fd);

  // One request's answer, without peak_rss_kb. C++ exceptions thrown by the
  // adapter become INTERNAL (OUT_OF_MEMORY for std::bad_alloc).
  WireResponse Handle(const WireRequest& request);

  void ReleaseAllSessions();

 private:
  AdapterHost(std::string path, void* library, const parity_adapter_api* api);

  // Turns an adapter's non-null status into an error response, releasing it.
  WireResponse FromAdapterStatus(parity_status* status, const std::string& context);
  const std::string& DefaultDevice() const;

  WireResponse Hello(const WireRequest& request);
  WireResponse GetCapabilities(const WireRequest& request);
  WireResponse CreateSession(const WireRequest& request);
  WireResponse Run(const WireRequest& request);
  WireResponse ReleaseSession(const WireRequest& request);

  // A value the host keeps for a stateful session whose adapter does not
  // (no bind_state): the serialized output, passed back as the input.
  struct KeptValue {
    parity_value_kind kind = PARITY_VALUE_TENSOR;
    std::string bytes;
  };
  // One open session and, once a run named bindings, its state
  // (spec/protocol/parity_worker.proto, Run.keep).
  struct OpenSession {
    parity_session* session = nullptr;
    uint64_t runs = 0;  // successful runs
    bool stateful = false;
    std::vector<std::pair<std::string, std::string>> bindings;  // (output, input), the first run's order
    bool bind_state_called = false;  // at most once, even when it failed
    bool adapter_keeps = false;      // bind_state succeeded: the adapter holds the values
    std::map<std::string, KeptValue> kept;  // by input; when the host holds them
  };

  // Checks a run's bindings against the session's, making the session
  // stateful at its first run that names any (bind_state, when there is one).
  WireResponse Bind(OpenSession& open, const WireRequest& request);
  // Adds the bound outputs to `done` (named after the outputs, in binding
  // order), from read_state or from the values the host keeps.
  WireResponse ReturnKept(OpenSession& open, WireRunDone& done);

  std::string path_;
  [[maybe_unused]] void* library_;  // the adapter library dlopen gave, never closed: it lives with the process
  const parity_adapter_api* api_;
  bool has_capabilities_ = false;
  // ABI v2 slots, null when the table lacks them (version 1) or leaves them empty.
  decltype(parity_adapter_api::bind_state) bind_state_ = nullptr;
  decltype(parity_adapter_api::read_state) read_state_ = nullptr;
  WireAdapterInfo info_;
  uint64_t next_session_id_ = 1;
  std::map<uint64_t, OpenSession> sessions_;
};

// The worker's memory around one run, in KiB, read from /proc/self/status.
struct RunMemory {
  std::optional<uint64_t> peak_kb;  // VmHWM; absent when the reset before the run failed
  std::optional<uint64_t> rss_kb;   // VmRSS
};
// Resets the resident high-water mark (writes "5" to /proc/self/clear_refs);
// false where the kernel does not allow it.
bool ResetPeakRss();
// VmHWM and VmRSS now; `peak_was_reset` says whether VmHWM means this run's peak.
RunMemory ReadRunMemory(bool peak_was_reset);

// Keeps the protocol safe from what the adapter writes or reads: the
// protocol gets private copies of fds 0 and 1 (close-on-exec, so children the
// adapter starts do not inherit them), fd 1 then points at fd 2 and fd 0 at
// /dev/null. Called before the adapter is loaded, since its static
// initializers may print.
Status ProtectStandardStreams(int* protocol_in, int* protocol_out);

// The worker's peak resident memory so far, in KiB: VmHWM of
// /proc/self/status, with the marks seen before each ResetPeakRss (getrusage
// where /proc cannot be read).
uint64_t PeakRssKb();

}  // namespace parity::worker
