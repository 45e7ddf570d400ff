// Tokens, vocabulary, number conversions and syntax-error messages of the
// ONNX textual syntax; see text_lexer.h.
#include "reference/model/text_lexer.h"

#include <locale.h>  // newlocale, strtof_l: parsing that ignores the process locale

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>

#include "onnx/onnx-ml.pb.h"

namespace parity::text_syntax {
namespace {

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentifierStart(char c) { return IsAsciiAlpha(c) || c == '_'; }
bool IsIdentifierPart(char c) { return IsIdentifierStart(c) || IsAsciiDigit(c); }
// The whitespace set of onnx's parser (locale-independent isspace).
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool IsPunct(char c) {
  switch (c) {
    case '<': case '>': case '(': case ')': case '[': case ']': case '{': case '}':
    case ',': case ':': case '=': case '.': case '@': case '?':
      return true;
    default:
      return false;
  }
}

// Text shown in messages: printable ASCII kept, other bytes as \xNN, long
// text cut, so that a message stays one readable line whatever the input.
std::string Printable(std::string_view text, size_t limit) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < limit; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

// The C locale, made once: strtof/strtod follow the process locale, whose
// decimal separator may not be '.'.
locale_t CLocale() {
  static const locale_t locale = newlocale(LC_ALL_MASK, "C", nullptr);
  return locale;
}

// from_chars gives the correctly rounded value but reports underflow as an
// error; strtof_l then tells underflow (finite result, accepted) from
// overflow (infinite result, rejected), as onnx's LocaleIndependentStof does.
template <typename Float>
bool SpellingToFloating(std::string_view spelling, Float* value) {
  const char* begin = spelling.data();
  const char* end = begin + spelling.size();
  Float result = 0;
  auto [ptr, ec] = std::from_chars(begin, end, result);
  if (ec == std::errc() && ptr == end) {
    *value = result;
    return true;
  }
  if (ec != std::errc::result_out_of_range || ptr != end) return false;
  locale_t locale = CLocale();
  if (locale == static_cast<locale_t>(nullptr)) return false;
  std::string copy(spelling);  // strtof_l needs a terminated string
  char* parsed_end = nullptr;
  errno = 0;
  if constexpr (sizeof(Float) == sizeof(float)) {
    result = strtof_l(copy.c_str(), &parsed_end, locale);
  } else {
    result = strtod_l(copy.c_str(), &parsed_end, locale);
  }
  if (parsed_end != copy.c_str() + copy.size() || std::isinf(result)) return false;
  *value = result;
  return true;
}

}  // namespace

void Lexer::Advance() {
  if (pos_ >= input_.size()) return;
  if (input_[pos_] == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  ++pos_;
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < input_.size()) {
    char c = input_[pos_];
    if (IsSpace(c)) {
      Advance();
    } else if (c == '#') {  // a comment runs to the end of its line
      while (pos_ < input_.size() && input_[pos_] != '\n') Advance();
    } else {
      return;
    }
  }
}

const Token& Lexer::Peek() {
  if (!peeked_) peeked_ = Scan();
  return *peeked_;
}

Token Lexer::Next() {
  if (!peeked_) return Scan();
  Token token = std::move(*peeked_);
  peeked_.reset();
  return token;
}

Token Lexer::MakeError(const Token& start, std::string message) const {
  Token error = start;
  error.kind = TokenKind::kError;
  error.text = std::move(message);
  return error;
}

Token Lexer::Scan() {
  SkipSpaceAndComments();
  Token token;
  token.offset = pos_;
  token.line = line_;
  token.column = column_;
  if (pos_ >= input_.size()) return token;  // kEnd
  char c = input_[pos_];
  if (IsIdentifierStart(c)) {
    size_t from = pos_;
    while (pos_ < input_.size() && IsIdentifierPart(input_[pos_])) Advance();
    token.kind = TokenKind::kIdentifier;
    token.text = std::string(input_.substr(from, pos_ - from));
    return token;
  }
  if (c == '"') return ScanString(std::move(token));
  if (IsAsciiDigit(c) || c == '-') return ScanNumber(std::move(token));
  if (IsPunct(c)) {
    Advance();
    token.kind = TokenKind::kPunct;
    token.text = std::string(1, c);
    return token;
  }
  Advance();  // so that a caller that goes on anyway cannot loop here
  return MakeError(token, "unexpected character '" + Printable(std::string_view(&c, 1), 1) + "'");
}

// A backslash takes the next byte as it is (\" is a quote, \\ a backslash,
// \n the letter n): onnx's escapes, which have no control sequences.
Token Lexer::ScanString(Token token) {
  Advance();  // opening quote
  std::string value;
  while (pos_ < input_.size() && input_[pos_] != '"') {
    if (input_[pos_] == '\\') {
      Advance();
      if (pos_ >= input_.size()) break;
    }
    value.push_back(input_[pos_]);
    Advance();
  }
  if (pos_ >= input_.size()) return MakeError(token, "unterminated string: expected a closing '\"' before the end of input");
  Advance();  // closing quote
  token.kind = TokenKind::kString;
  token.text = std::move(value);
  return token;
}

// Numbers as onnx reads them: digits with at most one '.', then an optional
// exponent; or a minus sign before inf, infinity or nan. A leading '.' or '+'
// starts no number, as in onnx.
Token Lexer::ScanNumber(Token token) {
  size_t from = pos_;
  if (input_[pos_] == '-') {
    Advance();
    if (pos_ < input_.size() && IsAsciiAlpha(input_[pos_])) {
      size_t word_from = pos_;
      while (pos_ < input_.size() && IsIdentifierPart(input_[pos_])) Advance();
      if (!IsFloatWord(input_.substr(word_from, pos_ - word_from))) {
        return MakeError(token, "expected a number after '-' (digits, inf, infinity or nan)");
      }
      token.kind = TokenKind::kFloat;
      token.text = std::string(input_.substr(from, pos_ - from));
      return token;
    }
    if (pos_ >= input_.size() || !IsAsciiDigit(input_[pos_])) {
      return MakeError(token, "expected a number after '-' (digits, inf, infinity or nan)");
    }
  }
  bool is_float = false;
  while (pos_ < input_.size() && IsAsciiDigit(input_[pos_])) Advance();
  if (pos_ < input_.size() && input_[pos_] == '.') {
    is_float = true;
    Advance();
    while (pos_ < input_.size() && IsAsciiDigit(input_[pos_])) Advance();
  }
  if (pos_ < input_.size() && (input_[pos_] == 'e' || input_[pos_] == 'E')) {
    is_float = true;
    Advance();
    if (pos_ < input_.size() && (input_[pos_] == '+' || input_[pos_] == '-')) Advance();
    if (pos_ >= input_.size() || !IsAsciiDigit(input_[pos_])) {
      return MakeError(token, "malformed number: expected digits in the exponent");
    }
    while (pos_ < input_.size() && IsAsciiDigit(input_[pos_])) Advance();
  }
  token.kind = is_float ? TokenKind::kFloat : TokenKind::kInt;
  token.text = std::string(input_.substr(from, pos_ - from));
  return token;
}

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kIdentifier: return "identifier '" + Printable(token.text, 60) + "'";
    case TokenKind::kString: return "string \"" + Printable(token.text, 60) + "\"";
    case TokenKind::kInt:
    case TokenKind::kFloat: return "number " + Printable(token.text, 60);
    case TokenKind::kPunct: return "'" + token.text + "'";
    case TokenKind::kError: return "invalid text";
  }
  return "token";
}

Status ErrorAt(std::string_view input, const Token& at, std::string_view message) {
  // The source line of the error, cut to a window around the column so that
  // a minified one-line model still gives a short message.
  size_t offset = std::min(at.offset, input.size());
  size_t newline_before = offset == 0 ? std::string_view::npos : input.rfind('\n', offset - 1);
  size_t line_start = newline_before == std::string_view::npos ? 0 : newline_before + 1;
  size_t line_end = input.find('\n', offset);
  if (line_end == std::string_view::npos) line_end = input.size();
  size_t caret = offset - line_start;
  constexpr size_t kWindow = 60;
  size_t window_start = caret > kWindow ? caret - kWindow : 0;
  std::string_view shown = input.substr(line_start + window_start,
                                        std::min(line_end - line_start - window_start, 2 * kWindow));
  std::string context = Printable(shown, 2 * kWindow);
  // Printable may widen bytes before the caret (\xNN); count them in.
  size_t caret_column = Printable(shown.substr(0, std::min(caret - window_start, shown.size())), 2 * kWindow).size();
  return InvalidArgument(at.line, ":", at.column, ": ", message, "\n  ", context, "\n  ",
                         std::string(caret_column, ' '), "^");
}

Status SyntaxErrorAt(std::string_view input, const Token& at, std::string_view expected) {
  if (at.kind == TokenKind::kError) return ErrorAt(input, at, at.text);
  return ErrorAt(input, at, StrCat("expected ", expected, ", found ", DescribeToken(at)));
}

bool IsFloatWord(std::string_view word) {
  std::string lower;
  for (char c : word) lower.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c);
  return lower == "inf" || lower == "infinity" || lower == "nan";
}

bool SpellingToInt64(std::string_view spelling, int64_t* value) {
  const char* end = spelling.data() + spelling.size();
  auto [ptr, ec] = std::from_chars(spelling.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

bool SpellingToUint64(std::string_view spelling, uint64_t* value) {
  // from_chars on an unsigned type rejects the minus sign itself.
  const char* end = spelling.data() + spelling.size();
  auto [ptr, ec] = std::from_chars(spelling.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

bool SpellingToFloat(std::string_view spelling, float* value) { return SpellingToFloating(spelling, value); }
bool SpellingToDouble(std::string_view spelling, double* value) { return SpellingToFloating(spelling, value); }

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr uint64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr std::string_view kBits16 = "values are 16-bit patterns, integers from 0 to 65535";
constexpr std::string_view kBits8 = "values are 8-bit patterns, integers from 0 to 255";
constexpr std::string_view kBits6 = "values are 6-bit patterns, integers from 0 to 63";
constexpr std::string_view kPacked = "values are bytes that each pack several elements, integers from 0 to 255";

// Names and numbers as in onnx's PrimitiveTypeNameMap and TensorProto.DataType.
constexpr std::array<ElementType, 28> kElementTypes = {{
    {"float", onnx::TensorProto::FLOAT, DataField::kFloat},
    {"uint8", onnx::TensorProto::UINT8, DataField::kInt32, 0, 255},
    {"int8", onnx::TensorProto::INT8, DataField::kInt32, -128, 127},
    {"uint16", onnx::TensorProto::UINT16, DataField::kInt32, 0, 65535},
    {"int16", onnx::TensorProto::INT16, DataField::kInt32, -32768, 32767},
    {"int32", onnx::TensorProto::INT32, DataField::kInt32, kInt32Min, kInt32Max},
    {"int64", onnx::TensorProto::INT64, DataField::kInt64},
    {"string", onnx::TensorProto::STRING, DataField::kString},
    {"bool", onnx::TensorProto::BOOL, DataField::kInt32, 0, 1},
    {"float16", onnx::TensorProto::FLOAT16, DataField::kInt32, 0, 65535, 1, 1, kBits16},
    {"double", onnx::TensorProto::DOUBLE, DataField::kDouble},
    {"uint32", onnx::TensorProto::UINT32, DataField::kUint64, 0, std::numeric_limits<uint32_t>::max()},
    {"uint64", onnx::TensorProto::UINT64, DataField::kUint64, 0, std::numeric_limits<uint64_t>::max()},
    {"complex64", onnx::TensorProto::COMPLEX64, DataField::kFloat, 0, 0, 2},
    {"complex128", onnx::TensorProto::COMPLEX128, DataField::kDouble, 0, 0, 2},
    {"bfloat16", onnx::TensorProto::BFLOAT16, DataField::kInt32, 0, 65535, 1, 1, kBits16},
    {"float8e4m3fn", onnx::TensorProto::FLOAT8E4M3FN, DataField::kInt32, 0, 255, 1, 1, kBits8},
    {"float8e4m3fnuz", onnx::TensorProto::FLOAT8E4M3FNUZ, DataField::kInt32, 0, 255, 1, 1, kBits8},
    {"float8e5m2", onnx::TensorProto::FLOAT8E5M2, DataField::kInt32, 0, 255, 1, 1, kBits8},
    {"float8e5m2fnuz", onnx::TensorProto::FLOAT8E5M2FNUZ, DataField::kInt32, 0, 255, 1, 1, kBits8},
    {"float8e8m0", onnx::TensorProto::FLOAT8E8M0, DataField::kInt32, 0, 255, 1, 1, kBits8},
    {"uint4", onnx::TensorProto::UINT4, DataField::kInt32, 0, 255, 1, 2, kPacked},
    {"int4", onnx::TensorProto::INT4, DataField::kInt32, 0, 255, 1, 2, kPacked},
    {"float4e2m1", onnx::TensorProto::FLOAT4E2M1, DataField::kInt32, 0, 255, 1, 2, kPacked},
    {"uint2", onnx::TensorProto::UINT2, DataField::kInt32, 0, 255, 1, 4, kPacked},
    {"int2", onnx::TensorProto::INT2, DataField::kInt32, 0, 255, 1, 4, kPacked},
    {"float6e2m3", onnx::TensorProto::FLOAT6E2M3, DataField::kInt32, 0, 63, 1, 1, kBits6},
    {"float6e3m2", onnx::TensorProto::FLOAT6E3M2, DataField::kInt32, 0, 63, 1, 1, kBits6},
}};

}  // namespace

const ElementType* FindElementType(std::string_view name) {
  for (const ElementType& type : kElementTypes) {
    if (type.name == name) return &type;
  }
  return nullptr;
}

const ElementType* FindElementType(int32_t data_type) {
  for (const ElementType& type : kElementTypes) {
    if (type.data_type == data_type) return &type;
  }
  return nullptr;
}

bool IsTypeKeyword(std::string_view name) {
  return name == "seq" || name == "map" || name == "optional" || name == "sparse_tensor" || name == "opaque";
}

namespace {

struct AttributeTypeEntry {
  std::string_view name;
  int32_t type;
};

// The names of onnx's AttributeTypeNameMap, used in "name: type = value".
constexpr std::array<AttributeTypeEntry, 14> kAttributeTypes = {{
    {"float", onnx::AttributeProto::FLOAT},
    {"int", onnx::AttributeProto::INT},
    {"string", onnx::AttributeProto::STRING},
    {"tensor", onnx::AttributeProto::TENSOR},
    {"graph", onnx::AttributeProto::GRAPH},
    {"sparse_tensor", onnx::AttributeProto::SPARSE_TENSOR},
    {"type_proto", onnx::AttributeProto::TYPE_PROTO},
    {"floats", onnx::AttributeProto::FLOATS},
    {"ints", onnx::AttributeProto::INTS},
    {"strings", onnx::AttributeProto::STRINGS},
    {"tensors", onnx::AttributeProto::TENSORS},
    {"graphs", onnx::AttributeProto::GRAPHS},
    {"sparse_tensors", onnx::AttributeProto::SPARSE_TENSORS},
    {"type_protos", onnx::AttributeProto::TYPE_PROTOS},
}};

}  // namespace

int32_t FindAttributeType(std::string_view name) {
  for (const AttributeTypeEntry& entry : kAttributeTypes) {
    if (entry.name == name) return entry.type;
  }
  return onnx::AttributeProto::UNDEFINED;
}

std::string_view AttributeTypeName(int32_t type) {
  for (const AttributeTypeEntry& entry : kAttributeTypes) {
    if (entry.type == type) return entry.name;
  }
  return "undefined";
}

}  // namespace parity::text_syntax
