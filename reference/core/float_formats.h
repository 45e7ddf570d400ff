// Bit-exact conversion between double and the small float formats of ONNX:
// float16, bfloat16, the float8 types (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz,
// e8m0), float6 (e2m3, e3m2) and float4e2m1.
//
// Every conversion from double rounds once, straight from the double, to
// nearest-even (never through float32, which would round twice). Overflow
// follows the ONNX Cast rules (docs/Operators.md, Cast, "saturate"):
//   saturate = false: a finite value beyond the largest finite becomes +-inf
//     where the format has inf, else NaN (e4m3fn, e4m3fnuz, e5m2fnuz).
//   saturate = true: it becomes +-largest finite; inf too for the formats
//     without inf, while +-inf stays +-inf in formats that have it.
// Formats without NaN (float4e2m1, float6) always saturate, and NaN maps to
// the largest finite value of the sign bit (as ml_dtypes does). Formats
// without negative zero (the FNUZ ones) encode -0.0 as +0.
#pragma once

#include <cstdint>

#include "reference/core/dtype.h"

namespace parity {

// Rounding for float8e8m0, which has only an exponent (Cast's round_mode).
enum class E8M0Rounding { kUp, kDown, kNearest };

// `type` must satisfy IsSmallFloat(type). Returns the bit pattern in the low
// bits (16 for float16/bfloat16, 8, 6 or 4 for the others).
uint32_t EncodeSmallFloat(DataType type, double value, bool saturate = false,
                          E8M0Rounding e8m0_rounding = E8M0Rounding::kUp);
// The exact value of a bit pattern (higher bits than the format's are ignored).
double DecodeSmallFloat(DataType type, uint32_t bits);

// float32: exactly the nearest-even rounding of the double (overflow to inf).
inline float RoundToFloat(double value) { return static_cast<float>(value); }

}  // namespace parity
