// A parser for the ONNX textual syntax: the language of onnx's
// onnx.parser.parse_model / parse_graph / parse_function (docs/Syntax.md,
// onnx/defs/parser.cc of onnx 1.23). ONNX Parity writes its function
// definitions in it (spec/functions/*.onnxtxt) and the evaluator expands them.
//
// Every accepted text means what onnx's parser makes of it, field presence
// included. Where onnx's parser accepts text that yields an invalid proto or
// silently drops a value, this one reports an error instead (or, for lists of
// tensors, graphs and types, keeps the values); text_syntax_test.cc lists each
// case. Extension: a function header may carry metadata_props.
//
// Errors are INVALID_ARGUMENT statuses whose message starts "LINE:COLUMN:" and
// says what was expected. No input crashes or hangs the parser: nesting of
// types and graph attributes is limited to kMaxTextNesting levels.
#pragma once

#include <string_view>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"

namespace parity {

// How deep types (seq(seq(...))) and graph-valued attributes may nest, in
// total; deeper text is an error rather than a risk to the stack.
inline constexpr int kMaxTextNesting = 32;

// model ::= ('<' key ':' value, ... '>')? graph function*
StatusOr<onnx::ModelProto> ParseModelText(std::string_view text);
// name (inputs) => (outputs) <initializers and value infos>? { nodes }
StatusOr<onnx::GraphProto> ParseGraphText(std::string_view text);
// ('<' domain, opset_import, overload, doc_string, metadata_props '>')?
//   Name <attributes>? (inputs) => (outputs) <value infos>? { nodes }
StatusOr<onnx::FunctionProto> ParseFunctionText(std::string_view text);
// A file of several functions, one after another (as at the end of a model
// text); an empty file gives an empty vector.
StatusOr<std::vector<onnx::FunctionProto>> ParseFunctionsText(std::string_view text);

}  // namespace parity
