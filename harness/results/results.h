// The results model (spec/results.md): result states and the gate rule, the
// per-case record, and results.jsonl (one JSON object per line) read and written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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
// The same rule for a state's name; a name that is no state fails nothing.
bool FailsGate(std::string_view state_name);
// State names in the order reports list them: passes first, then what counts
// against the backend, then the rest.
const std::vector<std::string>& StateOrder();
// The operator that counts and reports give a case whose line names none.
inline constexpr const char* kUnknownOperator = "(unknown)";

// What runs copied between the host and the device, and the device memory
// the adapter held (its run_cost, ABI version 5): one run's figures, or
// several runs' added up.
struct RunCost {
  int64_t runs = 0;
  int64_t to_device_copies = 0, to_device_bytes = 0;
  int64_t to_host_copies = 0, to_host_bytes = 0;
  int64_t device_bytes = 0;       // held when the last of the runs returned
  int64_t device_peak_bytes = 0;  // the most held during any of them
  // `run`'s copies and bytes added, its device memory the last, its peak
  // counted when higher.
  void Add(const RunCost& run);
};
nlohmann::json ToJson(const RunCost& cost);
// A "run_cost" object as ToJson writes it; a field of the wrong type is an
// error naming it.
StatusOr<RunCost> RunCostFromJson(const nlohmann::json& j);

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
  std::optional<RunCost> cost;  // this step's run, when the adapter reports it (ABI run_cost)
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
  // Device -> the FLOPs of its nodes at the first data set's input dims, over
  // the nodes whose FLOPs are known (harness/run/placement_flops.h), and how
  // many reported nodes are not; both unset when no placement was reported.
  nlohmann::json placement_flops = nlohmann::json::object();
  std::optional<int64_t> placement_flops_unknown;
  // The backend's compile step within session creation (ABI session_cost),
  // when the adapter reports it: cold, each warm repeat, and the cold
  // creation's kernels made and deferred to the first run.
  std::optional<double> compile_ms_cold;
  std::vector<double> compile_ms_warm;
  std::optional<int64_t> kernels_compiled, kernels_deferred;
  // The runs of the case's data sets (or steps) added up, when the adapter
  // reports what each copied and held on its device (ABI run_cost).
  std::optional<RunCost> run_cost;
  // A stateful case (case.json "steps"): "every" or "last", which steps got
  // the kept outputs back (spec/results.md); empty for other cases.
  std::string state_readback;
  std::vector<StepRecord> steps;  // the steps that ran, in order; stateful cases only
  // `parity eval` only: per data set that ran (by folder name,
  // "test_data_set_0"), the SHA-256 of each actual output in graph order
  // (harness/results/output_digest.h); empty elsewhere and not written.
  nlohmann::json output_sha256 = nlohmann::json::object();
  std::string repro;  // one command that reproduces this case
  // The gate must see this case: a state that fails it, or one the
  // expectations did not foresee (set by ApplyExpectation's caller).
  bool gate_failure = false;

  // A stateful case (case.json "steps"): its line has "steps" and "state_readback".
  bool stateful() const { return !state_readback.empty() || !steps.empty(); }
};

// The gate counts this case: by its state (FailsGate) or by its line's
// "gate_failure" (a state its expectations entry did not foresee).
bool CountsForGate(const CaseResult& result);

nlohmann::json ToJson(const CaseResult& result);
// The line of results.jsonl for `result`, newline included: the one place a
// result line is written (the run's journal, `parity eval`, `parity merge`).
std::string ResultLine(const CaseResult& result);
// JSON text of `j`; bytes that are not UTF-8 (an adapter's message, a
// worker's log, a folder name) become U+FFFD instead of aborting the dump.
std::string DumpJson(const nlohmann::json& j, int indent = -1);
// `text` as a line written by DumpJson reads back: unchanged when it is
// valid UTF-8, else with each invalid byte replaced by U+FFFD. A run matches
// case folders against its journal by this form, so that a folder whose
// name is not UTF-8 still resumes.
std::string AsJournalText(const std::string& text);
// Quotes a word for a POSIX shell when it needs it, for repro lines.
std::string ShellQuote(const std::string& word);
// Reads a result line back. "case", "suite" and "state" must be there; every
// other field may be absent or null, but a field of the wrong type is an
// error naming it. Lines of `parity eval` from before "load_ms_cold" existed
// say "load_ms"; non-finite times written as strings ("inf") are left unset.
StatusOr<CaseResult> CaseResultFromJson(const nlohmann::json& line);

// The string field `key` of an object read from a results file: absent or
// null leaves `out` as it is, or is an error naming the field when `required`.
Status TakeString(const nlohmann::json& j, const char* key, bool required, std::string* out);

// The results of one results.jsonl, in line order, later duplicates of a
// case (suite and name) replacing the earlier line.
struct ResultsJournal {
  std::vector<CaseResult> results;
  std::vector<std::string> warnings;  // a dropped partial last line, a duplicate case
};
// Parses the text of a results journal; `path` only names it in messages. A
// last line without its newline that does not parse is a write cut short by
// a kill: it is dropped with a warning. Any other bad line is an error naming
// the file and its line number.
StatusOr<ResultsJournal> ParseResultsJournal(const std::string& text, const std::string& path);
// Reads results.jsonl at `path`; a missing file reads as no results. With
// `drop_partial_tail`, a partial last line is also cut off the file, so that
// appending to it resumes on a line boundary.
StatusOr<ResultsJournal> ReadResultsJournal(const std::string& path, bool drop_partial_tail);

// {"median", "min", "max", "repeats"} of a list of timings; null when empty.
nlohmann::json TimingStats(std::vector<double> values);
// The median of `values`, as TimingStats computes it; unset when empty.
std::optional<double> Median(std::vector<double> values);

// Writes `content` to `path` through a temporary file and a rename, so that a
// reader never sees half a file.
Status WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace parity
