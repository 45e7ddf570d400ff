// Length-prefixed frames over file descriptors.
#include "harness/protocol/framing.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <google/protobuf/message_lite.h>

namespace parity::protocol {
namespace {

using Clock = std::chrono::steady_clock;

::parity::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return Status(StatusCode::kUnavailable, "the reader closed the pipe");
      return Status(StatusCode::kIoError, StrCat("write failed: ", std::strerror(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Reads exactly `size` bytes. `got_any` reports whether any byte arrived, so
// that the caller can tell a clean close from a frame cut short.
::parity::Status ReadAll(int fd, char* data, size_t size, Clock::time_point deadline, bool has_deadline, bool* got_any) {
  while (size > 0) {
    if (has_deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Status(StatusCode::kDeadlineExceeded, "no answer before the deadline");
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (ready < 0 && errno != EINTR) return Status(StatusCode::kIoError, StrCat("poll failed: ", std::strerror(errno)));
      if (ready <= 0) continue;
    }
    const ssize_t n = ::read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kIoError, StrCat("read failed: ", std::strerror(errno)));
    }
    if (n == 0) {
      return *got_any ? Status(StatusCode::kIoError, "the pipe closed inside a frame")
                      : Status(StatusCode::kUnavailable, "the pipe closed");
    }
    *got_any = true;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

::parity::Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  const size_t size = message.ByteSizeLong();
  if (size > kMaxFrameBytes) {
    return Status(StatusCode::kResourceExhausted, StrCat("a message of ", size, " bytes is over the frame limit of ",
                                                         kMaxFrameBytes, " bytes"));
  }
  std::string buffer(4 + size, '\0');
  for (int i = 0; i < 4; ++i) buffer[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  if (!message.SerializeToArray(buffer.data() + 4, static_cast<int>(size))) {
    return Status(StatusCode::kInternal, "a message could not be serialized");
  }
  return WriteAll(fd, buffer.data(), buffer.size());
}

::parity::Status ReadFrame(int fd, google::protobuf::MessageLite* message, int64_t deadline_ms) {
  const bool has_deadline = deadline_ms >= 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(has_deadline ? deadline_ms : 0);
  unsigned char prefix[4];
  bool got_any = false;
  ::parity::Status prefix_read = ReadAll(fd, reinterpret_cast<char*>(prefix), 4, deadline, has_deadline, &got_any);
  if (prefix_read.code() == StatusCode::kDeadlineExceeded && got_any) {
    return Status(StatusCode::kIoError, "a frame's length prefix stopped half-way before the deadline");
  }
  PARITY_RETURN_IF_ERROR(prefix_read);
  const uint32_t size = uint32_t{prefix[0]} | uint32_t{prefix[1]} << 8 | uint32_t{prefix[2]} << 16 |
                        uint32_t{prefix[3]} << 24;
  if (size > kMaxFrameBytes) {
    return Status(StatusCode::kIoError,
                  StrCat("a frame announces ", size, " bytes, over the limit of ", kMaxFrameBytes, ": corrupt stream"));
  }
  // The buffer grows as bytes arrive, so a corrupt or hostile length prefix
  // costs memory only for bytes really sent.
  constexpr size_t kChunk = size_t{1} << 20;
  std::string buffer;
  while (buffer.size() < size) {
    const size_t offset = buffer.size();
    const size_t step = std::min<size_t>(kChunk, size - offset);
    buffer.resize(offset + step);
    ::parity::Status read = ReadAll(fd, buffer.data() + offset, step, deadline, has_deadline, &got_any);
    if (read.code() == StatusCode::kDeadlineExceeded) {
      // The sender began a frame and stopped: a protocol breach, not a slow answer.
      return Status(StatusCode::kIoError,
                    StrCat("a frame of ", size, " bytes stopped short and did not go on before the deadline"));
    }
    PARITY_RETURN_IF_ERROR(read);
  }
  if (!message->ParseFromString(buffer)) {
    return Status(StatusCode::kIoError, StrCat("a frame of ", size, " bytes is not a valid ", message->GetTypeName()));
  }
  return Status::Ok();
}

}  // namespace parity::protocol
