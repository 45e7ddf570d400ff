// parity-worker's core: loads one native adapter (spec/abi/parity_adapter.h)
// and serves the worker protocol (spec/protocol/README.md) for it.
//
// Thread safety: none; the worker serves one request at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

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

  std::string path_;
  void* library_;
  const parity_adapter_api* api_;
  bool has_capabilities_ = false;
  WireAdapterInfo info_;
  uint64_t next_session_id_ = 1;
  std::map<uint64_t, parity_session*> sessions_;
};

// Keeps the protocol safe from what the adapter writes or reads: the
// protocol gets private copies of fds 0 and 1 (close-on-exec, so children the
// adapter starts do not inherit them), fd 1 then points at fd 2 and fd 0 at
// /dev/null. Called before the adapter is loaded, since its static
// initializers may print.
Status ProtectStandardStreams(int* protocol_in, int* protocol_out);

// The worker's peak resident memory so far, in KiB (getrusage).
uint64_t PeakRssKb();

}  // namespace parity::worker
