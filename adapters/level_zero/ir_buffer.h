// The IR buffer of the graph extension's PZE_GRAPH_FORMAT_IR
// (ze_graph_ext.h): OpenVINO IR's XML and weights in one buffer, written by
// the adapter and read by a driver (the test driver here). Header-only:
// both sides include it.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/level_zero/ze_graph_ext.h"

namespace parity::adapters::level_zero {

struct IrParts {
  pze_graph_compiler_version compiler{};
  std::string_view xml;
  std::string_view weights;
};

// Little-endian integers of `bytes` bytes, as the IR buffer and the test
// driver's native blob hold them.
inline void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline uint64_t GetLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// The buffer for `xml` and `weights`, for a driver whose compiler is `compiler`.
inline std::string WriteIrBuffer(pze_graph_compiler_version compiler, std::string_view xml,
                                 std::string_view weights) {
  std::string out;
  out.reserve(4 + 8 + xml.size() + 8 + weights.size());
  PutLe(out, compiler.major, 2);
  PutLe(out, compiler.minor, 2);
  PutLe(out, xml.size(), 8);
  out.append(xml);
  PutLe(out, weights.size(), 8);
  out.append(weights);
  return out;
}

// The parts of a buffer (views into it), or nullopt when its sizes do not
// fit its length.
inline std::optional<IrParts> ReadIrBuffer(const uint8_t* data, size_t size) {
  if (!data || size < 4 + 8) return std::nullopt;
  IrParts parts;
  parts.compiler.major = static_cast<uint16_t>(GetLe(data, 2));
  parts.compiler.minor = static_cast<uint16_t>(GetLe(data + 2, 2));
  size_t at = 4;
  const uint64_t xml_size = GetLe(data + at, 8);
  at += 8;
  if (xml_size > size - at) return std::nullopt;
  parts.xml = std::string_view(reinterpret_cast<const char*>(data + at), static_cast<size_t>(xml_size));
  at += static_cast<size_t>(xml_size);
  if (size - at < 8) return std::nullopt;
  const uint64_t weights_size = GetLe(data + at, 8);
  at += 8;
  if (weights_size != size - at) return std::nullopt;
  parts.weights = std::string_view(reinterpret_cast<const char*>(data + at), static_cast<size_t>(weights_size));
  return parts;
}

}  // namespace parity::adapters::level_zero
