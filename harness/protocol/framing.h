// Length-prefixed protobuf frames over a pipe (spec/protocol/README.md): a
// 4-byte little-endian length, then the serialized message. Used by both
// ends, the harness and parity-worker.
#pragma once

#include <cstdint>
#include <string>

#include "reference/core/status.h"

namespace google::protobuf {
class MessageLite;
}

namespace parity::protocol {

// The largest frame either end accepts; a longer length prefix is refused as
// corrupt rather than allocated.
inline constexpr uint32_t kMaxFrameBytes = 1u << 30;

// Writes one frame, retrying short writes and EINTR. A closed reader is an
// error, not a SIGPIPE (the caller ignores SIGPIPE).
::parity::Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

// Reads one frame into `message`. With `deadline_ms` >= 0, gives up with
// kDeadlineExceeded once that many milliseconds have passed before a frame
// began. End of input before a frame begins is kUnavailable (the other end
// closed the pipe or died). A frame that stops short (by end of input or by
// the deadline), an oversized length, or bytes that do not parse are
// kIoError: the sender broke the protocol.
::parity::Status ReadFrame(int fd, google::protobuf::MessageLite* message, int64_t deadline_ms = -1);

}  // namespace parity::protocol
