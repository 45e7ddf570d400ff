// Tests of the ONNX text-syntax parser: each construct, round trips through
// onnx's printer, the places where it is stricter than onnx's parser, and
// errors (positions, truncation, bad tokens, deep nesting, mutations).
#include "reference/model/text_syntax.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "reference/model/text_lexer.h"

namespace parity {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Parses or fails the test with the parser's message.
template <typename T>
T ValueOrDie(StatusOr<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return T();
  return std::move(result).value();
}

onnx::GraphProto Graph(std::string_view text) { return ValueOrDie(ParseGraphText(text)); }

// The first node's first attribute of a one-node graph around `attributes`.
onnx::AttributeProto Attribute(std::string_view attributes) {
  onnx::GraphProto graph = Graph("g (x) => (y) { y = Op <" + std::string(attributes) + "> (x) }");
  if (graph.node_size() != 1 || graph.node(0).attribute_size() < 1) return {};
  return graph.node(0).attribute(0);
}

onnx::TensorProto Initializer(std::string_view input) {
  onnx::GraphProto graph = Graph("g (" + std::string(input) + ") => () {}");
  if (graph.initializer_size() != 1) return {};
  return graph.initializer(0);
}

// An INVALID_ARGUMENT status whose message starts "LINE:COLUMN:" and contains `needle`.
void ExpectErrorAt(const Status& status, int line, int column, std::string_view needle) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), StartsWith(std::to_string(line) + ":" + std::to_string(column) + ": "));
  EXPECT_THAT(status.message(), HasSubstr(std::string(needle)));
}

// Every error names a position within the text (line and column), whatever the input.
void ExpectPositionedError(const Status& status, std::string_view text) {
  ASSERT_FALSE(status.ok()) << "accepted: " << text;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  const std::string& message = status.message();
  size_t colon = message.find(':');
  size_t second = colon == std::string::npos ? colon : message.find(": ", colon + 1);
  ASSERT_NE(second, std::string::npos) << message;
  std::string line_text = message.substr(0, colon);
  std::string column_text = message.substr(colon + 1, second - colon - 1);
  auto all_digits = [](const std::string& s) {
    return !s.empty() && s.size() < 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  ASSERT_TRUE(all_digits(line_text) && all_digits(column_text)) << message;
  int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_GE(std::stoi(line_text), 1);
  EXPECT_LE(std::stoi(line_text), lines) << message;
  EXPECT_GE(std::stoi(column_text), 1);
}

bool SameBits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

// --- Models -------------------------------------------------------------------------------

TEST(TextSyntaxModel, HeaderSetsEveryField) {
  onnx::ModelProto model = ValueOrDie(ParseModelText(R"(
    <ir_version: 9, opset_import: ["" : 18, "com.x": 1], producer_name: "parity", producer_version: "0.1",
     domain: "ai.parity", model_version: 3, doc_string: "a \"doc\"", metadata_props: ["k": "v", "e": ""]>
    g () => () {})"));
  EXPECT_EQ(model.ir_version(), 9);
  ASSERT_EQ(model.opset_import_size(), 2);
  EXPECT_EQ(model.opset_import(0).domain(), "");
  EXPECT_EQ(model.opset_import(0).version(), 18);
  EXPECT_EQ(model.opset_import(1).domain(), "com.x");
  EXPECT_EQ(model.producer_name(), "parity");
  EXPECT_EQ(model.producer_version(), "0.1");
  EXPECT_EQ(model.domain(), "ai.parity");
  EXPECT_EQ(model.model_version(), 3);
  EXPECT_EQ(model.doc_string(), "a \"doc\"");
  ASSERT_EQ(model.metadata_props_size(), 2);
  EXPECT_EQ(model.metadata_props(1).key(), "e");
  EXPECT_EQ(model.graph().name(), "g");
}

TEST(TextSyntaxModel, HeaderIsOptionalAndUnsetFieldsStayUnset) {
  onnx::ModelProto model = ValueOrDie(ParseModelText("g () => () {}"));
  EXPECT_FALSE(model.has_ir_version());
  EXPECT_FALSE(model.has_producer_name());
  EXPECT_TRUE(model.has_graph());
}

TEST(TextSyntaxModel, FunctionsFollowTheGraph) {
  onnx::ModelProto model = ValueOrDie(ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 18, "local" : 1]>
    g (float[2] x) => (float[2] y) { y = local.Twice (x) }
    <domain: "local", opset_import: ["" : 18]>
    Twice (a) => (b) { b = Add (a, a) }
    <domain: "local", opset_import: ["" : 18], overload: "v2">
    Twice (a) => (b) { b = Mul (a, a) })"));
  ASSERT_EQ(model.functions_size(), 2);
  EXPECT_EQ(model.functions(0).name(), "Twice");
  EXPECT_FALSE(model.functions(0).has_overload());
  EXPECT_EQ(model.functions(1).overload(), "v2");
  EXPECT_EQ(model.graph().node(0).domain(), "local");
}

// --- Types --------------------------------------------------------------------------------

TEST(TextSyntaxTypes, ScalarUnknownRankAndDimensions) {
  onnx::GraphProto graph = Graph(R"(g (float s, float[] u, float[N, ?, 3, "batch size"] t) => () {})");
  ASSERT_EQ(graph.input_size(), 3);
  // "float" is rank 0 (a shape with no dims); "float[]" has no shape at all.
  EXPECT_TRUE(graph.input(0).type().tensor_type().has_shape());
  EXPECT_EQ(graph.input(0).type().tensor_type().shape().dim_size(), 0);
  EXPECT_FALSE(graph.input(1).type().tensor_type().has_shape());
  const onnx::TensorShapeProto& shape = graph.input(2).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 4);
  EXPECT_EQ(shape.dim(0).dim_param(), "N");
  EXPECT_FALSE(shape.dim(1).has_dim_param());
  EXPECT_FALSE(shape.dim(1).has_dim_value());
  EXPECT_EQ(shape.dim(2).dim_value(), 3);
  EXPECT_EQ(shape.dim(3).dim_param(), "batch size");
}

TEST(TextSyntaxTypes, EveryElementTypeByItsOnnxName) {
  const std::pair<std::string, int> kTypes[] = {
      {"float", 1}, {"uint8", 2}, {"int8", 3}, {"uint16", 4}, {"int16", 5}, {"int32", 6}, {"int64", 7},
      {"string", 8}, {"bool", 9}, {"float16", 10}, {"double", 11}, {"uint32", 12}, {"uint64", 13},
      {"complex64", 14}, {"complex128", 15}, {"bfloat16", 16}, {"float8e4m3fn", 17}, {"float8e4m3fnuz", 18},
      {"float8e5m2", 19}, {"float8e5m2fnuz", 20}, {"uint4", 21}, {"int4", 22}, {"float4e2m1", 23},
      {"float8e8m0", 24}, {"uint2", 25}, {"int2", 26}, {"float6e2m3", 27}, {"float6e3m2", 28}};
  for (const auto& [name, number] : kTypes) {
    onnx::GraphProto graph = Graph("g (" + name + "[2] x) => () {}");
    ASSERT_EQ(graph.input_size(), 1) << name;
    EXPECT_EQ(graph.input(0).type().tensor_type().elem_type(), number) << name;
  }
}

TEST(TextSyntaxTypes, ComposedTypes) {
  onnx::GraphProto graph = Graph(R"(g (seq(float[N]) s, optional(seq(int64[])) o, map(string, float) m,
                                     sparse_tensor(float[2, 3]) sp, opaque() q0, opaque(test.rng.RNG) q1,
                                     opaque(ai.x, Handle) q2) => () {})");
  ASSERT_EQ(graph.input_size(), 7);
  EXPECT_EQ(graph.input(0).type().sequence_type().elem_type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_TRUE(graph.input(1).type().optional_type().elem_type().sequence_type().elem_type().has_tensor_type());
  EXPECT_EQ(graph.input(2).type().map_type().key_type(), onnx::TensorProto::STRING);
  EXPECT_EQ(graph.input(2).type().map_type().value_type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(graph.input(3).type().sparse_tensor_type().shape().dim(1).dim_value(), 3);
  EXPECT_TRUE(graph.input(4).type().has_opaque_type());
  EXPECT_FALSE(graph.input(4).type().opaque_type().has_name());
  // A lone dotted name is the name, with no domain (docs/Syntax.md).
  EXPECT_EQ(graph.input(5).type().opaque_type().name(), "test.rng.RNG");
  EXPECT_FALSE(graph.input(5).type().opaque_type().has_domain());
  EXPECT_EQ(graph.input(6).type().opaque_type().domain(), "ai.x");
  EXPECT_EQ(graph.input(6).type().opaque_type().name(), "Handle");
}

// --- Graphs, initializers, value infos ----------------------------------------------------

TEST(TextSyntaxGraph, InputsOutputsInitializersAndValueInfos) {
  onnx::GraphProto graph = Graph(R"(
    main (float[N, 4] x, float[4] bias = {1, 2, 3, 4}, untyped) => (float[N] y, "out 2")
      <float[2] w = {1.0, 2.0}, float[N, 4] t, int64[1] axes = {1}>
    {
      t = Add (x, bias)
      y = ReduceSum (t, axes)
    })");
  EXPECT_EQ(graph.name(), "main");
  ASSERT_EQ(graph.input_size(), 3);
  EXPECT_FALSE(graph.input(2).has_type());
  ASSERT_EQ(graph.output_size(), 2);
  EXPECT_EQ(graph.output(1).name(), "out 2");
  // An input with a value is an input and an initializer; a '<...>' entry with
  // a value is only an initializer.
  ASSERT_EQ(graph.initializer_size(), 3);
  EXPECT_EQ(graph.initializer(0).name(), "bias");
  EXPECT_EQ(graph.initializer(1).name(), "w");
  EXPECT_EQ(graph.initializer(2).int64_data(0), 1);
  ASSERT_EQ(graph.value_info_size(), 1);
  EXPECT_EQ(graph.value_info(0).name(), "t");
  EXPECT_EQ(graph.node_size(), 2);
}

TEST(TextSyntaxGraph, InputListMayBeLeftOut) {
  onnx::GraphProto graph = Graph("g => (y) { y = Constant <value_float = 1.5> () }");
  EXPECT_EQ(graph.input_size(), 0);
  EXPECT_EQ(graph.output_size(), 1);
}

TEST(TextSyntaxGraph, CommentsAndWhitespace) {
  onnx::GraphProto graph = Graph("# leading comment\r\ng\t(x) => (y) # after the header\r\n"
                                 "{ y = Op <s = \"a # b\"> (x) # trailing\n}  # end");
  ASSERT_EQ(graph.node_size(), 1);
  EXPECT_EQ(graph.node(0).attribute(0).s(), "a # b");
}

// --- Tensor constants ---------------------------------------------------------------------

TEST(TextSyntaxTensor, FloatValuesIncludingSpecialSpellings) {
  onnx::TensorProto tensor = Initializer("float[7] x = {1, -0, 2.5e-1, inf, -Infinity, NaN, 1e-46}");
  EXPECT_EQ(tensor.data_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(tensor.float_data_size(), 7);
  EXPECT_EQ(tensor.float_data(0), 1.0f);
  EXPECT_TRUE(SameBits(tensor.float_data(1), -0.0f));  // "-0" read as a float keeps its sign
  EXPECT_EQ(tensor.float_data(2), 0.25f);
  EXPECT_EQ(tensor.float_data(3), INFINITY);
  EXPECT_EQ(tensor.float_data(4), -INFINITY);
  EXPECT_TRUE(std::isnan(tensor.float_data(5)));
  EXPECT_EQ(tensor.float_data(6), 0.0f);  // underflow rounds, as in onnx
}

TEST(TextSyntaxTensor, DoublesKeepDoublePrecision) {
  onnx::TensorProto tensor = Initializer("double[2] d = {0.1, 1e-310}");
  ASSERT_EQ(tensor.double_data_size(), 2);
  EXPECT_EQ(tensor.double_data(0), 0.1);
  EXPECT_EQ(tensor.double_data(1), 1e-310);
}

TEST(TextSyntaxTensor, IntegerFieldsAndLimits) {
  onnx::GraphProto graph = Graph(R"(g (int8[2] a = {-128, 127}, int64[1] b = {-9223372036854775808},
      uint64[1] c = {18446744073709551615}, uint32[1] d = {4294967295}, bool[2] e = {1, 0},
      string[2] f = {"x", "y\\z"}) => () {})");
  ASSERT_EQ(graph.initializer_size(), 6);
  EXPECT_EQ(graph.initializer(0).int32_data(0), -128);
  EXPECT_EQ(graph.initializer(1).int64_data(0), INT64_MIN);
  EXPECT_EQ(graph.initializer(2).uint64_data(0), UINT64_MAX);
  EXPECT_EQ(graph.initializer(3).uint64_data(0), 4294967295u);
  EXPECT_EQ(graph.initializer(4).int32_data(0), 1);
  EXPECT_EQ(graph.initializer(5).string_data(1), "y\\z");
}

TEST(TextSyntaxTensor, SmallFloatsAreBitPatternsAndSubByteTypesArePacked) {
  // onnx's text has no float literals for float16: 15360 is 0x3C00, 1.0.
  EXPECT_EQ(Initializer("float16[1] h = {15360}").int32_data(0), 15360);
  EXPECT_EQ(Initializer("bfloat16[1] h = {16256}").int32_data(0), 16256);
  // Three int4 elements take two bytes.
  EXPECT_EQ(Initializer("int4[3] i = {33, 3}").int32_data_size(), 2);
  EXPECT_EQ(Initializer("complex64[2] c = {1, 2, 3, 4}").float_data_size(), 4);
  ExpectErrorAt(ParseGraphText("g (float16[1] h = {1.5}) => () {}").status(), 1, 20, "16-bit patterns");
  ExpectErrorAt(ParseGraphText("g (int4[4] i = {1, 2, 3, 4}) => () {}").status(), 1, 16, "needs 2 packed bytes");
}

TEST(TextSyntaxTensor, ExternalData) {
  onnx::TensorProto tensor = Initializer(R"(float[1000] w = ["location": "w.bin", "offset": "64"])");
  EXPECT_EQ(tensor.data_location(), onnx::TensorProto::EXTERNAL);
  ASSERT_EQ(tensor.external_data_size(), 2);
  EXPECT_EQ(tensor.external_data(0).value(), "w.bin");
  EXPECT_EQ(tensor.float_data_size(), 0);
}

TEST(TextSyntaxTensor, StricterThanOnnx) {
  // onnx's parser accepts each of these and writes a tensor its checker rejects.
  ExpectErrorAt(ParseGraphText("g (float[2, 2] x = {1, 2, 3}) => () {}").status(), 1, 20, "needs 4 values, found 3");
  ExpectErrorAt(ParseGraphText("g (float[2] x = {}) => () {}").status(), 1, 17, "needs 2 values, found 0");
  ExpectErrorAt(ParseGraphText("g (uint8[1] x = {256}) => () {}").status(), 1, 18, "out of the range of uint8");
  ExpectErrorAt(ParseGraphText("g (uint64[1] x = {-1}) => () {}").status(), 1, 19, "out of the range of uint64");
  ExpectErrorAt(ParseGraphText("g (bool[1] x = {2}) => () {}").status(), 1, 17, "out of the range of bool");
  ExpectErrorAt(ParseGraphText("g (float[-1] x) => () {}").status(), 1, 10, "non-negative");
  EXPECT_EQ(Initializer("float[0] e = {}").float_data_size(), 0);
}

TEST(TextSyntaxTensor, NeedsAKnownTensorShape) {
  ExpectErrorAt(ParseGraphText("g (float[] x = {1}) => () {}").status(), 1, 4, "known dimensions");
  ExpectErrorAt(ParseGraphText("g (float[N] x = {1}) => () {}").status(), 1, 4, "numeric dimensions");
  ExpectErrorAt(ParseGraphText("g (seq(float) x = {1}) => () {}").status(), 1, 4, "tensor type");
  ExpectErrorAt(ParseGraphText("g (x = {1}) => () {}").status(), 1, 4, "tensor type");
}

// --- Nodes --------------------------------------------------------------------------------

TEST(TextSyntaxNode, DomainOverloadLabelAndMultipleOutputs) {
  onnx::GraphProto graph = Graph(R"(g (x) => (y) {
      [first] a, "b c" = com.microsoft.Attention:v2 (x)
      y = Relu (a)
    })");
  const onnx::NodeProto& node = graph.node(0);
  EXPECT_EQ(node.name(), "first");
  EXPECT_EQ(node.domain(), "com.microsoft");
  EXPECT_EQ(node.op_type(), "Attention");
  EXPECT_EQ(node.overload(), "v2");
  ASSERT_EQ(node.output_size(), 2);
  EXPECT_EQ(node.output(1), "b c");
  // Like onnx, the default domain is set explicitly and no overload or name is invented.
  EXPECT_TRUE(graph.node(1).has_domain());
  EXPECT_EQ(graph.node(1).domain(), "");
  EXPECT_FALSE(graph.node(1).has_overload());
  EXPECT_FALSE(graph.node(1).has_name());
}

TEST(TextSyntaxNode, EmptyOptionalInputsFollowOnnx) {
  onnx::GraphProto graph = Graph(R"(g (a, c) => (y) {
      y = Op (a, , c)
      y1 = Op (, c)
      y2 = Op (a, )
      y3 = Op (,)
      y4 = Op ("")
      y5 = Op ()
    })");
  auto inputs = [&](int i) { return std::vector<std::string>(graph.node(i).input().begin(), graph.node(i).input().end()); };
  EXPECT_EQ(inputs(0), (std::vector<std::string>{"a", "", "c"}));
  EXPECT_EQ(inputs(1), (std::vector<std::string>{"", "c"}));
  EXPECT_EQ(inputs(2), (std::vector<std::string>{"a"}));  // a trailing comma adds nothing
  EXPECT_EQ(inputs(3), (std::vector<std::string>{""}));
  EXPECT_EQ(inputs(4), (std::vector<std::string>{""}));
  EXPECT_EQ(inputs(5), (std::vector<std::string>{}));
}

TEST(TextSyntaxNode, AttributesBeforeOrAfterInputs) {
  onnx::GraphProto graph = Graph("g (x) => (y) { t = Concat <axis = 0> (x, x) y = Concat (t, t) <axis = 1> }");
  EXPECT_EQ(graph.node(0).attribute(0).i(), 0);
  EXPECT_EQ(graph.node(1).attribute(0).i(), 1);
  // Not both.
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = 1> (x) <b = 2> }").status(), 1, 35, "expected '='");
}

TEST(TextSyntaxNode, DuplicateAttributeIsAnError) {
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = 1, a = 2> (x) }").status(), 1, 31, "given twice");
}

// --- Attribute values ---------------------------------------------------------------------

TEST(TextSyntaxAttribute, Scalars) {
  EXPECT_EQ(Attribute("a = -3").type(), onnx::AttributeProto::INT);
  EXPECT_EQ(Attribute("a = -3").i(), -3);
  EXPECT_EQ(Attribute("a = 2.5").f(), 2.5f);
  EXPECT_EQ(Attribute("a = 1e3").type(), onnx::AttributeProto::FLOAT);  // an exponent makes a float
  EXPECT_EQ(Attribute("a = 1E-2").f(), 0.01f);
  EXPECT_EQ(Attribute("a = 1.").f(), 1.0f);
  EXPECT_EQ(Attribute("a = INF").f(), INFINITY);
  EXPECT_EQ(Attribute("a = -infinity").f(), -INFINITY);
  EXPECT_TRUE(std::isnan(Attribute("a = nan").f()));
  EXPECT_TRUE(std::signbit(Attribute("a = -nan").f()));
  EXPECT_EQ(Attribute(R"(a = "q\"b\\c\n")").s(), "q\"b\\cn");  // a backslash takes the next byte as it is
}

TEST(TextSyntaxAttribute, DeclaredTypes) {
  onnx::AttributeProto attribute = Attribute("alpha: float = 1");
  EXPECT_EQ(attribute.type(), onnx::AttributeProto::FLOAT);  // an int where a float is declared
  EXPECT_EQ(attribute.f(), 1.0f);
  EXPECT_TRUE(SameBits(Attribute("a: float = -0").f(), -0.0f));
  EXPECT_EQ(Attribute("axis: int = 1").i(), 1);
  EXPECT_EQ(Attribute("a: ints = []").type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(Attribute("a: strings = []").type(), onnx::AttributeProto::STRINGS);
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a: string = 1> (x) }").status(), 1, 36, "expects a value of type string");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a: int = 1.5> (x) }").status(), 1, 33, "found a value of type float");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a: long = 1> (x) }").status(), 1, 27, "an attribute type");
}

TEST(TextSyntaxAttribute, Lists) {
  onnx::AttributeProto ints = Attribute("a = [1, -2, 9223372036854775807]");
  EXPECT_EQ(ints.type(), onnx::AttributeProto::INTS);
  EXPECT_EQ(ints.ints(2), INT64_MAX);
  onnx::AttributeProto floats = Attribute("a: floats = [1, 2.5, -inf]");
  EXPECT_EQ(floats.type(), onnx::AttributeProto::FLOATS);
  EXPECT_EQ(floats.floats(0), 1.0f);
  EXPECT_EQ(Attribute(R"(a = ["x", "y"])").strings(1), "y");
  // A list that mixes ints and floats is all floats (onnx's parser writes a
  // FLOATS attribute with the ints left in the ints field).
  onnx::AttributeProto mixed = Attribute("a = [-0, 2.5]");
  EXPECT_EQ(mixed.type(), onnx::AttributeProto::FLOATS);
  EXPECT_EQ(mixed.ints_size(), 0);
  EXPECT_TRUE(SameBits(mixed.floats(0), -0.0f));
  ExpectErrorAt(ParseGraphText(R"(g (x) => (y) { y = Op <a = [1, "s"]> (x) }))").status(), 1, 32, "cannot mix int and string");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = []> (x) }").status(), 1, 28, "needs a declared type");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a: int = [1]> (x) }").status(), 1, 33, "a single value");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = [@b]> (x) }").status(), 1, 29, "not a list element");
}

TEST(TextSyntaxAttribute, ListsOfTensorsGraphsAndTypesAreKept) {
  // onnx's parser drops these elements silently; they are kept here.
  onnx::AttributeProto tensors = Attribute("a = [float[1] {1}, int64 {2}]");
  EXPECT_EQ(tensors.type(), onnx::AttributeProto::TENSORS);
  ASSERT_EQ(tensors.tensors_size(), 2);
  EXPECT_EQ(tensors.tensors(1).int64_data(0), 2);
  onnx::AttributeProto graphs = Attribute("a: graphs = [g1 () => () {}, g2 () => () {}]");
  ASSERT_EQ(graphs.graphs_size(), 2);
  EXPECT_EQ(graphs.graphs(1).name(), "g2");
  EXPECT_EQ(Attribute("a = [float, seq(int64)]").type_protos_size(), 2);
}

TEST(TextSyntaxAttribute, TensorTypeAndGraphValues) {
  onnx::AttributeProto tensor = Attribute("value = float[2] {1, 2}");
  EXPECT_EQ(tensor.type(), onnx::AttributeProto::TENSOR);
  EXPECT_EQ(tensor.t().dims(0), 2);
  EXPECT_TRUE(tensor.t().has_name());  // set, empty, as onnx does
  EXPECT_EQ(Attribute("value = int64 named = {7}").t().name(), "named");
  onnx::AttributeProto type = Attribute("T = seq(float[N])");
  EXPECT_EQ(type.type(), onnx::AttributeProto::TYPE_PROTO);
  EXPECT_TRUE(type.tp().has_sequence_type());
  onnx::GraphProto graph = Graph(R"(g (bool c) => (y) {
      y = If (c) <then_branch = then_g () => (float t) { t = Constant <value_float = 1.0> () },
                  else_branch = else_g () => (float e) { e = Constant <value = float {2.0}> () }>
    })");
  ASSERT_EQ(graph.node(0).attribute_size(), 2);
  EXPECT_EQ(graph.node(0).attribute(1).type(), onnx::AttributeProto::GRAPH);
  EXPECT_EQ(graph.node(0).attribute(1).g().name(), "else_g");
  EXPECT_EQ(graph.node(0).attribute(1).g().node(0).attribute(0).t().float_data(0), 2.0f);
}

TEST(TextSyntaxAttribute, References) {
  onnx::AttributeProto declared = Attribute("alpha: float = @alpha");
  EXPECT_EQ(declared.ref_attr_name(), "alpha");
  EXPECT_EQ(declared.type(), onnx::AttributeProto::FLOAT);
  onnx::AttributeProto bare = Attribute(R"(to = @"target type")");
  EXPECT_EQ(bare.ref_attr_name(), "target type");
  EXPECT_FALSE(bare.has_type());  // as in onnx: the type comes from the declaration only
}

// --- Functions ----------------------------------------------------------------------------

TEST(TextSyntaxFunction, HeaderAttributesAndDefaults) {
  onnx::FunctionProto function = ValueOrDie(ParseFunctionText(R"(
    <domain: "com.parity", opset_import: ["" : 18], overload: "fast", doc_string: "Swish",
     metadata_props: ["source": "spec/functions"]>
    Swish <alpha: float = 1.0, beta, mode: string = "x", axes: ints = [0, 1]> (X) => (Y) {
      A = Constant <value_float: float = @alpha> ()
      AX = Mul (A, X)
      S = Sigmoid (AX)
      Y = Mul (X, S)
    })"));
  EXPECT_EQ(function.domain(), "com.parity");
  EXPECT_EQ(function.overload(), "fast");
  EXPECT_EQ(function.doc_string(), "Swish");
  ASSERT_EQ(function.metadata_props_size(), 1);  // an extension: onnx's parser has no metadata_props here
  ASSERT_EQ(function.attribute_size(), 1);
  EXPECT_EQ(function.attribute(0), "beta");
  ASSERT_EQ(function.attribute_proto_size(), 3);
  EXPECT_EQ(function.attribute_proto(0).f(), 1.0f);
  EXPECT_EQ(function.attribute_proto(2).ints(1), 1);
  EXPECT_EQ(function.node(0).attribute(0).ref_attr_name(), "alpha");
  EXPECT_EQ(function.node_size(), 4);
}

TEST(TextSyntaxFunction, TypedInputsOutputsAndValueInfos) {
  onnx::FunctionProto function = ValueOrDie(ParseFunctionText(
      "F (float[N] x, y) => (float z, w) <int64[2] t, u> { z = Add (x, y) w = Identity (z) }"));
  EXPECT_EQ(function.input_size(), 2);
  EXPECT_EQ(function.output_size(), 2);
  // Typed inputs and outputs first, then the '<...>' entries.
  ASSERT_EQ(function.value_info_size(), 4);
  EXPECT_EQ(function.value_info(0).name(), "x");
  EXPECT_EQ(function.value_info(1).name(), "z");
  EXPECT_EQ(function.value_info(2).name(), "t");
  EXPECT_FALSE(function.value_info(3).has_type());
}

TEST(TextSyntaxFunction, DefaultsAreCheckedAndNamesUnique) {
  // onnx's parser ignores the status of a default's parse; an error is reported here.
  ExpectErrorAt(ParseFunctionText("F <a: int = 1.5> () => () {}").status(), 1, 13, "expects a value of type int");
  ExpectErrorAt(ParseFunctionText("F <a, a: int = 1> () => () {}").status(), 1, 7, "declared twice");
}

TEST(TextSyntaxFunction, SeveralFunctionsInOneFile) {
  auto functions = ValueOrDie(ParseFunctionsText(R"(
    # spec/functions/example.onnxtxt
    <domain: "d", opset_import: ["" : 18]> A (x) => (y) { y = Identity (x) }
    <domain: "d", opset_import: ["" : 18, "d" : 1]> B (x) => (y) { y = d.A (x) })"));
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[1].name(), "B");
  EXPECT_EQ(functions[1].node(0).domain(), "d");
  EXPECT_TRUE(ValueOrDie(ParseFunctionsText("  # only a comment\n")).empty());
}

// --- Round trips --------------------------------------------------------------------------

// Each pair: a text, and what onnx 1.23's onnx.printer.to_text writes for the
// proto that onnx.parser makes of it. Both must parse to the same proto.
struct PrintedPair {
  const char* source;
  const char* printed;
};

constexpr PrintedPair kPrintedModels[] = {
    {R"(<ir_version: 8, opset_import: ["" : 18, "com.x": 1], producer_name: "p", metadata_props: ["a": "b"]>
g (float[N,4] x, int64[] s, float y) => (float[N] z) <float[2] w = {1.0, 2.5}, int64[1] k = {3}, float[N] t> {
  t = Add(x, w)
  [lbl] z, "q r" = com.x.Foo:ov <alpha: float = 1, ints = [1,2], s = "str", tv = float[1] {-inf}, tp = seq(float[2]), g = sub () => (float o) { o = Constant<value_float = 0.5>() }> (t, , y)
}
<domain: "com.x", opset_import: ["": 18]>
Foo <beta> (a, b) => (c) { c = Mul (a, b) })",
     R"(<
   ir_version: 8,
   opset_import: ["" : 18, "com.x" : 1],
   producer_name: "p",
   metadata_props: ["a": "b"]
>
g (float[N,4] x, int64[] s, float y) => (float[N] z) 
   <float[2] w =  {1,2.5}, int64[1] k =  {3}, float[N] t>
{
   t = Add (x, w)
   [lbl] z, "q r" = com.x.Foo:ov (t, "", y) <alpha: float = 1, ints: ints = [1, 2], s: string = "str", tv: tensor = float[1] {-inf}, tp: type_proto = seq(float[2]), g: graph = sub () => (float o) {
      o = Constant <value_float: float = 0.5> ()
   }>
}
<
  domain: "com.x",
  opset_import: ["" : 18]
>
Foo <beta>(a, b) => (c)
{
   c = Mul (a, b)
})"},
    {R"(g (seq(float[2]) s, optional(int64[]) o, map(string, float) m, float16[2] h = {15360, 0}) => (float y) <double[1] d = {0.1}, string[2] st = {"a", "b"}> { y = If (c) <then_branch = t () => (float r) { r = Identity(y) }, else_branch = e () => (float r) { r = Identity(y) }> })",
     R"(g (seq(float[2]) s, optional(int64[]) o, map(string, float) m, float16[2] h) => (float y) 
   <float16[2] h =  {15360,0}, double[1] d =  {0.1}, string[2] st = {"a", "b"}>
{
   y = If (c) <then_branch: graph = t () => (float r) {
      r = Identity (y)
   }, else_branch: graph = e () => (float r) {
      r = Identity (y)
   }>
})"},
};

TEST(TextSyntaxRoundTrip, OnnxPrinterOutputParsesToTheSameProto) {
  for (const PrintedPair& pair : kPrintedModels) {
    onnx::ModelProto source = ValueOrDie(ParseModelText(pair.source));
    onnx::ModelProto printed = ValueOrDie(ParseModelText(pair.printed));
    EXPECT_EQ(source.SerializeAsString(), printed.SerializeAsString())
        << source.DebugString() << "\nversus\n" << printed.DebugString();
  }
  onnx::FunctionProto source = ValueOrDie(ParseFunctionText(
      R"(<domain: "custom", opset_import: ["": 18]> Swish (X) => (Y) { A = Constant <value_float: float = 1.5> () Y = Mul (X, A) })"));
  onnx::FunctionProto printed = ValueOrDie(ParseFunctionText(R"(<
  domain: "custom",
  opset_import: ["" : 18]
>
Swish (X) => (Y)
{
   A = Constant <value_float: float = 1.5> ()
   Y = Mul (X, A)
})"));
  EXPECT_EQ(source.SerializeAsString(), printed.SerializeAsString());
}

TEST(TextSyntaxRoundTrip, SerializedProtoReadsBackEqual) {
  onnx::ModelProto model = ValueOrDie(ParseModelText(kPrintedModels[0].source));
  onnx::ModelProto copy;
  ASSERT_TRUE(copy.ParseFromString(model.SerializeAsString()));
  EXPECT_EQ(copy.SerializeAsString(), model.SerializeAsString());
  EXPECT_EQ(copy.graph().node(1).attribute(5).g().node(0).attribute(0).f(), 0.5f);
}

// --- Errors -------------------------------------------------------------------------------

TEST(TextSyntaxErrors, NameLineColumnAndWhatWasExpected) {
  Status status = ParseModelText("<ir_version: 8>\ng (x) => (y) {\n  y = Relu (x\n}\n").status();
  ExpectErrorAt(status, 4, 1, "expected ')' to close the inputs of Relu, found '}'");
  EXPECT_THAT(status.message(), HasSubstr("\n  }\n  ^"));  // the source line and a caret
  ExpectErrorAt(ParseGraphText("g (x) = > (y) {}").status(), 1, 9, "'>' right after '='");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Relu(x) } extra").status(), 1, 30, "end of input after the graph");
  ExpectErrorAt(ParseModelText("<ir_version: \"8\"> g () => () {}").status(), 1, 14, "the IR version (an integer)");
  ExpectErrorAt(ParseModelText("<bogus: 1> g () => () {}").status(), 1, 2, "a model header key");
  ExpectErrorAt(ParseFunctionText("<bogus: \"\"> F () => () {}").status(), 1, 2, "a function header key");
  ExpectErrorAt(ParseGraphText("g (map(seq, float) m) => () {}").status(), 1, 8, "a map key type");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = (x) }").status(), 1, 20, "an operator name");
  ExpectErrorAt(ParseModelText("").status(), 1, 1, "a graph name");
}

TEST(TextSyntaxErrors, BadTokens) {
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = $> (x) }").status(), 1, 28, "unexpected character '$'");
  ExpectErrorAt(ParseGraphText("g (x) => (y) {\n y = Op <a = \"open> (x) }").status(), 2, 14, "unterminated string");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = - 1> (x) }").status(), 1, 28, "a number after '-'");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = -infx> (x) }").status(), 1, 28, "a number after '-'");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = 1e> (x) }").status(), 1, 28, "digits in the exponent");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = 99999999999999999999> (x) }").status(), 1, 28, "range of int64");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = 1e39> (x) }").status(), 1, 28, "overflows float");
  ExpectErrorAt(ParseGraphText("g (double[1] d = {1e309}) => () {}").status(), 1, 19, "overflows double");
  ExpectErrorAt(ParseGraphText("g\xff () => () {}").status(), 1, 2, "unexpected character '\\xff'");
}

TEST(TextSyntaxErrors, UnbalancedBrackets) {
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Relu(x)").status(), 1, 27, "'}' to close the list of nodes");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Relu(x)) }").status(), 1, 27, "expected '='");
  ExpectErrorAt(ParseGraphText("g (x y) => (y) {}").status(), 1, 6, "')' to close the graph's inputs");
  ExpectErrorAt(ParseGraphText("g (float[2 x) => () {}").status(), 1, 12, "']' to close the dimensions");
  ExpectErrorAt(ParseGraphText("g (seq(float x) => () {}").status(), 1, 14, "')' to close seq(...)");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = 1 (x) }").status(), 1, 30, "'>' to close the attributes");
  ExpectErrorAt(ParseGraphText("g (x) => (y) { y = Op <a = [1, 2> (x) }").status(), 1, 33, "']' to close the list");
  ExpectErrorAt(ParseGraphText("g (float[1] w = {1) => () {}").status(), 1, 19, "'}' to close the tensor's values");
}

TEST(TextSyntaxErrors, DeepNestingIsRefused) {
  std::string deep_type;
  for (int i = 0; i < 2000; ++i) deep_type += "seq(";
  std::string type_text = "g (" + deep_type + "float" + std::string(2000, ')') + " x) => () {}";
  Status status = ParseGraphText(type_text).status();
  ExpectPositionedError(status, type_text);
  EXPECT_THAT(status.message(), HasSubstr("nesting too deep"));

  std::string deep_graph = "g () => () { y = Op <b = ";
  for (int i = 0; i < 2000; ++i) deep_graph += "h () => () { y = Op <b = ";
  Status graph_status = ParseGraphText(deep_graph + "1> () }").status();
  EXPECT_THAT(graph_status.message(), HasSubstr("nesting too deep"));

  // The graph is one level and each type another: kMaxTextNesting levels
  // parse, one more does not.
  auto nested = [](int seqs) {
    std::string text = "g (";
    for (int i = 0; i < seqs; ++i) text += "seq(";
    return text + "float" + std::string(seqs, ')') + " x) => () {}";
  };
  EXPECT_TRUE(ParseGraphText(nested(kMaxTextNesting - 2)).ok());
  EXPECT_THAT(ParseGraphText(nested(kMaxTextNesting - 1)).status().message(), HasSubstr("nesting too deep"));
}

constexpr const char* kWellFormed = R"(<ir_version: 10, opset_import: ["" : 18, "local" : 1], metadata_props: ["k": "v"]>
main (float[N, 4] x, float[4] b = {1, 2, 3, 4}) => (float[N] y, seq(float) s)
  <float[2] w = {1.0, -inf}, int64[1] axes = {1}, float[N, 4] t>
{
  [n0] t = Add (x, b)    # broadcast
  y, , z = local.Op:ov <alpha: float = 1, l = [1, 2], s = "q\"", v = float[1] {2}, tp = optional(int64[]),
                        body = sub (int64 i) => (bool c) { c = Constant <value = bool {1}> () }> (t, , axes)
  s = SequenceConstruct (y)
}
<domain: "local", opset_import: ["" : 18], overload: "ov">
Op <alpha: float = 0.5, l, s, v, tp, body> (a, b, c) => (d, e, f) { d = Identity <f = @alpha> (a) }
)";

TEST(TextSyntaxErrors, EveryTruncationFailsWithAPosition) {
  std::string_view text = kWellFormed;
  ASSERT_TRUE(ParseModelText(text).ok()) << ParseModelText(text).status().ToString();
  // Cut anywhere before the last '}', the text is no model, except where the
  // cut falls just after the graph's '}' (and its newline): then it is a model
  // without functions.
  size_t graph_end = text.find("}\n<domain") + 1;
  size_t last_brace = text.rfind('}');
  for (size_t length = 0; length < last_brace; ++length) {
    std::string_view prefix = text.substr(0, length);
    auto result = ParseModelText(prefix);
    if (length == graph_end || length == graph_end + 1) {
      EXPECT_TRUE(result.ok()) << result.status().ToString();
    } else {
      ExpectPositionedError(result.status(), prefix);
    }
  }
}

// Random byte edits of a well-formed text: each result is either a model or
// an error with a position. Run under -fsanitize=address,undefined.
TEST(TextSyntaxErrors, MutationsNeverCrash) {
  std::mt19937 random(20240611);
  const std::string alphabet = "<>()[]{},:=.@?\"-#\\ \n0123456789eExyzinfnan_float[seq(";
  std::string base = kWellFormed;
  for (int round = 0; round < 3000; ++round) {
    std::string text = base;
    int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = random() % text.size();
      switch (random() % 3) {
        case 0: text.erase(at, 1 + random() % 3); break;
        case 1: text.insert(at, 1, alphabet[random() % alphabet.size()]); break;
        default: text[at] = static_cast<char>(random() % 256); break;
      }
    }
    auto result = ParseModelText(text);
    if (!result.ok()) ExpectPositionedError(result.status(), text);
  }
}

TEST(TextSyntaxLexer, TokensCarryPositions) {
  text_syntax::Lexer lexer("a\n  -1.5e3 \"s\\\"\" # c\n=>");
  text_syntax::Token a = lexer.Next();
  EXPECT_EQ(a.kind, text_syntax::TokenKind::kIdentifier);
  text_syntax::Token number = lexer.Next();
  EXPECT_EQ(number.kind, text_syntax::TokenKind::kFloat);
  EXPECT_EQ(number.text, "-1.5e3");
  EXPECT_EQ(number.line, 2);
  EXPECT_EQ(number.column, 3);
  EXPECT_EQ(lexer.Next().text, "s\"");
  text_syntax::Token equals = lexer.Next();
  EXPECT_TRUE(equals.Is('='));
  EXPECT_EQ(equals.line, 3);
  EXPECT_TRUE(lexer.Next().Is('>'));
  EXPECT_EQ(lexer.Next().kind, text_syntax::TokenKind::kEnd);
  EXPECT_EQ(lexer.Next().kind, text_syntax::TokenKind::kEnd);  // stays at the end
}

}  // namespace
}  // namespace parity
