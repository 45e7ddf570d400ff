// Result states and the per-case record of the results journal
// (results.jsonl, one JSON object per line) and its summary (summary.json).
// The formats are specified in spec/results.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/core/status.h"

namespace parity {

// The version of ONNX Parity written into every summary.
inline constexpr const char* kParityVersion = "0.2.0";

// DESIGN.md, "Result states".
enum class CaseState { kPass, kFail, kUnsupported, kSkip, kXfail, kXpass, kCrash, kTimeout, kError, kMistrusted, kFellBack };
const char* CaseStateName(CaseState state);
std::optional<CaseState> CaseStateFromName(const std::string& name);
// States that make a backend non-conformant, or that signal a stale
// expectation (XPASS); ERROR is infrastructure and never counts against it.
bool FailsGate(CaseState state);

// One step of a stateful case (a data set run on the case's one session).
struct StepRecord {
  int step = 0;       // the data set's number: test_data_set_<step>
  double run_ms = 0;  // the adapter's run call, milliseconds
  // The worker's peak resident memory during this run alone, and its
  // resident memory after it, KiB (RunDone); unset where the worker cannot tell.
  std::optional<int64_t> run_peak_rss_kb;
  std::optional<int64_t> rss_kb;
  std::vector<std::string> compared;  // the outputs compared at this step, by name
  // The largest ULP error among them (0: every compared output equals its
  // expected value bit for bit); unset when nothing was compared.
  std::optional<double> max_ulp_error;
};

struct CaseResult {
  std::string name;
  std::string suite;
  std::string dir;
  std::string op;  // the operator the case is about
  std::string adapter;
  std::string device;
  CaseState state = CaseState::kError;
  std::string message;      // why it is not a PASS; empty for a PASS
  std::string expectation;  // the reason of the matching expectations entry, if any
  std::optional<double> load_ms_cold;  // first session creation, milliseconds
  std::vector<double> load_ms_warm;    // each warm repeat, milliseconds
  double run_ms = 0;                   // all data sets
  nlohmann::json outputs = nlohmann::json::array();    // per output: verdict and error statistics
  nlohmann::json variants = nlohmann::json::array();   // {"entry", "chosen"} per variant entry
  // Variant targets sent with the session options, preferred first; unset
  // when the case never reached session creation.
  std::optional<std::vector<std::string>> variant_targets;
  // For a model with variant entries: the entry ids the adapter had to
  // select (case.json's pinned selection, else the reference's resolution).
  std::optional<std::vector<std::string>> variants_expected;
  // For a model with variant entries: session creation of the same model
  // with its entries stripped, cold and each warm repeat, milliseconds.
  std::optional<double> load_ms_stripped_cold;
  std::vector<double> load_ms_stripped_warm;
  // Why that measurement failed or is incomplete (refused, crashed, hung);
  // empty when it went well. Never changes the case's state.
  std::string load_ms_stripped_error;
  nlohmann::json placement = nlohmann::json::object(); // device -> node count
  // A stateful case (case.json "steps"): "every" or "last", which steps got
  // the kept outputs back (spec/results.md); empty for other cases.
  std::string state_readback;
  std::vector<StepRecord> steps;  // the steps that ran, in order; stateful cases only
  std::string repro;  // one command that reproduces this case
  // The gate must see this case: a state that fails it, or one the
  // expectations did not foresee (set by ApplyExpectation's caller).
  bool gate_failure = false;
};

nlohmann::json ToJson(const CaseResult& result);
// JSON text of `j`; bytes that are not UTF-8 (an adapter's message, a
// worker's log, a folder name) become U+FFFD instead of aborting the dump.
std::string DumpJson(const nlohmann::json& j, int indent = -1);
// Quotes a word for a POSIX shell when it needs it, for repro lines.
std::string ShellQuote(const std::string& word);
// Reads a journal line back; only the fields a summary and a resumed run
// need must be present (case, suite, dir, state).
StatusOr<CaseResult> CaseResultFromJson(const nlohmann::json& line);

// {"median", "min", "max", "repeats"} of a list of timings; null when empty.
nlohmann::json TimingStats(std::vector<double> values);

// One case of a model with variant entries, for the comparison of its
// session creation with that of its stripped twin (summary.json's
// "variant_load_ms"): each time in milliseconds, the warm ones the median of
// the case's warm repeats.
struct VariantLoadSample {
  std::optional<double> cold, warm, stripped_cold, stripped_warm;
};
// {"cases", "cold", "warm_median", "stripped_cold", "stripped_warm_median",
// "cold_ratio", "warm_ratio"} over the samples; null when no sample has both
// cold times. Ratios are the medians of the per-case ratios (with entries /
// stripped), over the cases that have both times.
nlohmann::json VariantLoadStats(const std::vector<VariantLoadSample>& samples);

// Counts by state, overall, per operator and per suite, and load-time statistics.
struct Summary {
  std::map<std::string, int> by_state;
  std::map<std::string, std::map<std::string, int>> by_operator;  // op -> state -> count
  std::map<std::string, std::map<std::string, int>> by_suite;     // suite -> state -> count
  std::vector<double> load_ms_cold;
  std::vector<double> load_ms_warm_median;  // one per case that had warm repeats
  std::vector<VariantLoadSample> variant_load;  // one per case with a stripped twin measured
  int total = 0;
  void Add(const CaseResult& result);
  nlohmann::json ToJson() const;
};

}  // namespace parity
