// Tests of ResolveVariants: which entries are taken and why the others are
// not, the rewritten graph (calls, nodes that stay, dead code, order), and
// that the resolved model computes what the main graph computes.
#include <gtest/gtest.h>

#include "reference/model/validator.h"
#include "reference/variants/variants_test_util.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

using variants_test::AddEntry;
using variants_test::Joined;
using variants_test::Loaded;
using variants_test::MakeCompiled;
using variants_test::Model;
using variants_test::RunFloats;
using variants_test::Target;

bool AnyEntryLeft(const onnx::GraphProto& graph) {
  if (graph.equivalent_subgraph_size() > 0) return true;
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() && AnyEntryLeft(attr.g())) return true;
      for (const auto& g : attr.graphs()) {
        if (AnyEntryLeft(g)) return true;
      }
    }
  }
  return false;
}

// Resolves and checks what holds for every result: it passes ValidateModel
// and no entry is left anywhere.
ResolvedModel Resolve(const onnx::ModelProto& model, std::vector<std::string> targets,
                      std::vector<std::string> only = {}) {
  ResolveOptions options;
  options.targets = std::move(targets);
  options.only_entries = std::move(only);
  StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(model), options);
  EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
  if (!resolved.ok()) return {};
  const std::vector<Status> problems = ValidateModel(Loaded(resolved->model));
  EXPECT_TRUE(problems.empty()) << Joined(problems);
  EXPECT_FALSE(AnyEntryLeft(resolved->model.graph()));
  EXPECT_EQ(resolved->decisions.size(), CollectEntries(model).size());
  // The overload that takes the model rewrites it in place, to the same result.
  onnx::ModelProto handed_over = model;
  StatusOr<ResolvedModel> in_place = ResolveVariants(std::move(handed_over), options, "m.onnx");
  EXPECT_TRUE(in_place.ok()) << in_place.status().ToString();
  if (in_place.ok()) {
    EXPECT_EQ(in_place->model.SerializeAsString(), resolved->model.SerializeAsString());
    EXPECT_EQ(in_place->decisions.size(), resolved->decisions.size());
    for (size_t i = 0; i < in_place->decisions.size() && i < resolved->decisions.size(); ++i) {
      EXPECT_EQ(in_place->decisions[i].reason, resolved->decisions[i].reason);
    }
  }
  return std::move(resolved).value();
}

Status ResolveError(const onnx::ModelProto& model, std::vector<std::string> targets, std::vector<std::string> only = {}) {
  ResolveOptions options;
  options.targets = std::move(targets);
  options.only_entries = std::move(only);
  StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(model), options);
  EXPECT_FALSE(resolved.ok());
  return resolved.status();
}

std::vector<std::string> OpTypes(const onnx::GraphProto& graph) {
  std::vector<std::string> ops;
  for (const auto& node : graph.node()) ops.push_back(node.op_type());
  return ops;
}

std::string Reason(const ResolvedModel& resolved, const std::string& id) {
  for (const auto& d : resolved.decisions) {
    if (d.id == id) return d.selected ? "selected" : d.reason;
  }
  return "no decision";
}

using Inputs = std::vector<std::pair<Shape, std::vector<double>>>;

// The resolved model computes what the main graph of `model` computes.
void ExpectSameResults(const onnx::ModelProto& model, const ResolvedModel& resolved, const Inputs& inputs) {
  const auto expected = RunFloats(StripVariants(model), inputs);
  const auto actual = RunFloats(resolved.model, inputs);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(expected, actual);
}

constexpr char kHeader[] = R"(<ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>)";
const Inputs kX = {{{4}, {-2, -0.5, 1, 3}}};
const Inputs kXB = {{{4}, {-2, -0.5, 1, 3}}, {{4}, {0.5, 1, -4, 2}}};

TEST(VariantResolve, OneNodeBecomesTheCall) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  y = Relu (t) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (t)", Target("com.example.npu"));
  ResolvedModel resolved = Resolve(model, {"com.example.npu"});
  EXPECT_EQ(Reason(resolved, "e0"), "selected");
  ASSERT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Add", "Relu"}));
  const onnx::NodeProto& call = resolved.model.graph().node(1);
  EXPECT_EQ(call.name(), "variant_e0");
  ASSERT_EQ(call.metadata_props_size(), 2);
  EXPECT_EQ(call.metadata_props(0).key(), kTargetKey);
  EXPECT_EQ(call.metadata_props(1).key(), "ai.onnx.variant.entry");
  EXPECT_EQ(call.metadata_props(1).value(), "e0");
  ExpectSameResults(model, resolved, kXB);
}

TEST(VariantResolve, AnEntryTheBackendRefusesIsNotEligibleAndTheNextRankedOneIsTaken) {
  // Two entries for the same Relu: the NPU's first in rank, refused (a blob
  // its driver cannot load), so the portable one is taken; with no veto the
  // NPU's wins.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  y = Relu (t) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (t)", Target("com.example.npu"));
  AddEntry(*model.mutable_graph(), "y = Relu (t)");
  ResolveOptions options;
  options.targets = {"com.example.npu", kPortableTarget};
  std::vector<std::string> asked;
  options.refuse = [&](const VariantEntry& entry) -> std::string {
    asked.push_back(entry.id);
    return entry.target == "com.example.npu" ? "its blob is for another compiler" : "";
  };
  StatusOr<ResolvedModel> refused = ResolveVariants(Loaded(model), options);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(Reason(*refused, "e0"), "refused by the backend: its blob is for another compiler");
  EXPECT_EQ(Reason(*refused, "e1"), "selected");
  EXPECT_EQ(asked, (std::vector<std::string>{"e0", "e1"}));
  ResolvedModel taken = Resolve(model, {"com.example.npu", kPortableTarget});
  EXPECT_EQ(Reason(taken, "e0"), "selected");
  ExpectSameResults(model, *refused, kXB);
}
TEST(VariantResolve, ChainBecomesOneFunctionCall) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  u = Relu (t)  y = Neg (u) }
    <domain: "com.example", opset_import: ["" : 21]> F (p, q) => (r) { s = Add (p, q)  o = Relu (s)  r = Neg (o) })"));
  AddEntry(*model.mutable_graph(), "y = com.example.F (x, b)");
  ResolvedModel resolved = Resolve(model, {"com.example.npu", kPortableTarget});
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"F"}));
  ExpectSameResults(model, resolved, kXB);
}

TEST(VariantResolve, DiamondBecomesOneCall) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y, float[4] z) { a = Relu (x)  b = Neg (x)  y = Add (a, b)  z = Abs (y) }
    <domain: "com.example", opset_import: ["" : 21]> D (p) => (r) { s = Relu (p)  t = Neg (p)  r = Add (s, t) })"));
  AddEntry(*model.mutable_graph(), "y = com.example.D (x)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"D", "Abs"}));
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, IntermediateReadOutsideKeepsItsNodeAndRenamesTheEntryOutput) {
  // Split makes s1 (an entry output) and s2 (read by Abs, outside the
  // region): Split stays, its s1 under a new name; the call makes s1 and y.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[2] s1, float[2] y, float[2] z) <float[2] s1> {
      s1, s2 = Split <num_outputs = 2> (x)
      y = Neg (s1)
      z = Abs (s2)
    }
    <domain: "com.example", opset_import: ["" : 21]> SplitNeg (p) => (a, b) {
      a, c = Split <num_outputs = 2> (p)
      b = Neg (a)
    })"));
  AddEntry(*model.mutable_graph(), "s1, y = com.example.SplitNeg (x)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"Split", "SplitNeg", "Abs"}));
  EXPECT_EQ(g.node(0).output(0), "s1_variant_0");
  EXPECT_EQ(g.node(0).output(1), "s2");
  EXPECT_EQ(g.node(1).output(0), "s1");
  EXPECT_EQ(g.value_info_size(), 1);  // s1 is still made, by the call
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, KeptRegionNodeReadsTheRenamedValue) {
  // r (entry output) feeds k, which stays because q is read outside.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y, float[4] z) {
      r = Relu (x)
      q = Neg (r)
      y = Add (r, q)
      z = Abs (q)
    }
    <domain: "com.example", opset_import: ["" : 21]> G (p) => (a, b) { a = Relu (p)  n = Neg (a)  b = Add (a, n) })"));
  AddEntry(*model.mutable_graph(), "r, y = com.example.G (x)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"Relu", "G", "Neg", "Abs"}));
  EXPECT_EQ(g.node(0).output(0), "r_variant_0");
  EXPECT_EQ(g.node(2).input(0), "r_variant_0");
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, KeptNodeWithASubgraphReadsTheRenamedValue) {
  // The If stays (o2 is a graph output) and its branches read r, an entry
  // output: Relu stays too, and the branches read r under its new name.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, bool c) => (float[4] z, float[4] o2) {
      r = Relu (x)
      o1, o2 = If (c) <then_branch = then_g () => (float[4] a1, float[4] a2) { a1 = Neg (r)  a2 = Abs (r) },
                       else_branch = else_g () => (float[4] b1, float[4] b2) { b1 = Identity (r)  b2 = Sigmoid (r) }>
      z = Add (o1, r)
    }
    <domain: "com.example", opset_import: ["" : 21]> F (p, q) => (s, u) {
      s = Relu (p)
      u = If (q) <then_branch = then_f () => (float[4] f1) { f1 = Neg (s) },
                  else_branch = else_f () => (float[4] f2) { f2 = Identity (s) }>
    })"));
  AddEntry(*model.mutable_graph(), "r, o1 = com.example.F (x, c)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"Relu", "F", "If", "Add"}));
  EXPECT_EQ(g.node(0).output(0), "r_variant_0");
  EXPECT_EQ(g.node(2).output(0), "o1_variant_0");
  EXPECT_EQ(g.node(2).attribute(0).g().node(0).input(0), "r_variant_0");
  EXPECT_EQ(g.node(2).attribute(1).g().node(1).input(0), "r_variant_0");
  for (bool branch : {true, false}) {
    std::vector<Value> values = {Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {4}, {-2, -0.5, 1, 3})),
                                 Value::FromTensor(*Tensor::FromDoubles(DataType::kBool, {}, {branch ? 1.0 : 0.0}))};
    const auto main_outputs = variants_test::RunValues(StripVariants(model), values);
    ASSERT_FALSE(main_outputs.empty());
    EXPECT_EQ(main_outputs, variants_test::RunValues(resolved.model, values));
  }
}

TEST(VariantResolve, NodeListOutOfOrderIsSortedStably) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y, float[4] z) { y = Relu (t)  z = Abs (x)  t = Add (x, b) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (t)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Abs", "Add", "Relu"}));
  EXPECT_EQ(resolved.model.graph().node(2).name(), "variant_e0");
}

TEST(VariantResolve, InnerValueThatIsAGraphOutputKeepsItsNode) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] t, float[4] y) { t = Relu (x)  y = Neg (t) }
    <domain: "com.example", opset_import: ["" : 21]> F (p) => (r) { s = Relu (p)  r = Neg (s) })"));
  AddEntry(*model.mutable_graph(), "y = com.example.F (x)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Relu", "F"}));
  EXPECT_EQ(resolved.model.graph().node(0).output(0), "t");  // not an entry output: not renamed
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, AdjacentEntriesAreBothTakenAndChained) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y) { t = Relu (x)  n = Neg (t)  y = Abs (n) }
    <domain: "com.example", opset_import: ["" : 21]> F (p) => (r) { s = Relu (p)  r = Neg (s) })"));
  AddEntry(*model.mutable_graph(), "y = Abs (n)");
  AddEntry(*model.mutable_graph(), "n = com.example.F (x)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "e0"), "selected");
  EXPECT_EQ(Reason(resolved, "e1"), "selected");
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"F", "Abs"}));
  EXPECT_EQ(g.node(0).name(), "variant_e1");
  EXPECT_EQ(g.node(1).name(), "variant_e0");
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, WeightReadByAnEntryOfASubgraphStays) {
  // The Compiled e0 takes x only: its region reads w as a constant, and
  // w goes with the region, unless an entry of the Loop body reads it.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, int64 n) => (float[4] y, float[4] z) <float[4] w = {1, 2, 3, 4}> {
      t = Mul (x, w)
      y = Relu (t)
      k = Constant <value = bool {1}> ()
      z = Loop (n, k, x) <body = body (int64 i, bool cin, float[4] acc) => (bool cout, float[4] next) {
        cout = Identity (cin)
        next = Relu (acc)
      }>
    }
    <domain: "com.example", opset_import: ["" : 21]> ReluOf (p, unused) => (r) { r = Relu (p) })"));
  MakeCompiled(AddEntry(*model.mutable_graph(), "y = com.example.Blob (x)"), "com.example.npu");
  ASSERT_TRUE(StampCompiledHashes(model).ok());
  EXPECT_EQ(Resolve(model, {"com.example.npu"}).model.graph().initializer_size(), 0);

  onnx::GraphProto& body = *model.mutable_graph()->mutable_node(3)->mutable_attribute(0)->mutable_g();
  AddEntry(body, "next = com.example.ReluOf (acc, w)");
  ResolvedModel resolved = Resolve(model, {"com.example.npu", kPortableTarget});
  EXPECT_EQ(Reason(resolved, "e0"), "selected");
  EXPECT_EQ(Reason(resolved, "Loop#3.body/e0"), "selected");
  EXPECT_EQ(resolved.model.graph().initializer_size(), 1);
}

// Runs `model` on x = kX's values and the condition c.
std::vector<std::vector<double>> RunWithCondition(const onnx::ModelProto& model, bool c) {
  std::vector<Value> values = {Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {4}, {-2, -0.5, 1, 3})),
                               Value::FromTensor(*Tensor::FromDoubles(DataType::kBool, {}, {c ? 1.0 : 0.0}))};
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(Loaded(model), WithReferenceKernels());
  EXPECT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  if (!evaluator.ok()) return {};
  StatusOr<std::vector<Value>> out = (*evaluator)->Run(values);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  std::vector<std::vector<double>> result;
  if (out.ok()) {
    for (const Value& v : *out) result.push_back(v.tensor().ToDoubles());
  }
  return result;
}

// The resolved model computes the main graph's outputs, whichever branch runs.
void ExpectSameResultsOnBothBranches(const onnx::ModelProto& model, const ResolvedModel& resolved) {
  for (bool c : {true, false}) {
    const auto expected = RunWithCondition(StripVariants(model), c);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(expected, RunWithCondition(resolved.model, c)) << "c = " << c;
  }
}

onnx::GraphProto& Branch(onnx::NodeProto& node, const std::string& name) {
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.name() == name) return *attr.mutable_g();
  }
  ADD_FAILURE() << "no attribute " << name;
  return *node.add_attribute()->mutable_g();
}

const onnx::GraphProto& Branch(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return attr.g();
  }
  ADD_FAILURE() << "no attribute " << name;
  return onnx::GraphProto::default_instance();
}

constexpr char kExtraInputFunctions[] = R"(
    <domain: "com.example", opset_import: ["" : 21]> NegRelu (p) => (o) { t = Relu (p)  o = Neg (t) }
    <domain: "com.example", opset_import: ["" : 21]> AbsExtra (p, q) => (o) { o = Abs (p) })";

TEST(VariantResolve, ValueReadOnlyByANestedEntryKeepsItsNode) {
  // a is inside e0's region and read by nothing but the then branch's
  // entry (an extra input its region does not read): Relu stays for it.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, bool c) => (float[4] b, float[4] y) {
      a = Relu (x)
      b = Neg (a)
      y = If (c) <then_branch = then_g () => (float[4] r) { r = Abs (x) },
                  else_branch = else_g () => (float[4] s) { s = Identity (x) }>
    })", kExtraInputFunctions));
  AddEntry(*model.mutable_graph(), "b = com.example.NegRelu (x)");
  AddEntry(Branch(*model.mutable_graph()->mutable_node(2), "then_branch"), "r = com.example.AbsExtra (x, a)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "e0"), "selected");
  EXPECT_EQ(Reason(resolved, "If#2.then_branch/e0"), "selected");
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"Relu", "NegRelu", "If"}));
  EXPECT_EQ(g.node(0).output(0), "a");  // not an entry output: not renamed
  const onnx::GraphProto& then_g = Branch(g.node(2), "then_branch");
  ASSERT_EQ(OpTypes(then_g), (std::vector<std::string>{"AbsExtra"}));
  EXPECT_EQ(then_g.node(0).input(1), "a");
  ExpectSameResultsOnBothBranches(model, resolved);
  // The outer graph is decided before its subgraphs: the entry keeps Relu
  // even when it is not taken afterwards.
  ResolvedModel alone = Resolve(model, {}, {"e0"});
  EXPECT_EQ(OpTypes(alone.model.graph()), (std::vector<std::string>{"Relu", "NegRelu", "If"}));
  ExpectSameResultsOnBothBranches(model, alone);
}

TEST(VariantResolve, NestedEntryOfAKeptRegionNodeReadsTheRenamedValue) {
  // The If stays (o2 is a graph output); the entry in its then branch
  // reads r, an output of e0: Relu stays too, and the entry's call reads r
  // under Relu's new name, as the region's kept nodes do.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, bool c) => (float[4] z, float[4] o2) {
      r = Relu (x)
      o1, o2 = If (c) <then_branch = then_g () => (float[4] a1, float[4] a2) { a1 = Neg (x)  a2 = Abs (x) },
                       else_branch = else_g () => (float[4] b1, float[4] b2) { b1 = Identity (x)  b2 = Sigmoid (x) }>
      z = Add (o1, r)
    }
    <domain: "com.example", opset_import: ["" : 21]> NegExtra (p, q) => (o) { o = Neg (p) }
    <domain: "com.example", opset_import: ["" : 21]> F (p, q) => (s, u) {
      s = Relu (p)
      u = If (q) <then_branch = then_f () => (float[4] f1) { f1 = Neg (p) },
                  else_branch = else_f () => (float[4] f2) { f2 = Identity (p) }>
    })"));
  AddEntry(*model.mutable_graph(), "r, o1 = com.example.F (x, c)");
  AddEntry(Branch(*model.mutable_graph()->mutable_node(1), "then_branch"), "a1 = com.example.NegExtra (x, r)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "If#1.then_branch/e0"), "selected");
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"Relu", "F", "If", "Add"}));
  EXPECT_EQ(g.node(0).output(0), "r_variant_0");
  EXPECT_EQ(g.node(2).output(0), "o1_variant_0");
  const onnx::GraphProto& then_g = Branch(g.node(2), "then_branch");
  ASSERT_EQ(OpTypes(then_g), (std::vector<std::string>{"NegExtra", "Abs"}));
  EXPECT_EQ(then_g.node(0).input(1), "r_variant_0");
  ExpectSameResultsOnBothBranches(model, resolved);
}

TEST(VariantResolve, NodeComesAfterACallItsNestedEntryReads) {
  // e0's call moves after Abs (its extra input w); the If's then entry
  // reads y, which the call makes, so the If moves after the call too.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, bool c) => (float[4] o, float[4] z) {
      t = Relu (x)
      y = Neg (t)
      z = If (c) <then_branch = then_g () => (float[4] r) { r = Abs (x) },
                  else_branch = else_g () => (float[4] s) { s = Identity (x) }>
      w = Abs (x)
      o = Add (y, w)
    }
    <domain: "com.example", opset_import: ["" : 21]> F (p, unused) => (r) { s = Relu (p)  r = Neg (s) })",
                                        kExtraInputFunctions));
  AddEntry(*model.mutable_graph(), "y = com.example.F (x, w)");
  AddEntry(Branch(*model.mutable_graph()->mutable_node(2), "then_branch"), "r = com.example.AbsExtra (x, y)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "If#2.then_branch/e0"), "selected");
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Abs", "F", "If", "Add"}));
  ExpectSameResultsOnBothBranches(model, resolved);
}

TEST(VariantResolve, NestedEntryReadingAValueMadeFromItsNodeIsRefused) {
  // The then entry reads y, computed from the If's own output: taking it
  // would make the If read its own result. VAR-NAMES refuses the model
  // (an outer value an entry reads must be defined before its holding node).
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, bool c) => (float[4] o) {
      z = If (c) <then_branch = then_g () => (float[4] r) { r = Abs (x) },
                  else_branch = else_g () => (float[4] s) { s = Identity (x) }>
      y = Neg (z)
      o = Relu (y)
    })", kExtraInputFunctions));
  AddEntry(*model.mutable_graph(), "o = Relu (y)");
  AddEntry(Branch(*model.mutable_graph()->mutable_node(0), "then_branch"), "r = com.example.AbsExtra (x, y)",
           Target("com.example.npu"));
  const StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(model), {{kPortableTarget}, {}, {}});
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.status().message().find("VAR-NAMES: entry If#0.then_branch/e0"), std::string::npos)
      << resolved.status().message();
  EXPECT_NE(resolved.status().message().find("input 'y' of an enclosing graph is made by node 'Neg#1'"),
            std::string::npos)
      << resolved.status().message();
}

// Add then Relu; e0 covers Relu alone, e1 both.
onnx::ModelProto Overlapping(const std::string& target0, const std::string& target1, int priority0 = 0,
                             int priority1 = 0) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  y = Relu (t) }
    <domain: "com.example", opset_import: ["" : 21]> AddRelu (p, q) => (r) { s = Add (p, q)  r = Relu (s) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (t)", {{kTargetKey, target0}, {kPriorityKey, std::to_string(priority0)}});
  AddEntry(*model.mutable_graph(), "y = com.example.AddRelu (x, b)",
           {{kTargetKey, target1}, {kPriorityKey, std::to_string(priority1)}});
  return model;
}

TEST(VariantResolve, OverlapsRankByTargetOrderThenPriorityThenEntryOrder) {
  {
    onnx::ModelProto model = Overlapping("com.example.gpu", "com.example.npu");
    ResolvedModel npu_first = Resolve(model, {"com.example.npu", "com.example.gpu"});
    EXPECT_EQ(Reason(npu_first, "e1"), "selected");
    EXPECT_EQ(Reason(npu_first, "e0"), "overlaps e1 (selected first)");
    EXPECT_EQ(OpTypes(npu_first.model.graph()), (std::vector<std::string>{"AddRelu"}));
    ExpectSameResults(model, npu_first, kXB);
    ResolvedModel gpu_first = Resolve(model, {"com.example.gpu", "com.example.npu"});
    EXPECT_EQ(Reason(gpu_first, "e0"), "selected");
    EXPECT_EQ(Reason(gpu_first, "e1"), "overlaps e0 (selected first)");
    EXPECT_EQ(OpTypes(gpu_first.model.graph()), (std::vector<std::string>{"Add", "Relu"}));
  }
  {
    ResolvedModel by_priority = Resolve(Overlapping("com.example.npu", "com.example.npu", 1, 5), {"com.example.npu"});
    EXPECT_EQ(Reason(by_priority, "e1"), "selected");
    EXPECT_EQ(Reason(by_priority, "e0"), "overlaps e1 (selected first)");
  }
  {
    ResolvedModel by_order = Resolve(Overlapping("com.example.npu", "com.example.npu", 2, 2), {"com.example.npu"});
    EXPECT_EQ(Reason(by_order, "e0"), "selected");  // nested in e1's region, and first
    EXPECT_EQ(Reason(by_order, "e1"), "overlaps e0 (selected first)");
  }
  {
    ResolvedModel none = Resolve(Overlapping("com.example.npu", "com.example.npu"), {"com.example.gpu"});
    EXPECT_EQ(Reason(none, "e0"), "target 'com.example.npu' not listed");
    EXPECT_EQ(OpTypes(none.model.graph()), (std::vector<std::string>{"Add", "Relu"}));
  }
}

TEST(VariantResolve, CycleBetweenConvexEntriesDropsTheLowerRanked) {
  // e0 = {n1, n4} reads b2 (made by e1); e1 = {n2, n3} reads a1 (made by
  // e0). Each cut is convex, but the two calls would feed each other.
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] b1, float[4] a2) {
      [n1] a1 = Relu (x)
      [n2] b1 = Neg (a1)
      [n3] b2 = Abs (x)
      [n4] a2 = Sigmoid (b2)
    }
    <domain: "com.example", opset_import: ["" : 21]> FA (p, q) => (r, s) { r = Relu (p)  s = Sigmoid (q) }
    <domain: "com.example", opset_import: ["" : 21]> FB (p, q) => (r, s) { r = Neg (p)  s = Abs (q) })"));
  AddEntry(*model.mutable_graph(), "a1, a2 = com.example.FA (x, b2)");
  AddEntry(*model.mutable_graph(), "b1, b2 = com.example.FB (a1, x)");
  EXPECT_TRUE(ValidateVariants(Loaded(model)).empty()) << Joined(ValidateVariants(Loaded(model)));
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "e0"), "selected");
  EXPECT_EQ(Reason(resolved, "e1"), "would form a cycle with e0");
  // FA waits for Abs, which comes later in the original order.
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Abs", "FA", "Neg"}));
  ExpectSameResults(model, resolved, kX);
  // Asked for together, the pair is an error naming both.
  Status both = ResolveError(model, {}, {"e0", "e1"});
  EXPECT_NE(both.message().find("e0 and e1 would form a cycle"), std::string::npos) << both.message();
}

TEST(VariantResolve, SeveralCyclesEachDropTheirLowerRankedEntry) {
  // Three cross-wired pairs as above: pair 1 reads what pair 0 makes (so
  // its cycle is settled in a later round), a node reads pair 2's output.
  // Each pair keeps its better-ranked entry, whatever order they are met in.
  std::string nodes;
  const char* sources[] = {"x", "b1_0", "x"};
  for (int k = 0; k < 3; ++k) {
    nodes += StrCat("[n1_", k, "] a1_", k, " = Relu (", sources[k], ")\n", "[n2_", k, "] b1_", k, " = Neg (a1_", k,
                    ")\n", "[n3_", k, "] b2_", k, " = Abs (", sources[k], ")\n", "[n4_", k, "] a2_", k,
                    " = Sigmoid (b2_", k, ")\n");
  }
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] b1_0, float[4] a2_0, float[4] b1_1, float[4] a2_1, float[4] b1_2, float[4] y) {
    )", nodes, R"(
      [n9] y = Exp (a2_2)
    }
    <domain: "com.example", opset_import: ["" : 21]> FA (p, q) => (r, s) { r = Relu (p)  s = Sigmoid (q) }
    <domain: "com.example", opset_import: ["" : 21]> FB (p, q) => (r, s) { r = Neg (p)  s = Abs (q) })"));
  const int priorities[3][2] = {{0, 1}, {0, 0}, {0, 3}};
  for (int k = 0; k < 3; ++k) {
    AddEntry(*model.mutable_graph(), StrCat("a1_", k, ", a2_", k, " = com.example.FA (", sources[k], ", b2_", k, ")"),
             {{kPriorityKey, std::to_string(priorities[k][0])}});
    AddEntry(*model.mutable_graph(), StrCat("b1_", k, ", b2_", k, " = com.example.FB (a1_", k, ", ", sources[k], ")"),
             {{kPriorityKey, std::to_string(priorities[k][1])}});
  }
  ASSERT_TRUE(ValidateVariants(Loaded(model)).empty()) << Joined(ValidateVariants(Loaded(model)));
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "e0"), "would form a cycle with e1");
  EXPECT_EQ(Reason(resolved, "e1"), "selected");
  EXPECT_EQ(Reason(resolved, "e2"), "selected");
  EXPECT_EQ(Reason(resolved, "e3"), "would form a cycle with e2");
  EXPECT_EQ(Reason(resolved, "e4"), "would form a cycle with e5");
  EXPECT_EQ(Reason(resolved, "e5"), "selected");
  ExpectSameResults(model, resolved, kX);
  // The same answer every time.
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(Resolve(model, {kPortableTarget}).model.SerializeAsString(), resolved.model.SerializeAsString());
  }
}

TEST(VariantResolve, CallMovesAfterAnExtraInputMadeLater) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] w) {
      t = Relu (x)
      y = Neg (t)
      z = Abs (x)
      w = Add (y, z)
    }
    <domain: "com.example", opset_import: ["" : 21]> F (p, unused) => (r) { s = Relu (p)  r = Neg (s) })"));
  AddEntry(*model.mutable_graph(), "y = com.example.F (x, z)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Abs", "F", "Add"}));
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, EntriesInLoopAndIfBodies) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, int64 n, bool c) => (float[4] y, float[4] z) {
      k = Constant <value = bool {1}> ()
      y = Loop (n, k, x) <body = body (int64 i, bool cin, float[4] acc) => (bool cout, float[4] next) {
        cout = Identity (cin)
        s = Add (acc, x)
        next = Relu (s)
      }>
      z = If (c) <then_branch = then_g () => (float[4] tz) { tn = Neg (x)  tz = Relu (tn) },
                  else_branch = else_g () => (float[4] ez) { ez = Abs (x) }>
    }
    <domain: "com.example", opset_import: ["" : 21]> AddRelu (p, q) => (r) { s = Add (p, q)  r = Relu (s) }
    <domain: "com.example", opset_import: ["" : 21]> NegRelu (p) => (r) { s = Neg (p)  r = Relu (s) })"));
  onnx::GraphProto& body = *model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
  AddEntry(body, "next = com.example.AddRelu (acc, x)");
  onnx::NodeProto& if_node = *model.mutable_graph()->mutable_node(2);
  onnx::GraphProto& then_g = *if_node.mutable_attribute(if_node.attribute(0).name() == "then_branch" ? 0 : 1)->mutable_g();
  AddEntry(then_g, "tz = com.example.NegRelu (x)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(resolved, "Loop#1.body/e0"), "selected");
  EXPECT_EQ(Reason(resolved, "If#2.then_branch/e0"), "selected");
  const onnx::GraphProto& new_body = resolved.model.graph().node(1).attribute(0).g();
  EXPECT_EQ(OpTypes(new_body), (std::vector<std::string>{"Identity", "AddRelu"}));
  // n and c are not floats: run the evaluator directly.
  for (bool branch : {true, false}) {
    std::vector<Value> values = {Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat, {4}, {-2, -0.5, 1, 3})),
                                 Value::FromTensor(Tensor::FromInt64s({}, {3})),
                                 Value::FromTensor(*Tensor::FromDoubles(DataType::kBool, {}, {branch ? 1.0 : 0.0}))};
    const auto main_outputs = variants_test::RunValues(StripVariants(model), values);
    ASSERT_FALSE(main_outputs.empty());
    EXPECT_EQ(main_outputs, variants_test::RunValues(resolved.model, values));
  }
}

TEST(VariantResolve, EntryInsideAReplacedNodeIsNotReached) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, bool c) => (float[4] z) {
      [choose] z = If (c) <then_branch = then_g () => (float[4] tz) { tn = Neg (x)  tz = Relu (tn) },
                           else_branch = else_g () => (float[4] ez) { ez = Abs (x) }>
    }
    <domain: "com.example", opset_import: ["" : 21]> NegRelu (p) => (r) { s = Neg (p)  r = Relu (s) })"));
  MakeCompiled(AddEntry(*model.mutable_graph(), "z = com.example.Blob (x, c)"), "com.example.npu");
  onnx::NodeProto& if_node = *model.mutable_graph()->mutable_node(0);
  onnx::GraphProto& then_g = *if_node.mutable_attribute(if_node.attribute(0).name() == "then_branch" ? 0 : 1)->mutable_g();
  AddEntry(then_g, "tz = com.example.NegRelu (x)");
  ASSERT_TRUE(StampCompiledHashes(model).ok());
  ResolvedModel resolved = Resolve(model, {"com.example.npu", kPortableTarget});
  EXPECT_EQ(Reason(resolved, "e0"), "selected");
  EXPECT_EQ(Reason(resolved, "choose.then_branch/e0"), "inside node 'choose', which e0 replaced");
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Compiled"}));
  // Without the Compiled entry's target, the inner entry is taken.
  ResolvedModel portable = Resolve(model, {kPortableTarget});
  EXPECT_EQ(Reason(portable, "e0"), "target 'com.example.npu' not listed");
  EXPECT_EQ(Reason(portable, "choose.then_branch/e0"), "selected");
  // Requested together, they cannot both be taken.
  Status both = ResolveError(model, {}, {"e0", "choose.then_branch/e0"});
  EXPECT_NE(both.message().find("inside node 'choose'"), std::string::npos) << both.message();
}

TEST(VariantResolve, SharedWeightIsReadByNameNotCopied) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> { t = Mul (x, w)  y = Relu (t) }
    <domain: "com.example", opset_import: ["" : 21]> MulRelu (p, q) => (r) { s = Mul (p, q)  r = Relu (s) })"));
  AddEntry(*model.mutable_graph(), "y = com.example.MulRelu (x, w)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  const onnx::GraphProto& g = resolved.model.graph();
  ASSERT_EQ(OpTypes(g), (std::vector<std::string>{"MulRelu"}));
  EXPECT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.node(0).input(1), "w");
  EXPECT_EQ(g.node(0).attribute_size(), 0);
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, DeadRegionDropsItsOwnInitializersAndValueInfo) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y, float[4] z)
      <float[4] w = {2, 2, 2, 2}, float[4] shared = {1, 1, 1, 1}, float[4] t> {
      t = Mul (x, w)
      y = Add (t, shared)
      z = Sub (x, shared)
    }
    <domain: "com.example", opset_import: ["" : 21]> Twice (p, q) => (r) {
      k = Constant <value = float[4] {2, 2, 2, 2}> ()
      s = Mul (p, k)
      r = Add (s, q)
    })"));
  AddEntry(*model.mutable_graph(), "y = com.example.Twice (x, shared)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  const onnx::GraphProto& g = resolved.model.graph();
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Twice", "Sub"}));
  ASSERT_EQ(g.initializer_size(), 1);  // w was read by the dead Mul only
  EXPECT_EQ(g.initializer(0).name(), "shared");
  EXPECT_EQ(g.value_info_size(), 0);  // t is made by nothing now
  ExpectSameResults(model, resolved, kX);
}

TEST(VariantResolve, NodesOutsideRegionsStayEvenIfDead) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y) { unused = Abs (x)  y = Relu (x) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (x)", Target("com.example.npu"));
  ResolvedModel resolved = Resolve(model, {"com.example.npu"});
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Abs", "Relu"}));
  EXPECT_EQ(resolved.model.graph().node(1).name(), "variant_e0");
}

TEST(VariantResolve, CallNameIsMadeUnique) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y) { [variant_e0] t = Abs (x)  y = Relu (t) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (t)");
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(resolved.model.graph().node(1).name(), "variant_e0_1");
}

TEST(VariantResolve, StaleCompiledEntryIsSkipped) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  y = Relu (t) })"));
  MakeCompiled(AddEntry(*model.mutable_graph(), "y = com.example.Blob (x, b)"), "com.example.npu");
  ASSERT_TRUE(StampCompiledHashes(model).ok());
  model.mutable_graph()->mutable_node(0)->set_op_type("Sub");  // the graph changed after compiling
  ResolvedModel resolved = Resolve(model, {"com.example.npu"});
  EXPECT_EQ(Reason(resolved, "e0").rfind("stale: __hash__ is sha256:", 0), 0u) << Reason(resolved, "e0");
  EXPECT_EQ(OpTypes(resolved.model.graph()), (std::vector<std::string>{"Sub", "Relu"}));
  Status requested = ResolveError(model, {}, {"e0"});
  EXPECT_NE(requested.message().find("e0 is stale"), std::string::npos) << requested.message();
}

TEST(VariantResolve, OnlyEntriesTakesExactlyThose) {
  onnx::ModelProto model = Overlapping("com.example.gpu", "com.example.npu");
  ResolvedModel only = Resolve(model, {"com.example.gpu"}, {"e1"});  // targets do not matter
  EXPECT_EQ(Reason(only, "e1"), "selected");
  EXPECT_EQ(Reason(only, "e0"), "not requested");
  Status overlap = ResolveError(model, {}, {"e0", "e1"});
  EXPECT_EQ(overlap.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(overlap.message().find("e0 and e1 overlap"), std::string::npos) << overlap.message();
  Status missing = ResolveError(model, {}, {"e7"});
  EXPECT_NE(missing.message().find("'e7'"), std::string::npos) << missing.message();
}

TEST(VariantResolve, PortableEntriesNeedPortableListed) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y) { y = Relu (x) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (x)");
  EXPECT_EQ(Reason(Resolve(model, {"com.example.npu"}), "e0"), "no target and 'portable' not listed");
  EXPECT_EQ(Reason(Resolve(model, {"com.example.npu", kPortableTarget}), "e0"), "selected");
}

TEST(VariantResolve, InvalidModelsAreRefusedWithEveryProblem) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  y = Relu (t) })"));
  AddEntry(*model.mutable_graph(), "y = Relu (x)");           // VAR-OPEN-CUT (b)
  AddEntry(*model.mutable_graph(), "y = Relu (t)", {{"X", "1"}});  // VAR-METADATA
  Status refused = ResolveError(model, {kPortableTarget});
  EXPECT_EQ(refused.code(), StatusCode::kInvalidModel);
  EXPECT_NE(refused.message().find("VAR-OPEN-CUT: entry e0"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("VAR-METADATA: entry e1"), std::string::npos) << refused.message();
  onnx::ModelProto broken = Model(StrCat(kHeader, R"(g (float[4] x) => (float[4] y) { y = Relu (nowhere) })"));
  EXPECT_NE(ResolveError(broken, {}).message().find("'nowhere'"), std::string::npos);
}

TEST(VariantResolve, ModelWithoutEntriesIsUnchanged) {
  onnx::ModelProto model = Model(StrCat(kHeader, R"(
    g (float[4] x) => (float[4] y) { t = Abs (x)  y = Relu (t) })"));
  ResolvedModel resolved = Resolve(model, {kPortableTarget});
  EXPECT_EQ(resolved.model.SerializeAsString(), model.SerializeAsString());
  EXPECT_TRUE(resolved.decisions.empty());
}

}  // namespace
}  // namespace parity
