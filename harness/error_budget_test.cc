#include "harness/error_budget.h"

#include <cmath>

#include <gtest/gtest.h>

#include "reference/model/text_syntax.h"

namespace parity {
namespace {

LoadedModel Model(const std::string& text) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  return LoadedModel{std::make_shared<onnx::ModelProto>(std::move(proto).value()), "m.onnx", ""};
}

Value Values(Shape shape, const std::vector<double>& values, DataType type) {
  StatusOr<Tensor> t = Tensor::FromDoubles(type, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return Value::FromTensor(std::move(t).value());
}

// y = sum over 4096 values of x*x in float16: the reference rounds the sum
// once; a float32-accumulating conventional run and a float16 output differ.
const char* kSquares = R"(
  <ir_version: 10, opset_import: ["" : 18]>
  g (float16[4096] x) => (float16[1] y) {
    s = Mul (x, x)
    y = ReduceSum <keepdims: int = 1> (s)
  })";

std::vector<double> Ramp(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.001 * ((i * 7919) % 1000) - 0.5;
  return v;
}

Tolerance Exact() { return Tolerance{}; }

TEST(ReferenceRunsTest, TheWideRunKeepsFloat64AndTheConventionalRunTheDeclaredType) {
  const LoadedModel model = Model(kSquares);
  ReferenceRuns runs(model, {Values({4096}, Ramp(4096), DataType::kFloat16)}, 0);
  const auto& wide = runs.Get(Arithmetic::kWide);
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ((*wide)[0].tensor().dtype(), DataType::kDouble);
  const auto& conventional = runs.Get(Arithmetic::kConventional);
  ASSERT_TRUE(conventional.ok()) << conventional.status().ToString();
  EXPECT_EQ((*conventional)[0].tensor().dtype(), DataType::kFloat16);
  const auto& reference = runs.Get(Arithmetic::kReference);
  ASSERT_TRUE(reference.ok());
  // The reference rounds x*x to float16 (the node's output), then sums exactly;
  // the double result keeps x*x exact; so the two differ, by little.
  const double d = (*wide)[0].tensor().GetDouble(0);
  const double r = (*reference)[0].tensor().GetDouble(0);
  EXPECT_NE(d, r);
  EXPECT_NEAR(d, r, 1e-2 * std::fabs(d));
}

TEST(ReferenceRunsTest, ConventionalSumsRoundToFloat32AtEveryStep) {
  // 2^24 + 1 + 1 + ...: in float32 each +1 is lost; in double it is not.
  const LoadedModel model = Model(R"(
    <ir_version: 10, opset_import: ["" : 18]>
    g (float[5] x) => (float[1] y) { y = ReduceSum <keepdims: int = 1> (x) })");
  ReferenceRuns runs(model, {Values({5}, {16777216.0, 1, 1, 1, 1}, DataType::kFloat)}, 0);
  const auto& reference = runs.Get(Arithmetic::kReference);
  const auto& conventional = runs.Get(Arithmetic::kConventional);
  ASSERT_TRUE(reference.ok() && conventional.ok());
  EXPECT_EQ((*reference)[0].tensor().GetDouble(0), 16777220.0);
  EXPECT_EQ((*conventional)[0].tensor().GetDouble(0), 16777216.0);
}

TEST(CompareWithBudgetTest, AnErrorWithinTheBudgetPassesAndSaysSo) {
  const LoadedModel model = Model(kSquares);
  const Value x = Values({4096}, Ramp(4096), DataType::kFloat16);
  ReferenceRuns runs(model, {x}, 0);
  const Value expected = (*runs.Get(Arithmetic::kReference))[0];
  const double d = (*runs.Get(Arithmetic::kWide))[0].tensor().GetDouble(0);
  const double c = (*runs.Get(Arithmetic::kConventional))[0].tensor().GetDouble(0);
  const double conventional_error = std::fabs(c - d);
  ASSERT_GT(conventional_error, 0.0);
  BudgetRule rule;  // factor 2
  // Within 1.5 times the conventional error of d, but not the expected value itself.
  const Value inside = Values({1}, {d + 1.5 * conventional_error}, DataType::kFloat16);
  nlohmann::json record;
  OutputComparison cmp = CompareWithBudget(expected, inside, Exact(), rule, &runs, 0, record);
  if (inside.tensor().GetDouble(0) != expected.tensor().GetDouble(0)) {
    EXPECT_EQ(cmp.verdict, CompareVerdict::kMatch) << cmp.message << " " << record.dump();
    EXPECT_EQ(record["decided_by"], "budget") << record.dump();
    EXPECT_DOUBLE_EQ(record["budget"]["conventional_error"].get<double>(), conventional_error);
  }
  // Ten times the conventional error is beyond the budget.
  const Value outside = Values({1}, {d + 10 * conventional_error + 1e-3 * std::fabs(d)}, DataType::kFloat16);
  cmp = CompareWithBudget(expected, outside, Exact(), rule, &runs, 0, record);
  EXPECT_EQ(cmp.verdict, CompareVerdict::kMismatch);
  EXPECT_NE(cmp.message.find("beyond the budget too"), std::string::npos) << cmp.message;
}

TEST(CompareWithBudgetTest, ExpectedValuesThatAreNotTheReferencesGetNoBudget) {
  const LoadedModel model = Model(kSquares);
  ReferenceRuns runs(model, {Values({4096}, Ramp(4096), DataType::kFloat16)}, 0);
  const Value right = (*runs.Get(Arithmetic::kReference))[0];
  const Value stale = Values({1}, {right.tensor().GetDouble(0) * 2 + 1}, DataType::kFloat16);
  nlohmann::json record;
  // The actual output is the right one; the stale file must still fail it.
  const OutputComparison cmp = CompareWithBudget(stale, right, Exact(), BudgetRule{}, &runs, 0, record);
  EXPECT_EQ(cmp.verdict, CompareVerdict::kMismatch);
  EXPECT_NE(record["decided_by"].get<std::string>().find("not the reference's output"), std::string::npos)
      << record.dump();
}

TEST(CompareWithBudgetTest, AMatchThatNeedsABudgetAsLargeAsTheOutputIsMistrusted) {
  const LoadedModel model = Model(kSquares);
  ReferenceRuns runs(model, {Values({4096}, Ramp(4096), DataType::kFloat16)}, 0);
  const Value expected = (*runs.Get(Arithmetic::kReference))[0];
  const double d = (*runs.Get(Arithmetic::kWide))[0].tensor().GetDouble(0);
  BudgetRule rule;
  rule.factor = 1e6;  // an allowance far beyond |d|
  const Value off = Values({1}, {d * 1.5}, DataType::kFloat16);
  nlohmann::json record;
  const OutputComparison cmp = CompareWithBudget(expected, off, Exact(), rule, &runs, 0, record);
  EXPECT_EQ(cmp.verdict, CompareVerdict::kMistrusted) << cmp.message;
  EXPECT_NE(cmp.message.find("too far off"), std::string::npos) << cmp.message;
}

TEST(CompareWithBudgetTest, IntegerOutputsAndMissingRunsKeepTheTolerance) {
  const Value e = Values({2}, {1, 2}, DataType::kInt32);
  const Value a = Values({2}, {1, 3}, DataType::kInt32);
  nlohmann::json record;
  const OutputComparison cmp = CompareWithBudget(e, a, Exact(), BudgetRule{}, nullptr, 0, record);
  EXPECT_EQ(cmp.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(record["decided_by"], "tolerance");
}

TEST(SourceToleranceTest, AFolderWithoutCaseJsonIsJudgedAsOnnxsRunnerJudgesIt) {
  CaseInfo info;  // no case.json
  EXPECT_TRUE(ExpectedFromElsewhere(info));
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Load(std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  Tolerance base;
  base.ulp = 4;
  const Tolerance f32 = SourceTolerance(info, *policy, base, DataType::kFloat);
  EXPECT_EQ(f32.ulp, 0);
  EXPECT_DOUBLE_EQ(f32.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(f32.atol, 1e-7);
  EXPECT_DOUBLE_EQ(SourceTolerance(info, *policy, base, DataType::kBfloat16).rtol, 0.015625);
  info.case_file.present = true;
  EXPECT_FALSE(ExpectedFromElsewhere(info));  // the reference wrote it
  info.case_file.source = "pytorch-eager";
  info.case_file.tolerance = nlohmann::json{{"rtol", 1.3e-6}, {"atol", 1e-5}, {"reason", "assert_close"}};
  EXPECT_TRUE(ExpectedFromElsewhere(info));
  const Tolerance eager = SourceTolerance(info, *policy, base, DataType::kBfloat16);
  EXPECT_DOUBLE_EQ(eager.rtol, 1.3e-6);  // the bfloat16 floor is the ONNX runner's, not every source's
  EXPECT_DOUBLE_EQ(eager.atol, 1e-5);
}

}  // namespace
}  // namespace parity
