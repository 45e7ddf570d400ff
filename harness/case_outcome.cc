// Comparison of data sets and the expectations' say on a case's state.
#include "harness/case_outcome.h"

namespace parity {

namespace {

// The operator case.json names for one output, or "".
std::string OutputOperator(const CaseInfo& info, const std::string& output) {
  const auto found = info.case_file.output_operators.find(output);
  return found == info.case_file.output_operators.end() ? "" : found->second;
}

}  // namespace

OutputFacts OutputOperatorFacts(const CaseInfo& info, const onnx::ModelProto& model, const KnownDims& dims,
                                const KnownInts& ints) {
  OutputFacts facts;
  for (const auto& [output, op] : info.case_file.output_operators) {
    if (!facts.count(op)) facts[op] = ShapeFactsFor(model, op, dims, ints);
  }
  return facts;
}

bool CompareDataSet(const DataSet& set, const std::vector<Value>& actual, const std::vector<std::string>& output_names,
                    const TolerancePolicy& policy, const ShapeFacts& facts, const CaseInfo& info,
                    std::string_view adapter, CaseResult& r, const OutputFacts& output_facts, ReferenceRuns* runs) {
  if (actual.size() != set.outputs.size()) {
    r.state = CaseState::kFail;
    r.message = StrCat("produced ", actual.size(), " outputs, expected ", set.outputs.size());
    return false;
  }
  const bool elsewhere = ExpectedFromElsewhere(info);
  r.outputs = nlohmann::json::array();
  for (size_t k = 0; k < set.outputs.size(); ++k) {
    const Value& expected = set.outputs[k];
    // A stateful step may compare some outputs only: name them by their graph index.
    const size_t index = k < set.output_index.size() ? static_cast<size_t>(set.output_index[k]) : k;
    const std::string name = index < output_names.size() ? output_names[index] : StrCat("#", index);
    const DataType dtype = expected.is_tensor() ? expected.tensor().dtype() : DataType::kUndefined;
    const std::string output_op = OutputOperator(info, name);
    const auto own_facts = output_facts.find(output_op);
    const bool own = !output_op.empty() && own_facts != output_facts.end();
    const ShapeFacts& used_facts = own ? own_facts->second : facts;
    Tolerance tol = policy.For(own ? output_op : r.op, dtype, used_facts, adapter);
    if (info.case_file.tolerance && !elsewhere) {
      // Checked when case.json was read; an error here is still the case's.
      StatusOr<Tolerance> overridden = TolerancePolicy::ApplyOverride(tol, *info.case_file.tolerance);
      if (!overridden.ok()) {
        r.state = CaseState::kError;
        r.message = overridden.status().WithContext(info.dir + "/case.json").ToString();
        return false;
      }
      tol = *overridden;
    }
    nlohmann::json out;
    OutputComparison cmp;
    if (!elsewhere) {
      cmp = CompareWithBudget(expected, actual[k], tol, policy.budget(), runs, index, out);
    } else {
      // Values from elsewhere: against the case's files by the source's own
      // rule, and against the reference by the policy (spec/tolerance.md,
      // "Expected outputs from elsewhere"). Both must hold.
      const Tolerance source_tol = SourceTolerance(info, policy, tol, dtype);
      cmp = CompareValues(expected, actual[k], source_tol);
      out = ToJson(cmp.stats);
      out["decided_by"] = "source";
      nlohmann::json against;
      const StatusOr<std::vector<Value>>* reference = runs ? &runs->Get(Arithmetic::kReference) : nullptr;
      if (!reference) {
        against["decided_by"] = "not compared: the reference cannot run this step on its own";
      } else if (!reference->ok()) {
        against["decided_by"] = "not compared: the reference failed: " + reference->status().ToString();
      } else if (index >= (*reference)->size()) {
        against["decided_by"] = "not compared: the reference gave no such output";
      } else {
        const OutputComparison by_reference =
            CompareWithBudget((**reference)[index], actual[k], tol, policy.budget(), runs, index, against);
        against["verdict"] = CompareVerdictName(by_reference.verdict);
        if (by_reference.verdict == CompareVerdict::kMismatch && cmp.verdict != CompareVerdict::kMismatch) {
          cmp.verdict = CompareVerdict::kMismatch;
          cmp.message = "against the reference: " + by_reference.message;
        } else if (cmp.verdict == CompareVerdict::kMismatch) {
          cmp.message = StrCat("against the case's values (source ", info.case_file.source.empty()
                                                                         ? std::string("ONNX backend test")
                                                                         : info.case_file.source,
                               ", rtol ", source_tol.rtol, ", atol ", source_tol.atol, "): ", cmp.message);
        }
      }
      out["reference"] = std::move(against);
    }
    out["index"] = index;
    out["name"] = name;
    out["verdict"] = CompareVerdictName(cmp.verdict);
    if (own) out["operator"] = output_op;
    if (used_facts.reduced_length != 1 || used_facts.inner_dim != 1) {
      out["shape_facts"] = {{"n", used_facts.reduced_length}, {"k", used_facts.inner_dim}};
    }
    if (!cmp.message.empty()) out["message"] = cmp.message;
    r.outputs.push_back(std::move(out));
    if (cmp.verdict == CompareVerdict::kMismatch) {
      if (r.state != CaseState::kFail) r.message.clear();
      r.state = CaseState::kFail;
      if (r.message.empty()) r.message = StrCat("output ", index, " '", name, "': ", cmp.message);
    } else if (cmp.verdict == CompareVerdict::kMistrusted && r.state == CaseState::kPass) {
      r.state = CaseState::kMistrusted;
      r.message = StrCat("output ", index, " '", name, "': ", cmp.message);
    }
  }
  return r.state != CaseState::kFail;
}

bool ApplyExpectation(CaseResult& r, const Expectations* expectations) {
  // ERROR is the harness's failure and SKIP the machine's (an absent
  // device), never the backend's (spec/results.md), entry or not.
  if (r.state == CaseState::kError || r.state == CaseState::kSkip) return true;
  if (!expectations) return !FailsGate(r.state);
  const ExpectationEntry* e = expectations->Find(r.name);
  if (!e) return r.state == CaseState::kPass;
  ++e->matched;
  r.expectation = e->reason;
  if (r.state == CaseState::kPass) {
    r.state = CaseState::kXpass;
    r.message = "passes, but the expectations list it: remove the stale entry '" + e->pattern + "'";
    return false;
  }
  if (CaseStateName(r.state) != e->state) {
    r.message = StrCat("expected ", e->state, " by entry '", e->pattern, "', got ", CaseStateName(r.state), ": ",
                       r.message);
    return false;
  }
  if (r.state == CaseState::kFail) r.state = CaseState::kXfail;
  return true;
}

}  // namespace parity
