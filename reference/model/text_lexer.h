// Tokens and vocabulary of the ONNX textual syntax (onnx/onnx docs/Syntax.md,
// as implemented by onnx/defs/parser.cc): the lexer, the conversion of number
// spellings to values, the names of element and attribute types, and the one
// place that formats a syntax error with its line and column.
//
// The lexer is lazy: it scans one token ahead, so that the first error a
// reader sees is the first one in the text, whether it is a bad character or
// a misplaced token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reference/core/status.h"

namespace parity::text_syntax {

enum class TokenKind : uint8_t {
  kEnd,         // end of the input
  kIdentifier,  // [A-Za-z_][A-Za-z0-9_]*  (inf and nan are identifiers until a value is expected)
  kString,      // "..." with backslash escapes
  kInt,         // -?[0-9]+
  kFloat,       // -?[0-9]+ with '.' or an exponent, or -inf, -infinity, -nan
  kPunct,       // one of < > ( ) [ ] { } , : = . @ ?
  kError,       // a character or spelling that starts no token; text says why
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  // kIdentifier: the name. kString: the value, escapes removed. kInt, kFloat:
  // the spelling, sign included. kPunct: the character. kError: the message.
  std::string text;
  size_t offset = 0;  // of the first byte, in the input
  int line = 1;       // 1-based
  int column = 1;     // 1-based, in bytes

  bool Is(char punct) const { return kind == TokenKind::kPunct && text.size() == 1 && text[0] == punct; }
  bool IsIdentifier(std::string_view name) const { return kind == TokenKind::kIdentifier && text == name; }
};

class Lexer {
 public:
  explicit Lexer(std::string_view input) : input_(input) {}

  // The next token, not consumed. The reference stays valid until Next().
  const Token& Peek();
  Token Next();
  std::string_view input() const { return input_; }

 private:
  Token Scan();
  void SkipSpaceAndComments();
  void Advance();  // one byte, keeping line and column
  Token MakeError(const Token& start, std::string message) const;
  Token ScanString(Token token);
  Token ScanNumber(Token token);

  std::string_view input_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  std::optional<Token> peeked_;
};

// "what a reader would call this token": identifier 'x', number 1.5, ...
std::string DescribeToken(const Token& token);

// An INVALID_ARGUMENT status "LINE:COLUMN: expected EXPECTED, found TOKEN",
// followed by the source line and a caret. An error token reports its own
// message instead, since the lexer knows better what went wrong there.
Status SyntaxErrorAt(std::string_view input, const Token& at, std::string_view expected);
// The same position, with a message that is not of the "expected" form.
Status ErrorAt(std::string_view input, const Token& at, std::string_view message);

// True for the spellings of a float the onnx parser accepts where a word
// stands for a number: inf, infinity and nan in any letter case.
bool IsFloatWord(std::string_view word);

// Conversions of kInt / kFloat spellings (and float words). Each returns
// false when the value does not fit; a float overflows only when it rounds to
// infinity (underflow to zero or a subnormal is accepted, as onnx does).
bool SpellingToInt64(std::string_view spelling, int64_t* value);
bool SpellingToUint64(std::string_view spelling, uint64_t* value);
bool SpellingToFloat(std::string_view spelling, float* value);
bool SpellingToDouble(std::string_view spelling, double* value);

// --- Vocabulary: the names the syntax gives element types and attribute types.

// Which repeated field of TensorProto holds a tensor's values in the text.
enum class DataField : uint8_t { kInt32, kInt64, kUint64, kFloat, kDouble, kString };

// One element type as the text names it. For integer fields, [min, max] is
// the range of one entry; entries_per_element is 2 for complex types (real,
// imaginary); elements_per_entry is 2 or 4 for the packed 4-bit and 2-bit
// types, whose int32_data entries are bytes holding several elements
// (onnx.proto, TensorProto.int32_data).
struct ElementType {
  std::string_view name;
  int32_t data_type;  // a TensorProto.DataType value
  DataField field;
  int64_t min = 0;
  uint64_t max = 0;
  int entries_per_element = 1;
  int elements_per_entry = 1;
  // How the values are written, for types where that surprises: onnx's text
  // has no float literals for these, only their bit patterns.
  std::string_view how_written = {};
};

// By the names of onnx's PrimitiveTypeNameMap ("float", "float16", "int4"...)
// or by TensorProto.DataType value; nullptr when there is none.
const ElementType* FindElementType(std::string_view name);
const ElementType* FindElementType(int32_t data_type);
// seq, map, optional, sparse_tensor, opaque: the words that start a type
// other than a tensor type.
bool IsTypeKeyword(std::string_view name);
// An AttributeProto.AttributeType value by its name in "name: type = value"
// (onnx's AttributeTypeNameMap: int, floats, type_proto...); 0 (UNDEFINED)
// when the name is none of them.
int32_t FindAttributeType(std::string_view name);
// The name of an AttributeProto.AttributeType value; "undefined" for others.
std::string_view AttributeTypeName(int32_t type);

}  // namespace parity::text_syntax
