// Tests of the aliasing annotations and their validity rules (aliasing.h):
// parsing, then for each rule a model that breaks it, and valid KV-cache
// shapes of model that must give no problem.
#include <chrono>

#include <gtest/gtest.h>

#include "reference/aliasing/aliasing.h"
#include "reference/model/text_syntax.h"
#include "reference/model/validator.h"

namespace parity {
namespace {

onnx::ModelProto AliasModel(std::string_view text) {
  StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : onnx::ModelProto();
}

LoadedModel LoadedAliasModel(const onnx::ModelProto& model) {
  return LoadedModel{std::make_shared<onnx::ModelProto>(model), "m.onnx", ""};
}

template <typename Holder>
void AddProp(Holder& holder, const std::string& key, const std::string& value) {
  auto* prop = holder.add_metadata_props();
  prop->set_key(key);
  prop->set_value(value);
}

// Annotates output `output` of the main graph.
void Annotate(onnx::ModelProto& model, const std::string& output, const std::string& value) {
  AddProp(*model.mutable_graph(), kAliasKeyPrefix + output, value);
}

void NameNode(onnx::ModelProto& model, int index, const std::string& name) {
  model.mutable_graph()->mutable_node(index)->set_name(name);
}

std::string JoinedProblems(const std::vector<Status>& problems) {
  std::string text;
  for (const Status& p : problems) text += p.message() + "\n";
  return text;
}

// The problems of a model that passes the IR's rules (the validator assumes it).
std::vector<Status> Problems(const onnx::ModelProto& model) {
  const std::vector<Status> ir = ValidateModel(LoadedAliasModel(model));
  EXPECT_TRUE(ir.empty()) << "the test model breaks the IR's rules:\n" << JoinedProblems(ir);
  return ValidateAliases(LoadedAliasModel(model));
}

// Expects exactly one problem, under `rule`, whose message contains every
// one of `parts`; returns its message.
std::string OnlyProblem(const onnx::ModelProto& model, const std::string& rule,
                        const std::vector<std::string>& parts) {
  const std::vector<Status> problems = Problems(model);
  EXPECT_EQ(problems.size(), 1u) << JoinedProblems(problems);
  if (problems.empty()) return "";
  const Status& p = problems.front();
  EXPECT_EQ(p.code(), StatusCode::kInvalidModel);
  EXPECT_EQ(p.message().rfind(rule + ": ", 0), 0u) << p.message();
  for (const std::string& part : parts) EXPECT_NE(p.message().find(part), std::string::npos) << p.message();
  return p.message();
}

// A decoder step's key cache: TensorScatter writes the new rows of past_k.
constexpr char kScatterModel[] = R"(<ir_version: 11, opset_import: ["" : 24]>
  g (float[1,2,8,4] past_k, float[1,2,1,4] new_k, int64[1] pos) => (float[1,2,8,4] present_k) {
    present_k = TensorScatter (past_k, new_k, pos)
  })";

// A whole-buffer update: present = past + delta.
constexpr char kAddModel[] = R"(<ir_version: 10, opset_import: ["" : 21]>
  g (float[2,3] past, float[2,3] delta) => (float[2,3] present) {
    present = Add (past, delta)
  })";

// --- Parsing. -----------------------------------------------------------------

TEST(AliasParse, FieldsSpacesAndDefaults) {
  onnx::GraphProto graph;
  AddProp(graph, "ai.onnx.alias.layer.0.present_k", " input = past_k ;mode=must; region =scatter ");
  AddProp(graph, "ai.onnx.alias.y", "input=x");
  AddProp(graph, "ai.onnx.alias.z", "region=whole;input=w;mode=may");
  StatusOr<std::vector<Alias>> aliases = ReadAliases(graph);
  ASSERT_TRUE(aliases.ok()) << aliases.status().ToString();
  ASSERT_EQ(aliases->size(), 3u);
  EXPECT_EQ((*aliases)[0].output, "layer.0.present_k");  // dots belong to the name
  EXPECT_EQ((*aliases)[0].input, "past_k");
  EXPECT_EQ((*aliases)[0].mode, AliasMode::kMust);
  EXPECT_EQ((*aliases)[0].region, AliasRegion::kScatter);
  EXPECT_EQ((*aliases)[1].output, "y");
  EXPECT_EQ((*aliases)[1].input, "x");
  EXPECT_EQ((*aliases)[1].mode, AliasMode::kMay);
  EXPECT_EQ((*aliases)[1].region, AliasRegion::kWhole);
  EXPECT_EQ((*aliases)[2].input, "w");
}

TEST(AliasParse, KeysOutsideThePrefixAreIgnored) {
  onnx::GraphProto graph;
  AddProp(graph, "ai.onnx.alias", "input=x");         // the prefix without its dot
  AddProp(graph, "ai.onnx.aliases.y", "nonsense");    // another key that only starts alike
  AddProp(graph, "com.example.alias.y", "input=x");   // another namespace
  AddProp(graph, "AI.ONNX.ALIAS.y", "input=x");       // keys are case-sensitive
  StatusOr<std::vector<Alias>> aliases = ReadAliases(graph);
  ASSERT_TRUE(aliases.ok()) << aliases.status().ToString();
  EXPECT_TRUE(aliases->empty());
  onnx::ModelProto model = AliasModel(kAddModel);
  *model.mutable_graph()->mutable_metadata_props() = graph.metadata_props();
  EXPECT_FALSE(HasAliases(model));
  EXPECT_TRUE(Problems(model).empty());
}

TEST(AliasParse, EachMalformedValueIsAKeyError) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"input=x;color=red", "color"},   // unknown field
      {"input=x;input=w", "input"},     // a field twice
      {"mode=must", "no input"},        // no input
      {"input=x;mode=always", "always"},
      {"input=x;region=rows", "rows"},
      {"input", "input"},               // not name=value
      {"input=", "input is empty"},
      {"input=x;;mode=may", "empty field"},
  };
  for (const auto& [value, named] : bad) {
    onnx::GraphProto graph;
    AddProp(graph, "ai.onnx.alias.y", value);
    StatusOr<std::vector<Alias>> aliases = ReadAliases(graph);
    ASSERT_FALSE(aliases.ok()) << value;
    const std::string message = aliases.status().message();
    EXPECT_EQ(aliases.status().code(), StatusCode::kInvalidModel);
    EXPECT_EQ(message.rfind("ALIAS-KEY: output 'y'", 0), 0u) << message;
    EXPECT_NE(message.find("'" + value + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(named), std::string::npos) << message;
  }
}

TEST(AliasParse, EmptyOutputNameAndRepeatedKey) {
  onnx::GraphProto empty;
  AddProp(empty, "ai.onnx.alias.", "input=x");
  StatusOr<std::vector<Alias>> a = ReadAliases(empty);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("ALIAS-KEY: ", 0), 0u) << a.status().message();
  EXPECT_NE(a.status().message().find("names no output"), std::string::npos);

  onnx::GraphProto twice;
  AddProp(twice, "ai.onnx.alias.y", "input=x");
  AddProp(twice, "ai.onnx.alias.y", "input=w");
  StatusOr<std::vector<Alias>> b = ReadAliases(twice);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message().rfind("ALIAS-KEY: output 'y'", 0), 0u) << b.status().message();
  EXPECT_NE(b.status().message().find("input=w"), std::string::npos) << b.status().message();
}

TEST(AliasParse, HasAliasesLooksInSubgraphsAndFunctions) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[4] x) => (float[4] y) {
      y = If (c) <then_branch = t () => (float[4] r) { r = Abs (x) },
                  else_branch = e () => (float[4] s) { s = Neg (x) }>
    })");
  EXPECT_FALSE(HasAliases(model));
  onnx::ModelProto in_branch = model;
  AddProp(*in_branch.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g(), "ai.onnx.alias.s", "input=x");
  EXPECT_TRUE(HasAliases(in_branch));
  onnx::ModelProto in_function = model;
  onnx::FunctionProto* f = in_function.add_functions();
  f->set_name("F");
  f->set_domain("com.example");
  AddProp(*f, "ai.onnx.alias.b", "input=a");
  EXPECT_TRUE(HasAliases(in_function));
}

// --- Valid models. ------------------------------------------------------------

TEST(AliasValid, NoAnnotations) {
  const onnx::ModelProto model = AliasModel(kAddModel);
  EXPECT_FALSE(HasAliases(model));
  EXPECT_TRUE(Problems(model).empty());
  StatusOr<std::vector<Alias>> aliases = ValidAliases(LoadedAliasModel(model));
  ASSERT_TRUE(aliases.ok());
  EXPECT_TRUE(aliases->empty());
}

TEST(AliasValid, ScatterLinear) {
  onnx::ModelProto model = AliasModel(kScatterModel);
  Annotate(model, "present_k", "input=past_k; mode=must; region=scatter");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
  StatusOr<std::vector<Alias>> aliases = ValidAliases(LoadedAliasModel(model));
  ASSERT_TRUE(aliases.ok()) << aliases.status().ToString();
  ASSERT_EQ(aliases->size(), 1u);
  EXPECT_EQ((*aliases)[0].output, "present_k");
  EXPECT_EQ((*aliases)[0].input, "past_k");
}

TEST(AliasValid, ScatterCircularWithKeyAndValueCaches) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 11, opset_import: ["" : 24]>
    g (float[1,2,8,4] past_k, float[1,2,8,4] past_v, float[1,2,1,4] k, float[1,2,1,4] v, int64[1] pos)
        => (float[1,2,8,4] present_k, float[1,2,8,4] present_v) {
      present_k = TensorScatter <mode = "circular"> (past_k, k, pos)
      present_v = TensorScatter <mode = "circular"> (past_v, v, pos)
    })");
  Annotate(model, "present_k", "input=past_k;region=scatter");
  Annotate(model, "present_v", "input=past_v;region=scatter;mode=must");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
}

TEST(AliasValid, WholeAliasViaAdd) {
  onnx::ModelProto model = AliasModel(kAddModel);
  Annotate(model, "present", "input=past");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
}

TEST(AliasValid, OutputThatIsTheInputPassedThrough) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x, float[4] w) => (float[4] x, float[4] y) { y = Relu (w) })");
  Annotate(model, "x", "input=x;mode=must");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
}

TEST(AliasValid, ShapeAndSizeReadersAfterTheWrite) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present, int64[2] s, int64 n) {
      present = Add (past, delta)
      s = Shape (past)
      n = Size (past)
    })");
  Annotate(model, "present", "input=past");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
}

TEST(AliasValid, ReadersThatAreAncestorsOfTheWriter) {
  // Relu reads past directly, the If reads it inside its branches; both
  // feed the writer, so every order runs them before the write.
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[4] past, float[4] delta) => (float[4] present) {
      r = Relu (past)
      b = If (c) <then_branch = t () => (float[4] t1) { t1 = Abs (past) },
                  else_branch = e () => (float[4] e1) { e1 = Neg (past) }>
      rb = Add (r, b)
      present = Add (rb, delta)
    })");
  Annotate(model, "present", "input=past");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
}

TEST(AliasValid, MissingTypesAreLeftToRunTime) {
  onnx::ModelProto model = AliasModel(kAddModel);
  model.mutable_graph()->mutable_output(0)->clear_type();
  Annotate(model, "present", "input=past");
  EXPECT_TRUE(ValidateAliases(LoadedAliasModel(model)).empty())
      << JoinedProblems(ValidateAliases(LoadedAliasModel(model)));
}

// --- One model per rule. --------------------------------------------------------

TEST(AliasKey, MalformedValueInTheModel) {
  onnx::ModelProto model = AliasModel(kAddModel);
  Annotate(model, "present", "input=past;mode=sometimes");
  OnlyProblem(model, kAliasRuleKey, {"'present'", "input=past;mode=sometimes", "sometimes"});
  StatusOr<std::vector<Alias>> aliases = ValidAliases(LoadedAliasModel(model));
  ASSERT_FALSE(aliases.ok());
  EXPECT_EQ(aliases.status().message().rfind("ALIAS-KEY: ", 0), 0u);
}

TEST(AliasKey, KeyGivenTwice) {
  onnx::ModelProto model = AliasModel(kAddModel);
  Annotate(model, "present", "input=past");
  Annotate(model, "present", "input=delta");
  OnlyProblem(model, kAliasRuleKey, {"'present'", "twice", "input=delta"});
}

TEST(AliasIr, AnnotationBeforeIr10) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 9, opset_import: ["" : 19]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present) { present = Add (past, delta) })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleIr, {"'present'", "ir_version is 9"});
}

TEST(AliasNames, OutputNotAGraphOutput) {
  onnx::ModelProto model = AliasModel(kAddModel);
  Annotate(model, "presant", "input=past");
  OnlyProblem(model, kAliasRuleNames, {"output 'presant'", "not a graph output"});
}

TEST(AliasNames, InputNotAGraphInput) {
  onnx::ModelProto model = AliasModel(kAddModel);
  Annotate(model, "present", "input=pasta");
  OnlyProblem(model, kAliasRuleNames, {"output 'present'", "'pasta'", "not a graph input"});
}

TEST(AliasNames, InputWithAnInitializer) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2] past, float[2] delta) => (float[2] present) <float[2] past = {1, 2}> {
      present = Add (past, delta)
    })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleNames, {"output 'present'", "'past'", "initializer"});
}

TEST(AliasNames, OutputThatNoNodeComputes) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x, float[4] w) => (float[4] w, float[4] y) { y = Relu (x) })");
  Annotate(model, "w", "input=x");
  OnlyProblem(model, kAliasRuleNames, {"output 'w'", "'x'", "no node computes it", "a graph input"});
}

TEST(AliasTwice, TwoOutputsOneInput) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[4] past_k, float[4] k, float[4] v) => (float[4] present_k, float[4] present_v) {
      present_k = Add (past_k, k)
      present_v = Add (past_k, v)
    })");
  Annotate(model, "present_k", "input=past_k");
  Annotate(model, "present_v", "input=past_k");
  const std::string message = OnlyProblem(model, kAliasRuleTwice, {});
  EXPECT_EQ(message,
            "ALIAS-TWICE: output 'present_v' aliases input 'past_k', which output 'present_k' already aliases");
}

TEST(AliasType, ElementTypesDiffer) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[4] past, float[4] delta) => (float16[4] present) {
      s = Add (past, delta)
      present = Cast <to = 10> (s)
    })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleType, {"output 'present'", "'past'", "FLOAT16", "FLOAT"});
}

TEST(AliasType, RanksDiffer) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, int64[1] flat) => (float[6] present) { present = Reshape (past, flat) })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleType, {"output 'present'", "'past'", "rank 1", "2"});
}

TEST(AliasType, DimensionsDiffer) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,4] other) => (float[2,4] present) { present = Add (other, other) })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleType, {"output 'present'", "'past'", "dimension 1", "4", "3"});
}

TEST(AliasType, SymbolicDimensionsAreAccepted) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[N,3] past, float[N,3] delta) => (float[M,3] present) { present = Add (past, delta) })");
  Annotate(model, "present", "input=past");
  EXPECT_TRUE(Problems(model).empty()) << JoinedProblems(Problems(model));
}

TEST(AliasType, NotTensors) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (seq(float[4]) past, float[4] x) => (seq(float[4]) present) { present = SequenceInsert (past, x) })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleType, {"output 'present'", "'past'", "a sequence", "only tensors"});
}

TEST(AliasReadAfterWrite, ReaderThatIsNotAnAncestor) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 11, opset_import: ["" : 24]>
    g (float[1,2,8,4] past_k, float[1,2,1,4] new_k, int64[1] pos, float[1,2,8,4] bias)
        => (float[1,2,8,4] present_k, float[1,2,8,4] shifted) {
      present_k = TensorScatter (past_k, new_k, pos)
      shifted = Add (past_k, bias)
    })");
  NameNode(model, 0, "scatter_k");
  NameNode(model, 1, "shape_or_name");
  Annotate(model, "present_k", "input=past_k;region=scatter");
  const std::string message = OnlyProblem(model, kAliasRuleReadAfterWrite, {});
  EXPECT_EQ(message,
            "ALIAS-READ-AFTER-WRITE: output 'present_k' aliases input 'past_k', which node 'shape_or_name' (Add) "
            "reads and which is not an ancestor of the writer 'scatter_k' (TensorScatter)");
}

TEST(AliasReadAfterWrite, ReaderInsideASubgraph) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[4] past, float[4] delta) => (float[4] present, float[4] late) {
      present = Add (past, delta)
      late = If (c) <then_branch = t () => (float[4] t1) { t1 = Abs (past) },
                     else_branch = e () => (float[4] e1) { e1 = Neg (delta) }>
    })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleReadAfterWrite, {"output 'present'", "'past'", "node 'If#1' (If)", "'Add#0' (Add)"});
}

TEST(AliasReadAfterWrite, InputThatIsAlsoAGraphOutput) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present, float[2,3] past) { present = Add (past, delta) })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleReadAfterWrite, {"output 'present'", "'past'", "also a graph output"});
}

TEST(AliasReadAfterWrite, CountsFurtherReaders) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[4] past, float[4] delta) => (float[4] present, float[4] a, float[4] b, float[4] c) {
      present = Add (past, delta)
      a = Relu (past)
      b = Abs (past)
      c = Neg (past)
    })");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleReadAfterWrite, {"node 'Relu#1' (Relu)", "and 2 more such readers"});
}

TEST(AliasControlFlow, AnnotationInASubgraph) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[4] x) => (float[4] y) {
      y = If (c) <then_branch = t () => (float[4] r) { r = Abs (x) },
                  else_branch = e () => (float[4] s) { s = Neg (x) }>
    })");
  model.mutable_graph()->mutable_node(0)->set_name("branch");
  AddProp(*model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g(), "ai.onnx.alias.r", "input=x");
  OnlyProblem(model, kAliasRuleControlFlow, {"output 'r'", "input=x", "subgraph 'branch.then_branch'"});
}

TEST(AliasControlFlow, AnnotationOnAFunction) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[4] x) => (float[4] y) { y = com.example.F (x) }
    <domain: "com.example", opset_import: ["" : 21]> F (a) => (b) { b = Relu (a) })");
  AddProp(*model.mutable_functions(0), "ai.onnx.alias.b", "input=a");
  OnlyProblem(model, kAliasRuleControlFlow, {"output 'b'", "input=a", "function 'com.example:F'"});
}

TEST(AliasControlFlow, WriterHoldsSubgraphs) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[4] past, float[4] delta) => (float[4] present) {
      present = If (c) <then_branch = t () => (float[4] t1) { t1 = Add (past, delta) },
                        else_branch = e () => (float[4] e1) { e1 = Sub (past, delta) }>
    })");
  NameNode(model, 0, "update");
  Annotate(model, "present", "input=past");
  OnlyProblem(model, kAliasRuleControlFlow, {"output 'present'", "'past'", "'update' (If)", "holds subgraphs"});
}

TEST(AliasScatter, WriterIsNotATensorScatter) {
  onnx::ModelProto model = AliasModel(kAddModel);
  Annotate(model, "present", "input=past;region=scatter");
  OnlyProblem(model, kAliasRuleScatter, {"output 'present'", "'past'", "'Add#0' (Add)", "not a TensorScatter"});
}

TEST(AliasScatter, TensorScatterOfAnotherCache) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 11, opset_import: ["" : 24]>
    g (float[1,2,8,4] past_k, float[1,2,8,4] other, float[1,2,1,4] new_k, int64[1] pos)
        => (float[1,2,8,4] present_k) {
      mixed = Add (past_k, other)
      present_k = TensorScatter (mixed, new_k, pos)
    })");
  Annotate(model, "present_k", "input=past_k;region=scatter");
  OnlyProblem(model, kAliasRuleScatter, {"output 'present_k'", "'past_k'", "updates 'mixed'"});
}

TEST(AliasScatter, PassthroughCannotScatter) {
  onnx::ModelProto model = AliasModel(R"(<ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x, float[4] w) => (float[4] x, float[4] y) { y = Relu (w) })");
  Annotate(model, "x", "input=x;region=scatter");
  OnlyProblem(model, kAliasRuleScatter, {"output 'x'", "that input itself"});
}

// --- Scale. ----------------------------------------------------------------------

// Validation stays linear in the graph per writer (one walk back from each
// writer, a lookup per reader): 64 caches behind a 100,000-node chain. The
// time bound is loose, for slow machines; it catches work per pair of nodes.
TEST(AliasScale, ManyCachesBehindALongChain) {
  constexpr int kChain = 100000;
  constexpr int kCaches = 64;
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("g");
  const auto add_value = [](auto* list, const std::string& name) {
    onnx::ValueInfoProto* v = list->Add();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(4);
  };
  add_value(g.mutable_input(), "x");
  std::string last = "x";
  for (int i = 0; i < kChain; ++i) {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type("Relu");
    n->add_input(last);
    last = "c" + std::to_string(i);
    n->add_output(last);
  }
  for (int k = 0; k < kCaches; ++k) {
    const std::string past = "past" + std::to_string(k), present = "present" + std::to_string(k);
    add_value(g.mutable_input(), past);
    // Each cache is read early (an ancestor of its writer) and updated at the end.
    onnx::NodeProto* early = g.add_node();
    early->set_op_type("Add");
    early->add_input(past);
    early->add_input("x");
    early->add_output("early" + std::to_string(k));
    onnx::NodeProto* writer = g.add_node();
    writer->set_op_type("Add");
    writer->add_input("early" + std::to_string(k));
    writer->add_input(last);
    writer->add_output(present);
    add_value(g.mutable_output(), present);
    Annotate(model, present, "input=" + past);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Status> problems = ValidateAliases(LoadedAliasModel(model));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(problems.empty()) << JoinedProblems(problems);
  EXPECT_LT(seconds, 20.0);
}

}  // namespace
}  // namespace parity
