// Body consistency for the org.onnxparity.contrib functions
// (spec/functions/{simplified,skip,skip_simplified}_layer_normalization):
// each case runs one node with the direct kernel and with
// prefer_function_bodies, and compares every requested output under the
// tolerance policy (spec/tolerance.json). Inputs come from seeded generators.
#include <gtest/gtest.h>

#include <optional>

#include "spec/functions/body_check_test_util.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

using testing_util::BodyComparison;
using testing_util::ContribCase;
using testing_util::ContribNode;
using testing_util::Draw;
using testing_util::FloatAttr;
using testing_util::IntAttr;
using testing_util::kContribDomain;
using testing_util::kFloatTypes;
using testing_util::ShapeLabel;
using testing_util::SingleNode;
using testing_util::SpecTolerancePolicy;

// Runs every case both ways and expects each requested output to match;
// returns the number of outputs compared. An output the policy mistrusts
// (SkipSimplifiedLayerNormalization's mean, zero by definition) must then
// be equal exactly.
int ExpectBodiesMatchKernels(const std::vector<ContribCase>& cases) {
  int compared = 0;
  for (const ContribCase& c : cases) {
    SCOPED_TRACE(c.op + " " + c.label);
    BodyComparison how;
    how.tolerance = [&](DataType dtype) { return SpecTolerancePolicy().For(c.op, dtype, c.facts); };
    how.mistrusted_must_be_exact = true;
    compared += testing_util::ExpectBodyMatchesKernel(ContribNode(c, "contrib_body_check"), how);
  }
  return compared;
}

// Which of the four outputs of the Skip operators a case asks for: the
// first alone, all four, or the first and the sum with the statistics left
// out in between (positional outputs with blank names).
const std::vector<std::vector<bool>> kSkipOutputs = {
    {true}, {true, true, true, true}, {true, false, false, true}};

TEST(ContribBodiesTest, StandardLibraryDefinesEachContribFunction) {
  for (const char* op :
       {"SimplifiedLayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    EXPECT_NE(testing_util::StandardBodies().Find(kContribDomain, op), nullptr) << op << " has no body in spec/functions";
    EXPECT_EQ(testing_util::StandardBodies().Find("", op), nullptr) << op << " must not be in the default domain";
  }
}

// The domain is not ONNX's: the validator has no schema to check the node
// against and lets it through, but a model must still import the domain.
TEST(ContribBodiesTest, ModelMustImportTheContribDomain) {
  Draw draw(31000);
  ContribCase c{"no import",
                "SimplifiedLayerNormalization",
                {},
                {draw.Make(DataType::kFloat, {1, 4}, -1, 1), draw.Make(DataType::kFloat, {4}, 0.5, 1.5)},
                {true},
                {}};
  LoadedModel model = testing_util::SingleNodeModel(ContribNode(c, "contrib_body_check"));
  auto without_import = std::make_shared<onnx::ModelProto>(*model.proto);
  without_import->mutable_opset_import()->RemoveLast();  // the contrib domain, imported last
  model.proto = without_import;
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(model, WithReferenceKernels());
  ASSERT_FALSE(evaluator.ok());
  EXPECT_NE(evaluator.status().message().find(kContribDomain), std::string::npos) << evaluator.status().ToString();
  EXPECT_TRUE(Evaluator::Create(testing_util::SingleNodeModel(ContribNode(c, "contrib_body_check")), WithReferenceKernels()).ok());
}

// SimplifiedLayerNormalization: axis -1 (left out), 1 and 0 with scales of
// the normalised shape or broadcasting to it, epsilon default and 1e-2, Y
// alone or with inv_std_var; float64 with stash_type 11 (with the default
// float32 stash the body computes in float32 by definition); float16 and
// bfloat16 X with a float32 scale (Y takes scale's type). X in [-2, 2].
TEST(ContribBodiesTest, SimplifiedLayerNormalizationBodyMatchesKernel) {
  struct Layout {
    Shape x, scale;
    int64_t axis;  // 99: left out (-1)
  };
  const std::vector<Layout> layouts = {{{2, 3, 8}, {8}, 99}, {{2, 3, 8}, {3, 8}, 1}, {{4, 16}, {4, 16}, 0}};
  Draw draw(31001);
  std::vector<ContribCase> cases;
  auto add = [&](DataType x_type, DataType scale_type, const Layout& layout, float epsilon, bool with_inv,
                 int64_t stash) {
    ContribCase c{ShapeLabel(layout.x) + " axis=" + std::to_string(layout.axis) + " scale " +
                      ShapeLabel(layout.scale) + " epsilon=" + std::to_string(epsilon) +
                      (with_inv ? " +inv_std_var " : " ") + std::string(DataTypeName(x_type)) + "/" +
                      std::string(DataTypeName(scale_type)),
                  "SimplifiedLayerNormalization",
                  {},
                  {draw.Make(x_type, layout.x, -2, 2), draw.Make(scale_type, layout.scale, 0.5, 1.5)},
                  {true, with_inv},
                  {}};
    if (layout.axis != 99) c.attributes.push_back(IntAttr("axis", layout.axis));
    if (epsilon != 0.0f) c.attributes.push_back(FloatAttr("epsilon", epsilon));
    if (stash != 0) c.attributes.push_back(IntAttr("stash_type", stash));
    const int64_t rank = static_cast<int64_t>(layout.x.size());
    const int64_t axis = layout.axis == 99 ? rank - 1 : (layout.axis + rank) % rank;
    c.facts.reduced_length = 1;
    for (size_t d = static_cast<size_t>(axis); d < layout.x.size(); ++d) c.facts.reduced_length *= layout.x[d];
    cases.push_back(std::move(c));
  };
  for (DataType dtype : kFloatTypes) {
    for (const Layout& layout : layouts) {
      for (float epsilon : {0.0f, 1e-2f}) {  // 0: left out (1e-5)
        for (bool with_inv : {false, true}) add(dtype, dtype, layout, epsilon, with_inv, 0);
      }
    }
  }
  for (const Layout& layout : layouts) add(DataType::kDouble, DataType::kDouble, layout, 0.0f, true, 11);
  add(DataType::kFloat16, DataType::kFloat, layouts[0], 0.0f, true, 0);
  add(DataType::kBfloat16, DataType::kFloat, layouts[1], 0.0f, true, 0);
  // Outputs compared: 36 cases, half with inv_std_var (54), then 5 with it (10).
  EXPECT_EQ(ExpectBodiesMatchKernels(cases), 64);
}

// The Skip operators over input [2, 3, 8] with skip [2, 3, 8], [1, 3, 8] and
// [3, 8]; bias (and, for SkipLayerNormalization, beta) given or absent; the
// three output selections; plus a 2-D input with epsilon 1e-2. Input in
// [-2, 2], skip in [-1, 1], gamma in [0.5, 1.5], beta and bias in [-0.5, 0.5].
std::vector<ContribCase> SkipCases(const std::string& op, bool with_beta_input, uint32_t seed) {
  Draw draw(seed);
  std::vector<ContribCase> cases;
  const Shape input_shape = {2, 3, 8};
  const int64_t hidden = 8;
  for (DataType dtype : kFloatTypes) {
    for (const Shape& skip_shape : {Shape{2, 3, 8}, Shape{1, 3, 8}, Shape{3, 8}}) {
      for (bool beta : with_beta_input ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
        for (bool bias : {false, true}) {
          for (const std::vector<bool>& outputs : kSkipOutputs) {
            ContribCase c{"skip " + ShapeLabel(skip_shape) + (beta ? " beta" : "") + (bias ? " bias" : "") +
                              " outputs=" + std::to_string(outputs.size()) +
                              (outputs.size() == 4 && !outputs[1] ? "(sum)" : "") +
                              " " + std::string(DataTypeName(dtype)),
                          op,
                          {},
                          {draw.Make(dtype, input_shape, -2, 2), draw.Make(dtype, skip_shape, -1, 1),
                           draw.Make(dtype, {hidden}, 0.5, 1.5)},
                          outputs,
                          {}};
            if (with_beta_input) {
              c.inputs.push_back(beta ? std::optional<Tensor>(draw.Make(dtype, {hidden}, -0.5, 0.5)) : std::nullopt);
            }
            if (bias) c.inputs.push_back(draw.Make(dtype, {hidden}, -0.5, 0.5));
            c.facts.reduced_length = hidden;
            cases.push_back(std::move(c));
          }
        }
      }
    }
    ContribCase flat{"2-D epsilon=0.01 " + std::string(DataTypeName(dtype)),
                     op,
                     {FloatAttr("epsilon", 1e-2f)},
                     {draw.Make(dtype, {6, 16}, -2, 2), draw.Make(dtype, {6, 16}, -1, 1),
                      draw.Make(dtype, {16}, 0.5, 1.5)},
                     {true, true, true, true},
                     {}};
    flat.facts.reduced_length = 16;
    cases.push_back(std::move(flat));
  }
  return cases;
}

TEST(ContribBodiesTest, SkipLayerNormalizationBodyMatchesKernel) {
  // Outputs compared per dtype: 12 input variants x (1 + 4 + 2), and 4 for the 2-D case.
  EXPECT_EQ(ExpectBodiesMatchKernels(SkipCases("SkipLayerNormalization", true, 31002)), 3 * (12 * 7 + 4));
}

TEST(ContribBodiesTest, SkipSimplifiedLayerNormalizationBodyMatchesKernel) {
  EXPECT_EQ(ExpectBodiesMatchKernels(SkipCases("SkipSimplifiedLayerNormalization", false, 31003)), 3 * (6 * 7 + 4));
}

}  // namespace
}  // namespace parity
