// Comparison of an adapter's output with the reference's expected output,
// under a tolerance read from data (spec/tolerance.json, spec/tolerance.md).
//
// The policy gives each (operator, output type, shape) a Tolerance; a case's
// case.json and an adapter's entry in the policy may widen or narrow it, each
// with a written reason. CompareValues then checks every element and returns
// the error statistics that the results journal records per case.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/core/dtype.h"
#include "reference/core/status.h"
#include "reference/core/value.h"

namespace parity {

// When a matching output is too uninformative to count as a PASS (DESIGN.md,
// "MISTRUSTED"; the zero-trust idea of oneDNN's benchdnn). An output of at
// least `min_elements` whose expected elements are more than `zero_fraction`
// zeros, or all equal, is degenerate.
struct MistrustRule {
  bool enabled = true;
  int64_t min_elements = 16;
  double zero_fraction = 0.9;
};

// An element passes when |actual - expected| <= atol + rtol * |expected|, or
// when the two are at most `ulp` steps apart in the output type's own value
// lattice. NaN, infinities and signed zeros follow the fixed rules of
// spec/tolerance.md whatever the numbers here say. Integer outputs pass when
// |actual - expected| <= atol (so atol < 1 means exact); bool and string
// outputs always compare exactly.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
  int64_t ulp = 0;
  bool signed_zero = false;  // true: -0 and +0 differ
  MistrustRule mistrust;
  std::string reason;  // where these numbers come from, for the results journal
};

// Shape facts that the policy's formulas scale with. The caller (who knows
// the operator) fills them in; 1 means "no such dimension".
struct ShapeFacts {
  int64_t reduced_length = 1;  // n: elements folded into one output (reductions, softmax axis, kv length)
  int64_t inner_dim = 1;       // k: the contracted dimension of a matrix product or convolution
};

// The error budget (spec/tolerance.md, "Error budgets"): an element that
// fails its tolerance still passes when its error against the reference's
// double result is at most `factor` times the largest error of the
// conventional low-precision run of the same graph, plus the tolerance's
// own atol and rtol. A pass that needed a budget of at least
// `mistrust_ratio` times the output's largest magnitude is MISTRUSTED: a
// conventional run that far off cannot tell a right answer from a wrong one.
struct BudgetRule {
  double factor = 2.0;
  double mistrust_ratio = 1.0;
  std::string reason;
};

// Where a source other than the reference declares how its own expected
// values are compared (spec/tolerance.md, "Expected outputs from elsewhere"):
// the runner of ONNX's backend tests compares with numpy's assert_allclose,
// rtol 1e-3 and atol 1e-7 unless a test says otherwise.
struct SourceRule {
  double rtol = 1e-3;
  double atol = 1e-7;
  double bfloat16_rtol = 0.015625;  // the runner's least rtol for bfloat16 outputs
  std::string reason;
};

class TolerancePolicy {
 public:
  // Reads and validates the policy; a bad file is an error that names the
  // offending key, never a silent default.
  static StatusOr<TolerancePolicy> Load(const std::string& path);
  static StatusOr<TolerancePolicy> Parse(const std::string& json_text);

  // The tolerance for an output of `dtype` produced by `op_type` (the
  // operator the case is about), after the rules for `adapter` (empty: none).
  // Integer, bool and string outputs always get the exact tolerance.
  Tolerance For(std::string_view op_type, DataType dtype, const ShapeFacts& facts,
                std::string_view adapter = "") const;

  // Applies a case.json "tolerance" object: keys ulp, atol, rtol (numbers),
  // signed_zero, mistrust (false or {min_elements, zero_fraction}) and a
  // mandatory non-empty "reason". Unknown keys are rejected by name.
  static StatusOr<Tolerance> ApplyOverride(Tolerance base, const nlohmann::json& override_object);
  // The keys ApplyOverride knows, and those of "mistrust" as "mistrust.KEY".
  static std::vector<std::string> OverrideKeyPaths();

  // The family `op_type` belongs to; the policy's default family when the
  // operator is not listed (see IsListed).
  const std::string& FamilyOf(std::string_view op_type) const;
  // The policy's "budget" and "onnx_runner" entries.
  const BudgetRule& budget() const { return budget_; }
  const SourceRule& onnx_runner() const { return onnx_runner_; }
  bool IsListed(std::string_view op_type) const { return op_family_.find(op_type) != op_family_.end(); }

 private:
  // base + u * (c_u + c_sqrt_n * sqrt(n) + c_n * n + c_sqrt_k * sqrt(k) + c_k * k),
  // u being the unit roundoff of the output type (or of the accumulation type).
  struct Bound {
    double base = 0, u = 0, u_sqrt_n = 0, u_n = 0, u_sqrt_k = 0, u_k = 0;
  };
  // One layer of the policy; unset fields leave the layer below unchanged.
  struct Entry {
    // The type whose unit roundoff u the formulas use: the type a correct
    // backend accumulates in (float32 for float16 outputs); default the output type.
    std::optional<DataType> accumulation_type;
    std::optional<int64_t> ulp;
    std::optional<Bound> atol, rtol;
    std::optional<bool> signed_zero;
    std::optional<MistrustRule> mistrust;
    std::string reason;
  };
  struct Family {
    std::string reason;
    Entry defaults;
    std::map<DataType, Entry> by_dtype;
  };
  // Applies when every non-empty list matches (an empty list matches all).
  struct Rule {
    std::vector<std::string> ops, families;
    std::vector<DataType> dtypes;
    Entry entry;
  };
  class Parser;

  std::map<DataType, double> unit_roundoff_;
  BudgetRule budget_;
  SourceRule onnx_runner_;
  MistrustRule mistrust_;
  bool signed_zero_default_ = false;
  std::string default_family_;
  std::map<std::string, Family, std::less<>> families_;
  std::map<std::string, std::string, std::less<>> op_family_;
  std::vector<Rule> rules_;
  std::map<std::string, std::vector<Rule>, std::less<>> adapter_rules_;
};

enum class CompareVerdict { kMatch, kMismatch, kMistrusted };
const char* CompareVerdictName(CompareVerdict verdict);  // "match", "mismatch", "mistrusted"

// Error statistics over every compared element (DESIGN.md, "Measured per
// case"). Errors of an element that breaks a NaN or infinity rule are +inf.
// ULP error is the distance in the output type's lattice (integers: the
// difference). For complex outputs each component counts on its own.
struct ErrorStats {
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  double max_ulp_error = 0.0;
  int64_t mismatches = 0;
  int64_t elements = 0;
  int64_t budget_elements = 0;        // elements that failed the tolerance and passed by the budget
  int64_t first_mismatch_index = -1;  // flat index; for sequences, over the elements laid end to end
  std::string first_mismatch;         // "at [1,2] (flat 5): expected 1.5 (0x3fc00000) got 1.25 (0x3fa00000)"
};

struct OutputComparison {
  CompareVerdict verdict = CompareVerdict::kMatch;
  ErrorStats stats;
  std::string message;  // why it is not a match, or why it is mistrusted; empty for a match
};

// Shapes and element types must match exactly (expected outputs are written
// in the output type, so they are already rounded to it). Sequences compare
// element by element and must have the same length; optionals must both be
// empty or both hold a value. The verdict of a sequence or optional is the
// worst of its parts (mismatch, then mistrusted, then match).
//
// With `budget`, a floating tensor's element whose numbers fail the
// tolerance passes when |actual - wide| <= allowance + atol + rtol * |wide|,
// `wide` being the double result (BudgetRule); NaN and infinities keep their
// fixed rules. Counted in ErrorStats::budget_elements.
struct ElementBudget {
  const Tensor* wide = nullptr;  // float64, the shape of the expected output
  double allowance = 0;          // factor * the conventional run's largest error
};
OutputComparison CompareValues(const Value& expected, const Value& actual, const Tolerance& tol,
                               const ElementBudget* budget = nullptr);

// Distance between two values of a floating-point type in that type's value
// lattice (adjacent representable values are 1 apart; -0 and +0 are 0 apart).
// `expected_bits`/`actual_bits` are bit patterns in the type's own encoding.
// Exposed for tests and for tools that explain a failure.
uint64_t UlpDistance(DataType type, uint64_t expected_bits, uint64_t actual_bits);

// {"max_abs_error": ..., "max_rel_error": ..., "max_ulp_error": ...,
//  "mismatches": ..., "elements": ..., "first_mismatch_index": ...,
//  "first_mismatch": ...}; a non-finite error is written as the string "inf"
// (JSON has no infinity), and first_mismatch is null when there is none.
nlohmann::json ToJson(const ErrorStats& stats);

}  // namespace parity
