// Tests of LowerReferenceCompiled: a Compiled call for the reference's own
// identifier runs as the FunctionProto in its blob, and computes what the
// region it replaced computed.
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
using variants_test::RunFloats;

constexpr char kModel[] = R"(<ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
  g (float[4] x, float[4] b) => (float[4] y) { t = Add (x, b)  y = LeakyRelu <alpha = 0.25> (t) })";

std::string Blob(const std::string& text) {
  StatusOr<onnx::FunctionProto> function = ParseFunctionText(text);
  EXPECT_TRUE(function.ok()) << function.status().ToString();
  return function.ok() ? function->SerializeAsString() : "";
}

// The model with one reference Compiled entry holding `blob`, resolved for the reference target.
onnx::ModelProto Resolved(const onnx::ModelProto& model) {
  ResolveOptions options;
  options.targets = {kReferenceTarget};
  StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(model), options);
  EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
  return resolved.ok() ? resolved->model : onnx::ModelProto();
}

onnx::ModelProto WithBlob(const std::string& blob, const std::string& identifier = kReferenceIdentifier) {
  onnx::ModelProto model = Model(kModel);
  onnx::EquivalentSubgraphProto& entry = AddEntry(*model.mutable_graph(), "y = com.example.Compiled <alpha = 0.25> (x, b)");
  MakeCompiled(entry, kReferenceTarget, identifier, blob);
  EXPECT_TRUE(StampCompiledHashes(model).ok());
  return model;
}

TEST(VariantReferenceCompiled, LoweredCallComputesTheMainGraph) {
  onnx::ModelProto model = WithBlob(Blob(R"(<domain: "ignored", opset_import: ["" : 21]>
      Fused <alpha> (p, q) => (r) { s = Add (p, q)  r = LeakyRelu <alpha: float = @alpha> (s) })"));
  onnx::ModelProto lowered = Resolved(model);
  ASSERT_EQ(lowered.graph().node_size(), 1);
  ASSERT_TRUE(LowerReferenceCompiled(lowered).ok());
  const onnx::NodeProto& call = lowered.graph().node(0);
  EXPECT_EQ(call.op_type(), "compiled_0");
  EXPECT_EQ(call.domain(), "com.example");
  ASSERT_EQ(call.attribute_size(), 1);  // the __*__ attributes are gone; alpha stays
  EXPECT_EQ(call.attribute(0).name(), "alpha");
  ASSERT_EQ(lowered.functions_size(), 1);
  EXPECT_EQ(lowered.functions(0).domain(), "com.example");
  EXPECT_EQ(lowered.functions(0).name(), "compiled_0");
  EXPECT_TRUE(ValidateModel(Loaded(lowered)).empty()) << Joined(ValidateModel(Loaded(lowered)));
  const std::vector<std::pair<Shape, std::vector<double>>> inputs = {{{4}, {-2, -0.5, 1, 3}}, {{4}, {0.5, 1, -4, 2}}};
  EXPECT_EQ(RunFloats(StripVariants(model), inputs), RunFloats(lowered, inputs));
}

TEST(VariantReferenceCompiled, NamesAvoidExistingFunctions) {
  onnx::ModelProto model = WithBlob(Blob(R"(<domain: "x", opset_import: ["" : 21]>
      F <alpha> (p, q) => (r) { s = Add (p, q)  r = LeakyRelu <alpha: float = @alpha> (s) })"));
  auto* existing = model.add_functions();
  existing->set_domain("com.example");
  existing->set_name("compiled_0");
  existing->add_input("a");
  existing->add_output("b");
  auto* node = existing->add_node();
  node->set_op_type("Identity");
  node->add_input("a");
  node->add_output("b");
  onnx::ModelProto lowered = Resolved(model);
  ASSERT_TRUE(LowerReferenceCompiled(lowered).ok());
  EXPECT_EQ(lowered.graph().node(0).op_type(), "compiled_1");
}

TEST(VariantReferenceCompiled, BlobThatIsNoFunctionNamesTheNode) {
  onnx::ModelProto lowered = Resolved(WithBlob("\xff\xff not a function"));
  Status status = LowerReferenceCompiled(lowered);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidModel);
  EXPECT_NE(status.message().find("node 'variant_e0'"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("__binary__"), std::string::npos) << status.message();
}

TEST(VariantReferenceCompiled, OtherIdentifiersAreLeftAlone) {
  onnx::ModelProto model = WithBlob("vendor bytes", "com.example.npu-blob/3");
  ResolveOptions options;
  options.targets = {kReferenceTarget};
  StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(model), options);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  onnx::ModelProto lowered = resolved->model;
  ASSERT_TRUE(LowerReferenceCompiled(lowered).ok());
  EXPECT_EQ(lowered.SerializeAsString(), resolved->model.SerializeAsString());
}

}  // namespace
}  // namespace parity
