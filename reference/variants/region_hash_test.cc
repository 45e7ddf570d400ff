// Tests of RegionHash and StampCompiledHashes: the hash names the region by
// what it computes, not by what its values and nodes are called.
#include <functional>

#include <gtest/gtest.h>

#include "reference/variants/variants_test_util.h"

namespace parity {
namespace {

using variants_test::AddEntry;
using variants_test::Loaded;
using variants_test::MakeCompiled;
using variants_test::Model;

// x, b -> Mul by weight w -> Add b -> LeakyRelu -> y; the entry covers all three nodes.
std::string Text(const std::string& x = "x", const std::string& t = "t", const std::string& u = "u",
                 const std::string& w = "w", const std::string& alpha = "0.1", const std::string& weight = "1, 2, 3, 4",
                 const std::string& op = "LeakyRelu") {
  return StrCat(R"(<ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[4] )", x, R"(, float[4] b) => (float[4] y) <float[4] )", w, " = {", weight, R"(}> {
      [first] )", t, " = Mul (", x, ", ", w, R"()
      [second] )", u, " = Add (", t, R"(, b)
      y = )", op, " <alpha = ", alpha, "> (", u, R"()
    })");
}

std::string Hash(const std::string& text, const std::string& x = "x") {
  onnx::ModelProto model = Model(text);
  AddEntry(*model.mutable_graph(), StrCat("y = com.example.Fused (", x, ", b)"));
  StatusOr<std::string> hash = RegionHash(model, CollectEntries(model)[0]);
  EXPECT_TRUE(hash.ok()) << hash.status().ToString();
  return hash.ok() ? *hash : "";
}

TEST(VariantRegionHash, IsSha256InLowercaseHex) {
  const std::string hash = Hash(Text());
  ASSERT_EQ(hash.size(), 7u + 64u) << hash;
  EXPECT_EQ(hash.substr(0, 7), "sha256:");
  for (char c : hash.substr(7)) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << hash;
  EXPECT_EQ(hash, Hash(Text()));  // deterministic
}

TEST(VariantRegionHash, RenamingValuesAndNodesKeepsIt) {
  const std::string base = Hash(Text());
  EXPECT_EQ(base, Hash(Text("input_renamed", "t2", "u2", "weight_renamed"), "input_renamed"));
  onnx::ModelProto model = Model(Text());
  model.mutable_graph()->mutable_node(0)->set_name("another");
  model.mutable_graph()->mutable_node(1)->set_doc_string("a note");
  AddEntry(*model.mutable_graph(), "y = com.example.Fused (x, b)");
  EXPECT_EQ(base, *RegionHash(model, CollectEntries(model)[0]));
}

TEST(VariantRegionHash, ChangingWhatTheRegionComputesChangesIt) {
  const std::string base = Hash(Text());
  EXPECT_NE(base, Hash(Text("x", "t", "u", "w", "0.2")));                             // an attribute
  EXPECT_NE(base, Hash(Text("x", "t", "u", "w", "0.1", "1, 2, 3, 5")));               // a weight
  EXPECT_NE(base, Hash(Text("x", "t", "u", "w", "0.1", "1, 2, 3, 4", "Elu")));        // an op
  // Swapping the entry's inputs changes which value plays which role.
  onnx::ModelProto model = Model(Text());
  AddEntry(*model.mutable_graph(), "y = com.example.Fused (b, x)");
  EXPECT_NE(base, *RegionHash(model, CollectEntries(model)[0]));
}

TEST(VariantRegionHash, OneWeightBitChangesIt) {
  onnx::ModelProto model = Model(Text());
  AddEntry(*model.mutable_graph(), "y = com.example.Fused (x, b)");
  const std::string before = *RegionHash(model, CollectEntries(model)[0]);
  // Rewrite the weight as raw_data: the same values hash the same...
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  std::string raw(reinterpret_cast<const char*>(w.float_data().data()), 16);
  w.clear_float_data();
  w.set_raw_data(raw);
  EXPECT_EQ(before, *RegionHash(model, CollectEntries(model)[0]));
  // ...and one flipped bit does not.
  (*w.mutable_raw_data())[5] ^= 1;
  EXPECT_NE(before, *RegionHash(model, CollectEntries(model)[0]));
}

TEST(VariantRegionHash, SubgraphsAreHashedByWhatTheyCompute) {
  auto text = [](const std::string& inner, const std::string& outer_value) {
    return StrCat(R"(<ir_version: 10, opset_import: ["" : 21]>
      g (float[4] x, bool c) => (float[4] y) {
        )", outer_value, R"( = Neg (x)
        y = If (c) <then_branch = a () => (float[4] )", inner, R"() { )", inner, " = Relu (", outer_value, R"() },
                    else_branch = b () => (float[4] e) { e = Identity ()", outer_value, R"() }>
      })");
  };
  auto hash = [](const std::string& text) {
    onnx::ModelProto model = Model(text);
    AddEntry(*model.mutable_graph(), "y = com.example.F (x, c)");
    StatusOr<std::string> h = RegionHash(model, CollectEntries(model)[0]);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? *h : "";
  };
  EXPECT_EQ(hash(text("r", "n")), hash(text("renamed_inner", "renamed_outer")));
  std::string changed = text("r", "n");
  changed.replace(changed.find("Relu"), 4, "Sigmoid");
  EXPECT_NE(hash(text("r", "n")), hash(changed));
}

TEST(VariantRegionHash, AnnotationsOfSubgraphsAreNotHashed) {
  // The If's then branch: metadata and doc strings on its output, an
  // initializer of its own, and its nodes are annotations; its output type is not.
  auto hash = [](const std::function<void(onnx::GraphProto&)>& edit) {
    onnx::ModelProto model = Model(R"(<ir_version: 10, opset_import: ["" : 21]>
      g (float[4] x, bool c) => (float[4] y) {
        y = If (c) <then_branch = a () => (float[4] r) <float[4] k = {1, 2, 3, 4}> { r = Mul (x, k) },
                    else_branch = b () => (float[4] e) { e = Identity (x) }>
      })");
    for (auto& attr : *model.mutable_graph()->mutable_node(0)->mutable_attribute()) {
      if (attr.name() == "then_branch") edit(*attr.mutable_g());
    }
    AddEntry(*model.mutable_graph(), "y = com.example.F (x, c)");
    StatusOr<std::string> h = RegionHash(model, CollectEntries(model)[0]);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? *h : "";
  };
  auto annotate = [](auto& message) {
    auto* prop = message.add_metadata_props();
    prop->set_key("com.example.note");
    prop->set_value("quantized later");
    message.set_doc_string("annotated");
  };
  const std::string plain = hash([](onnx::GraphProto&) {});
  EXPECT_EQ(plain, hash([&](onnx::GraphProto& g) { annotate(*g.mutable_output(0)); }));
  EXPECT_EQ(plain, hash([&](onnx::GraphProto& g) { annotate(*g.mutable_initializer(0)); }));
  EXPECT_EQ(plain, hash([&](onnx::GraphProto& g) { annotate(*g.mutable_node(0)); }));
  EXPECT_NE(plain, hash([](onnx::GraphProto& g) {
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  }));
  EXPECT_NE(plain, hash([](onnx::GraphProto& g) { g.mutable_initializer(0)->set_float_data(0, 5.0f); }));
}

TEST(VariantRegionHash, OpenRegionIsAnError) {
  onnx::ModelProto model = Model(Text());
  AddEntry(*model.mutable_graph(), "y = com.example.Fused (x)");  // b is read but not an input
  StatusOr<std::string> hash = RegionHash(model, CollectEntries(model)[0]);
  ASSERT_FALSE(hash.ok());
  EXPECT_NE(hash.status().message().find("VAR-OPEN-CUT"), std::string::npos) << hash.status().message();
  EXPECT_NE(hash.status().message().find("'b'"), std::string::npos) << hash.status().message();
}

TEST(VariantRegionHash, StampWritesOnlyEmptyHashesUnlessAll) {
  onnx::ModelProto model = Model(Text());
  MakeCompiled(AddEntry(*model.mutable_graph(), "y = com.example.A (x, b)"), "com.example.npu");
  MakeCompiled(AddEntry(*model.mutable_graph(), "u = com.example.B (x, b)"), "com.example.npu");
  AddEntry(*model.mutable_graph(), "y = LeakyRelu <alpha = 0.1> (u)");  // not Compiled: never stamped
  StatusOr<int> stamped = StampCompiledHashes(model);
  ASSERT_TRUE(stamped.ok()) << stamped.status().ToString();
  EXPECT_EQ(*stamped, 2);
  const std::vector<VariantEntry> entries = CollectEntries(model);
  EXPECT_EQ(entries[0].proto->attribute(0).s(), *RegionHash(model, entries[0]));
  EXPECT_EQ(entries[1].proto->attribute(0).s(), *RegionHash(model, entries[1]));
  EXPECT_NE(entries[0].proto->attribute(0).s(), entries[1].proto->attribute(0).s());
  EXPECT_EQ(*StampCompiledHashes(model), 0);
  model.mutable_graph()->mutable_equivalent_subgraph(0)->mutable_attribute(0)->set_s("sha256:old");
  EXPECT_EQ(*StampCompiledHashes(model, /*all=*/true), 2);
  EXPECT_EQ(model.graph().equivalent_subgraph(0).attribute(0).s(), *RegionHash(model, entries[0]));
  EXPECT_TRUE(ValidateVariants(Loaded(model)).empty());
}

// The worked example of spec/variants.md (section 2.7, VAR-STALE): the two
// hashes are the ones the spec states, computed from its byte-stream
// definition alone, so this test locks the definition, not the code.
std::string SpecExampleHash(const std::string& eps) {
  onnx::ModelProto model = Model(StrCat(R"(<ir_version: 10, opset_import: ["" : 17, "com.example.npu" : 1]>
    layernorm_chain (float[N,4] X) => (float[N,4] Z)
      <float[4] scale = {1, 1.5, 0.5, 2}, float[4] bias = {0, 0.25, -0.25, 0.5}, float eps = {)", eps, R"(}>
    {
      [ln_mean]    mean = ReduceMean <axes = [-1]> (X)
      [ln_sub]     d    = Sub (X, mean)
      [ln_sq]      sq   = Mul (d, d)
      [ln_var]     var  = ReduceMean <axes = [-1]> (sq)
      [ln_add_eps] ve   = Add (var, eps)
      [ln_sqrt]    sd   = Sqrt (ve)
      [ln_div]     norm = Div (d, sd)
      [ln_scale]   sc   = Mul (norm, scale)
      [ln_bias]    Y    = Add (sc, bias)
      [relu]       Z    = Relu (Y)
    })"));
  AddEntry(*model.mutable_graph(), "Y = LayerNormalization <axis = -1, epsilon = 1e-5> (X, scale, bias)");
  onnx::EquivalentSubgraphProto& e1 = AddEntry(*model.mutable_graph(), "Y = com.example.npu.Compiled (X, scale, bias)");
  MakeCompiled(e1, "com.example.npu", "com.example.npu.blob/1");
  auto* priority = e1.add_metadata_props();
  priority->set_key(kPriorityKey);
  priority->set_value("10");
  const std::vector<VariantEntry> entries = CollectEntries(model);
  EXPECT_EQ(entries.size(), 2u);
  if (entries.size() != 2) return "";
  StatusOr<std::string> hash = RegionHash(model, entries[1]);
  EXPECT_TRUE(hash.ok()) << hash.status().ToString();
  return hash.ok() ? *hash : "";
}

TEST(VariantRegionHash, SpecWorkedExample) {
  EXPECT_EQ(SpecExampleHash("1e-5"), "sha256:c4df71f886dfb66097f00010dfc6a2181e92a3e0dabfc967ea7c4fd2bf25dcde");
  EXPECT_EQ(SpecExampleHash("1e-6"), "sha256:1ad7d5aa02434e090fdc876fa0131305c0da296b7d77a1f2b7532185c54b46f3");
}

}  // namespace
}  // namespace parity
