// Cast, CastLike and BitCast (docs/Operators.md). Every conversion rounds
// once, from the exact input value, to nearest-even in the target type:
// float8 targets honour `saturate` (opset 19), float8e8m0 also `round_mode`
// (opset 24), the 4/6-bit floats always saturate (float_formats.h). Integer
// targets take integers wrapped to their width and floats truncated toward
// zero (out of range is undefined by the spec; we clamp to int64, then wrap).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "reference/core/float_formats.h"
#include "reference/ops/common.h"
#include "reference/ops/tensor/cast_string.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// The first opset of Cast whose type constraint lists `type`; 0 for a type
// Cast never takes (complex).
int CastTypeSince(DataType type) {
  switch (type) {
    case DataType::kString: return 9;
    case DataType::kBfloat16: return 13;
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: return 19;
    case DataType::kUint4:
    case DataType::kInt4: return 21;
    case DataType::kFloat4E2M1: return 23;
    case DataType::kFloat8E8M0: return 24;
    case DataType::kUint2:
    case DataType::kInt2: return 25;
    case DataType::kFloat6E2M3:
    case DataType::kFloat6E3M2: return 28;
    case DataType::kComplex64:
    case DataType::kComplex128:
    case DataType::kUndefined: return 0;
    default: return 1;
  }
}

struct CastOptions {
  bool saturate = true;
  E8M0Rounding e8m0_rounding = E8M0Rounding::kUp;
};

// An integer's value as a double rounded to odd (exact below 2^53): a later
// rounding of it to any format of at most 51 significand bits is then the
// correct single rounding of the integer (the round-to-odd theorem).
double RoundToOdd(bool negative, uint64_t magnitude) {
  if (magnitude < (uint64_t{1} << 53)) {
    const double d = static_cast<double>(magnitude);
    return negative ? -d : d;
  }
  int top = 63;
  while (!(magnitude >> top)) --top;
  const int shift = top - 52;
  uint64_t kept = magnitude >> shift;
  if (magnitude & ((uint64_t{1} << shift) - 1)) kept |= 1;
  const double d = std::ldexp(static_cast<double>(kept), shift);
  return negative ? -d : d;
}

bool IsFloat8WithSaturate(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

// Writes a real value (already exact or rounded to odd) into float element i.
void SetFloat(Tensor& out, int64_t i, double value, const CastOptions& opt) {
  const DataType t = out.dtype();
  if (t == DataType::kFloat8E8M0) {
    out.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(EncodeSmallFloat(t, value, opt.saturate, opt.e8m0_rounding));
  } else {
    // `saturate` applies to the float8 formats only; float16, bfloat16 and
    // float32 overflow to infinity.
    out.SetDouble(i, value, IsFloat8WithSaturate(t) && opt.saturate);
  }
}

// Writes an exact integer (sign and magnitude) into element i of any
// numeric or bool tensor.
void SetInteger(Tensor& out, int64_t i, bool negative, uint64_t magnitude, const CastOptions& opt) {
  const DataType t = out.dtype();
  if (t == DataType::kBool) {
    out.SetInt64(i, magnitude != 0);
  } else if (IsInteger(t)) {
    out.SetUint64(i, negative ? uint64_t{0} - magnitude : magnitude);  // wraps to the width
  } else if (t == DataType::kDouble) {
    const double d = static_cast<double>(magnitude);  // one correct rounding
    out.SetDouble(i, negative ? -d : d);
  } else {
    SetFloat(out, i, RoundToOdd(negative, magnitude), opt);
  }
}

Status CastElement(const KernelContext& ctx, const Tensor& in, int64_t i, Tensor& out, const CastOptions& opt) {
  const DataType from = in.dtype();
  const DataType to = out.dtype();
  if (to == DataType::kString) {
    out.mutable_strings()[static_cast<size_t>(i)] =
        from == DataType::kString ? in.strings()[static_cast<size_t>(i)] : FormatElement(in, i);
    return Status::Ok();
  }
  if (from == DataType::kString) {
    const std::string& text = in.strings()[static_cast<size_t>(i)];
    ParsedNumber number;
    if (!ParseNumber(text, &number)) {
      // "true"/"false" are accepted for bool; any other non-number is an
      // error (the spec leaves it undefined).
      if (to == DataType::kBool && (text == "true" || text == "True" || text == "false" || text == "False")) {
        out.SetInt64(i, text[0] == 't' || text[0] == 'T');
        return Status::Ok();
      }
      return ctx.Error("cannot cast string \"", text, "\" (element ", i, ") to ", DataTypeName(to));
    }
    if (number.is_integer) {
      SetInteger(out, i, number.negative, number.magnitude, opt);
    } else if (to == DataType::kFloat) {
      out.SetDouble(i, std::strtof(number.text.c_str(), nullptr));  // decimal -> float32 in one rounding
    } else if (IsFloatingPoint(to)) {
      SetFloat(out, i, number.value, opt);
    } else {
      out.SetDouble(i, number.value);  // integers: truncation toward zero; bool: != 0
    }
    return Status::Ok();
  }
  if (from == DataType::kBool || IsInteger(from)) {
    if (from == DataType::kUint64) {
      SetInteger(out, i, false, in.GetUint64(i), opt);
    } else {
      const int64_t v = in.GetInt64(i);
      SetInteger(out, i, v < 0, v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), opt);
    }
    return Status::Ok();
  }
  const double v = in.GetDouble(i);  // exact for every float format
  if (IsFloatingPoint(to)) {
    SetFloat(out, i, v, opt);
  } else {
    out.SetDouble(i, v);  // integers: truncate, clamp to int64, wrap; bool: != 0 (NaN is true)
  }
  return Status::Ok();
}

StatusOr<CastOptions> ReadCastOptions(const KernelContext& ctx) {
  CastOptions opt;
  opt.saturate = ctx.opset() < 19 || ctx.GetInt("saturate", 1) != 0;
  const std::string mode = ctx.GetString("round_mode", "up");
  if (mode == "up") opt.e8m0_rounding = E8M0Rounding::kUp;
  else if (mode == "down") opt.e8m0_rounding = E8M0Rounding::kDown;
  else if (mode == "nearest") opt.e8m0_rounding = E8M0Rounding::kNearest;
  else return ctx.Error("round_mode '", mode, "' must be up, down or nearest");
  return opt;
}

KernelResult CastTo(const KernelContext& ctx, const Tensor& input, DataType to, int since_opset_of_op) {
  for (DataType t : {input.dtype(), to}) {
    const int since = CastTypeSince(t);
    if (since == 0 || ctx.opset() < std::max(since, since_opset_of_op)) {
      return ctx.Error("type ", DataTypeName(t), " is not supported at opset ", ctx.opset());
    }
  }
  PARITY_ASSIGN_OR_RETURN(const CastOptions opt, ReadCastOptions(ctx));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, to, input.shape()));
  for (int64_t i = 0; i < input.size(); ++i) PARITY_RETURN_IF_ERROR(CastElement(ctx, input, i, out, opt));
  return Single(std::move(out));
}

StatusOr<DataType> ReadTargetType(const KernelContext& ctx) {
  const onnx::AttributeProto* attr = ctx.attribute("to");
  if (!attr) return ctx.Error("attribute 'to' is required");
  int64_t to = ctx.GetInt("to", 0);
  if (attr->has_s() && !attr->has_i()) {
    // Cast-1 named the type as a string ("FLOAT", "INT32", ...).
    onnx::TensorProto_DataType parsed;
    if (!onnx::TensorProto_DataType_Parse(attr->s(), &parsed)) {
      return ctx.Error("attribute 'to' = \"", attr->s(), "\" is not a tensor element type");
    }
    to = parsed;
  }
  if (to < 1 || to > kMaxDataType || !IsKnownDataType(static_cast<int32_t>(to))) {
    return ctx.Error("attribute 'to' = ", to, " is not a tensor element type");
  }
  return static_cast<DataType>(to);
}

}  // namespace

KernelResult CastKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const DataType to, ReadTargetType(ctx));
  return CastTo(ctx, *input, to, 1);
}

KernelResult CastLikeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* like, ctx.RequireTensor(1));
  return CastTo(ctx, *input, like->dtype(), 15);
}

KernelResult BitCastKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const DataType to, ReadTargetType(ctx));
  const DataType from = input->dtype();
  if (from == DataType::kString || to == DataType::kString) return ctx.Error("BitCast does not take strings");
  if (PackedBits(from) != PackedBits(to)) {
    return ctx.Error("cannot reinterpret ", DataTypeName(from), " (", PackedBits(from), " bits) as ", DataTypeName(to),
                     " (", PackedBits(to), " bits)");
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, to, input->shape()));
  const int bits = PackedBits(to);
  if (bits >= 8) {
    // Same storage width: the bytes are the little-endian bit pattern.
    if (input->byte_size() > 0) std::memcpy(out.mutable_raw_bytes(), input->raw_bytes(), input->byte_size());
    if (to == DataType::kBool) {
      // Our bool storage holds 0/1; any non-zero pattern reads as true.
      uint8_t* b = out.mutable_data<uint8_t>();
      for (int64_t i = 0; i < out.size(); ++i) b[i] = b[i] != 0;
    }
    return Single(std::move(out));
  }
  // Sub-byte types keep their pattern in the low bits of a byte; the signed
  // ones are stored sign-extended.
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const uint8_t* src = input->raw_bytes();
  uint8_t* dst = out.mutable_raw_bytes();
  for (int64_t i = 0; i < out.size(); ++i) {
    uint8_t pattern = src[i] & mask;
    if (IsSignedInteger(to) && (pattern >> (bits - 1))) pattern |= static_cast<uint8_t>(~mask);
    dst[i] = pattern;
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::tensor
