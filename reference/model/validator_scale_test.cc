// Tests of validation at scale and of the rules whose fast paths differ from
// the general one: graphs out of order, cycles through subgraphs, long call
// chains between functions, and the exact text of the messages.
#include <cstdlib>
#include <functional>
#include <iostream>

#include <gtest/gtest.h>

#include "reference/model/text_syntax.h"
#include "reference/model/validator.h"

namespace parity {
namespace {

std::vector<Status> Validate(onnx::ModelProto proto, const ValidationOptions& options = {}) {
  LoadedModel model{std::make_shared<onnx::ModelProto>(std::move(proto)), "m.onnx", ""};
  return ValidateModel(model, options);
}

onnx::ModelProto Parse(const std::string& text) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  return proto.ok() ? *proto : onnx::ModelProto();
}

// Runs `check` in a child process and expects it to return true. A large
// model's memory goes with the child: freed, it would stay resident in this
// process, and the processes later tests start inherit its peak resident
// size. A crash (a stack overflow) fails this test alone.
void ExpectInChild(const std::function<bool()>& check) {
  EXPECT_EXIT(std::exit(check() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

// Whether the model is valid; if not, says why on stderr (shown by ExpectInChild).
bool IsValid(onnx::ModelProto proto) {
  const std::vector<Status> problems = Validate(std::move(proto));
  for (const auto& p : problems) std::cerr << p.ToString() << "\n";
  return problems.empty();
}

std::vector<std::string> Messages(const std::vector<Status>& problems) {
  std::vector<std::string> messages;
  for (const auto& p : problems) messages.push_back(p.message());
  return messages;
}

// v0 -> v1 -> ... -> v<n>, each node a Relu; `reversed` stores the nodes last first.
onnx::ModelProto Chain(int n, bool reversed) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("chain");
  graph.add_input()->set_name("v0");
  graph.add_output()->set_name("v" + std::to_string(n));
  for (int i = 0; i < n; ++i) {
    onnx::NodeProto* node = graph.add_node();
    node->set_op_type("Relu");
    node->add_input("v" + std::to_string(i));
    node->add_output("v" + std::to_string(i + 1));
  }
  if (reversed) {
    for (int i = 0, j = n - 1; i < j; ++i, --j) graph.mutable_node()->SwapElements(i, j);
  }
  return model;
}

TEST(ValidatorScaleTest, MillionNodeChainInAnyOrderIsValid) {
  ExpectInChild([] { return IsValid(Chain(1000000, /*reversed=*/false)); });
  // Out of order, so every node goes through the full sort.
  ExpectInChild([] { return IsValid(Chain(1000000, /*reversed=*/true)); });
}

TEST(ValidatorScaleTest, CycleNamesItsNodesInGraphOrder) {
  onnx::ModelProto model = Chain(5, /*reversed=*/true);
  // v1's producer reads v4: v1 -> v2 -> v3 -> v4 -> v1; the node making v5 hangs off the cycle.
  onnx::GraphProto& graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i) graph.mutable_node(i)->set_name("n" + std::to_string(i));
  graph.mutable_node(4)->set_op_type("Add");
  graph.mutable_node(4)->add_input("v4");
  EXPECT_EQ(Messages(Validate(model)),
            std::vector<std::string>{"m.onnx: graph 'chain': the graph has a cycle through node 'n0' (Relu), "
                                     "node 'n1' (Relu), node 'n2' (Relu), node 'n3' (Relu), node 'n4' (Add)"});
}

TEST(ValidatorScaleTest, NodeReadingItsOwnOutputIsACycle) {
  auto problems = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] y) { y = Add (x, y) })"));
  EXPECT_EQ(Messages(problems),
            std::vector<std::string>{"m.onnx: graph 'g': the graph has a cycle through node '' (Add)"});
}

TEST(ValidatorScaleTest, SubgraphReadsOrderTheNodeThatHoldsThem) {
  // The If's branch reads t, which the node after the If computes from the If's output.
  auto problems = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[1] x) => (float[1] t) {
      y = If (c) <
        then_branch = a () => (float[1] r) { r = Abs (t) },
        else_branch = b () => (float[1] r) { r = Abs (x) }
      >
      t = Relu (y)
    })"));
  EXPECT_EQ(Messages(problems),
            std::vector<std::string>{"m.onnx: graph 'g': the graph has a cycle through node '' (If), node '' (Relu)"});
}

TEST(ValidatorScaleTest, NestedSubgraphReadsCountAndInnerDefinitionsShadow) {
  // Two levels down, the inner branch reads t from the outer graph: a cycle.
  auto nested = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[1] x) => (float[1] t) {
      y = If (c) <
        then_branch = a () => (float[1] r) {
          r = If (c) <
            then_branch = aa () => (float[1] s) { s = Abs (t) },
            else_branch = ab () => (float[1] s) { s = Abs (x) }
          >
        },
        else_branch = b () => (float[1] r) { r = Abs (x) }
      >
      t = Relu (y)
    })"));
  EXPECT_EQ(Messages(nested),
            std::vector<std::string>{"m.onnx: graph 'g': the graph has a cycle through node '' (If), node '' (Relu)"});
  // The branch computes its own t first: it reads nothing of the outer t, so no cycle.
  auto shadowed = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[1] x) => (float[1] t) {
      y = If (c) <
        then_branch = a () => (float[1] r) { t = Abs (x)  r = Neg (t) },
        else_branch = b () => (float[1] r) { r = Abs (x) }
      >
      t = Relu (y)
    })"));
  EXPECT_TRUE(shadowed.empty()) << shadowed[0].ToString();
}

TEST(ValidatorScaleTest, FunctionBodyOutOfOrderIsValidAndItsCycleIsNamed) {
  auto ordered = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[1] x) => (float[1] y) { y = local.F (x) }
    <domain: "local", opset_import: ["" : 21]> F (a) => (c) { c = Neg (b)  b = Relu (a) })"));
  EXPECT_TRUE(ordered.empty()) << ordered[0].ToString();
  auto cyclic = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[1] x) => (float[1] y) { y = local.F (x) }
    <domain: "local", opset_import: ["" : 21]> F (a) => (c) { c = Add (b, a)  b = Relu (c) })"));
  EXPECT_EQ(Messages(cyclic), std::vector<std::string>{"m.onnx: function local.F: the graph has a cycle through "
                                                       "node '' (Add), node '' (Relu)"});
}

// local.F0 calls local.F1 ... calls local.F<n-1>, which calls F0 when `cycle`.
onnx::ModelProto CallChain(int n, bool cycle) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  model.add_opset_import()->set_version(21);
  auto* local = model.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("g");
  graph.add_input()->set_name("x");
  graph.add_output()->set_name("y");
  onnx::NodeProto* call = graph.add_node();
  call->set_domain("local");
  call->set_op_type("F0");
  call->add_input("x");
  call->add_output("y");
  for (int i = 0; i < n; ++i) {
    onnx::FunctionProto* f = model.add_functions();
    f->set_domain("local");
    f->set_name("F" + std::to_string(i));
    f->add_input("a");
    f->add_output("b");
    auto* import = f->add_opset_import();
    import->set_domain("local");
    import->set_version(1);
    onnx::NodeProto* node = f->add_node();
    node->set_domain("local");
    node->set_op_type(i + 1 < n ? "F" + std::to_string(i + 1) : cycle ? "F0" : "Relu");
    if (i + 1 == n && !cycle) node->set_domain("");
    node->add_input("a");
    node->add_output("b");
  }
  return model;
}

TEST(ValidatorScaleTest, LongCallChainBetweenFunctionsIsWalkedWithoutRecursion) {
  // A search that recursed once per call would overflow an 8 MiB stack well before this.
  constexpr int kFunctions = 50000;
  ExpectInChild([] { return IsValid(CallChain(kFunctions, /*cycle=*/false)); });
  ExpectInChild([] {
    const std::vector<Status> problems = Validate(CallChain(kFunctions, /*cycle=*/true));
    std::string expected = "m.onnx: function call cycle: ";
    for (int i = 0; i < kFunctions; ++i) expected += "local.F" + std::to_string(i) + " -> ";
    expected += "F0";
    if (problems.size() == 1 && problems[0].message() == expected) return true;
    for (const auto& p : problems) std::cerr << p.ToString().substr(0, 200) << "\n";
    return false;
  });
}

TEST(ValidatorScaleTest, SubgraphsNestedTooDeeplyAreRefused) {
  onnx::ModelProto model = Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c) => (bool y) { y = Identity (c) })");
  // 70 Ifs, each in the then_branch of the one before (levelK holds the next).
  onnx::GraphProto* graph = model.mutable_graph();
  for (int depth = 0; depth < 70; ++depth) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("If");
    node->add_input("c");
    node->add_output("out" + std::to_string(depth));
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::AttributeProto* a = node->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      a->mutable_g()->set_name("level" + std::to_string(depth + 1));
      a->mutable_g()->add_output()->set_name("c");
    }
    graph = node->mutable_attribute(0)->mutable_g();
  }
  // The main graph is level 1, so both branches of the If in level63 are a 65th.
  auto problems = Validate(model);
  ASSERT_EQ(problems.size(), 2u);
  for (const char* branch : {"then_branch", "else_branch"}) {
    const std::string tail = std::string("graph 'level63' node 0 '' (If) attribute '") + branch +
                             "' graph 'level64': subgraphs nest deeper than 64 levels";
    const std::string& message = problems[branch[0] == 't' ? 0 : 1].message();
    ASSERT_GE(message.size(), tail.size());
    EXPECT_EQ(message.substr(message.size() - tail.size()), tail) << message;
  }
}

TEST(ValidatorScaleTest, WhereAProblemIsIsWrittenOutInFull) {
  auto problems = Validate(Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[1] x) => (float[1] y) {
      t = Relu (x)
      y = If (c) <
        then_branch = a () => (float[1] r) { r = Abs (t) },
        else_branch = b () => (float[1] r) { r = Abs (q) }
      >
    })"));
  EXPECT_EQ(Messages(problems),
            std::vector<std::string>{"m.onnx: graph 'g' node 1 '' (If) attribute 'else_branch' graph 'b' "
                                     "node 0 '' (Abs) reads 'q', which no input, initializer or node defines"});
}

TEST(ValidatorScaleTest, ManyAttributesAndOutputsKeepTheirRules) {
  onnx::ModelProto model = Parse(R"(
    <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[1] x) => (float[1] o0) { o0 = com.example.Wide (x) })");
  onnx::NodeProto* node = model.mutable_graph()->mutable_node(0);
  for (int i = 1; i < 100; ++i) node->add_output("o" + std::to_string(i));  // past the table's first size
  node->add_output("o7");
  for (int i = 0; i < 20; ++i) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(i == 19 ? "a3" : "a" + std::to_string(i));
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(i);
  }
  EXPECT_EQ(Messages(Validate(model)),
            (std::vector<std::string>{
                "m.onnx: graph 'g': value 'o7' is defined twice (output of node 0 '' (com.example.Wide))",
                "m.onnx: graph 'g' node 0 '' (com.example.Wide) attribute 'a3' is given twice"}));
}

TEST(ValidatorScaleTest, MaxProblemsBoundsTheList) {
  onnx::ModelProto model = Chain(10, /*reversed=*/false);
  for (auto& node : *model.mutable_graph()->mutable_node()) node.set_input(0, "nowhere");
  ValidationOptions options;
  options.max_problems = 3;
  auto problems = Validate(model, options);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[2].message(),
            "m.onnx: graph 'chain' node 2 '' (Relu) reads 'nowhere', which no input, initializer or node defines");
}

}  // namespace
}  // namespace parity
