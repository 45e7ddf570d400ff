// The test driver's native blob (PZE_GRAPH_FORMAT_NATIVE): what
// pfnGetNativeBinary returns and pfnCreate reads back. All integers are
// little-endian:
//   offset 0       6 bytes   magic "PZENPU"
//   offset 6       uint16    blob format version (kNativeBlobFormat)
//   offset 8       uint16    compiler major, uint16 compiler minor
//   offset 12      uint32    N, the graph name's length in bytes
//   offset 16      N bytes   the graph's name (no NUL)
//   offset 16+N    uint64    P, the payload's length
//   offset 24+N    P bytes   the payload: OpenVINO's CPU plugin's
//                            CompiledModel::export_model bytes
// and nothing after it (24 + N + P bytes in all).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "adapters/level_zero/ir_buffer.h"
#include "adapters/level_zero/ze_graph_ext.h"

namespace parity::ze_test_driver {

using adapters::level_zero::GetLe;
using adapters::level_zero::PutLe;

inline constexpr char kNativeBlobMagic[6] = {'P', 'Z', 'E', 'N', 'P', 'U'};
inline constexpr uint16_t kNativeBlobFormat = 1;

struct NativeBlob {
  uint16_t format = kNativeBlobFormat;
  pze_graph_compiler_version compiler{};
  std::string name;
  std::string_view payload;  // a view into the bytes read
};


inline std::string WriteNativeBlob(pze_graph_compiler_version compiler, std::string_view name,
                                   std::string_view payload) {
  std::string out(kNativeBlobMagic, sizeof kNativeBlobMagic);
  PutLe(out, kNativeBlobFormat, 2);
  PutLe(out, compiler.major, 2);
  PutLe(out, compiler.minor, 2);
  PutLe(out, name.size(), 4);
  out.append(name);
  PutLe(out, payload.size(), 8);
  out.append(payload);
  return out;
}

// Reads the header and checks the sizes; the caller checks the format and
// compiler versions. False with `error` saying what is wrong otherwise.
inline bool ReadNativeBlob(const uint8_t* data, size_t size, NativeBlob* blob, std::string* error) {
  constexpr size_t kFixed = 6 + 2 + 4 + 4;
  if (!data || size < kFixed + 8) {
    *error = "the blob has " + std::to_string(size) + " bytes, fewer than the smallest blob's header (24)";
    return false;
  }
  if (std::string_view(reinterpret_cast<const char*>(data), 6) != std::string_view(kNativeBlobMagic, 6)) {
    *error = "the blob does not start with \"PZENPU\": it is not a blob of the ONNX Parity test NPU driver";
    return false;
  }
  blob->format = static_cast<uint16_t>(GetLe(data + 6, 2));
  blob->compiler.major = static_cast<uint16_t>(GetLe(data + 8, 2));
  blob->compiler.minor = static_cast<uint16_t>(GetLe(data + 10, 2));
  const uint64_t name_size = GetLe(data + 12, 4);
  if (name_size > size - kFixed - 8) {
    *error = "the blob's graph name length (" + std::to_string(name_size) + ") runs past its end";
    return false;
  }
  blob->name.assign(reinterpret_cast<const char*>(data + kFixed), static_cast<size_t>(name_size));
  const size_t at = kFixed + static_cast<size_t>(name_size);
  const uint64_t payload_size = GetLe(data + at, 8);
  if (payload_size != size - at - 8) {
    *error = "the blob's payload length (" + std::to_string(payload_size) + ") does not match the " +
             std::to_string(size - at - 8) + " bytes after its header";
    return false;
  }
  blob->payload = std::string_view(reinterpret_cast<const char*>(data + at + 8), static_cast<size_t>(payload_size));
  return true;
}

}  // namespace parity::ze_test_driver
