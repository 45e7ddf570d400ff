// The one rule for sizes computed from what a file says (dimensions times
// element size, offset plus length, count times stride): every product and
// sum is checked for overflow, and the result is a status naming what was
// being computed, never a wrapped number. Files are models, test data,
// case.json and protocol frames; a size from one of them is never trusted
// before it passes through here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "reference/core/status.h"

namespace parity {

// a * b and a + b, or nullopt when the exact result does not fit in int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// The product of non-negative factors; a negative factor or an overflow is
// an error naming `what` ("tensor 'w' element count", "gates * hidden").
StatusOr<int64_t> CheckedProduct(std::initializer_list<int64_t> factors, std::string_view what);
// The sum of two non-negative terms, likewise ("external data offset + length").
StatusOr<int64_t> CheckedSum(int64_t a, int64_t b, std::string_view what);

// Bytes of `count` elements of `bits` each, packed (sub-byte types round up
// to whole bytes), checked.
StatusOr<int64_t> PackedByteCount(int64_t count, int bits, std::string_view what);

}  // namespace parity
