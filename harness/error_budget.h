// Error budgets (spec/tolerance.md, "Error budgets"): the reference's runs of
// one data set that judge a backend beyond its per-operator tolerance, and
// the comparison of one output under the tolerance, the budget and, for
// expected outputs from elsewhere, the source's own rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case_reader.h"
#include "harness/compare.h"
#include "reference/eval/evaluator.h"
#include "reference/model/loader.h"

namespace parity {

// The reference's runs of one data set's inputs, each made on first use and
// kept: the reference itself (the ground truth where a case's expected
// outputs come from elsewhere), the double result (Arithmetic::kWide) and
// the conventional run (Arithmetic::kConventional). Not thread-safe.
class ReferenceRuns {
 public:
  ReferenceRuns(const LoadedModel& model, std::vector<Value> inputs, double timeout_seconds);
  // The outputs of the run in `arithmetic`, or why it could not be made.
  const StatusOr<std::vector<Value>>& Get(Arithmetic arithmetic);
  // Records outputs already computed in the reference arithmetic (parity
  // eval's own run), so they are not computed again.
  void SetReference(std::vector<Value> outputs);

 private:
  const LoadedModel& model_;
  std::vector<Value> inputs_;
  double timeout_seconds_;
  std::optional<StatusOr<std::vector<Value>>> runs_[3];
};

// Whether a case's expected outputs come from elsewhere than the reference:
// a folder without case.json (ONNX's backend-test layout, read as ONNX's
// runner reads it) or a case.json whose "source" is not "reference".
bool ExpectedFromElsewhere(const CaseInfo& info);

// The tolerance a case's source declares for its own values: case.json's
// "tolerance" rtol and atol where given, else the runner of ONNX's backend
// tests' (TolerancePolicy::onnx_runner); no ULP allowance, as assert_allclose
// has none; for ONNX's own tests, a bfloat16 output takes at least the
// runner's bfloat16 rtol. Non-floating outputs stay exact. `base` gives the
// mistrust rule.
Tolerance SourceTolerance(const CaseInfo& info, const TolerancePolicy& policy, const Tolerance& base, DataType dtype);

// One output judged against one expected value: first by `tol` (the floor);
// where elements fail it and `runs` can give the double result and the
// conventional run for graph output `output_index`, again with the budget.
// `record` gets the journal's fields: the error statistics, "decided_by"
// ("tolerance", "budget" or, when the budget could not be formed, why) and,
// when the budget was tried, "budget": {"factor", "conventional_error",
// "allowance", "error_vs_double"}.
OutputComparison CompareWithBudget(const Value& expected, const Value& actual, const Tolerance& tol,
                                   const BudgetRule& rule, ReferenceRuns* runs, size_t output_index,
                                   nlohmann::json& record);

}  // namespace parity
