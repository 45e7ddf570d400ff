// Recursive-descent parser of the ONNX textual syntax; see text_syntax.h.
// Each method reads one construct of docs/Syntax.md's grammar and names it.
#include "reference/model/text_syntax.h"

#include <cstdint>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reference/model/text_lexer.h"

namespace parity {
namespace {

using google::protobuf::RepeatedPtrField;
using text_syntax::DataField;
using text_syntax::ElementType;
using text_syntax::FindElementType;
using text_syntax::IsTypeKeyword;
using text_syntax::Token;
using text_syntax::TokenKind;
using AttributeType = onnx::AttributeProto::AttributeType;

std::string_view AttributeTypeText(AttributeType type) { return text_syntax::AttributeTypeName(type); }

bool IsSingletonType(AttributeType type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT:
    case onnx::AttributeProto::INT:
    case onnx::AttributeProto::STRING:
    case onnx::AttributeProto::TENSOR:
    case onnx::AttributeProto::GRAPH:
    case onnx::AttributeProto::SPARSE_TENSOR:
    case onnx::AttributeProto::TYPE_PROTO:
      return true;
    default:
      return false;
  }
}

AttributeType ElementTypeOfList(AttributeType type) {
  switch (type) {
    case onnx::AttributeProto::FLOATS: return onnx::AttributeProto::FLOAT;
    case onnx::AttributeProto::INTS: return onnx::AttributeProto::INT;
    case onnx::AttributeProto::STRINGS: return onnx::AttributeProto::STRING;
    case onnx::AttributeProto::TENSORS: return onnx::AttributeProto::TENSOR;
    case onnx::AttributeProto::GRAPHS: return onnx::AttributeProto::GRAPH;
    case onnx::AttributeProto::SPARSE_TENSORS: return onnx::AttributeProto::SPARSE_TENSOR;
    case onnx::AttributeProto::TYPE_PROTOS: return onnx::AttributeProto::TYPE_PROTO;
    default: return type;
  }
}

constexpr std::string_view kTypeExpectation =
    "a type (an element type such as float or int64, or seq(...), map(...), optional(...), "
    "sparse_tensor(...), opaque(...))";
constexpr std::string_view kAttributeTypeExpectation =
    "an attribute type (int, float, string, tensor, graph, type_proto, sparse_tensor, or a plural such as ints)";

// Counts one level of nesting for as long as it lives; the parser checks
// too_deep() before it recurses further.
class NestingScope {
 public:
  explicit NestingScope(int* depth) : depth_(depth) { ++*depth_; }
  ~NestingScope() { --*depth_; }
  NestingScope(const NestingScope&) = delete;
  NestingScope& operator=(const NestingScope&) = delete;
  bool too_deep() const { return *depth_ > kMaxTextNesting; }

 private:
  int* depth_;
};

class TextParser {
 public:
  explicit TextParser(std::string_view text) : lexer_(text) {}

  Status Model(onnx::ModelProto* model);
  Status Graph(onnx::GraphProto* graph);
  Status Function(onnx::FunctionProto* function);
  bool AtEnd() { return Peek().kind == TokenKind::kEnd; }
  Status ExpectEnd(std::string_view after) {
    if (AtEnd()) return Status::Ok();
    return Expected(StrCat("end of input ", after));
  }

 private:
  // --- Tokens.
  const Token& Peek() { return lexer_.Peek(); }
  bool PeekIs(char punct) { return Peek().Is(punct); }
  bool Accept(char punct) {
    if (!PeekIs(punct)) return false;
    lexer_.Next();
    return true;
  }
  Status Expected(std::string_view what) { return text_syntax::SyntaxErrorAt(lexer_.input(), Peek(), what); }
  Status ExpectedAt(const Token& at, std::string_view what) {
    return text_syntax::SyntaxErrorAt(lexer_.input(), at, what);
  }
  Status ErrorAt(const Token& at, std::string_view message) {
    return text_syntax::ErrorAt(lexer_.input(), at, message);
  }
  Status Expect(char punct, std::string_view context) {
    if (Accept(punct)) return Status::Ok();
    return Expected(StrCat("'", punct, "' ", context));
  }
  Status ExpectArrow(std::string_view context);
  Status Identifier(std::string* out, std::string_view what);
  Status QuotableIdentifier(std::string* out, std::string_view what);
  Status StringLiteral(std::string* out, std::string_view what);
  Status IntLiteral(int64_t* out, std::string_view what);
  Status TooDeep() {
    return ErrorAt(Peek(), StrCat("nesting too deep: types and graph attributes may nest at most ", kMaxTextNesting,
                                  " levels"));
  }

  // --- Types and values.
  bool NextIsType();
  Status Type(onnx::TypeProto* type);
  template <typename TensorLikeType>
  Status ShapeSuffix(TensorLikeType* tensor_type);
  Status Dimensions(onnx::TensorShapeProto* shape);
  Status ValueInfo(onnx::ValueInfoProto* info, std::string_view what);
  Status TensorValue(onnx::TensorProto* tensor, const onnx::TypeProto& type, const Token& type_at);
  Status TensorElement(onnx::TensorProto* tensor, const ElementType& element);
  Status StringPairs(RepeatedPtrField<onnx::StringStringEntryProto>* pairs);
  Status StringPairList(RepeatedPtrField<onnx::StringStringEntryProto>* pairs);
  Status OpsetImports(RepeatedPtrField<onnx::OperatorSetIdProto>* opsets);

  // --- Attributes.
  Status Attributes(RepeatedPtrField<onnx::AttributeProto>* attributes);
  Status Attribute(onnx::AttributeProto* attribute, const std::string& name);
  Status AttributeValueList(onnx::AttributeProto* attribute);
  Status SingleAttributeValue(onnx::AttributeProto* attribute, AttributeType expected, std::string* int_spelling);

  // --- Graphs, nodes and functions.
  void IdList(RepeatedPtrField<std::string>* ids);
  Status Node(onnx::NodeProto* node);
  Status NodeList(RepeatedPtrField<onnx::NodeProto>* nodes);
  Status FunctionValues(RepeatedPtrField<std::string>* names, RepeatedPtrField<onnx::ValueInfoProto>* infos,
                        std::string_view which);

  text_syntax::Lexer lexer_;
  int depth_ = 0;
};

// onnx reads "=>" as '=' then '>' with nothing between them, so "= >" is no arrow.
Status TextParser::ExpectArrow(std::string_view context) {
  if (!PeekIs('=')) return Expected(StrCat("'=>' ", context));
  Token equals = lexer_.Next();
  if (PeekIs('>') && Peek().offset == equals.offset + 1) {
    lexer_.Next();
    return Status::Ok();
  }
  return Expected(StrCat("'>' right after '=' (the arrow '=>' ", context, ")"));
}

Status TextParser::Identifier(std::string* out, std::string_view what) {
  if (Peek().kind != TokenKind::kIdentifier) return Expected(what);
  *out = lexer_.Next().text;
  return Status::Ok();
}

Status TextParser::QuotableIdentifier(std::string* out, std::string_view what) {
  if (Peek().kind != TokenKind::kIdentifier && Peek().kind != TokenKind::kString) {
    return Expected(StrCat(what, " (an identifier or a quoted name)"));
  }
  *out = lexer_.Next().text;
  return Status::Ok();
}

Status TextParser::StringLiteral(std::string* out, std::string_view what) {
  if (Peek().kind != TokenKind::kString) return Expected(StrCat(what, " (a quoted string)"));
  *out = lexer_.Next().text;
  return Status::Ok();
}

Status TextParser::IntLiteral(int64_t* out, std::string_view what) {
  if (Peek().kind != TokenKind::kInt) return Expected(StrCat(what, " (an integer)"));
  Token token = lexer_.Next();
  if (!text_syntax::SpellingToInt64(token.text, out)) return ErrorAt(token, "integer out of the range of int64");
  return Status::Ok();
}

bool TextParser::NextIsType() {
  const Token& token = Peek();
  return token.kind == TokenKind::kIdentifier && (FindElementType(token.text) || IsTypeKeyword(token.text));
}

// type ::= prim-type shape? | seq(type) | map(prim-type, type) | optional(type)
//        | sparse_tensor(prim-type shape?) | opaque(...)
Status TextParser::Type(onnx::TypeProto* type) {
  NestingScope scope(&depth_);
  if (scope.too_deep()) return TooDeep();
  if (Peek().kind != TokenKind::kIdentifier) return Expected(kTypeExpectation);
  Token name = lexer_.Next();
  if (const ElementType* element = FindElementType(name.text)) {
    onnx::TypeProto::Tensor* tensor = type->mutable_tensor_type();
    tensor->set_elem_type(element->data_type);
    return ShapeSuffix(tensor);
  }
  if (name.text == "seq" || name.text == "optional") {
    PARITY_RETURN_IF_ERROR(Expect('(', StrCat("after '", name.text, "'")));
    onnx::TypeProto* element = name.text == "seq" ? type->mutable_sequence_type()->mutable_elem_type()
                                                  : type->mutable_optional_type()->mutable_elem_type();
    PARITY_RETURN_IF_ERROR(Type(element));
    return Expect(')', StrCat("to close ", name.text, "(...)"));
  }
  if (name.text == "map") {
    PARITY_RETURN_IF_ERROR(Expect('(', "after 'map'"));
    onnx::TypeProto::Map* map = type->mutable_map_type();
    const ElementType* key = Peek().kind == TokenKind::kIdentifier ? FindElementType(Peek().text) : nullptr;
    if (key == nullptr) return Expected("a map key type (an element type such as int64 or string)");
    lexer_.Next();
    map->set_key_type(key->data_type);
    PARITY_RETURN_IF_ERROR(Expect(',', "after the map key type"));
    PARITY_RETURN_IF_ERROR(Type(map->mutable_value_type()));
    return Expect(')', "to close map(...)");
  }
  if (name.text == "sparse_tensor") {
    PARITY_RETURN_IF_ERROR(Expect('(', "after 'sparse_tensor'"));
    const ElementType* element = Peek().kind == TokenKind::kIdentifier ? FindElementType(Peek().text) : nullptr;
    if (element == nullptr) return Expected("an element type such as float inside sparse_tensor(...)");
    lexer_.Next();
    onnx::TypeProto::SparseTensor* sparse = type->mutable_sparse_tensor_type();
    sparse->set_elem_type(element->data_type);
    PARITY_RETURN_IF_ERROR(ShapeSuffix(sparse));
    return Expect(')', "to close sparse_tensor(...)");
  }
  if (name.text == "opaque") {
    // opaque() | opaque(name) | opaque(domain, name); a lone dotted name is
    // the name, not a domain (docs/Syntax.md).
    PARITY_RETURN_IF_ERROR(Expect('(', "after 'opaque'"));
    onnx::TypeProto::Opaque* opaque = type->mutable_opaque_type();
    if (Accept(')')) return Status::Ok();
    std::string dotted;
    PARITY_RETURN_IF_ERROR(Identifier(&dotted, "an opaque type's name or domain"));
    while (Accept('.')) {
      std::string part;
      PARITY_RETURN_IF_ERROR(Identifier(&part, "a name after '.'"));
      dotted += "." + part;
    }
    if (Accept(',')) {
      opaque->set_domain(dotted);
      PARITY_RETURN_IF_ERROR(Identifier(opaque->mutable_name(), "an opaque type's name after its domain"));
    } else {
      opaque->set_name(dotted);
    }
    return Expect(')', "to close opaque(...)");
  }
  return ExpectedAt(name, kTypeExpectation);
}

// After an element type: no brackets is a scalar (a shape of rank 0), "[]" a
// tensor of unknown rank (no shape), "[d, ...]" a tensor of known rank.
template <typename TensorLikeType>
Status TextParser::ShapeSuffix(TensorLikeType* tensor_type) {
  if (!Accept('[')) {
    tensor_type->mutable_shape();
    return Status::Ok();
  }
  if (Accept(']')) return Status::Ok();
  PARITY_RETURN_IF_ERROR(Dimensions(tensor_type->mutable_shape()));
  return Expect(']', "to close the dimensions");
}

// tensor-dim ::= '?' | quotable-id | int-constant
Status TextParser::Dimensions(onnx::TensorShapeProto* shape) {
  do {
    const Token& token = Peek();
    if (Accept('?')) {
      shape->add_dim();
    } else if (token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kString) {
      shape->add_dim()->set_dim_param(lexer_.Next().text);
    } else if (token.kind == TokenKind::kInt) {
      Token number = lexer_.Next();
      int64_t value = 0;
      if (!text_syntax::SpellingToInt64(number.text, &value) || value < 0) {
        return ErrorAt(number, "a dimension must be a non-negative integer that fits in int64");
      }
      shape->add_dim()->set_dim_value(value);
    } else {
      return Expected("a dimension ('?', a name or a non-negative integer)");
    }
  } while (Accept(','));
  return Status::Ok();
}

// value-info ::= type? quotable-id
Status TextParser::ValueInfo(onnx::ValueInfoProto* info, std::string_view what) {
  if (NextIsType()) PARITY_RETURN_IF_ERROR(Type(info->mutable_type()));
  return QuotableIdentifier(info->mutable_name(), what);
}

// The data of a tensor whose type was just read: '{' values '}' or an
// external-data list '[' "key": "value", ... ']'.
Status TextParser::TensorValue(onnx::TensorProto* tensor, const onnx::TypeProto& type, const Token& type_at) {
  if (!type.has_tensor_type()) {
    return ErrorAt(type_at, "a tensor value needs a tensor type before its name, such as float[2] w = {1, 2}");
  }
  const onnx::TypeProto::Tensor& tensor_type = type.tensor_type();
  const ElementType* element = FindElementType(tensor_type.elem_type());
  if (element == nullptr) return ErrorAt(type_at, "unknown element type");  // the table gave it; a bug otherwise
  tensor->set_data_type(element->data_type);
  if (!tensor_type.has_shape()) {
    return ErrorAt(type_at, "a tensor value needs known dimensions ('[]' leaves the rank unknown; a scalar has none)");
  }
  // Saturates: a count beyond any input's length can only mismatch.
  constexpr uint64_t kSaturated = uint64_t{1} << 62;
  uint64_t elements = 1;
  for (const onnx::TensorShapeProto::Dimension& dim : tensor_type.shape().dim()) {
    if (!dim.has_dim_value()) return ErrorAt(type_at, "a tensor value needs numeric dimensions, not '?' or a name");
    tensor->add_dims(dim.dim_value());
    uint64_t size = static_cast<uint64_t>(dim.dim_value());
    elements = (size != 0 && elements > kSaturated / size) ? kSaturated : elements * size;
  }
  if (PeekIs('[')) {
    lexer_.Next();
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    PARITY_RETURN_IF_ERROR(StringPairs(tensor->mutable_external_data()));
    return Expect(']', "to close the external-data entries");
  }
  if (!PeekIs('{')) return Expected("'{' with the tensor's values or '[' with its external-data entries");
  Token open = lexer_.Next();
  if (!Accept('}')) {
    do {
      PARITY_RETURN_IF_ERROR(TensorElement(tensor, *element));
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect('}', "to close the tensor's values"));
  }
  uint64_t expected = element->elements_per_entry > 1
                          ? (elements + element->elements_per_entry - 1) / element->elements_per_entry
                          : elements * element->entries_per_element;
  uint64_t given = 0;
  switch (element->field) {
    case DataField::kInt32: given = tensor->int32_data_size(); break;
    case DataField::kInt64: given = tensor->int64_data_size(); break;
    case DataField::kUint64: given = tensor->uint64_data_size(); break;
    case DataField::kFloat: given = tensor->float_data_size(); break;
    case DataField::kDouble: given = tensor->double_data_size(); break;
    case DataField::kString: given = tensor->string_data_size(); break;
  }
  if (given != expected) {
    std::string unit = element->elements_per_entry > 1 ? " packed bytes"
                       : element->entries_per_element > 1 ? " numbers (real and imaginary parts)"
                                                          : " values";
    return ErrorAt(open, StrCat("this ", element->name, " tensor of ", elements, elements == 1 ? " element" : " elements",
                                " needs ", expected, unit, ", found ", given));
  }
  return Status::Ok();
}

Status TextParser::TensorElement(onnx::TensorProto* tensor, const ElementType& element) {
  const Token& token = Peek();
  switch (element.field) {
    case DataField::kString:
      if (token.kind != TokenKind::kString) return Expected("a quoted string for this string tensor");
      tensor->add_string_data(lexer_.Next().text);
      return Status::Ok();
    case DataField::kFloat:
    case DataField::kDouble: {
      bool is_number = token.kind == TokenKind::kInt || token.kind == TokenKind::kFloat ||
                       (token.kind == TokenKind::kIdentifier && text_syntax::IsFloatWord(token.text));
      if (!is_number) return Expected(StrCat("a number for this ", element.name, " tensor"));
      Token number = lexer_.Next();
      if (element.field == DataField::kFloat) {
        float value = 0;
        if (!text_syntax::SpellingToFloat(number.text, &value)) return ErrorAt(number, "number overflows float");
        tensor->add_float_data(value);
      } else {
        double value = 0;
        if (!text_syntax::SpellingToDouble(number.text, &value)) return ErrorAt(number, "number overflows double");
        tensor->add_double_data(value);
      }
      return Status::Ok();
    }
    case DataField::kInt32:
    case DataField::kInt64:
    case DataField::kUint64:
      break;
  }
  std::string note = element.how_written.empty() ? "" : StrCat(" (", element.how_written, ")");
  if (token.kind != TokenKind::kInt) return Expected(StrCat("an integer for this ", element.name, " tensor", note));
  Token number = lexer_.Next();
  if (element.field == DataField::kUint64) {
    uint64_t value = 0;
    if (!text_syntax::SpellingToUint64(number.text, &value) || value > element.max) {
      return ErrorAt(number, StrCat("value out of the range of ", element.name));
    }
    tensor->add_uint64_data(value);
    return Status::Ok();
  }
  int64_t value = 0;
  if (!text_syntax::SpellingToInt64(number.text, &value)) return ErrorAt(number, "integer out of the range of int64");
  if (element.field == DataField::kInt64) {
    tensor->add_int64_data(value);
    return Status::Ok();
  }
  if (value < element.min || (value > 0 && static_cast<uint64_t>(value) > element.max)) {
    return ErrorAt(number, StrCat("value out of the range of ", element.name, " (", element.min, " to ", element.max,
                                  ")", note));
  }
  tensor->add_int32_data(static_cast<int32_t>(value));
  return Status::Ok();
}

// str-str (',' str-str)*, at least one entry.
Status TextParser::StringPairs(RepeatedPtrField<onnx::StringStringEntryProto>* pairs) {
  do {
    onnx::StringStringEntryProto* pair = pairs->Add();
    PARITY_RETURN_IF_ERROR(StringLiteral(pair->mutable_key(), "a key"));
    PARITY_RETURN_IF_ERROR(Expect(':', "between a key and its value"));
    PARITY_RETURN_IF_ERROR(StringLiteral(pair->mutable_value(), "a value"));
  } while (Accept(','));
  return Status::Ok();
}

// '[' ']' | '[' str-str (',' str-str)* ']', as metadata_props are written.
Status TextParser::StringPairList(RepeatedPtrField<onnx::StringStringEntryProto>* pairs) {
  PARITY_RETURN_IF_ERROR(Expect('[', "to open the list of \"key\": \"value\" entries"));
  if (Accept(']')) return Status::Ok();
  PARITY_RETURN_IF_ERROR(StringPairs(pairs));
  return Expect(']', "to close the list of \"key\": \"value\" entries");
}

// '[' "domain" ':' version, ... ']'
Status TextParser::OpsetImports(RepeatedPtrField<onnx::OperatorSetIdProto>* opsets) {
  PARITY_RETURN_IF_ERROR(Expect('[', "to open the opset imports"));
  if (Accept(']')) return Status::Ok();
  do {
    onnx::OperatorSetIdProto* opset = opsets->Add();
    PARITY_RETURN_IF_ERROR(StringLiteral(opset->mutable_domain(), "an opset domain such as \"\" or \"com.microsoft\""));
    PARITY_RETURN_IF_ERROR(Expect(':', "between an opset domain and its version"));
    int64_t version = 0;
    PARITY_RETURN_IF_ERROR(IntLiteral(&version, "an opset version"));
    opset->set_version(version);
  } while (Accept(','));
  return Expect(']', "to close the opset imports");
}

// attr-list ::= '<' attr (',' attr)* '>', the '<' not yet read. A name given
// twice is an error (onnx's parser keeps both; its checker rejects them).
Status TextParser::Attributes(RepeatedPtrField<onnx::AttributeProto>* attributes) {
  PARITY_RETURN_IF_ERROR(Expect('<', "to open the attributes"));
  std::set<std::string> names;
  do {
    Token name_at = Peek();
    std::string name;
    PARITY_RETURN_IF_ERROR(Identifier(&name, "an attribute name"));
    if (!names.insert(name).second) return ErrorAt(name_at, StrCat("attribute '", name, "' is given twice"));
    PARITY_RETURN_IF_ERROR(Attribute(attributes->Add(), name));
  } while (Accept(','));
  return Expect('>', "to close the attributes");
}

// attr ::= name (':' attr-type)? '=' (single-attr-value | '[' values ']'),
// the name already read.
Status TextParser::Attribute(onnx::AttributeProto* attribute, const std::string& name) {
  attribute->set_name(name);
  if (Accept(':')) {
    Token type_at = Peek();
    std::string type_name;
    PARITY_RETURN_IF_ERROR(Identifier(&type_name, kAttributeTypeExpectation));
    int32_t type = text_syntax::FindAttributeType(type_name);
    if (type == onnx::AttributeProto::UNDEFINED) return ExpectedAt(type_at, kAttributeTypeExpectation);
    attribute->set_type(static_cast<AttributeType>(type));
  }
  PARITY_RETURN_IF_ERROR(Expect('=', StrCat("and a value after attribute '", name, "'")));
  if (PeekIs('[')) return AttributeValueList(attribute);
  return SingleAttributeValue(attribute, attribute->type(), nullptr);
}

// '[' single-attr-value, ... ']'. Unlike onnx's parser, which keeps only
// int, float and string elements and silently drops the rest, lists of
// tensors, graphs and types are kept; a list that mixes int and float values
// is all floats (each int read again from its spelling, so "-0" stays -0.0);
// other mixtures and @references in lists are errors.
Status TextParser::AttributeValueList(onnx::AttributeProto* attribute) {
  Token open = lexer_.Next();  // '['
  const AttributeType declared = attribute->type();
  if (declared != onnx::AttributeProto::UNDEFINED && IsSingletonType(declared)) {
    return ErrorAt(open, StrCat("attribute '", attribute->name(), "' is declared ", AttributeTypeText(declared),
                                ", a single value, but is given a list"));
  }
  if (Accept(']')) {
    if (declared == onnx::AttributeProto::UNDEFINED) {
      return ErrorAt(open, StrCat("an empty list needs a declared type, as in '", attribute->name(), ": ints = []'"));
    }
    return Status::Ok();
  }
  const AttributeType element_expected = ElementTypeOfList(declared);
  std::vector<onnx::AttributeProto> elements;
  std::vector<std::string> int_spellings;
  AttributeType kind = onnx::AttributeProto::UNDEFINED;
  do {
    Token element_at = Peek();
    onnx::AttributeProto element;
    element.set_name(attribute->name());  // for messages
    std::string spelling;
    PARITY_RETURN_IF_ERROR(SingleAttributeValue(&element, element_expected, &spelling));
    if (element.has_ref_attr_name()) {
      return ErrorAt(element_at, "an attribute reference '@name' stands for a whole attribute, not a list element");
    }
    AttributeType type = element.type();
    if (kind == onnx::AttributeProto::UNDEFINED || kind == type) {
      kind = type;
    } else if ((kind == onnx::AttributeProto::INT && type == onnx::AttributeProto::FLOAT) ||
               (kind == onnx::AttributeProto::FLOAT && type == onnx::AttributeProto::INT)) {
      kind = onnx::AttributeProto::FLOAT;
    } else {
      return ErrorAt(element_at, StrCat("a list cannot mix ", AttributeTypeText(kind), " and ",
                                        AttributeTypeText(type), " values"));
    }
    elements.push_back(std::move(element));
    int_spellings.push_back(std::move(spelling));
  } while (Accept(','));
  PARITY_RETURN_IF_ERROR(Expect(']', "to close the list of values"));
  for (size_t i = 0; i < elements.size(); ++i) {
    onnx::AttributeProto& element = elements[i];
    switch (kind) {
      case onnx::AttributeProto::INT: attribute->add_ints(element.i()); break;
      case onnx::AttributeProto::FLOAT: {
        float value = element.f();
        if (element.type() == onnx::AttributeProto::INT) text_syntax::SpellingToFloat(int_spellings[i], &value);
        attribute->add_floats(value);
        break;
      }
      case onnx::AttributeProto::STRING: attribute->add_strings(element.s()); break;
      case onnx::AttributeProto::TENSOR: attribute->add_tensors()->Swap(element.mutable_t()); break;
      case onnx::AttributeProto::GRAPH: attribute->add_graphs()->Swap(element.mutable_g()); break;
      case onnx::AttributeProto::TYPE_PROTO: attribute->add_type_protos()->Swap(element.mutable_tp()); break;
      default: return ErrorAt(open, "unsupported list element");  // no single value parses to another type
    }
  }
  switch (kind) {
    case onnx::AttributeProto::INT: attribute->set_type(onnx::AttributeProto::INTS); break;
    case onnx::AttributeProto::FLOAT: attribute->set_type(onnx::AttributeProto::FLOATS); break;
    case onnx::AttributeProto::STRING: attribute->set_type(onnx::AttributeProto::STRINGS); break;
    case onnx::AttributeProto::TENSOR: attribute->set_type(onnx::AttributeProto::TENSORS); break;
    case onnx::AttributeProto::GRAPH: attribute->set_type(onnx::AttributeProto::GRAPHS); break;
    default: attribute->set_type(onnx::AttributeProto::TYPE_PROTOS); break;
  }
  return Status::Ok();
}

// single-attr-value ::= tensor-constant | type | graph | number | string | '@' name.
// An identifier is a type when it names one, a float when it is inf or nan,
// and otherwise the name of a graph, in that order (as in onnx). An integer
// is a float where the declared type is float. int_spelling, when given,
// receives an integer's spelling.
Status TextParser::SingleAttributeValue(onnx::AttributeProto* attribute, AttributeType expected,
                                        std::string* int_spelling) {
  const Token start = Peek();
  if (start.kind == TokenKind::kIdentifier) {
    if (NextIsType()) {
      onnx::TypeProto type;
      PARITY_RETURN_IF_ERROR(Type(&type));
      if (PeekIs('{') || PeekIs('=') || Peek().kind == TokenKind::kIdentifier) {
        attribute->set_type(onnx::AttributeProto::TENSOR);
        onnx::TensorProto* tensor = attribute->mutable_t();
        // onnx sets the tensor's name even when the text gives none.
        tensor->set_name(Peek().kind == TokenKind::kIdentifier ? lexer_.Next().text : "");
        Accept('=');
        PARITY_RETURN_IF_ERROR(TensorValue(tensor, type, start));
      } else {
        attribute->set_type(onnx::AttributeProto::TYPE_PROTO);
        attribute->mutable_tp()->Swap(&type);
      }
    } else if (text_syntax::IsFloatWord(start.text)) {
      lexer_.Next();
      float value = 0;
      text_syntax::SpellingToFloat(start.text, &value);  // inf and nan always convert
      attribute->set_type(onnx::AttributeProto::FLOAT);
      attribute->set_f(value);
    } else {
      attribute->set_type(onnx::AttributeProto::GRAPH);
      PARITY_RETURN_IF_ERROR(Graph(attribute->mutable_g()));
    }
  } else if (Accept('@')) {
    // A reference takes its type from the declaration, if any; it has no value to check.
    return QuotableIdentifier(attribute->mutable_ref_attr_name(), "the name of a function attribute after '@'");
  } else if (start.kind == TokenKind::kInt) {
    lexer_.Next();
    if (expected == onnx::AttributeProto::FLOAT) {
      float value = 0;  // read from the spelling, as onnx does, so "-0" is -0.0
      if (!text_syntax::SpellingToFloat(start.text, &value)) return ErrorAt(start, "number overflows float");
      attribute->set_type(onnx::AttributeProto::FLOAT);
      attribute->set_f(value);
    } else {
      int64_t value = 0;
      if (!text_syntax::SpellingToInt64(start.text, &value)) return ErrorAt(start, "integer out of the range of int64");
      attribute->set_type(onnx::AttributeProto::INT);
      attribute->set_i(value);
      if (int_spelling != nullptr) *int_spelling = start.text;
    }
  } else if (start.kind == TokenKind::kFloat) {
    lexer_.Next();
    float value = 0;
    if (!text_syntax::SpellingToFloat(start.text, &value)) return ErrorAt(start, "number overflows float");
    attribute->set_type(onnx::AttributeProto::FLOAT);
    attribute->set_f(value);
  } else if (start.kind == TokenKind::kString) {
    attribute->set_type(onnx::AttributeProto::STRING);
    attribute->set_s(lexer_.Next().text);
  } else {
    return Expected("an attribute value (a number, a string, a tensor, a type, a graph or @name)");
  }
  if (expected != onnx::AttributeProto::UNDEFINED && attribute->type() != expected) {
    return ErrorAt(start, StrCat("attribute '", attribute->name(), "' expects a value of type ",
                                 AttributeTypeText(expected), ", found a value of type ",
                                 AttributeTypeText(attribute->type())));
  }
  return Status::Ok();
}

// A node's inputs or outputs, as onnx reads them: names separated by commas,
// where an empty place before a comma is an empty name ("Op(a, , c)" has
// three inputs, "Op(,)" one) and a trailing comma after a name adds nothing.
void TextParser::IdList(RepeatedPtrField<std::string>* ids) {
  auto next_name = [this](std::string* name) {
    const Token& token = Peek();
    if (token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kString) {
      *name = lexer_.Next().text;
      return true;
    }
    name->clear();
    return token.Is(',');
  };
  std::string name;
  if (!next_name(&name)) return;
  ids->Add(std::move(name));
  while (Accept(',')) {
    if (!next_name(&name)) break;
    ids->Add(std::move(name));
  }
}

// node ::= ('[' name? ']')? outputs '=' (domain '.')* op (':' overload)?
//          attr-list? '(' inputs ')' attr-list?   (attributes before or after the inputs, not both)
Status TextParser::Node(onnx::NodeProto* node) {
  if (Accept('[')) {
    const Token& token = Peek();
    bool named = token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kString;
    node->set_name(named ? lexer_.Next().text : "");
    PARITY_RETURN_IF_ERROR(Expect(']', "to close the node's name"));
  }
  IdList(node->mutable_output());
  PARITY_RETURN_IF_ERROR(Expect('=', "between the node's outputs and its operator"));
  std::string domain;
  std::string op_type;
  PARITY_RETURN_IF_ERROR(Identifier(&op_type, "an operator name such as Add or com.microsoft.Attention"));
  while (Accept('.')) {
    if (!domain.empty()) domain += ".";
    domain += op_type;
    PARITY_RETURN_IF_ERROR(Identifier(&op_type, "an operator or domain name after '.'"));
  }
  node->set_domain(domain);
  node->set_op_type(op_type);
  if (Accept(':')) PARITY_RETURN_IF_ERROR(Identifier(node->mutable_overload(), "an overload name after ':'"));
  if (PeekIs('<')) PARITY_RETURN_IF_ERROR(Attributes(node->mutable_attribute()));
  PARITY_RETURN_IF_ERROR(Expect('(', StrCat("to open the inputs of ", op_type)));
  IdList(node->mutable_input());
  PARITY_RETURN_IF_ERROR(Expect(')', StrCat("to close the inputs of ", op_type)));
  if (node->attribute_size() == 0 && PeekIs('<')) PARITY_RETURN_IF_ERROR(Attributes(node->mutable_attribute()));
  return Status::Ok();
}

// node-list ::= '{' node* '}'. Each node reads at least one token or fails,
// so the loop ends.
Status TextParser::NodeList(RepeatedPtrField<onnx::NodeProto>* nodes) {
  PARITY_RETURN_IF_ERROR(Expect('{', "to open the list of nodes"));
  while (!Accept('}')) {
    if (AtEnd()) return Expected("'}' to close the list of nodes");
    PARITY_RETURN_IF_ERROR(Node(nodes->Add()));
  }
  return Status::Ok();
}

// graph ::= name ('(' inputs ')')? '=>' '(' outputs ')' ('<' initializers
//           and value infos '>')? node-list. An input or a '<' entry with
// '= value' is an initializer; in '<...>' it is then not a value info.
Status TextParser::Graph(onnx::GraphProto* graph) {
  NestingScope scope(&depth_);
  if (scope.too_deep()) return TooDeep();
  PARITY_RETURN_IF_ERROR(QuotableIdentifier(graph->mutable_name(), "a graph name"));
  if (Accept('(') && !Accept(')')) {
    do {
      Token type_at = Peek();
      onnx::ValueInfoProto* input = graph->add_input();
      PARITY_RETURN_IF_ERROR(ValueInfo(input, "an input name"));
      if (Accept('=')) {
        onnx::TensorProto* initializer = graph->add_initializer();
        initializer->set_name(input->name());
        PARITY_RETURN_IF_ERROR(TensorValue(initializer, input->type(), type_at));
      }
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect(')', "to close the graph's inputs"));
  }
  PARITY_RETURN_IF_ERROR(ExpectArrow("between the graph's inputs and outputs"));
  PARITY_RETURN_IF_ERROR(Expect('(', "to open the graph's outputs"));
  if (!Accept(')')) {
    do {
      PARITY_RETURN_IF_ERROR(ValueInfo(graph->add_output(), "an output name"));
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect(')', "to close the graph's outputs"));
  }
  if (Accept('<') && !Accept('>')) {
    do {
      Token type_at = Peek();
      onnx::ValueInfoProto info;
      PARITY_RETURN_IF_ERROR(ValueInfo(&info, "a value name"));
      if (Accept('=')) {
        onnx::TensorProto* initializer = graph->add_initializer();
        initializer->set_name(info.name());
        PARITY_RETURN_IF_ERROR(TensorValue(initializer, info.type(), type_at));
      } else {
        graph->add_value_info()->Swap(&info);
      }
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect('>', "to close the graph's initializers and value infos"));
  }
  return NodeList(graph->mutable_node());
}

// '(' (type? name) (',' type? name)* ')': the names go to the function's
// inputs or outputs, the types (where given) to its value_info.
Status TextParser::FunctionValues(RepeatedPtrField<std::string>* names,
                                  RepeatedPtrField<onnx::ValueInfoProto>* infos, std::string_view which) {
  PARITY_RETURN_IF_ERROR(Expect('(', StrCat("to open the function's ", which)));
  if (Accept(')')) return Status::Ok();
  do {
    std::string* name = names->Add();
    if (NextIsType()) {
      onnx::ValueInfoProto* info = infos->Add();
      PARITY_RETURN_IF_ERROR(Type(info->mutable_type()));
      PARITY_RETURN_IF_ERROR(QuotableIdentifier(name, "a name after the type"));
      info->set_name(*name);
    } else {
      PARITY_RETURN_IF_ERROR(QuotableIdentifier(name, StrCat("the name of one of the function's ", which)));
    }
  } while (Accept(','));
  return Expect(')', StrCat("to close the function's ", which));
}

// function ::= ('<' key ':' value, ... '>')? name ('<' (name | attr), ... '>')?
//              inputs '=>' outputs ('<' value-infos '>')? node-list
// An attribute with '= value' is one with a default (attribute_proto); a bare
// name is one without (attribute).
Status TextParser::Function(onnx::FunctionProto* function) {
  if (Accept('<')) {
    do {
      Token key_at = Peek();
      std::string key;
      constexpr std::string_view kKeys = "a function header key (domain, opset_import, overload, doc_string, metadata_props)";
      PARITY_RETURN_IF_ERROR(Identifier(&key, kKeys));
      PARITY_RETURN_IF_ERROR(Expect(':', StrCat("after '", key, "'")));
      if (key == "domain") {
        PARITY_RETURN_IF_ERROR(StringLiteral(function->mutable_domain(), "the function's domain"));
      } else if (key == "opset_import") {
        PARITY_RETURN_IF_ERROR(OpsetImports(function->mutable_opset_import()));
      } else if (key == "overload") {
        PARITY_RETURN_IF_ERROR(StringLiteral(function->mutable_overload(), "the function's overload"));
      } else if (key == "doc_string") {
        PARITY_RETURN_IF_ERROR(StringLiteral(function->mutable_doc_string(), "the function's doc string"));
      } else if (key == "metadata_props") {
        PARITY_RETURN_IF_ERROR(StringPairList(function->mutable_metadata_props()));
      } else {
        return ExpectedAt(key_at, kKeys);
      }
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect('>', "to close the function header"));
  }
  PARITY_RETURN_IF_ERROR(QuotableIdentifier(function->mutable_name(), "a function name"));
  if (Accept('<')) {
    std::set<std::string> names;
    do {
      Token name_at = Peek();
      std::string name;
      PARITY_RETURN_IF_ERROR(QuotableIdentifier(&name, "an attribute name"));
      if (!names.insert(name).second) return ErrorAt(name_at, StrCat("attribute '", name, "' is declared twice"));
      if (PeekIs(':') || PeekIs('=')) {
        PARITY_RETURN_IF_ERROR(Attribute(function->add_attribute_proto(), name));
      } else {
        function->add_attribute(name);
      }
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect('>', "to close the function's attributes"));
  }
  PARITY_RETURN_IF_ERROR(FunctionValues(function->mutable_input(), function->mutable_value_info(), "inputs"));
  PARITY_RETURN_IF_ERROR(ExpectArrow("between the function's inputs and outputs"));
  PARITY_RETURN_IF_ERROR(FunctionValues(function->mutable_output(), function->mutable_value_info(), "outputs"));
  if (Accept('<') && !Accept('>')) {
    do {
      PARITY_RETURN_IF_ERROR(ValueInfo(function->add_value_info(), "a value name"));
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect('>', "to close the function's value infos"));
  }
  return NodeList(function->mutable_node());
}

// model ::= ('<' key ':' value, ... '>')? graph function*
Status TextParser::Model(onnx::ModelProto* model) {
  if (Accept('<')) {
    do {
      Token key_at = Peek();
      std::string key;
      constexpr std::string_view kKeys =
          "a model header key (ir_version, opset_import, producer_name, producer_version, domain, model_version, "
          "doc_string, metadata_props)";
      PARITY_RETURN_IF_ERROR(Identifier(&key, kKeys));
      PARITY_RETURN_IF_ERROR(Expect(':', StrCat("after '", key, "'")));
      int64_t number = 0;
      if (key == "ir_version") {
        PARITY_RETURN_IF_ERROR(IntLiteral(&number, "the IR version"));
        model->set_ir_version(number);
      } else if (key == "opset_import") {
        PARITY_RETURN_IF_ERROR(OpsetImports(model->mutable_opset_import()));
      } else if (key == "producer_name") {
        PARITY_RETURN_IF_ERROR(StringLiteral(model->mutable_producer_name(), "the producer name"));
      } else if (key == "producer_version") {
        PARITY_RETURN_IF_ERROR(StringLiteral(model->mutable_producer_version(), "the producer version"));
      } else if (key == "domain") {
        PARITY_RETURN_IF_ERROR(StringLiteral(model->mutable_domain(), "the model's domain"));
      } else if (key == "model_version") {
        PARITY_RETURN_IF_ERROR(IntLiteral(&number, "the model version"));
        model->set_model_version(number);
      } else if (key == "doc_string") {
        PARITY_RETURN_IF_ERROR(StringLiteral(model->mutable_doc_string(), "the model's doc string"));
      } else if (key == "metadata_props") {
        PARITY_RETURN_IF_ERROR(StringPairList(model->mutable_metadata_props()));
      } else {
        return ExpectedAt(key_at, kKeys);
      }
    } while (Accept(','));
    PARITY_RETURN_IF_ERROR(Expect('>', "to close the model header"));
  }
  PARITY_RETURN_IF_ERROR(Graph(model->mutable_graph()));
  while (!AtEnd()) PARITY_RETURN_IF_ERROR(Function(model->add_functions()));
  return Status::Ok();
}

// The one boundary where exceptions (memory exhausted by a huge text) become
// statuses.
template <typename Result, typename ParseFn>
StatusOr<Result> RunParser(std::string_view text, ParseFn parse) {
  try {
    TextParser parser(text);
    Result result;
    Status status = parse(parser, &result);
    if (!status.ok()) return status;
    return result;
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory while parsing ONNX text of ", text.size(), " bytes");
  } catch (const std::exception& error) {
    return Internal("ONNX text parser failed: ", error.what());
  }
}

}  // namespace

StatusOr<onnx::ModelProto> ParseModelText(std::string_view text) {
  return RunParser<onnx::ModelProto>(text, [](TextParser& parser, onnx::ModelProto* model) {
    return parser.Model(model);
  });
}

StatusOr<onnx::GraphProto> ParseGraphText(std::string_view text) {
  return RunParser<onnx::GraphProto>(text, [](TextParser& parser, onnx::GraphProto* graph) {
    PARITY_RETURN_IF_ERROR(parser.Graph(graph));
    return parser.ExpectEnd("after the graph");
  });
}

StatusOr<onnx::FunctionProto> ParseFunctionText(std::string_view text) {
  return RunParser<onnx::FunctionProto>(text, [](TextParser& parser, onnx::FunctionProto* function) {
    PARITY_RETURN_IF_ERROR(parser.Function(function));
    return parser.ExpectEnd("after the function");
  });
}

StatusOr<std::vector<onnx::FunctionProto>> ParseFunctionsText(std::string_view text) {
  return RunParser<std::vector<onnx::FunctionProto>>(
      text, [](TextParser& parser, std::vector<onnx::FunctionProto>* functions) {
        while (!parser.AtEnd()) {
          PARITY_RETURN_IF_ERROR(parser.Function(&functions->emplace_back()));
        }
        return Status::Ok();
      });
}

}  // namespace parity
