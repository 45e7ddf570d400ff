// Every malformed model gets an error status with the expected words, from
// loading, validation or the evaluator — never a crash. CI runs this test
// under AddressSanitizer and UndefinedBehaviorSanitizer.
#include "reference/model/malformed_models.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "reference/eval/evaluator.h"
#include "reference/model/loader.h"
#include "reference/model/validator.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

std::string FirstError(const std::string& path) {
  StatusOr<LoadedModel> model = LoadModelFile(path);
  if (!model.ok()) return model.status().ToString();
  std::vector<Status> problems = ValidateModel(*model);
  if (!problems.empty()) return problems[0].ToString();
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(*model, WithReferenceKernels());
  if (!evaluator.ok()) return evaluator.status().ToString();
  StatusOr<Tensor> x = Tensor::FromDoubles(DataType::kFloat, {4}, {1, -2, 3, -4});
  StatusOr<std::vector<Value>> out = (*evaluator)->Run({Value::FromTensor(*x)});
  return out.ok() ? "" : out.status().ToString();
}

TEST(MalformedModelsTest, EachGetsItsOwnClearError) {
  const std::string dir = ::testing::TempDir() + "/parity_malformed";
  std::filesystem::remove_all(dir);
  StatusOr<std::vector<MalformedModel>> models = WriteMalformedModels(dir);
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  ASSERT_GE(models->size(), 18u);
  for (const MalformedModel& m : *models) {
    const std::string error = FirstError(dir + "/" + m.name + "/model.onnx");
    EXPECT_NE(error.find(m.expect), std::string::npos)
        << m.name << " (" << m.description << "): expected an error containing '" << m.expect << "', got '"
        << error << "'";
  }
}

TEST(MalformedModelsTest, BaseModelRunsWhenUnbroken) {
  // The external-data model whose file is in range and inside the folder runs.
  const std::string dir = ::testing::TempDir() + "/parity_malformed_ok";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WriteMalformedModels(dir).ok());
  // external_out_of_range with its offset removed is a valid model: rewrite it.
  StatusOr<LoadedModel> model = LoadModelFile(dir + "/external_out_of_range/model.onnx");
  ASSERT_TRUE(model.ok());
  onnx::ModelProto fixed = *model->proto;
  fixed.mutable_graph()->mutable_initializer(0)->mutable_external_data()->RemoveLast();
  LoadedModel loaded{std::make_shared<onnx::ModelProto>(fixed), "fixed", dir + "/external_out_of_range"};
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(loaded, WithReferenceKernels());
  ASSERT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  StatusOr<Tensor> x = Tensor::FromDoubles(DataType::kFloat, {4}, {1, -2, 3, -4});
  StatusOr<std::vector<Value>> out = (*evaluator)->Run({Value::FromTensor(*x)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetDouble(1), -2.0);  // x + 0
}

}  // namespace
}  // namespace parity
