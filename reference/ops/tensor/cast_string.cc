// Number <-> string conversion for Cast, following numpy's str cast.
#include "reference/ops/tensor/cast_string.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "reference/core/float_formats.h"

namespace parity::ops::tensor {
namespace {

// The shortest decimal digits (no trailing zeros) and decimal exponent of a
// finite, non-zero value such that value ~= d.ddd * 10^exponent reads back
// to the same element of `type`.
void ShortestDigits(DataType type, double value, std::string* digits, int* exponent) {
  char buf[64];
  std::string sci;
  if (type == DataType::kDouble) {
    auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
    sci.assign(buf, r.ptr);
  } else if (type == DataType::kFloat) {
    auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value), std::chars_format::scientific);
    sci.assign(buf, r.ptr);
  } else {
    // Small formats: the first precision whose correctly rounded decimal
    // reads back to the same bit pattern.
    const uint32_t bits = EncodeSmallFloat(type, value);
    for (int p = 1; p <= 17; ++p) {
      std::snprintf(buf, sizeof(buf), "%.*e", p - 1, value);
      if (EncodeSmallFloat(type, std::strtod(buf, nullptr)) == bits) break;
    }
    sci = buf;
  }
  // sci is "-d.ddde+XX" or "de-XX".
  const size_t e = sci.find('e');
  digits->clear();
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] >= '0' && sci[i] <= '9') digits->push_back(sci[i]);
  }
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
  *exponent = std::atoi(sci.c_str() + e + 1);
}

std::string FormatFloat(DataType type, double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  const std::string sign = std::signbit(value) ? "-" : "";
  if (value == 0) return sign + "0.0";
  const double magnitude = std::fabs(value);
  const double positional_limit = type == DataType::kDouble ? 1e16 : type == DataType::kFloat16 ? 1e3 : 1e6;
  std::string digits;
  int exponent = 0;
  ShortestDigits(type, value, &digits, &exponent);
  const int n = static_cast<int>(digits.size());
  if (magnitude >= 1e-4 && magnitude < positional_limit) {
    if (exponent < 0) return sign + "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    std::string integer = digits.substr(0, static_cast<size_t>(std::min(n, exponent + 1)));
    integer.append(static_cast<size_t>(std::max(0, exponent + 1 - n)), '0');
    const std::string fraction = n > exponent + 1 ? digits.substr(static_cast<size_t>(exponent + 1)) : "0";
    return sign + integer + "." + fraction;
  }
  std::string out = sign + digits.substr(0, 1);
  if (n > 1) out += "." + digits.substr(1);
  const int e = std::abs(exponent);
  out += exponent < 0 ? "e-" : "e+";
  if (e < 10) out += "0";
  return out + std::to_string(e);
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string FormatElement(const Tensor& tensor, int64_t i) {
  const DataType type = tensor.dtype();
  if (type == DataType::kBool) return tensor.GetInt64(i) ? "True" : "False";
  if (type == DataType::kUint64) return std::to_string(tensor.GetUint64(i));
  if (IsInteger(type)) return std::to_string(tensor.GetInt64(i));
  return FormatFloat(type, tensor.GetDouble(i));
}

bool ParseNumber(const std::string& text, ParsedNumber* out) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  std::string_view s(text.data() + begin, end - begin);
  *out = ParsedNumber{};
  out->text = std::string(s);
  size_t p = 0;
  if (p < s.size() && (s[p] == '+' || s[p] == '-')) out->negative = s[p++] == '-';
  const std::string_view body = s.substr(p);
  if (EqualsIgnoringCase(body, "inf") || EqualsIgnoringCase(body, "infinity")) {
    out->value = out->negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (EqualsIgnoringCase(body, "nan")) {
    out->value = std::nan("");
    return true;
  }
  // [digits][.digits][(e|E)[+-]digits], with at least one mantissa digit.
  size_t q = p, mantissa_digits = 0;
  while (q < s.size() && IsDigit(s[q])) ++q, ++mantissa_digits;
  const bool integer_only_so_far = q == s.size();
  if (q < s.size() && s[q] == '.') {
    ++q;
    while (q < s.size() && IsDigit(s[q])) ++q, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return false;
  if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
    ++q;
    if (q < s.size() && (s[q] == '+' || s[q] == '-')) ++q;
    size_t exponent_digits = 0;
    while (q < s.size() && IsDigit(s[q])) ++q, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  if (q != s.size()) return false;
  out->value = std::strtod(out->text.c_str(), nullptr);  // correctly rounded (glibc)
  if (integer_only_so_far) {
    const auto r = std::from_chars(body.data(), body.data() + body.size(), out->magnitude);
    out->is_integer = r.ec == std::errc();
  }
  return true;
}

}  // namespace parity::ops::tensor
