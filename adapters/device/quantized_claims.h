// What the device adapters' claims of 8-bit products share (the oneDNN and
// CUDA adapters' quantized.cc): the checks of the operands, their zero
// points and scales, and the DequantizeLinear and QuantizeLinear nodes
// around the product of a QDQ region.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include "adapters/device/lowering.h"

namespace parity::adapters {

inline bool IsEightBit(std::optional<DataType> t) { return t && (*t == DataType::kInt8 || *t == DataType::kUint8); }

// Element count of input i when its dims are static, else -1.
inline int64_t StaticCount(const NodeView& view, int i) {
  const std::vector<int64_t>* dims = view.input_dims(i);
  if (!dims) return -1;
  const StatusOr<int64_t> n = ElementCount(*dims);
  return n.ok() ? *n : -1;
}

// Operands x and w int8 or uint8, and their zero points (where given) of
// their own types.
inline Status RequireEightBitOperands(const NodeView& view, int x, int x_zero, int w, int w_zero) {
  for (int i : {x, w}) {
    if (!IsEightBit(view.input_type(i))) return NotLowered("input ", i, " is not int8 or uint8 (or its type is not known)");
  }
  for (auto [operand, zero] : {std::pair{x, x_zero}, std::pair{w, w_zero}}) {
    if (view.has_input(zero) && view.input_type(zero) != view.input_type(operand)) {
      return NotLowered("input ", zero, " (a zero point) is not of its operand's type");
    }
  }
  return Status::Ok();
}

// Scale inputs of float32, float16 or bfloat16 (each exact in double).
inline Status RequireScaleTypes(const NodeView& view, std::initializer_list<int> scales) {
  for (int i : scales) {
    const std::optional<DataType> t = view.input_type(i);
    if (!t || (*t != DataType::kFloat && *t != DataType::kFloat16 && *t != DataType::kBfloat16)) {
      return NotLowered("scale input ", i, " is not a float32, float16 or bfloat16 tensor");
    }
  }
  return Status::Ok();
}

// A DequantizeLinear a QDQ region takes in: its input, scale and zero point
// ("" when absent), and its node.
struct Dequantized {
  std::string data, scale, zero;
  int node = -1;
};

// The DequantizeLinear that makes `value` for the region's anchor alone:
// int8 or uint8 to float32, its scale per tensor or, where `channel_axis` is
// not -1, one per channel along that axis (`channels` of them), its zero
// point per tensor or, where `zero_per_channel`, like its scale. nullopt: no
// DequantizeLinear makes `value`; NotLowered: one does, but not so.
inline StatusOr<std::optional<Dequantized>> FindDequantize(const RegionView& region, const std::string& value,
                                                           int64_t channels, int64_t channel_axis,
                                                           bool zero_per_channel) {
  const int producer = region.producer(value);
  if (producer < 0 || region.taken(producer)) return std::optional<Dequantized>();
  const onnx::NodeProto& node = region.node(producer);
  if (node.op_type() != "DequantizeLinear" || !CanonicalDomain(node.domain()).empty()) return std::optional<Dequantized>();
  if (region.sole_consumer(producer) != region.anchor()) return NotLowered("a DequantizeLinear output read elsewhere");
  const NodeView dq = region.view(producer);
  if (!IsEightBit(dq.input_type(0))) {
    return NotLowered("a DequantizeLinear of ", DataTypeName(dq.input_type(0).value_or(DataType::kUndefined)));
  }
  if (dq.input_type(1) != DataType::kFloat) return NotLowered("a DequantizeLinear to a type other than float32");
  if (dq.has_input(2) && dq.input_type(2) != dq.input_type(0)) return NotLowered("a zero point of another type");
  if (dq.GetInt("block_size", 0) != 0) return NotLowered("a blocked DequantizeLinear (taken per tensor or channel only)");
  const int64_t count = StaticCount(dq, 1);
  if (count < 0) return NotLowered("the dims of a DequantizeLinear scale are not known before the run");
  if (count != 1) {
    const int64_t rank = dq.input_rank(0);
    int64_t axis = dq.GetInt("axis", 1);
    if (axis < 0) axis += rank;
    if (channel_axis < 0 || count != channels || axis != channel_axis || dq.input_rank(1) != 1) {
      return NotLowered("a DequantizeLinear scale of ", count, " elements that is not per output channel");
    }
  }
  if (dq.has_input(2)) {
    const int64_t zeros = StaticCount(dq, 2);
    if (zeros < 0) return NotLowered("the dims of a DequantizeLinear zero point are not known before the run");
    if (zeros != 1 && !(zero_per_channel && zeros == count)) {
      return NotLowered("a DequantizeLinear zero point of ", zeros, " elements (taken per tensor",
                        zero_per_channel ? ", or per channel as its scale)" : ")");
    }
  }
  return std::optional<Dequantized>(Dequantized{node.input(0), node.input(1), dq.has_input(2) ? node.input(2) : "", producer});
}

// The QuantizeLinear that alone reads node `anchor`'s output, per tensor
// (a float32 scale), to int8 or uint8; -1 when there is none.
inline int FindQuantize(const RegionView& region, int anchor) {
  const int q = region.sole_consumer(anchor);
  if (q < 0) return -1;
  const onnx::NodeProto& node = region.node(q);
  if (node.op_type() != "QuantizeLinear" || !CanonicalDomain(node.domain()).empty()) return -1;
  const NodeView view = region.view(q);
  if (view.input_type(1) != DataType::kFloat || StaticCount(view, 1) != 1) return -1;
  if (view.has_input(2) && StaticCount(view, 2) != 1) return -1;
  if (!IsEightBit(view.output_type(0))) return -1;
  return q;
}

}  // namespace parity::adapters
