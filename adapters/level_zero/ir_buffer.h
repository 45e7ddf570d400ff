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

namespace ir_buffer_detail {
inline void PutU16(std::string& out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline uint64_t GetLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
}  // namespace ir_buffer_detail

// The buffer for `xml` and `weights`, for a driver whose compiler is `compiler`.
inline std::string WriteIrBuffer(pze_graph_compiler_version compiler, std::string_view xml,
                                 std::string_view weights) {
  using namespace ir_buffer_detail;
  std::string out;
  out.reserve(4 + 8 + xml.size() + 8 + weights.size());
  PutU16(out, compiler.major);
  PutU16(out, compiler.minor);
  PutU64(out, xml.size());
  out.append(xml);
  PutU64(out, weights.size());
  out.append(weights);
  return out;
}

// The parts of a buffer (views into it), or nullopt when its sizes do not
// fit its length.
inline std::optional<IrParts> ReadIrBuffer(const uint8_t* data, size_t size) {
  using namespace ir_buffer_detail;
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
