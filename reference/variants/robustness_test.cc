// Variant validation and resolution never crash on bad input: models with
// entries are mutated at random (names, nodes, entries of subgraphs, entry
// attributes holding graphs, given twice or mistyped, entries in function
// bodies, colliding node labels) and every entry point must return, with
// problems or a model that ValidateModel accepts and no entry left in.
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "reference/model/validator.h"
#include "reference/variants/variants_test_util.h"

namespace parity {
namespace {

using variants_test::AddEntry;
using variants_test::Joined;
using variants_test::Loaded;
using variants_test::MakeCompiled;
using variants_test::Model;

onnx::ModelProto Seed() {
  onnx::ModelProto model = Model(R"(<ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[4] x, float[4] b, bool c) => (float[4] y, float[4] z) <float[4] w = {1, 2, 3, 4}> {
      t = Add (x, b)
      u = Mul (t, w)
      v = Relu (u)
      y = If (c) <then_branch = a () => (float[4] p) { p = Neg (v) }, else_branch = e () => (float[4] q) { q = Abs (t) }>
      z = Sub (v, x)
    }
    <domain: "com.example", opset_import: ["" : 21]> F (p, q) => (r) { s = Add (p, q)  r = Relu (s) })");
  onnx::GraphProto& g = *model.mutable_graph();
  AddEntry(g, "v = com.example.F (x, b)");
  AddEntry(g, "z = Sub (v, x)", {{kTargetKey, "com.example.npu"}});
  MakeCompiled(AddEntry(g, "y = com.example.Blob (v, t, c)"), "com.example.npu");
  AddEntry(*g.mutable_node(3)->mutable_attribute(0)->mutable_g(), "p = Neg (v)");
  EXPECT_TRUE(StampCompiledHashes(model).ok());
  return model;
}

// Every graph of the main graph's tree: the main graph, then the subgraphs.
void Graphs(onnx::GraphProto& graph, std::vector<onnx::GraphProto*>* out) {
  out->push_back(&graph);
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) Graphs(*attr.mutable_g(), out);
      for (auto& g : *attr.mutable_graphs()) Graphs(g, out);
    }
  }
}

template <typename T>
T* Pick(std::vector<T*>& items, std::mt19937& random) {
  if (items.empty()) return nullptr;
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(random)];
}

// A name somewhere in the model: a node input or output, or an entry's, in any graph.
std::string* SomeName(onnx::ModelProto& model, std::mt19937& random) {
  std::vector<onnx::GraphProto*> graphs;
  Graphs(*model.mutable_graph(), &graphs);
  std::vector<std::string*> names;
  for (onnx::GraphProto* g : graphs) {
    for (auto& node : *g->mutable_node()) {
      for (auto& s : *node.mutable_input()) names.push_back(&s);
      for (auto& s : *node.mutable_output()) names.push_back(&s);
    }
    for (auto& e : *g->mutable_equivalent_subgraph()) {
      for (auto& s : *e.mutable_input()) names.push_back(&s);
      for (auto& s : *e.mutable_output()) names.push_back(&s);
    }
  }
  return Pick(names, random);
}

// An entry of any graph.
onnx::EquivalentSubgraphProto* SomeEntry(onnx::ModelProto& model, std::mt19937& random) {
  std::vector<onnx::GraphProto*> graphs;
  Graphs(*model.mutable_graph(), &graphs);
  std::vector<onnx::EquivalentSubgraphProto*> entries;
  for (onnx::GraphProto* g : graphs) {
    for (auto& e : *g->mutable_equivalent_subgraph()) entries.push_back(&e);
  }
  return Pick(entries, random);
}

// A small graph holding one entry, for entry attributes and function bodies.
onnx::GraphProto GraphWithEntry(const std::string& read) {
  onnx::GraphProto g;
  g.set_name("inner");
  auto* node = g.add_node();
  node->set_op_type("Neg");
  node->add_input(read);
  node->add_output("inner_out");
  g.add_output()->set_name("inner_out");
  auto* e = g.add_equivalent_subgraph();
  e->set_op_type("Neg");
  e->add_input(read);
  e->add_output("inner_out");
  return g;
}

void Mutate(onnx::ModelProto& model, std::mt19937& random) {
  onnx::GraphProto& g = *model.mutable_graph();
  const char* pool[] = {"x", "b", "c", "t", "u", "v", "w", "y", "z", "p", "", "nowhere"};
  auto any = [&] { return pool[random() % std::size(pool)]; };
  std::vector<onnx::GraphProto*> graphs;
  Graphs(g, &graphs);
  onnx::GraphProto& some_graph = *Pick(graphs, random);
  switch (std::uniform_int_distribution<int>(0, 11)(random)) {
    case 0:
      if (std::string* name = SomeName(model, random)) *name = any();
      break;
    case 1:
      if (some_graph.node_size() > 0) {
        some_graph.mutable_node()->DeleteSubrange(static_cast<int>(random() % some_graph.node_size()), 1);
      }
      break;
    case 2:
      if (g.node_size() > 1) g.mutable_node()->SwapElements(0, g.node_size() - 1);
      break;
    case 3:
      if (auto* e = SomeEntry(model, random)) e->add_input(any());
      break;
    case 4:
      if (some_graph.equivalent_subgraph_size() > 0) {
        *some_graph.add_equivalent_subgraph() = some_graph.equivalent_subgraph(0);
      }
      break;
    case 5:
      if (auto* e = SomeEntry(model, random)) e->clear_output();
      break;
    case 6: {  // an entry in a subgraph reading any name, the If's output and later values included
      auto* e = some_graph.add_equivalent_subgraph();
      e->set_op_type("Neg");
      e->add_input(any());
      if (some_graph.node_size() > 0 && some_graph.node(0).output_size() > 0) e->add_output(some_graph.node(0).output(0));
      break;
    }
    case 7:  // an entry attribute holding a graph that holds an entry
      if (auto* e = SomeEntry(model, random)) {
        auto* attr = e->add_attribute();
        attr->set_name(random() % 2 ? "then_branch" : "body");
        attr->set_type(random() % 2 ? onnx::AttributeProto::GRAPH : onnx::AttributeProto::INT);
        *attr->mutable_g() = GraphWithEntry(any());
        if (random() % 2) *attr->add_graphs() = GraphWithEntry(any());
      }
      break;
    case 8:  // an attribute given twice
      if (auto* e = SomeEntry(model, random); e && e->attribute_size() > 0) {
        *e->add_attribute() = e->attribute(static_cast<int>(random() % e->attribute_size()));
      }
      break;
    case 9:  // an attribute of the wrong type, or with no value for its type
      if (auto* e = SomeEntry(model, random); e && e->attribute_size() > 0) {
        auto& attr = *e->mutable_attribute(static_cast<int>(random() % e->attribute_size()));
        attr.set_type(static_cast<onnx::AttributeProto::AttributeType>(random() % 15));
      }
      break;
    case 10:  // entries inside a function body
      if (model.functions_size() > 0 && model.functions(0).node_size() > 0) {
        auto* attr = model.mutable_functions(0)->mutable_node(0)->add_attribute();
        attr->set_name("then_branch");
        attr->set_type(onnx::AttributeProto::GRAPH);
        *attr->mutable_g() = GraphWithEntry(random() % 2 ? "p" : "nowhere");
      }
      break;
    default:  // node labels that may collide ("If#3" names the unnamed If at position 3)
      if (g.node_size() > 0) {
        g.mutable_node(static_cast<int>(random() % g.node_size()))
            ->set_name(random() % 2 ? StrCat("If#", random() % 5) : std::string());
      }
  }
}

TEST(VariantRobustness, SeedIsValid) {
  onnx::ModelProto model = Seed();
  EXPECT_TRUE(ValidateModel(Loaded(model)).empty()) << Joined(ValidateModel(Loaded(model)));
  EXPECT_TRUE(ValidateVariants(Loaded(model)).empty()) << Joined(ValidateVariants(Loaded(model)));
}

TEST(VariantRobustness, MutatedModelsNeverCrash) {
  std::mt19937 random(7);
  int resolved_ok = 0, refused = 0;
  for (int round = 0; round < 600; ++round) {
    onnx::ModelProto model = Seed();
    const int mutations = 1 + static_cast<int>(random() % 3);
    for (int m = 0; m < mutations; ++m) Mutate(model, random);
    const LoadedModel loaded = Loaded(model);
    const std::vector<Status> problems = ValidateVariants(loaded);
    for (const Status& p : problems) {
      EXPECT_EQ(p.message().rfind("VAR-", 0), 0u) << p.message();
    }
    // Gaps the rules must close: entries sharing an id, and entries in function bodies.
    const std::vector<VariantEntry> entries = CollectEntries(model);
    std::set<std::string> ids;
    bool same_id = false;
    for (const VariantEntry& e : entries) same_id |= !ids.insert(e.id).second;
    if (same_id) {
      EXPECT_NE(Joined(problems).find("VAR-ID: "), std::string::npos) << Joined(problems);
    }
    EXPECT_FALSE(HasVariants(StripVariants(model)));
    bool in_function = false;
    for (const auto& f : model.functions()) {
      for (const auto& node : f.node()) {
        for (const auto& attr : node.attribute()) in_function |= attr.has_g() && attr.g().equivalent_subgraph_size() > 0;
      }
    }
    if (in_function) {
      EXPECT_NE(Joined(problems).find("VAR-PLACE: "), std::string::npos) << Joined(problems);
    }
    for (const VariantEntry& entry : CollectEntries(model)) (void)RegionHash(model, entry);
    onnx::ModelProto stamped = model;
    (void)StampCompiledHashes(stamped, /*all=*/true);
    ResolveOptions options;
    options.targets = {"com.example.npu", kPortableTarget};
    StatusOr<ResolvedModel> resolved = ResolveVariants(loaded, options);
    if (!resolved.ok()) {
      ++refused;
      continue;
    }
    ++resolved_ok;
    const std::vector<Status> after = ValidateModel(Loaded(resolved->model));
    EXPECT_TRUE(after.empty()) << Joined(after);
    // No entry survives resolution, wherever it sat (entry attributes included).
    EXPECT_FALSE(HasVariants(resolved->model));
  }
  // Both outcomes occur, so the test exercises both paths.
  EXPECT_GT(resolved_ok, 10);
  EXPECT_GT(refused, 10);
}

}  // namespace
}  // namespace parity
