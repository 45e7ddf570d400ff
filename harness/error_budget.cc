// The reference's runs behind an error budget, and the comparison of one
// output under the tolerance and the budget (spec/tolerance.md).
#include "harness/error_budget.h"

#include <algorithm>
#include <cmath>

#include "reference/ops/reference_registry.h"

namespace parity {

ReferenceRuns::ReferenceRuns(const LoadedModel& model, std::vector<Value> inputs, double timeout_seconds)
    : model_(model), inputs_(std::move(inputs)), timeout_seconds_(timeout_seconds) {}

const StatusOr<std::vector<Value>>& ReferenceRuns::Get(Arithmetic arithmetic) {
  std::optional<StatusOr<std::vector<Value>>>& run = runs_[static_cast<int>(arithmetic)];
  if (run) return *run;
  EvalOptions options;
  options.time_limit_seconds = timeout_seconds_;
  options.arithmetic = arithmetic;
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(model_, WithReferenceKernels(options));
  if (!evaluator.ok()) {
    run = evaluator.status();
  } else {
    run = (*evaluator)->Run(inputs_);
  }
  return *run;
}

void ReferenceRuns::SetReference(std::vector<Value> outputs) {
  runs_[static_cast<int>(Arithmetic::kReference)] = std::move(outputs);
}

bool ExpectedFromElsewhere(const CaseInfo& info) {
  return !info.case_file.present || (!info.case_file.source.empty() && info.case_file.source != "reference");
}

Tolerance SourceTolerance(const CaseInfo& info, const TolerancePolicy& policy, const Tolerance& base,
                          DataType dtype) {
  Tolerance tol;
  tol.signed_zero = false;  // assert_allclose takes -0 == +0
  tol.mistrust = base.mistrust;
  tol.ulp = 0;
  tol.rtol = policy.onnx_runner().rtol;
  tol.atol = policy.onnx_runner().atol;
  tol.reason = "source's tolerance: " + policy.onnx_runner().reason;
  if (info.case_file.tolerance) {
    const nlohmann::json& t = *info.case_file.tolerance;
    if (t.contains("rtol") && t["rtol"].is_number()) tol.rtol = t["rtol"].get<double>();
    if (t.contains("atol") && t["atol"].is_number()) tol.atol = t["atol"].get<double>();
    if (t.contains("mistrust") && t["mistrust"].is_boolean() && !t["mistrust"].get<bool>()) tol.mistrust.enabled = false;
    if (t.contains("reason") && t["reason"].is_string()) {
      tol.reason = "source's tolerance (" + info.case_file.source + "): " + t["reason"].get<std::string>();
    }
  }
  const bool onnx_test = !info.case_file.present || info.case_file.source == "onnx-node";
  if (onnx_test && dtype == DataType::kBfloat16) tol.rtol = std::max(tol.rtol, policy.onnx_runner().bfloat16_rtol);
  return tol;
}

namespace {

constexpr double kInfiniteError = std::numeric_limits<double>::infinity();

nlohmann::json Number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : "inf";
}

// The budget's tensors for graph output `k`, or why there are none.
struct BudgetTensors {
  const Tensor* wide = nullptr;
  const Tensor* conventional = nullptr;
  std::string missing;
};

BudgetTensors FindBudgetTensors(ReferenceRuns& runs, size_t k, const Tensor& expected) {
  BudgetTensors found;
  const StatusOr<std::vector<Value>>& wide = runs.Get(Arithmetic::kWide);
  if (!wide.ok()) {
    found.missing = "no budget: the double run failed: " + wide.status().ToString();
    return found;
  }
  const StatusOr<std::vector<Value>>& conventional = runs.Get(Arithmetic::kConventional);
  if (!conventional.ok()) {
    found.missing = "no budget: the conventional run failed: " + conventional.status().ToString();
    return found;
  }
  if (k >= wide->size() || k >= conventional->size() || !(*wide)[k].is_tensor() || !(*conventional)[k].is_tensor()) {
    found.missing = StrCat("no budget: output ", k, " is not a tensor of both runs");
    return found;
  }
  const Tensor& d = (*wide)[k].tensor();
  const Tensor& c = (*conventional)[k].tensor();
  if (d.shape() != expected.shape() || c.shape() != expected.shape() || d.dtype() != DataType::kDouble) {
    found.missing = StrCat("no budget: the runs give ", d.Description(), " and ", c.Description(), " for ",
                           expected.Description());
    return found;
  }
  found.wide = &d;
  found.conventional = &c;
  return found;
}

}  // namespace

OutputComparison CompareWithBudget(const Value& expected, const Value& actual, const Tolerance& tol,
                                   const BudgetRule& rule, ReferenceRuns* runs, size_t output_index,
                                   nlohmann::json& record) {
  OutputComparison floor = CompareValues(expected, actual, tol);
  record = ToJson(floor.stats);
  record["decided_by"] = "tolerance";
  // float8, float6 and float4 outputs are quantized data, which the double
  // run keeps as they are: no budget.
  const DataType type = expected.is_tensor() ? expected.tensor().dtype() : DataType::kUndefined;
  const bool budget_type = type == DataType::kDouble || IsFloat32OrHalf(type);
  const bool budget_applies = floor.verdict == CompareVerdict::kMismatch && runs && budget_type &&
                              actual.is_tensor() &&
                              expected.tensor().dtype() == actual.tensor().dtype() &&
                              expected.tensor().shape() == actual.tensor().shape();
  if (!budget_applies) return floor;
  const Tensor& e = expected.tensor();
  const Tensor& a = actual.tensor();
  // The budget is measured against the reference's double result, so it
  // holds only for expected values that are the reference's: a stale or
  // edited file must not be excused by a correct backend's nearness to d.
  const StatusOr<std::vector<Value>>& reference = runs->Get(Arithmetic::kReference);
  if (!reference.ok() || output_index >= reference->size()) {
    record["decided_by"] = "tolerance (no budget: the reference's run failed: " +
                           (reference.ok() ? std::string("no such output") : reference.status().ToString()) + ")";
    return floor;
  }
  if (const OutputComparison same = CompareValues(expected, (*reference)[output_index], Tolerance{});
      same.verdict == CompareVerdict::kMismatch) {
    record["decided_by"] = "tolerance (no budget: the expected values are not the reference's output, " +
                           same.message + ")";
    return floor;
  }
  const BudgetTensors runs_of = FindBudgetTensors(*runs, output_index, e);
  if (!runs_of.wide) {
    record["decided_by"] = "tolerance (" + runs_of.missing + ")";
    return floor;
  }
  const Tensor& d = *runs_of.wide;
  const Tensor& c = *runs_of.conventional;
  // The conventional run's largest error against the double result: its
  // error norm (the infinity norm) over the whole output.
  double conventional_error = 0, largest = 0, error_vs_double = 0;
  for (int64_t i = 0; i < e.size(); ++i) {
    const double dv = d.GetDouble(i);
    if (!std::isfinite(dv)) continue;  // NaN and infinities keep their own rules
    const double cv = c.GetDouble(i);
    if (!std::isfinite(cv)) {
      record["decided_by"] = StrCat("tolerance (no budget: the conventional run gives ", cv,
                                    " where the double result is ", dv, ", flat index ", i, ")");
      return floor;
    }
    conventional_error = std::max(conventional_error, std::fabs(cv - dv));
    largest = std::max(largest, std::fabs(dv));
    const double av = a.GetDouble(i);
    error_vs_double = std::max(error_vs_double, std::isfinite(av) ? std::fabs(av - dv) : kInfiniteError);
  }
  const ElementBudget budget{&d, rule.factor * conventional_error};
  OutputComparison judged = CompareValues(expected, actual, tol, &budget);
  nlohmann::json stats = ToJson(judged.stats);
  for (auto& [key, value] : stats.items()) record[key] = value;
  record["decided_by"] = "budget";
  record["tolerance_mismatches"] = floor.stats.mismatches;
  record["budget"] = {{"factor", rule.factor},
                      {"conventional_error", Number(conventional_error)},
                      {"allowance", Number(budget.allowance)},
                      {"error_vs_double", Number(error_vs_double)}};
  if (judged.verdict == CompareVerdict::kMismatch) {
    judged.message += StrCat("; beyond the budget too (largest error against the double result ", error_vs_double,
                             ", allowance ", rule.factor, " x ", conventional_error, " = ", budget.allowance, ")");
    return judged;
  }
  if (budget.allowance >= rule.mistrust_ratio * largest) {
    judged.verdict = CompareVerdict::kMistrusted;
    judged.message = StrCat("passes only by an error budget of ", budget.allowance,
                            ", as large as the output's largest magnitude ", largest, ": the conventional run in ",
                            DataTypeName(e.dtype()), " is too far off to tell a right result from a wrong one");
  }
  return judged;
}

}  // namespace parity
