// Conversions between numbers and strings for Cast (docs/Operators.md,
// Cast): numbers print as numpy's float-to-str cast does, strings parse as
// decimal or scientific literals and the words INF, +INF, -INF, NaN.
#pragma once

#include <cstdint>
#include <string>

#include "reference/core/tensor.h"

namespace parity::ops::tensor {

// Element i of a numeric tensor as numpy prints it when casting to str:
// integers in decimal, bool as "True"/"False", floats with the fewest
// digits that read back to the same value of their own type, positional for
// 1e-4 <= |x| < 1e3 (float16), 1e6 (float32 and the smaller formats) or
// 1e16 (double), otherwise scientific ("1e-07", "1.5e+16").
std::string FormatElement(const Tensor& tensor, int64_t i);

// A parsed numeric literal: an exact integer when the text is one, else a
// double (correctly rounded from the decimal text; +-inf, NaN included).
struct ParsedNumber {
  bool is_integer = false;
  bool negative = false;
  uint64_t magnitude = 0;  // when is_integer
  double value = 0.0;      // always (rounded for large integers)
  std::string text;        // the trimmed text, for correctly rounded float32 parsing
};
// False when `text` is not a number literal (surrounding whitespace is allowed).
bool ParseNumber(const std::string& text, ParsedNumber* out);

}  // namespace parity::ops::tensor
