// What the device adapters' claims of 8-bit products share (the oneDNN and
// CUDA adapters' quantized.cc): the checks of the operands, their zero
// points and scales, and the QuantizeLinear that may end a QDQ region.
#pragma once

#include <initializer_list>
#include <optional>

#include "adapters/device/lowering.h"

namespace parity::adapters {

inline bool IsEightBit(std::optional<DataType> t) { return t && (*t == DataType::kInt8 || *t == DataType::kUint8); }

// Element count of input i when its dims are static, else -1.
inline int64_t StaticCount(const NodeView& view, int i) {
  const std::vector<int64_t>* dims = view.input_dims(i);
  if (!dims) return -1;
  int64_t n = 1;
  for (int64_t d : *dims) n *= d;
  return n;
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
