// The worker protocol (spec/protocol/parity_worker.proto) as parity-worker
// reads and writes it: plain structs and a hand-written protobuf wire codec.
//
// Why not the generated classes: they would register onnx/onnx-ml.proto in
// libprotobuf's process-wide descriptor pool, and so would every adapter that
// uses the onnx classes (the reference and the template do); protobuf aborts
// the process on the second registration of a file. The worker therefore
// never decodes a tensor: Value payloads stay serialized bytes, passed to the
// adapter as they came. protocol_codec_test.cc checks this codec against the
// generated classes, field by field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reference/core/status.h"

namespace parity::worker {

inline constexpr uint32_t kProtocolVersion = 1;

// The codes of parity.protocol.StatusCode (equal to parity_status_code).
enum class WireCode : int32_t {
  kOk = 0,
  kUnsupported = 1,
  kInvalidArgument = 2,
  kDeviceUnavailable = 3,
  kFallbackRequired = 4,
  kOutOfMemory = 5,
  kInternal = 6,
};

// parity.protocol.Value: the payload fields hold serialized onnx messages.
struct WireValue {
  std::string name;
  std::optional<std::string> tensor;    // onnx.TensorProto
  std::optional<std::string> sequence;  // onnx.SequenceProto
  std::optional<std::string> optional;  // onnx.OptionalProto
};

struct WireSessionOptions {
  std::string device;
  bool allow_fallback = true;  // the .proto's default
  std::vector<std::string> variant_targets;
  std::string case_name;
};

// parity.protocol.Request, flattened: `kind` says which fields apply.
struct WireRequest {
  enum class Kind { kNone, kHello, kGetCapabilities, kCreateSession, kRun, kReleaseSession, kShutdown };
  Kind kind = Kind::kNone;
  uint32_t protocol_version = 0;  // hello
  std::string device;             // get_capabilities
  std::string model;              // create_session
  WireSessionOptions options;     // create_session
  uint32_t warm_repeats = 0;      // create_session
  std::string model_dir;          // create_session: the folder external data is read from
  uint64_t session_id = 0;        // run, release_session
  std::vector<WireValue> inputs;  // run
  // run: Run.keep as (output, input) pairs, and Run.return_kept (its
  // .proto default is true).
  std::vector<std::pair<std::string, std::string>> keep;
  bool return_kept = true;
};

struct WireDevice {
  std::string name, kind, description;
};

struct WireAdapterInfo {
  uint32_t protocol_version = kProtocolVersion;
  std::string name, version, backend_version;
  std::vector<WireDevice> devices;
  uint32_t abi_version = 0;
  uint64_t pid = 0;
};

struct WireCapabilities {
  std::vector<std::string> operators;
  std::vector<int32_t> data_types;
  std::vector<std::string> variant_targets;
  bool honours_aliasing = false;
  bool can_forbid_fallback = false;
  bool declared = false;
};

struct WireSessionCreated {
  uint64_t session_id = 0;
  double load_ms_cold = 0;
  std::vector<double> load_ms_warm;
  std::vector<std::pair<std::string, std::string>> variants;   // (entry, chosen)
  std::vector<std::pair<std::string, std::string>> placement;  // (node, device)
  // From session_cost (ABI version 4), when the adapter has it.
  std::optional<double> compile_ms_cold;
  std::vector<double> compile_ms_warm;
  std::optional<uint64_t> kernels_compiled, kernels_deferred;
};

// parity.protocol.RunCost: parity_run_cost's figures.
struct WireRunCost {
  uint64_t to_device_copies = 0, to_device_bytes = 0;
  uint64_t to_host_copies = 0, to_host_bytes = 0;
  uint64_t device_bytes = 0, device_peak_bytes = 0;
};

struct WireRunDone {
  std::vector<WireValue> outputs;
  double run_ms = 0;
  std::optional<uint64_t> run_peak_rss_kb;  // KiB; absent where the peak cannot be reset
  std::optional<uint64_t> rss_kb;           // KiB
  std::optional<WireRunCost> cost;          // from run_cost (ABI version 5), when the adapter has it
};

// parity.protocol.Response. At most one body is set; none for a failure or
// for the answers that carry nothing (release_session, shutdown).
struct WireResponse {
  std::optional<std::pair<WireCode, std::string>> status;  // absent: OK
  std::optional<WireAdapterInfo> info;
  std::optional<WireCapabilities> capabilities;
  std::optional<WireSessionCreated> session;
  std::optional<WireRunDone> run;
  std::optional<uint64_t> peak_rss_kb;

  static WireResponse Error(WireCode code, std::string message) {
    WireResponse r;
    r.status.emplace(code, std::move(message));
    return r;
  }
};

// Decodes a serialized parity.protocol.Request. Unknown fields are skipped,
// as protobuf does; a truncated or malformed encoding is kInvalidArgument.
Status ParseRequest(std::string_view bytes, WireRequest* request);

std::string SerializeResponse(const WireResponse& response);

// One frame on a pipe (harness/protocol/framing.h, for bytes rather than
// messages). ReadRawFrame: end of input before a frame is kUnavailable; end
// inside a frame or a length over kMaxFrameBytes is kIoError.
Status ReadRawFrame(int fd, std::string* payload);
Status WriteRawFrame(int fd, std::string_view payload);

}  // namespace parity::worker
