// Variant validation and resolution never crash on bad input: models with
// entries are mutated at random (names, nodes, entries) and every entry
// point must return, with problems or a model that ValidateModel accepts.
#include <random>

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

// A name somewhere in the model: a node input or output, or an entry's.
std::string* SomeName(onnx::ModelProto& model, std::mt19937& random) {
  onnx::GraphProto& g = *model.mutable_graph();
  std::vector<std::string*> names;
  for (auto& node : *g.mutable_node()) {
    for (auto& s : *node.mutable_input()) names.push_back(&s);
    for (auto& s : *node.mutable_output()) names.push_back(&s);
  }
  for (auto& e : *g.mutable_equivalent_subgraph()) {
    for (auto& s : *e.mutable_input()) names.push_back(&s);
    for (auto& s : *e.mutable_output()) names.push_back(&s);
  }
  if (names.empty()) return nullptr;
  return names[std::uniform_int_distribution<size_t>(0, names.size() - 1)(random)];
}

void Mutate(onnx::ModelProto& model, std::mt19937& random) {
  onnx::GraphProto& g = *model.mutable_graph();
  const char* pool[] = {"x", "b", "c", "t", "u", "v", "w", "y", "z", "", "nowhere"};
  switch (std::uniform_int_distribution<int>(0, 5)(random)) {
    case 0:
      if (std::string* name = SomeName(model, random)) *name = pool[random() % std::size(pool)];
      break;
    case 1:
      if (g.node_size() > 0) g.mutable_node()->DeleteSubrange(static_cast<int>(random() % g.node_size()), 1);
      break;
    case 2:
      if (g.node_size() > 1) g.mutable_node()->SwapElements(0, g.node_size() - 1);
      break;
    case 3:
      if (g.equivalent_subgraph_size() > 0) {
        auto& e = *g.mutable_equivalent_subgraph(static_cast<int>(random() % g.equivalent_subgraph_size()));
        e.add_input(pool[random() % std::size(pool)]);
      }
      break;
    case 4:
      if (g.equivalent_subgraph_size() > 0) *g.add_equivalent_subgraph() = g.equivalent_subgraph(0);
      break;
    default:
      if (g.equivalent_subgraph_size() > 0) {
        g.mutable_equivalent_subgraph(static_cast<int>(random() % g.equivalent_subgraph_size()))->clear_output();
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
  for (int round = 0; round < 300; ++round) {
    onnx::ModelProto model = Seed();
    const int mutations = 1 + static_cast<int>(random() % 3);
    for (int m = 0; m < mutations; ++m) Mutate(model, random);
    const LoadedModel loaded = Loaded(model);
    const std::vector<Status> problems = ValidateVariants(loaded);
    for (const Status& p : problems) {
      EXPECT_EQ(p.message().rfind("VAR-", 0), 0u) << p.message();
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
  }
  // Both outcomes occur, so the test exercises both paths.
  EXPECT_GT(resolved_ok, 10);
  EXPECT_GT(refused, 10);
}

}  // namespace
}  // namespace parity
