// The protobuf wire encoding of the worker protocol, by hand (see
// protocol_codec.h for why). Field numbers follow
// spec/protocol/parity_worker.proto.
#include "harness/worker/protocol_codec.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "harness/protocol/framing.h"

namespace parity::worker {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

// Reads one message's fields in order. Every read checks the bounds, so a
// truncated or hostile encoding gives an error, never a read past the end.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }

  Status ReadVarint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return Truncated("a varint");
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      result |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80u) == 0) {
        *value = result;
        return Status::Ok();
      }
    }
    return InvalidArgument("a varint is longer than 10 bytes");
  }

  Status ReadTag(uint32_t* field, int* wire_type) {
    uint64_t tag = 0;
    PARITY_RETURN_IF_ERROR(ReadVarint(&tag));
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<int>(tag & 7);
    if (*field == 0 || tag >> 32 != 0) return InvalidArgument("a field tag ", tag, " is out of range");
    return Status::Ok();
  }

  Status ReadBytes(std::string_view* bytes) {
    uint64_t size = 0;
    PARITY_RETURN_IF_ERROR(ReadVarint(&size));
    if (size > data_.size() - pos_) return Truncated("a length-delimited field");
    *bytes = data_.substr(pos_, size);
    pos_ += size;
    return Status::Ok();
  }

  Status ReadFixed64(uint64_t* value) {
    if (data_.size() - pos_ < 8) return Truncated("a 64-bit field");
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += 8;
    *value = v;
    return Status::Ok();
  }

  // Skips a field this codec does not know, as protobuf parsers do.
  Status Skip(int wire_type) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire_type) {
      case kVarint: return ReadVarint(&ignored);
      case kFixed64: return ReadFixed64(&ignored);
      case kLengthDelimited: return ReadBytes(&bytes);
      case kFixed32:
        if (data_.size() - pos_ < 4) return Truncated("a 32-bit field");
        pos_ += 4;
        return Status::Ok();
      default: return InvalidArgument("wire type ", wire_type, " (groups) is not used by this protocol");
    }
  }

 private:
  Status Truncated(const char* what) const {
    return InvalidArgument("the message ends inside ", what, " at byte ", pos_, " of ", data_.size());
  }

  std::string_view data_;
  size_t pos_ = 0;
};

// Calls `on_field(reader, field, wire_type)` for each field; it returns true
// when it consumed the field, false to have it skipped.
template <typename OnField>
Status ForEachField(std::string_view bytes, OnField on_field) {
  WireReader reader(bytes);
  while (!reader.done()) {
    uint32_t field = 0;
    int wire_type = 0;
    PARITY_RETURN_IF_ERROR(reader.ReadTag(&field, &wire_type));
    bool consumed = false;
    PARITY_RETURN_IF_ERROR(on_field(reader, field, wire_type, &consumed));
    if (!consumed) PARITY_RETURN_IF_ERROR(reader.Skip(wire_type));
  }
  return Status::Ok();
}

// Field readers: each consumes the field only when its wire type is the
// expected one (a mismatched wire type is an unknown field to protobuf).
Status GetString(WireReader& r, int wire_type, std::string* out, bool* consumed) {
  if (wire_type != kLengthDelimited) return Status::Ok();
  std::string_view bytes;
  PARITY_RETURN_IF_ERROR(r.ReadBytes(&bytes));
  out->assign(bytes);
  *consumed = true;
  return Status::Ok();
}

template <typename Int>
Status GetVarint(WireReader& r, int wire_type, Int* out, bool* consumed) {
  if (wire_type != kVarint) return Status::Ok();
  uint64_t v = 0;
  PARITY_RETURN_IF_ERROR(r.ReadVarint(&v));
  *out = static_cast<Int>(v);  // protobuf truncates wider varints the same way
  *consumed = true;
  return Status::Ok();
}

// An embedded message: parsed into `parse`'s target, merging as protobuf
// does when a message field appears more than once.
template <typename Parse>
Status GetMessage(WireReader& r, int wire_type, bool* consumed, Parse parse) {
  if (wire_type != kLengthDelimited) return Status::Ok();
  std::string_view bytes;
  PARITY_RETURN_IF_ERROR(r.ReadBytes(&bytes));
  *consumed = true;
  return parse(bytes);
}

// A payload of Value: kept as bytes; a repeated occurrence is appended,
// which is protobuf's merge of two encodings of the same message.
Status GetPayload(WireReader& r, int wire_type, std::optional<std::string>* out, bool* consumed) {
  if (wire_type != kLengthDelimited) return Status::Ok();
  std::string_view bytes;
  PARITY_RETURN_IF_ERROR(r.ReadBytes(&bytes));
  if (!out->has_value()) out->emplace();
  (*out)->append(bytes);
  *consumed = true;
  return Status::Ok();
}

Status ParseValue(std::string_view bytes, WireValue* value) {
  return ForEachField(bytes, [&](WireReader& r, uint32_t field, int wt, bool* consumed) -> Status {
    switch (field) {
      case 1: return GetString(r, wt, &value->name, consumed);
      case 2: return GetPayload(r, wt, &value->tensor, consumed);
      case 3: return GetPayload(r, wt, &value->sequence, consumed);
      case 4: return GetPayload(r, wt, &value->optional, consumed);
      default: return Status::Ok();
    }
  });
}

// parity.protocol.StateBinding: (output, input).
Status ParseStateBinding(std::string_view bytes, std::pair<std::string, std::string>* binding) {
  return ForEachField(bytes, [&](WireReader& r, uint32_t field, int wt, bool* consumed) -> Status {
    switch (field) {
      case 1: return GetString(r, wt, &binding->first, consumed);
      case 2: return GetString(r, wt, &binding->second, consumed);
      default: return Status::Ok();
    }
  });
}

Status ParseSessionOptions(std::string_view bytes, WireSessionOptions* options) {
  return ForEachField(bytes, [&](WireReader& r, uint32_t field, int wt, bool* consumed) -> Status {
    switch (field) {
      case 1: return GetString(r, wt, &options->device, consumed);
      case 2: {
        uint64_t v = 0;
        PARITY_RETURN_IF_ERROR(GetVarint(r, wt, &v, consumed));
        if (*consumed) options->allow_fallback = v != 0;
        return Status::Ok();
      }
      case 3:
        if (wt != kLengthDelimited) return Status::Ok();
        options->variant_targets.emplace_back();
        return GetString(r, wt, &options->variant_targets.back(), consumed);
      case 4: return GetString(r, wt, &options->case_name, consumed);
      default: return Status::Ok();
    }
  });
}

WireRequest::Kind KindOfField(uint32_t field) {
  using Kind = WireRequest::Kind;
  switch (field) {
    case 1: return Kind::kHello;
    case 2: return Kind::kGetCapabilities;
    case 3: return Kind::kCreateSession;
    case 4: return Kind::kRun;
    case 5: return Kind::kReleaseSession;
    case 6: return Kind::kShutdown;
    default: return Kind::kNone;
  }
}

// The body of one request kind; `field` is its number in Request's oneof.
Status ParseRequestBody(uint32_t field, std::string_view bytes, WireRequest* q) {
  q->kind = KindOfField(field);
  switch (field) {
    case 1:
      return ForEachField(bytes, [&](WireReader& r, uint32_t f, int wt, bool* c) -> Status {
        return f == 1 ? GetVarint(r, wt, &q->protocol_version, c) : Status::Ok();
      });
    case 2:
      return ForEachField(bytes, [&](WireReader& r, uint32_t f, int wt, bool* c) -> Status {
        return f == 1 ? GetString(r, wt, &q->device, c) : Status::Ok();
      });
    case 3:
      return ForEachField(bytes, [&](WireReader& r, uint32_t f, int wt, bool* c) -> Status {
        switch (f) {
          case 1: return GetString(r, wt, &q->model, c);
          case 2: return GetMessage(r, wt, c, [&](std::string_view b) { return ParseSessionOptions(b, &q->options); });
          case 3: return GetVarint(r, wt, &q->warm_repeats, c);
          case 4: return GetString(r, wt, &q->model_dir, c);
          default: return Status::Ok();
        }
      });
    case 4:
      return ForEachField(bytes, [&](WireReader& r, uint32_t f, int wt, bool* c) -> Status {
        switch (f) {
          case 1: return GetVarint(r, wt, &q->session_id, c);
          case 2:
            return GetMessage(r, wt, c, [&](std::string_view b) {
              q->inputs.emplace_back();
              return ParseValue(b, &q->inputs.back());
            });
          case 3:
            return GetMessage(r, wt, c, [&](std::string_view b) {
              q->keep.emplace_back();
              return ParseStateBinding(b, &q->keep.back());
            });
          case 4: {
            uint64_t v = 0;
            PARITY_RETURN_IF_ERROR(GetVarint(r, wt, &v, c));
            if (*c) q->return_kept = v != 0;
            return Status::Ok();
          }
          default: return Status::Ok();
        }
      });
    case 5:
      return ForEachField(bytes, [&](WireReader& r, uint32_t f, int wt, bool* c) -> Status {
        return f == 1 ? GetVarint(r, wt, &q->session_id, c) : Status::Ok();
      });
    case 6: return ForEachField(bytes, [](WireReader&, uint32_t, int, bool*) { return Status::Ok(); });
  }
  return Status::Ok();
}

// --- Encoding

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTag(std::string* out, uint32_t field, int wire_type) {
  PutVarint(out, uint64_t{field} << 3 | static_cast<uint64_t>(wire_type));
}

void PutUint(std::string* out, uint32_t field, uint64_t v) {
  PutTag(out, field, kVarint);
  PutVarint(out, v);
}

// int32 and enums: negative values are sign-extended to 10 bytes, as protobuf writes them.
void PutInt32(std::string* out, uint32_t field, int32_t v) {
  PutUint(out, field, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

void PutBytes(std::string* out, uint32_t field, std::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

void PutDouble(std::string* out, uint32_t field, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  PutTag(out, field, kFixed64);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(bits >> (8 * i)));
}

std::string EncodeValue(const WireValue& v) {
  std::string out;
  PutBytes(&out, 1, v.name);
  if (v.tensor) PutBytes(&out, 2, *v.tensor);
  if (v.sequence) PutBytes(&out, 3, *v.sequence);
  if (v.optional) PutBytes(&out, 4, *v.optional);
  return out;
}

std::string EncodeInfo(const WireAdapterInfo& info) {
  std::string out;
  PutUint(&out, 1, info.protocol_version);
  PutBytes(&out, 2, info.name);
  PutBytes(&out, 3, info.version);
  PutBytes(&out, 4, info.backend_version);
  for (const WireDevice& d : info.devices) {
    std::string device;
    PutBytes(&device, 1, d.name);
    PutBytes(&device, 2, d.kind);
    PutBytes(&device, 3, d.description);
    PutBytes(&out, 5, device);
  }
  PutUint(&out, 6, info.abi_version);
  PutUint(&out, 7, info.pid);
  return out;
}

std::string EncodeCapabilities(const WireCapabilities& caps) {
  std::string out;
  for (const std::string& op : caps.operators) PutBytes(&out, 1, op);
  for (int32_t type : caps.data_types) PutInt32(&out, 2, type);  // proto2: not packed
  for (const std::string& target : caps.variant_targets) PutBytes(&out, 3, target);
  PutUint(&out, 4, caps.honours_aliasing);
  PutUint(&out, 5, caps.can_forbid_fallback);
  PutUint(&out, 6, caps.declared);
  return out;
}

std::string EncodePair(const std::pair<std::string, std::string>& p) {
  std::string out;
  PutBytes(&out, 1, p.first);
  PutBytes(&out, 2, p.second);
  return out;
}

std::string EncodeSession(const WireSessionCreated& s) {
  std::string out;
  PutUint(&out, 1, s.session_id);
  PutDouble(&out, 2, s.load_ms_cold);
  for (double ms : s.load_ms_warm) PutDouble(&out, 3, ms);
  for (const auto& v : s.variants) PutBytes(&out, 4, EncodePair(v));
  for (const auto& p : s.placement) PutBytes(&out, 5, EncodePair(p));
  if (s.compile_ms_cold) PutDouble(&out, 6, *s.compile_ms_cold);
  for (double ms : s.compile_ms_warm) PutDouble(&out, 7, ms);
  if (s.kernels_compiled) PutUint(&out, 8, *s.kernels_compiled);
  if (s.kernels_deferred) PutUint(&out, 9, *s.kernels_deferred);
  return out;
}

std::string EncodeRun(const WireRunDone& run) {
  std::string out;
  for (const WireValue& v : run.outputs) PutBytes(&out, 1, EncodeValue(v));
  PutDouble(&out, 2, run.run_ms);
  if (run.run_peak_rss_kb) PutUint(&out, 3, *run.run_peak_rss_kb);
  if (run.rss_kb) PutUint(&out, 4, *run.rss_kb);
  if (run.cost) {
    std::string cost;
    PutUint(&cost, 1, run.cost->to_device_copies);
    PutUint(&cost, 2, run.cost->to_device_bytes);
    PutUint(&cost, 3, run.cost->to_host_copies);
    PutUint(&cost, 4, run.cost->to_host_bytes);
    PutUint(&cost, 5, run.cost->device_bytes);
    PutUint(&cost, 6, run.cost->device_peak_bytes);
    PutBytes(&out, 5, cost);
  }
  return out;
}

// --- Frames

Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) return Status(StatusCode::kUnavailable, "the reader closed the pipe");
      return IoError("write failed: ", std::strerror(errno));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status ReadAll(int fd, char* data, size_t size, bool* got_any) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("read failed: ", std::strerror(errno));
    }
    if (n == 0) {
      return *got_any ? IoError("the pipe closed inside a frame") : Status(StatusCode::kUnavailable, "the pipe closed");
    }
    *got_any = true;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status ParseRequest(std::string_view bytes, WireRequest* request) {
  *request = WireRequest();
  return ForEachField(bytes, [&](WireReader& r, uint32_t field, int wt, bool* consumed) -> Status {
    if (field < 1 || field > 6) return Status::Ok();
    return GetMessage(r, wt, consumed, [&](std::string_view body) {
      // A oneof keeps the last member set: a different kind starts afresh,
      // the same kind again merges into it.
      if (request->kind != KindOfField(field)) *request = WireRequest();
      return ParseRequestBody(field, body, request);
    });
  });
}

std::string SerializeResponse(const WireResponse& response) {
  std::string out;
  if (response.status) {
    std::string status;
    PutInt32(&status, 1, static_cast<int32_t>(response.status->first));
    PutBytes(&status, 2, response.status->second);
    PutBytes(&out, 1, status);
  }
  if (response.info) PutBytes(&out, 2, EncodeInfo(*response.info));
  if (response.capabilities) PutBytes(&out, 3, EncodeCapabilities(*response.capabilities));
  if (response.session) PutBytes(&out, 4, EncodeSession(*response.session));
  if (response.run) PutBytes(&out, 5, EncodeRun(*response.run));
  if (response.peak_rss_kb) PutUint(&out, 6, *response.peak_rss_kb);
  return out;
}

Status ReadRawFrame(int fd, std::string* payload) {
  unsigned char prefix[4];
  bool got_any = false;
  PARITY_RETURN_IF_ERROR(ReadAll(fd, reinterpret_cast<char*>(prefix), 4, &got_any));
  const uint32_t size =
      uint32_t{prefix[0]} | uint32_t{prefix[1]} << 8 | uint32_t{prefix[2]} << 16 | uint32_t{prefix[3]} << 24;
  if (size > protocol::kMaxFrameBytes) {
    return IoError("a frame announces ", size, " bytes, over the limit of ", protocol::kMaxFrameBytes,
                   ": corrupt stream");
  }
  // The buffer grows as bytes arrive (as in harness/protocol/framing.cc), so
  // a corrupt length prefix costs memory only for the bytes really sent.
  constexpr size_t kChunk = size_t{1} << 20;
  payload->clear();
  while (payload->size() < size) {
    const size_t offset = payload->size();
    const size_t step = std::min<size_t>(kChunk, size - offset);
    payload->resize(offset + step);
    PARITY_RETURN_IF_ERROR(ReadAll(fd, payload->data() + offset, step, &got_any));
  }
  return Status::Ok();
}

Status WriteRawFrame(int fd, std::string_view payload) {
  if (payload.size() > protocol::kMaxFrameBytes) {
    return ResourceExhausted("a message of ", payload.size(), " bytes is over the frame limit of ",
                             protocol::kMaxFrameBytes, " bytes");
  }
  std::string buffer(4, '\0');
  for (int i = 0; i < 4; ++i) buffer[i] = static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  buffer.append(payload);
  return WriteAll(fd, buffer.data(), buffer.size());
}

}  // namespace parity::worker
