// Tests of ValidateVariants: a valid model passes, and for each rule a model
// that breaks exactly that rule gets a message starting with the rule's id
// and naming the value at fault.
#include <functional>

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
using variants_test::Target;
using variants_test::Validate;
using variants_test::WithRule;

// x, b -> Add -> t -> Relu -> y, with a local function computing the same.
constexpr char kAddRelu[] = R"(
  <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
  g (float[4] x, float[4] b) => (float[4] y) <float[4] w = {1, 2, 3, 4}> {
    t = Add (x, b)
    y = Relu (t)
  }
  <domain: "com.example", opset_import: ["" : 21]> AddRelu (a, c) => (d) { s = Add (a, c)  d = Relu (s) }
  <domain: "com.example", opset_import: ["" : 21]> AddRelu3 (a, c, e) => (d) { s = Add (a, c)  d = Relu (s) })";

// Exactly one problem, of `rule`, mentioning every word of `names`.
void ExpectOnly(const onnx::ModelProto& model, const std::string& rule, const std::vector<std::string>& names) {
  const std::vector<Status> problems = Validate(model);
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  const std::string& message = problems[0].message();
  EXPECT_EQ(problems[0].code(), StatusCode::kInvalidModel);
  EXPECT_EQ(message.rfind(rule + ": entry ", 0), 0u) << message;
  for (const auto& name : names) EXPECT_NE(message.find(name), std::string::npos) << name << " not in: " << message;
}

TEST(VariantValidate, ValidEntriesPass) {
  onnx::ModelProto model = Model(kAddRelu);
  onnx::GraphProto& g = *model.mutable_graph();
  AddEntry(g, "y = com.example.AddRelu (x, b)");                                // a local function, portable
  AddEntry(g, "y = Relu (t)", Target("com.example.npu"));                       // a standard op, one node
  AddEntry(g, "t = Add (x, b)", {{"com.example.note", "v"}, {kPriorityKey, "-3"}});
  AddEntry(g, "y = com.example.AddRelu3 (x, b, w)", Target("com.example.gpu"));  // an input the region does not read
  EXPECT_EQ(Validate(model).size(), 0u) << Joined(Validate(model));
}

TEST(VariantValidate, StampedCompiledEntryPasses) {
  onnx::ModelProto model = Model(kAddRelu);
  MakeCompiled(AddEntry(*model.mutable_graph(), "y = com.example.X (x, b)"), "com.example.npu");
  StatusOr<int> stamped = StampCompiledHashes(model);
  ASSERT_TRUE(stamped.ok()) << stamped.status().ToString();
  EXPECT_EQ(*stamped, 1);
  EXPECT_EQ(Validate(model).size(), 0u) << Joined(Validate(model));
}

TEST(VariantValidate, ModelWithoutEntriesHasNoProblems) {
  EXPECT_TRUE(Validate(Model(kAddRelu)).empty());
}

TEST(VariantValidate, IrVersionBelowTen) {
  onnx::ModelProto model = Model(kAddRelu);
  model.set_ir_version(9);
  AddEntry(*model.mutable_graph(), "y = Relu (t)");
  ExpectOnly(model, kRuleIrVersion, {"ir_version 9", "e0"});
}

TEST(VariantValidate, CallRules) {
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = Relu (t)").clear_op_type();
    ExpectOnly(model, kRuleCall, {"op_type is empty"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.nowhere.Fused (x, b)");
    ExpectOnly(model, kRuleCall, {"'com.nowhere'", "opset_import"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = AddRelu (x, b)");  // not a standard op
    ExpectOnly(model, kRuleCall, {"ai.onnx:AddRelu", "opset 21"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu:fast (x, b)");
    ExpectOnly(model, kRuleCall, {"overload 'fast'"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    MakeCompiled(AddEntry(*model.mutable_graph(), "y = ai.onnx.X (x, b)"), "com.example.npu");
    ASSERT_TRUE(StampCompiledHashes(model).ok());
    ExpectOnly(model, kRuleCall, {"vendor's domain"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = Relu <alpha = 1.0> (t)");
    ExpectOnly(model, kRuleCall, {"attribute 'alpha'", "Relu-14"});
  }
}

// Resolution writes the call as a node that ValidateModel must accept, so
// the call's attributes follow the validator's rules (found by
// fuzz/model_fuzzer.cc: an untyped attribute passed, and the resolved model
// was invalid).
TEST(VariantValidate, CallAttributesFollowTheValidatorsRules) {
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu <mode = 1> (x, b)").mutable_attribute(0)->clear_type();
    ExpectOnly(model, kRuleCall, {"attribute 'mode'", "has no type"});
    ResolveOptions options;
    options.targets = {kPortableTarget};
    EXPECT_FALSE(ResolveVariants(Loaded(model), options).ok());
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu <mode = 1> (x, b)").mutable_attribute(0)->clear_i();
    ExpectOnly(model, kRuleCall, {"attribute 'mode'", "declared INT but holds no value"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu <mode = 1> (x, b)")
        .mutable_attribute(0)
        ->set_ref_attr_name("outer");
    ExpectOnly(model, kRuleCall, {"attribute 'mode'", "refers to attribute 'outer'"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu <mode = 1> (x, b)").mutable_attribute(0)->clear_name();
    ExpectOnly(model, kRuleCall, {"an attribute has no name"});
  }
}

TEST(VariantValidate, ArityRules) {
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = Relu (t)").clear_output();
    ExpectOnly(model, kRuleArity, {"no outputs"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y, y = com.example.AddRelu (x, b)");
    const std::vector<Status> problems = Validate(model);
    // The function's output count differs too; the duplicate is named.
    const auto arity = WithRule(problems, kRuleArity);
    ASSERT_FALSE(arity.empty()) << Joined(problems);
    EXPECT_NE(Joined(problems).find("output 'y' is listed twice"), std::string::npos) << Joined(problems);
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = Relu (t, x)");
    ExpectOnly(model, kRuleArity, {"2 inputs", "Relu-14 takes at most 1"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu (x, b, w, x)");
    ExpectOnly(model, kRuleArity, {"4 inputs", "function com.example:AddRelu declares 2"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y, t = com.example.AddRelu (x, b)");
    ExpectOnly(model, kRuleArity, {"2 outputs", "declares 1"});
  }
}

TEST(VariantValidate, NameRules) {
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = com.example.AddRelu (x, nowhere)");
    ExpectOnly(model, kRuleNames, {"input 'nowhere'"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "x = Relu (b)");
    ExpectOnly(model, kRuleNames, {"output 'x'", "a graph input"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "w = Relu (b)");
    ExpectOnly(model, kRuleNames, {"output 'w'", "an initializer"});
  }
  {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = Relu (t)").set_output(0, "");
    ExpectOnly(model, kRuleNames, {"output name is empty"});
  }
}

TEST(VariantValidate, OpenCutNamesTheGraphInput) {
  onnx::ModelProto model = Model(kAddRelu);
  AddEntry(*model.mutable_graph(), "y = Relu (x)");  // the region reads b too
  ExpectOnly(model, kRuleOpenCut, {"graph input 'b'"});
}

TEST(VariantValidate, RegionMayReadInitializersAndConstants) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> {
      k = Constant <value = float[4] {1, 1, 1, 1}> ()
      t = Add (x, w)
      y = Mul (t, k)
    })");
  AddEntry(*model.mutable_graph(), "y = Add (x, x)");
  EXPECT_TRUE(Validate(model).empty()) << Joined(Validate(model));
}

TEST(VariantValidate, NonConvexCutNamesTheInputAndTheRegionValue) {
  // t feeds u outside the region, and u is an entry input: the call would
  // need its own result.
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x) => (float[4] y) {
      t = Relu (x)
      u = Neg (t)
      y = Add (t, u)
    })");
  AddEntry(*model.mutable_graph(), "y = Add (x, u)");
  ExpectOnly(model, kRuleConvex, {"input 'u'", "'t'"});
}

TEST(VariantValidate, ConvexityHoldsForANodeListOutOfOrder) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x) => (float[4] y) {
      y = Add (t, u)
      u = Neg (t)
      t = Relu (x)
    })");
  AddEntry(*model.mutable_graph(), "y = Add (x, u)");
  ExpectOnly(model, kRuleConvex, {"input 'u'", "'t'"});
  onnx::ModelProto fine = Model(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x) => (float[4] y) {
      y = Add (t, u)
      u = Neg (x)
      t = Relu (x)
    })");
  AddEntry(*fine.mutable_graph(), "y = Add (x, u)");
  EXPECT_TRUE(Validate(fine).empty()) << Joined(Validate(fine));
}

TEST(VariantValidate, InputThatIsAnOutputIsNotConvex) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[4] x, float[4] b) => (float[4] y) {
      t = Add (x, b)
      y = Relu (t)
    }
    <domain: "com.example", opset_import: ["" : 21]> Two (p, q, r) => (m, n) { m = Add (p, q)  n = Relu (m) })");
  AddEntry(*model.mutable_graph(), "t, y = com.example.Two (x, b, t)");
  ExpectOnly(model, kRuleConvex, {"input 't'", "computed inside the region"});
}

TEST(VariantValidate, MetadataRules) {
  auto check = [](const std::vector<std::pair<std::string, std::string>>& metadata, const std::string& words) {
    onnx::ModelProto model = Model(kAddRelu);
    AddEntry(*model.mutable_graph(), "y = Relu (t)", metadata);
    ExpectOnly(model, kRuleMetadata, {words});
  };
  check({{"Vendor.Key", "v"}}, "'Vendor.Key' is not reverse-DNS");
  check({{"single", "v"}}, "'single'");
  check({{"com..example", "v"}}, "'com..example'");
  check({{"com.-example", "v"}}, "'com.-example'");
  check({{"com.example.k", "1"}, {"com.example.k", "2"}}, "'com.example.k' is given twice");
  check({{"ai.onnx.variant.color", "red"}}, "'ai.onnx.variant.color' is reserved");
  check({{kTargetKey, "NPU"}}, "'NPU' is not a reverse-DNS name");
  check({{kPriorityKey, "high"}}, "'high' is not a decimal int32");
  check({{kPriorityKey, "4294967296"}}, "'4294967296'");
}

TEST(VariantValidate, CompiledRules) {
  // Each case starts from a stamped, valid Compiled entry and breaks one thing.
  auto model_with = [](const std::function<void(onnx::EquivalentSubgraphProto&)>& change) {
    onnx::ModelProto model = Model(kAddRelu);
    onnx::EquivalentSubgraphProto& entry = AddEntry(*model.mutable_graph(), "y = com.example.X (x, b)");
    MakeCompiled(entry, "com.example.npu");
    EXPECT_TRUE(StampCompiledHashes(model).ok());
    change(*model.mutable_graph()->mutable_equivalent_subgraph(0));
    return model;
  };
  auto attribute = [](onnx::EquivalentSubgraphProto& e, const std::string& name) -> onnx::AttributeProto& {
    for (auto& a : *e.mutable_attribute()) {
      if (a.name() == name) return a;
    }
    return *e.add_attribute();
  };
  ExpectOnly(model_with([&](auto& e) { attribute(e, kHashAttr).set_s(""); }), kRuleCompiled, {"__hash__ is empty", "not stamped"});
  ExpectOnly(model_with([&](auto& e) { attribute(e, kHashAttr).set_s("md5:abc"); }), kRuleCompiled, {"'md5:abc'"});
  ExpectOnly(model_with([&](auto& e) {
               std::string upper = attribute(e, kHashAttr).s();
               upper[10] = upper[10] >= 'a' ? 'A' : 'B';  // uppercase hex is not the canonical form
               attribute(e, kHashAttr).set_s(upper);
             }),
             kRuleCompiled, {"lowercase hex"});
  ExpectOnly(model_with([&](auto& e) {
               auto& a = attribute(e, kHashAttr);
               a.clear_s();
               a.set_type(onnx::AttributeProto::INT);
               a.set_i(1);
             }),
             kRuleCompiled, {"__hash__ must be a STRING attribute"});
  ExpectOnly(model_with([&](auto& e) { attribute(e, kIdentifierAttr).set_s(""); }), kRuleCompiled, {"__identifier__ is empty"});
  ExpectOnly(model_with([&](auto& e) { attribute(e, kBinaryAttr).mutable_t()->add_dims(1); }), kRuleCompiled,
             {"__binary__ must be a scalar STRING tensor"});
  ExpectOnly(model_with([&](auto& e) { attribute(e, kBinaryAttr).mutable_t()->set_data_type(onnx::TensorProto::UINT8); }),
             kRuleCompiled, {"__binary__"});
  ExpectOnly(model_with([&](auto& e) { e.clear_metadata_props(); }), kRuleCompiled, {kTargetKey});
  ExpectOnly(model_with([&](auto& e) {
               auto& a = attribute(e, "__extra__");
               a.set_name("__extra__");
               a.set_type(onnx::AttributeProto::INT);
               a.set_i(1);
             }),
             kRuleCompiled, {"'__extra__'", "reserved"});
}

TEST(VariantValidate, StaleHashGivesBothValues) {
  onnx::ModelProto model = Model(kAddRelu);
  MakeCompiled(AddEntry(*model.mutable_graph(), "y = com.example.X (x, b)"), "com.example.npu");
  ASSERT_TRUE(StampCompiledHashes(model).ok());
  const std::string stamped = model.graph().equivalent_subgraph(0).attribute(0).s();
  // A tool rewrites the region (Relu becomes Sigmoid) and forgets the entry.
  model.mutable_graph()->mutable_node(1)->set_op_type("Sigmoid");
  const std::vector<Status> problems = Validate(model);
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0].message().rfind("VAR-STALE: entry e0 (com.example:Compiled) of graph 'main': ", 0), 0u)
      << problems[0].message();
  EXPECT_NE(problems[0].message().find(stamped), std::string::npos);
  StatusOr<std::string> now = RegionHash(model, CollectEntries(model)[0]);
  ASSERT_TRUE(now.ok());
  EXPECT_NE(problems[0].message().find(*now), std::string::npos);
}

TEST(VariantValidate, CopiedWeightNamesAttributeAndInitializer) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> { y = Add (x, w) })");
  // The blob's compiler copied w into an attribute instead of reading it by name.
  MakeCompiled(AddEntry(*model.mutable_graph(), "y = com.example.AddConst <k = float[4] {1, 2, 3, 4}> (x)"),
               "com.example.npu");
  ASSERT_TRUE(StampCompiledHashes(model).ok());
  ExpectOnly(model, kRuleCopiedWeight, {"attribute 'k'", "initializer 'w'", "16 bytes", "by name"});
}

TEST(VariantValidate, DifferentTensorIsNotACopy) {
  onnx::ModelProto model = Model(R"(
    <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> { y = Add (x, w) })");
  onnx::EquivalentSubgraphProto& entry =
      AddEntry(*model.mutable_graph(), "y = com.example.AddConst <k = float[4] {1, 2, 3, 5}> (x)");
  MakeCompiled(entry, "com.example.npu");
  ASSERT_TRUE(StampCompiledHashes(model).ok());
  EXPECT_TRUE(Validate(model).empty()) << Joined(Validate(model));
}

TEST(VariantValidate, CopiedWeightIsFoundWhateverTheEncoding) {
  // w in raw_data; the attribute in raw_data or in float_data: a copy either way,
  // and raw bytes that differ in one element are not.
  auto problems = [](bool attribute_raw, float last) {
    onnx::ModelProto model = Model(R"(
      <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
      g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> { y = Add (x, w) })");
    onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
    const float values[] = {1, 2, 3, 4};
    w.clear_float_data();
    w.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
    onnx::EquivalentSubgraphProto& entry = AddEntry(
        *model.mutable_graph(), StrCat("y = com.example.AddConst <k = float[4] {1, 2, 3, ", last, "}> (x)"));
    if (attribute_raw) {
      onnx::TensorProto& k = *entry.mutable_attribute(0)->mutable_t();
      const float mine[] = {1, 2, 3, last};
      k.clear_float_data();
      k.set_raw_data(std::string(reinterpret_cast<const char*>(mine), sizeof(mine)));
    }
    MakeCompiled(entry, "com.example.npu");
    EXPECT_TRUE(StampCompiledHashes(model).ok());
    return WithRule(Validate(model), kRuleCopiedWeight).size();
  };
  EXPECT_EQ(problems(/*attribute_raw=*/true, 4), 1u);
  EXPECT_EQ(problems(/*attribute_raw=*/false, 4), 1u);
  EXPECT_EQ(problems(/*attribute_raw=*/true, 5), 0u);
  EXPECT_EQ(problems(/*attribute_raw=*/false, 5), 0u);
}

TEST(VariantValidate, DuplicateEntriesNameTheFirst) {
  onnx::ModelProto model = Model(kAddRelu);
  AddEntry(*model.mutable_graph(), "y = com.example.AddRelu (x, b)");
  AddEntry(*model.mutable_graph(), "y = Relu (t)");
  AddEntry(*model.mutable_graph(), "y = com.example.AddRelu (x, b)");
  ExpectOnly(model, kRuleDuplicate, {"entry e2", "identical to entry e0"});
}

// x -> Loop whose body reads x from outside; entries in the body.
constexpr char kLoop[] = R"(
  <ir_version: 10, opset_import: ["" : 21]>
  g (float[4] x, int64 n) => (float[4] y) {
    c = Constant <value = bool {1}> ()
    y = Loop (n, c, x) <body = body (int64 i, bool cin, float[4] acc) => (bool cout, float[4] next) {
      cout = Identity (cin)
      s = Add (acc, x)
      next = Relu (s)
    }>
  })";

TEST(VariantValidate, SubgraphEntryMayTakeAnOuterValue) {
  onnx::ModelProto model = Model(kLoop);
  onnx::GraphProto& body = *model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
  AddEntry(body, "next = Add (acc, x)", Target("com.example.npu"));
  EXPECT_EQ(CollectEntries(model)[0].id, "Loop#1.body/e0");
  // Add of acc and x is not Relu(acc + x), but equivalence is not a rule ValidateVariants can check.
  EXPECT_TRUE(Validate(model).empty()) << Joined(Validate(model));
}

TEST(VariantValidate, SubgraphEntryReadingAnOuterValueNotListedIsOpen) {
  onnx::ModelProto model = Model(kLoop);
  onnx::GraphProto& body = *model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
  AddEntry(body, "next = Relu (acc)");
  const std::vector<Status> problems = Validate(model);
  ASSERT_EQ(problems.size(), 1u) << Joined(problems);
  EXPECT_EQ(problems[0].message().rfind("VAR-OPEN-CUT: entry Loop#1.body/e0 (ai.onnx:Relu) of graph 'main/Loop#1.body': ", 0),
            0u)
      << problems[0].message();
  EXPECT_NE(problems[0].message().find("'x' of an enclosing graph"), std::string::npos) << problems[0].message();
}

TEST(VariantValidate, EveryProblemOfAnEntryIsReported) {
  onnx::ModelProto model = Model(kAddRelu);
  AddEntry(*model.mutable_graph(), "y = com.nowhere.F (x, nowhere)", {{"BAD", "1"}});
  const std::vector<Status> problems = Validate(model);
  EXPECT_EQ(WithRule(problems, kRuleCall).size(), 1u) << Joined(problems);
  EXPECT_EQ(WithRule(problems, kRuleNames).size(), 1u) << Joined(problems);
  EXPECT_EQ(WithRule(problems, kRuleMetadata).size(), 1u) << Joined(problems);
}

}  // namespace
}  // namespace parity
