// Tests of the variant rules about where entries sit and what they may
// carry: outer values an entry reads must be visible at its holding node
// (VAR-NAMES), calls carry no subgraphs and no attribute twice (VAR-CALL),
// entries stay out of function bodies (VAR-PLACE) and ids are unique (VAR-ID).
#include <gtest/gtest.h>

#include "reference/model/validator.h"
#include "reference/variants/variants_test_util.h"

namespace parity {
namespace {

using variants_test::AddEntry;
using variants_test::Joined;
using variants_test::Loaded;
using variants_test::Model;
using variants_test::Validate;
using variants_test::WithRule;

// a = Relu(x) before the If, y its output, z = Add(y, x) after it.
constexpr char kIfBetween[] = R"(
  <ir_version: 10, opset_import: ["" : 21]>
  g (float[4] x, bool c) => (float[4] z) {
    a = Relu (x)
    y = If (c) <then_branch = t () => (float[4] p) { p = Neg (a) }, else_branch = e () => (float[4] q) { q = Abs (a) }>
    z = Add (y, x)
  })";

onnx::GraphProto& Branch(onnx::ModelProto& model, int node, const std::string& name) {
  for (auto& attr : *model.mutable_graph()->mutable_node(node)->mutable_attribute()) {
    if (attr.name() == name) return *attr.mutable_g();
  }
  ADD_FAILURE() << "no attribute " << name;
  return *model.mutable_graph();
}

void ExpectOneProblem(const onnx::ModelProto& model, const std::string& prefix, const std::vector<std::string>& words) {
  const std::vector<Status> problems = Validate(model);
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  const std::string& message = problems[0].message();
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  for (const auto& w : words) EXPECT_NE(message.find(w), std::string::npos) << w << " not in: " << message;
}

TEST(VariantScope, EntryMayReadAnOuterValueDefinedBeforeItsHolder) {
  onnx::ModelProto model = Model(kIfBetween);
  AddEntry(Branch(model, 1, "then_branch"), "p = Neg (a)");
  EXPECT_TRUE(Validate(model).empty()) << Joined(Validate(model));
}

TEST(VariantScope, EntryReadingAValueComputedAfterItsHolderIsRefused) {
  onnx::ModelProto model = Model(kIfBetween);
  AddEntry(Branch(model, 1, "then_branch"), "p = Sub (a, z)");
  ExpectOneProblem(model, "VAR-NAMES: entry If#1.then_branch/e0 (ai.onnx:Sub)", {"'z'", "'Add#2'", "'If#1'"});
  EXPECT_FALSE(ResolveVariants(Loaded(model), {{"portable"}, {}, {}}).ok());
}

TEST(VariantScope, EntryReadingItsHoldersOwnOutputIsRefused) {
  onnx::ModelProto model = Model(kIfBetween);
  AddEntry(Branch(model, 1, "else_branch"), "q = Add (a, y)");
  ExpectOneProblem(model, "VAR-NAMES: entry If#1.else_branch/e0", {"'y'", "output of node 'If#1'"});
}

TEST(VariantScope, LateValueTwoLevelsOutIsRefused) {
  // The inner If sits in the outer If's then branch; the entry reads z, made
  // after the outer If in the main graph.
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x, bool c) => (float[4] z) {
      a = Relu (x)
      y = If (c) <then_branch = t () => (float[4] p) {
            p = If (c) <then_branch = tt () => (float[4] pp) { pp = Neg (a) },
                        else_branch = te () => (float[4] pq) { pq = Abs (a) }>
          }, else_branch = e () => (float[4] q) { q = Abs (a) }>
      z = Add (y, x)
    })");
  onnx::GraphProto& outer_then = Branch(model, 1, "then_branch");
  onnx::GraphProto* inner_then = nullptr;
  for (auto& attr : *outer_then.mutable_node(0)->mutable_attribute()) {
    if (attr.name() == "then_branch") inner_then = attr.mutable_g();
  }
  ASSERT_NE(inner_then, nullptr);
  AddEntry(*inner_then, "pp = Sub (a, z)");
  ExpectOneProblem(model, "VAR-NAMES: entry If#1.then_branch/If#0.then_branch/e0", {"'z'", "'If#1'"});
}

TEST(VariantScope, CallCarryingASubgraphIsRefused) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c) => (float y) {
      t = Cast <to = 1> (c)
      u = Neg (t)
      y = Abs (u)
    })");
  AddEntry(*model.mutable_graph(),
           "y = If (c) <then_branch = tb () => (float o) { o = Identity (t) }, "
           "else_branch = eb () => (float o2) { o2 = Identity (t) }>");
  const std::vector<Status> problems = Validate(model);
  EXPECT_EQ(WithRule(problems, kRuleCall).size(), 2u) << Joined(problems);
  EXPECT_EQ(problems.size(), 2u) << Joined(problems);
  EXPECT_NE(Joined(problems).find("'else_branch' carries a subgraph"), std::string::npos) << Joined(problems);
  EXPECT_NE(Joined(problems).find("'then_branch' carries a subgraph"), std::string::npos) << Joined(problems);
}

TEST(VariantScope, EntriesNestedInAnEntryAttributeAreRefusedWithIt) {
  onnx::ModelProto model = Model(kIfBetween);
  onnx::EquivalentSubgraphProto& entry = AddEntry(*model.mutable_graph(), "z = Add (y, x)");
  onnx::AttributeProto& attr = *entry.add_attribute();
  attr.set_name("body");
  attr.set_type(onnx::AttributeProto::GRAPH);
  AddEntry(*attr.mutable_g(), "q = com.bogus.Bogus (nowhere)");
  const std::vector<Status> problems = Validate(model);
  EXPECT_FALSE(WithRule(problems, kRuleCall).empty()) << Joined(problems);
  EXPECT_NE(Joined(problems).find("'body' carries a subgraph"), std::string::npos) << Joined(problems);
  EXPECT_FALSE(ResolveVariants(Loaded(model), {{"portable"}, {}, {}}).ok());
}

TEST(VariantScope, AttributeGivenTwiceIsRefused) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x) => (float[4] y) { y = LeakyRelu <alpha = 0.1> (x) })");
  // The text syntax refuses a name twice, so the second one is added by hand.
  onnx::EquivalentSubgraphProto& entry = AddEntry(*model.mutable_graph(), "y = LeakyRelu <alpha = 0.1> (x)");
  onnx::AttributeProto& again = *entry.add_attribute();
  again = entry.attribute(0);
  again.set_f(0.5f);
  ExpectOneProblem(model, "VAR-CALL: entry e0 (ai.onnx:LeakyRelu)", {"'alpha' is given twice"});
}

constexpr char kFunctionWithIf[] = R"(
  <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
  g (float[4] x, bool c) => (float[4] z) {
    y = com.example.F (x, c)
    z = Relu (y)
  }
  <domain: "com.example", opset_import: ["" : 21]>
  F (p, c) => (r) {
    r = If (c) <then_branch = tb () => (float[4] o) { o = Neg (p) }, else_branch = eb () => (float[4] o2) { o2 = Abs (p) }>
  })";

TEST(VariantScope, EntryInAFunctionBodyIsRefused) {
  onnx::ModelProto model = Model(kFunctionWithIf);
  ASSERT_EQ(model.functions_size(), 1);
  onnx::AttributeProto* then_branch = nullptr;
  for (auto& attr : *model.mutable_functions(0)->mutable_node(0)->mutable_attribute()) {
    if (attr.name() == "then_branch") then_branch = &attr;
  }
  ASSERT_NE(then_branch, nullptr);
  AddEntry(*then_branch->mutable_g(), "o = Neg (p)");
  EXPECT_TRUE(HasVariants(model));
  EXPECT_TRUE(CollectEntries(model).empty());
  const std::vector<Status> problems = Validate(model);
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0].message().rfind("VAR-PLACE: function 'com.example:F' holds 1 entry in graph 'F/If#0.then_branch'", 0),
            0u)
      << problems[0].message();
  EXPECT_FALSE(ResolveVariants(Loaded(model), {{"portable"}, {}, {}}).ok());
  // Stripping removes them like any other entry.
  const onnx::ModelProto stripped = StripVariants(model);
  EXPECT_FALSE(HasVariants(stripped));
  EXPECT_TRUE(Validate(stripped).empty());
}

// Named "If#2" by the tests, the first If and the unnamed If at position 2 both label "If#2".
constexpr char kCollidingLabels[] = R"(
  <ir_version: 10, opset_import: ["" : 21]>
  g (float[4] x, bool c) => (float[4] y1, float[4] y2) {
    y1 = If (c) <then_branch = t () => (float[4] p) { p = Neg (x) }, else_branch = e () => (float[4] q) { q = Abs (x) }>
    a = Relu (x)
    y2 = If (c) <then_branch = t2 () => (float[4] p2) { p2 = Neg (a) }, else_branch = e2 () => (float[4] q2) { q2 = Abs (a) }>
  })";

TEST(VariantScope, TwoEntriesWithOneIdAreRefused) {
  onnx::ModelProto model = Model(kCollidingLabels);
  model.mutable_graph()->mutable_node(0)->set_name("If#2");
  AddEntry(Branch(model, 0, "then_branch"), "p = Neg (x)");
  AddEntry(Branch(model, 2, "then_branch"), "p2 = Neg (a)");
  const std::vector<VariantEntry> entries = CollectEntries(model);
  ASSERT_EQ(entries.size(), 2u);
  ASSERT_EQ(entries[0].id, entries[1].id);
  ExpectOneProblem(model, "VAR-ID: entry If#2.then_branch/e0",
                   {"id 'If#2.then_branch/e0'", "node 'If#2' at position 0", "node 'If#2' at position 2"});
  ResolveOptions only;
  only.only_entries = {"If#2.then_branch/e0"};
  const StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(model), only);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.status().message().find("VAR-ID"), std::string::npos) << resolved.status().message();
}

TEST(VariantScope, NodesWithOneNameGiveOneIdAndAreRefused) {
  onnx::ModelProto model = Model(kCollidingLabels);
  model.mutable_graph()->mutable_node(0)->set_name("gate");
  model.mutable_graph()->mutable_node(2)->set_name("gate");
  AddEntry(Branch(model, 0, "else_branch"), "q = Abs (x)");
  AddEntry(Branch(model, 2, "else_branch"), "q2 = Abs (a)");
  const std::vector<Status> problems = ValidateVariants(Loaded(model));  // ValidateModel may refuse the names too
  const std::vector<std::string> ids = WithRule(problems, kRuleId);
  ASSERT_EQ(ids.size(), 1u) << Joined(problems);
  EXPECT_NE(ids[0].find("node 'gate' at position 0"), std::string::npos) << ids[0];
  EXPECT_NE(ids[0].find("node 'gate' at position 2"), std::string::npos) << ids[0];
}

TEST(VariantScope, DistinctLabelsKeepDistinctIds) {
  onnx::ModelProto model = Model(kCollidingLabels);
  model.mutable_graph()->mutable_node(0)->set_name("first_if");
  AddEntry(Branch(model, 0, "then_branch"), "p = Neg (x)");
  AddEntry(Branch(model, 2, "then_branch"), "p2 = Neg (a)");
  EXPECT_TRUE(Validate(model).empty()) << Joined(Validate(model));
}

}  // namespace
}  // namespace parity
