// Bit-exact encode/decode of the small float formats (see float_formats.h).
// Every format but float8e8m0 is described by one FormatSpec and handled by
// the same two routines; e8m0 (exponent only) has its own pair.
#include "reference/core/float_formats.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <limits>

namespace parity {
namespace {

// How a format spells NaN, and which NaN an encode produces. NaN payloads
// are unspecified by ONNX; we copy what its reference Cast produces (numpy
// for float16, ml_dtypes for the rest) so outputs match bit for bit.
enum class NanStyle {
  kIeeePayload,    // exponent all ones, mantissa != 0; float16 keeps the top
                   // payload bits both ways (numpy), so every pattern round-trips
  kIeeeCanonical,  // same patterns; encode gives the quiet NaN S.1..1.10..0
                   // (bfloat16, e5m2: ml_dtypes)
  kAllOnes,        // only S.1111.111 (e4m3fn); the sign is kept
  kNegativeZero,   // only the pattern of -0, 1.000...0 (the FNUZ formats)
  kNone,           // no NaN at all (float6, float4)
};

struct FormatSpec {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  uint32_t max_finite;  // magnitude bits (sign excluded) of the largest finite
  NanStyle nan;
  bool has_inf;  // if so, inf is the magnitude max_finite + 1
  // Cast's `saturate` applies only to the float8 types (Operators.md, Cast,
  // attribute `saturate`); float16 and bfloat16 overflow to inf regardless.
  bool honours_saturate;
  // No NaN and no inf: overflow, inf included, always clamps (OCP MX spec).
  bool always_saturates;
};

// Biases and limits: docs/docsgen/source/technical/float8.md and float4.md in
// onnx, the OCP MX v1.0 spec for float6, and ml_dtypes' finfo (all agree).
// Fields: exponent_bits, mantissa_bits, bias, max_finite, nan, has_inf,
// honours_saturate, always_saturates.
constexpr FormatSpec kFloat16{5, 10, 15, 0x7BFF, NanStyle::kIeeePayload, true, false, false};
constexpr FormatSpec kBfloat16{8, 7, 127, 0x7F7F, NanStyle::kIeeeCanonical, true, false, false};
constexpr FormatSpec kE4M3FN{4, 3, 7, 0x7E, NanStyle::kAllOnes, false, true, false};
constexpr FormatSpec kE4M3FNUZ{4, 3, 8, 0x7F, NanStyle::kNegativeZero, false, true, false};
constexpr FormatSpec kE5M2{5, 2, 15, 0x7B, NanStyle::kIeeeCanonical, true, true, false};
constexpr FormatSpec kE5M2FNUZ{5, 2, 16, 0x7F, NanStyle::kNegativeZero, false, true, false};
constexpr FormatSpec kE2M3{2, 3, 1, 0x1F, NanStyle::kNone, false, false, true};
constexpr FormatSpec kE3M2{3, 2, 3, 0x1F, NanStyle::kNone, false, false, true};
constexpr FormatSpec kE2M1{2, 1, 1, 0x7, NanStyle::kNone, false, false, true};

const FormatSpec* SpecFor(DataType type) {
  switch (type) {
    case DataType::kFloat16: return &kFloat16;
    case DataType::kBfloat16: return &kBfloat16;
    case DataType::kFloat8E4M3FN: return &kE4M3FN;
    case DataType::kFloat8E4M3FNUZ: return &kE4M3FNUZ;
    case DataType::kFloat8E5M2: return &kE5M2;
    case DataType::kFloat8E5M2FNUZ: return &kE5M2FNUZ;
    case DataType::kFloat6E2M3: return &kE2M3;
    case DataType::kFloat6E3M2: return &kE3M2;
    case DataType::kFloat4E2M1: return &kE2M1;
    default: return nullptr;  // e8m0 and every non-small-float type
  }
}

// IEEE binary64 layout.
constexpr int kDoubleMantissaBits = 52;
constexpr int kDoubleBias = 1023;
constexpr uint64_t kDoubleMantissaMask = (uint64_t{1} << kDoubleMantissaBits) - 1;
constexpr int kDoubleExponentAllOnes = 0x7FF;
constexpr uint64_t kDoubleQuietBit = uint64_t{1} << (kDoubleMantissaBits - 1);

// 2^e as a double, for e in the normal range of double. Exact, and cheaper
// than std::ldexp.
double Pow2(int e) {
  assert(e >= 1 - kDoubleBias && e <= kDoubleBias);
  return std::bit_cast<double>(static_cast<uint64_t>(e + kDoubleBias) << kDoubleMantissaBits);
}

int SignShift(const FormatSpec& spec) { return spec.exponent_bits + spec.mantissa_bits; }

// The NaN a format gets for a NaN (or out-of-range) input of the given sign;
// `payload` is the double's mantissa.
uint32_t EncodeNan(const FormatSpec& spec, uint32_t sign, uint64_t payload) {
  const int sign_shift = SignShift(spec);
  const uint32_t inf_bits = spec.max_finite + 1;
  switch (spec.nan) {
    case NanStyle::kIeeePayload: {
      // The top payload bits; if they are all zero the lowest is set so
      // that the result is still a NaN, not inf.
      const uint32_t top = static_cast<uint32_t>(payload >> (kDoubleMantissaBits - spec.mantissa_bits));
      return (sign << sign_shift) | inf_bits | (top != 0 ? top : 1u);
    }
    case NanStyle::kIeeeCanonical:
      return (sign << sign_shift) | inf_bits | (uint32_t{1} << (spec.mantissa_bits - 1));
    case NanStyle::kAllOnes: return (sign << sign_shift) | ((uint32_t{1} << sign_shift) - 1);
    case NanStyle::kNegativeZero: return uint32_t{1} << sign_shift;
    case NanStyle::kNone:
      // The MX spec leaves NaN conversion to the implementation. ml_dtypes,
      // and through it the ONNX reference Cast and its test data, returns
      // -quiet_NaN() where quiet_NaN() is the -0 pattern: +NaN -> -0 and
      // -NaN -> +0. We match that so our outputs equal ONNX's.
      return (sign ^ 1u) << sign_shift;
  }
  return 0;
}

// A value whose rounded magnitude is beyond the largest finite (inf included).
uint32_t EncodeOverflow(const FormatSpec& spec, uint32_t sign, bool saturate) {
  const uint32_t sign_bits = sign << SignShift(spec);
  if (spec.always_saturates || (saturate && spec.honours_saturate)) {
    return sign_bits | spec.max_finite;
  }
  if (spec.has_inf) return sign_bits | (spec.max_finite + 1);
  return EncodeNan(spec, sign, 0);
}

uint32_t EncodeWithSpec(const FormatSpec& spec, double value, bool saturate) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint32_t sign = static_cast<uint32_t>(bits >> 63);
  const int exponent_field = static_cast<int>((bits >> kDoubleMantissaBits) & 0x7FF);
  const uint64_t fraction = bits & kDoubleMantissaMask;

  if (exponent_field == kDoubleExponentAllOnes) {
    return fraction != 0 ? EncodeNan(spec, sign, fraction) : EncodeOverflow(spec, sign, saturate);
  }

  uint64_t magnitude = 0;
  // Zero and double subnormals (below 2^-1022) round to zero in every format:
  // the smallest nonzero of any of them is 2^-133 (bfloat16).
  if (exponent_field != 0) {
    const int exponent = exponent_field - kDoubleBias;
    const uint64_t significand = fraction | (uint64_t{1} << kDoubleMantissaBits);
    const int min_normal_exponent = 1 - spec.bias;
    // Bits to drop: those past the format's mantissa, and for a result below
    // the normal range as many more as its exponent is short. Past 63 every
    // bit is dropped and the value is under half the smallest subnormal.
    const int subnormal_shift = std::max(min_normal_exponent - exponent, 0);
    const int shift = std::min(kDoubleMantissaBits - spec.mantissa_bits + subnormal_shift, 63);
    const uint64_t kept = significand >> shift;
    const uint64_t dropped = significand & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    // For a normal result `kept` carries the implicit bit, which adds the 1
    // that separates the biased exponent (exponent + bias) from
    // exponent - min_normal_exponent. A subnormal result is just `kept`.
    magnitude = subnormal_shift == 0
                    ? (static_cast<uint64_t>(exponent - min_normal_exponent) << spec.mantissa_bits) + kept
                    : kept;
    // Round to nearest, ties to even. A carry out of the mantissa moves
    // into the exponent field, which is the right next value.
    if (dropped > half || (dropped == half && (kept & 1) != 0)) ++magnitude;
  }

  if (magnitude > spec.max_finite) return EncodeOverflow(spec, sign, saturate);
  // FNUZ formats have no -0: their 1.000...0 pattern is NaN.
  if (magnitude == 0 && spec.nan == NanStyle::kNegativeZero) return 0;
  return (sign << SignShift(spec)) | static_cast<uint32_t>(magnitude);
}

double DecodeWithSpec(const FormatSpec& spec, uint32_t bits) {
  const int sign_shift = SignShift(spec);
  bits &= (uint32_t{1} << (sign_shift + 1)) - 1;
  const bool negative = ((bits >> sign_shift) & 1) != 0;
  const uint32_t magnitude = bits & ((uint32_t{1} << sign_shift) - 1);
  const uint32_t mantissa = magnitude & ((uint32_t{1} << spec.mantissa_bits) - 1);
  const uint32_t exponent_field = magnitude >> spec.mantissa_bits;

  switch (spec.nan) {
    case NanStyle::kIeeePayload:
    case NanStyle::kIeeeCanonical:
      if (magnitude > spec.max_finite + 1) {
        // Sign and payload are kept; the canonical formats also set the quiet
        // bit, as their conversion to float32 in ml_dtypes does.
        const uint64_t payload = static_cast<uint64_t>(mantissa)
                                 << (kDoubleMantissaBits - spec.mantissa_bits);
        const uint64_t quiet = spec.nan == NanStyle::kIeeeCanonical ? kDoubleQuietBit : 0;
        return std::bit_cast<double>((uint64_t{negative} << 63) |
                                     (uint64_t{kDoubleExponentAllOnes} << kDoubleMantissaBits) | quiet |
                                     payload);
      }
      if (magnitude == spec.max_finite + 1) {
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      }
      break;
    case NanStyle::kAllOnes:
      if (magnitude == (uint32_t{1} << sign_shift) - 1) {
        return negative ? -std::numeric_limits<double>::quiet_NaN()
                        : std::numeric_limits<double>::quiet_NaN();
      }
      break;
    case NanStyle::kNegativeZero:
      if (negative && magnitude == 0) return std::numeric_limits<double>::quiet_NaN();
      break;
    case NanStyle::kNone: break;
  }

  // value = significand * 2^(exponent - mantissa_bits); a small integer
  // times a power of two, so the product is exact.
  const uint32_t significand =
      exponent_field == 0 ? mantissa : mantissa | (uint32_t{1} << spec.mantissa_bits);
  const int exponent = exponent_field == 0 ? 1 - spec.bias : static_cast<int>(exponent_field) - spec.bias;
  const double value = static_cast<double>(significand) * Pow2(exponent - spec.mantissa_bits);
  return negative ? -value : value;
}

// float8e8m0: the value 2^(bits - 127), 0xFF is NaN; no sign, no zero.
constexpr int kE8M0Bias = 127;
constexpr uint32_t kE8M0Nan = 0xFF;
constexpr uint32_t kE8M0Max = 0xFE;  // 2^127
constexpr uint32_t kE8M0Min = 0x00;  // 2^-127

// Rules (Operators.md, Cast, the E8M0 table and `round_mode`), read the way
// IEEE 754 reads its directed roundings:
//  - up gives the smallest value >= |x|, down the largest value <= |x|,
//    nearest the closer of the two powers of two around |x|, with ties
//    (1.5 * 2^e) going up;
//  - a result is out of range when no such value exists: up above 2^127,
//    down below 2^-127 (zero included), nearest when the power of two it
//    picks, with the exponent unbounded, is above 2^127 or below 2^-127
//    (range checked after rounding, as float8's "[x] > FLT_MAX"). So up
//    never underflows (0 -> E8M0_MIN) and down never overflows (a finite
//    x >= 2^127 -> E8M0_MAX), as round-to-+inf and to-zero do in IEEE;
//  - out of range gives E8M0_MAX / E8M0_MIN when saturating, NaN otherwise;
//    inf is always out of range, NaN stays NaN;
//  - the sign is ignored: the spec leaves negative input unspecified, and
//    the ONNX reference (to_float8e8m0) reads only the exponent bits.
uint32_t EncodeE8M0(double value, bool saturate, E8M0Rounding rounding) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const int exponent_field = static_cast<int>((bits >> kDoubleMantissaBits) & 0x7FF);
  const uint64_t fraction = bits & kDoubleMantissaMask;

  const uint32_t overflow = saturate ? kE8M0Max : kE8M0Nan;
  const uint32_t underflow = saturate ? kE8M0Min : kE8M0Nan;
  if (exponent_field == kDoubleExponentAllOnes) return fraction != 0 ? kE8M0Nan : overflow;

  // |x| = 2^exponent * 1.fraction. Zero and double subnormals (below
  // 2^-1022) are far below the range whatever the rounding.
  constexpr int kFarBelowRange = -2 * kDoubleBias;
  int exponent = exponent_field == 0 ? kFarBelowRange : exponent_field - kDoubleBias;
  switch (rounding) {
    case E8M0Rounding::kUp: exponent += fraction != 0 ? 1 : 0; break;
    case E8M0Rounding::kDown: break;
    case E8M0Rounding::kNearest: exponent += fraction >= kDoubleQuietBit ? 1 : 0; break;
  }
  if (exponent > kE8M0Bias) return rounding == E8M0Rounding::kDown ? kE8M0Max : overflow;
  if (exponent < -kE8M0Bias) return rounding == E8M0Rounding::kUp ? kE8M0Min : underflow;
  return static_cast<uint32_t>(exponent + kE8M0Bias);
}

double DecodeE8M0(uint32_t bits) {
  bits &= 0xFF;
  if (bits == kE8M0Nan) return std::numeric_limits<double>::quiet_NaN();
  return Pow2(static_cast<int>(bits) - kE8M0Bias);
}

}  // namespace

uint32_t EncodeSmallFloat(DataType type, double value, bool saturate, E8M0Rounding e8m0_rounding) {
  if (type == DataType::kFloat8E8M0) return EncodeE8M0(value, saturate, e8m0_rounding);
  const FormatSpec* spec = SpecFor(type);
  assert(spec != nullptr && "EncodeSmallFloat needs IsSmallFloat(type)");
  if (spec == nullptr) return 0;
  return EncodeWithSpec(*spec, value, saturate);
}

double DecodeSmallFloat(DataType type, uint32_t bits) {
  if (type == DataType::kFloat8E8M0) return DecodeE8M0(bits);
  const FormatSpec* spec = SpecFor(type);
  assert(spec != nullptr && "DecodeSmallFloat needs IsSmallFloat(type)");
  if (spec == nullptr) return std::numeric_limits<double>::quiet_NaN();
  return DecodeWithSpec(*spec, bits);
}

}  // namespace parity
