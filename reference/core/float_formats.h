// Bit-exact conversion between double and the small float formats of ONNX:
// float16, bfloat16, the float8 types (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz,
// e8m0), float6 (e2m3, e3m2) and float4e2m1.
//
// Every conversion from double rounds once, straight from the double, to
// nearest-even (never through float32, which would round twice; ml_dtypes
// does round twice, so for doubles that float32 cannot hold we can differ
// from it, and we are the exact one). Overflow follows the ONNX Cast rules
// (docs/Operators.md, Cast, the two float 8 tables and `saturate`):
//   saturate = false: a value whose rounding is beyond the largest finite
//     becomes +-inf in e5m2, NaN in e4m3fn, e4m3fnuz, e5m2fnuz.
//   saturate = true: it becomes +-largest finite, and so does +-inf, in all
//     four float8 formats (e5m2 included: Inf -> FLT_MAX in the table).
//   `saturate` applies only to the float 8 types: float16 and bfloat16
//     always overflow to +-inf, float6 and float4e2m1 (no inf, no NaN)
//     always clamp to +-largest finite, inf included.
// NaN: stays NaN with its sign where the format has a signed NaN (the FNUZ
// formats have the single NaN 0x80). float6 and float4e2m1 have no NaN; the
// MX spec leaves the result to the implementation and we follow ml_dtypes,
// hence the ONNX reference Cast and its test data: +NaN -> the -0 pattern,
// -NaN -> +0. (onnx's docs/technical/float4.md says NaN -> 6 instead; ONNX's
// own test data used that until it switched to ml_dtypes in July 2025.)
// Formats without negative zero (the FNUZ ones) encode -0.0 as +0.
// float8e8m0 (2^(bits - 127), 0xFF = NaN, no sign, no zero): |x| rounds to
// a power of two by `e8m0_rounding`; a result out of the range 2^-127 ..
// 2^127 (inf always, zero unless rounding up) becomes 0xFE / 0x00 when
// saturating, else NaN 0xFF. EncodeE8M0 in float_formats.cc has the exact
// rules and where they come from.
#pragma once

#include <cstdint>

#include "reference/core/dtype.h"

namespace parity {

// Rounding for float8e8m0, which has only an exponent (Cast's round_mode):
// to the power of two nearest above |x| (up), nearest below (down), or the
// closer of those two, 1.5 * 2^e rounding up (nearest).
enum class E8M0Rounding { kUp, kDown, kNearest };

// `type` must satisfy IsSmallFloat(type). Returns the bit pattern in the low
// bits (16 for float16/bfloat16, 8, 6 or 4 for the others). Thread-safe; a
// handful of integer operations, meant to be called per element.
uint32_t EncodeSmallFloat(DataType type, double value, bool saturate = false,
                          E8M0Rounding e8m0_rounding = E8M0Rounding::kUp);
// The exact value of a bit pattern (higher bits than the format's are ignored).
// NaN patterns give a NaN (of the pattern's sign where the format's NaN has
// one; the FNUZ NaN 0x80 gives +NaN); float16 keeps its payload exactly,
// so EncodeSmallFloat(kFloat16, DecodeSmallFloat(kFloat16, b)) == b for all b.
double DecodeSmallFloat(DataType type, uint32_t bits);

// float32: exactly the nearest-even rounding of the double (overflow to inf).
inline float RoundToFloat(double value) { return static_cast<float>(value); }

}  // namespace parity
