// Tests of model validation rules not covered by the malformed-model corpus.
#include "reference/model/validator.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "reference/model/text_syntax.h"

namespace parity {
namespace {

std::vector<Status> Validate(const std::string& text, const ValidationOptions& options = {}) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  if (!proto.ok()) return {proto.status()};
  LoadedModel model{std::make_shared<onnx::ModelProto>(*proto), "m.onnx", ""};
  return ValidateModel(model, options);
}

bool Mentions(const std::vector<Status>& problems, const std::string& words) {
  for (const auto& p : problems) {
    if (p.message().find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(ValidatorTest, ValidModelHasNoProblems) {
  auto problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] y) { t = Relu (x)  y = Transpose <perm: ints = [0]> (t) })");
  EXPECT_TRUE(problems.empty()) << problems[0].ToString();
}

TEST(ValidatorTest, ReportsEveryProblemWithModelAndNode) {
  auto problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x, float[2] x) => (float[2] y, float[2] missing) {
      y = Relu (nowhere)
      y = Relu (x)
    })");
  EXPECT_TRUE(Mentions(problems, "input 'x' is declared twice"));
  EXPECT_TRUE(Mentions(problems, "'nowhere'"));
  EXPECT_TRUE(Mentions(problems, "value 'y' is defined twice"));
  EXPECT_TRUE(Mentions(problems, "output 'missing' is never computed"));
  for (const auto& p : problems) EXPECT_EQ(p.message().rfind("m.onnx: ", 0), 0u) << p.message();
}

TEST(ValidatorTest, AttributeReferenceOutsideFunctionIsRefused) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] y) { y = LeakyRelu (x) })");
  ASSERT_TRUE(proto.ok());
  auto* a = proto->mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_ref_attr_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  LoadedModel model{std::make_shared<onnx::ModelProto>(*proto), "m.onnx", ""};
  EXPECT_TRUE(Mentions(ValidateModel(model), "outside a function body"));
}

TEST(ValidatorTest, ListAttributeHoldingScalarIsAMismatch) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] y) { y = Relu (x) })");
  ASSERT_TRUE(proto.ok());
  auto* a = proto->mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("perm");
  a->set_type(onnx::AttributeProto::INTS);
  a->set_i(1);
  LoadedModel model{std::make_shared<onnx::ModelProto>(*proto), "m.onnx", ""};
  EXPECT_TRUE(Mentions(ValidateModel(model), "declared INTS but holds a single value"));
}

TEST(ValidatorTest, DuplicateFunctionIdsAndUnimportedDomains) {
  auto problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[1] x) => (float[1] y) { y = local.F (x)  z = com.nowhere.G (x) }
    <domain: "local", opset_import: ["" : 21]> F (a) => (b) { b = Relu (a) }
    <domain: "local", opset_import: ["" : 21]> F (a) => (b) { b = Abs (a) })");
  EXPECT_TRUE(Mentions(problems, "function local.F is defined twice"));
  EXPECT_TRUE(Mentions(problems, "domain 'com.nowhere', which is not in opset_import"));
}

TEST(ValidatorTest, NodesAreCheckedAgainstTheOnnxSchemaOfTheirOpset) {
  auto problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 13]>
    g (float[2,3] x, float[2,3] q) => (float[2,3] a, float[2,3] b, float[2,3] c, float[3,2] d, float[2,3] e) {
      a = Relu <alpha: float = 0.5> (x)
      b = Attention (q, q, q)
      c = Gemm (x, x, x, x)
      d = Transpose <perm: floats = [1.0, 0.0]> (x)
      e = NoSuchOperator (x)
    })");
  EXPECT_TRUE(Mentions(problems, "attribute 'alpha' is not an attribute of Relu-"));
  EXPECT_TRUE(Mentions(problems, "Attention does not exist yet at opset 13"));
  EXPECT_TRUE(Mentions(problems, "has 4 inputs; Gemm-13 takes at most 3"));
  EXPECT_TRUE(Mentions(problems, "attribute 'perm' is FLOATS but Transpose-13 declares it INTS"));
  // An operator the pinned onnx does not know may be newer than the pin: unsupported, not invalid.
  EXPECT_TRUE(Mentions(problems, "operator NoSuchOperator of domain 'ai.onnx' at opset 13 is unknown to onnx"));
  const auto unknown = std::find_if(problems.begin(), problems.end(), [](const Status& p) {
    return p.message().find("NoSuchOperator") != std::string::npos;
  });
  ASSERT_NE(unknown, problems.end());
  EXPECT_EQ(unknown->code(), StatusCode::kUnimplemented);
}

TEST(ValidatorTest, AnOperatorUnknownToTheSchemaIsValidWhenAFunctionBodyDefinesIt) {
  ValidationOptions options;
  options.has_function_body = [](std::string_view domain, std::string_view op) {
    return domain.empty() && op == "FutureOperator";
  };
  const std::vector<Status> problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] a, float[2] b) {
      a = FutureOperator (x)
      b = OtherFutureOperator (x)
    })", options);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].code(), StatusCode::kUnimplemented);
  EXPECT_NE(problems[0].message().find("operator OtherFutureOperator of domain 'ai.onnx' at opset 21 is unknown to onnx"),
            std::string::npos)
      << problems[0].message();
}

TEST(ValidatorTest, FunctionBodiesAreCheckedAgainstTheirOwnOpsets) {
  // The function imports opset 13, where Attention does not exist yet.
  auto problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 23, "local" : 1]>
    g (float[2,3] x) => (float[2,3] y) { y = local.F (x) }
    <domain: "local", opset_import: ["" : 13]>
    F (a) => (b) { b = Attention (a, a, a) })");
  EXPECT_TRUE(Mentions(problems, "function local.F node 0 '' (Attention): Attention does not exist yet at opset 13"));
}

TEST(ValidatorTest, SubgraphSeesOuterValuesButNotSiblings) {
  auto problems = Validate(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[1] x) => (float[1] y) {
      t = Relu (x)
      y = If (c) <
        then_branch = a () => (float[1] r) { r = Abs (t) },
        else_branch = b () => (float[1] r) { r = Abs (q) }
      >
    })");
  ASSERT_EQ(problems.size(), 1u) << problems[0].ToString();
  EXPECT_TRUE(Mentions(problems, "reads 'q'"));
}

TEST(ValidatorTest, DeclaredShapeOverTheLimitIsRefusedBeforeAllocation) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[1000, 1000] x) => (float[1000, 1000] y) { y = Relu (x) })");
  ASSERT_TRUE(proto.ok());
  LoadedModel model{std::make_shared<onnx::ModelProto>(*proto), "m.onnx", ""};
  ValidationOptions options;
  options.max_tensor_bytes = 1000;
  EXPECT_TRUE(Mentions(ValidateModel(model, options), "over the memory limit of 1000 bytes"));
}

}  // namespace
}  // namespace parity
