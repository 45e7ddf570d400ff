// One run folder as `parity report` reads it (spec/results.md): the results
// journal, the plan from run.json, the previous summary.json, and the
// summary recomputed from them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/core/status.h"

namespace parity {

// The state a report gives a planned case that has no line in results.jsonl.
inline constexpr const char* kNotRun = "NOT RUN";
// The operator that reports show for a case whose line names none.
inline constexpr const char* kUnknownOperator = "(unknown)";

// One line of results.jsonl, with the fields the reports use.
struct CaseRecord {
  std::string name;  // "case"
  std::string suite;
  std::string dir;
  std::string op;  // "operator"; empty when the line has none
  std::string adapter;
  std::string device;
  std::string state;  // one of the states of spec/results.md
  std::string message;
  std::string expectation;
  std::string repro;
  std::optional<double> load_ms_cold;         // null when the session was never created
  std::optional<double> load_ms_warm_median;  // median of the warm repeats
  // A model with variant entries: the same model with its entries stripped
  // (spec/results.md); absent on other cases and on older lines.
  std::optional<double> load_ms_stripped_cold;
  std::optional<double> load_ms_stripped_warm_median;
  double run_ms = 0;
  // The line's "gate_failure": the gate counts this case even where its state
  // alone would not (a state its expectations entry did not foresee).
  bool gate_failure = false;
  nlohmann::json outputs = nlohmann::json::array();
  // A stateful case: the line has "steps" (spec/results.md), each
  // {"step", "run_ms", "run_peak_rss_kb", "rss_kb", "compared"}, and
  // "state_readback" ("every" or "last").
  bool stateful = false;
  nlohmann::json steps = nlohmann::json::array();
  std::string state_readback;
  int line = 0;  // 1-based line number in results.jsonl

  // The gate counts this case: by its state (StateFailsGate) or its line.
  bool CountsForGate() const;
};

struct PlannedCase {
  std::string name;
  std::string suite;
  std::string op;
};

struct RunData {
  std::string dir;
  nlohmann::json run = nlohmann::json::object();      // run.json; empty when the folder has none
  nlohmann::json summary = nlohmann::json::object();  // the folder's summary.json; empty when none
  std::vector<CaseRecord> results;
  std::vector<PlannedCase> planned;  // the plan of run.json; empty when there is no run.json
  std::vector<PlannedCase> not_run;  // planned cases without a result, in plan order
  std::vector<std::string> warnings;  // e.g. a partial last line that was dropped
  std::string adapter;  // adapter name, from summary.json, run.json or the results
  std::string device;   // device name, likewise; may be empty
  std::string label;    // "adapter@device", unique among the runs of one report
  std::string when;     // when the run ended: summary.json "finished", else the journal's
                        // modification time, UTC; empty when neither is known

  std::string AdapterVersion() const;  // "version (backend backend_version)" or ""
  std::string DeviceDescription() const;
};

// Reads DIR/results.jsonl, DIR/run.json and DIR/summary.json. results.jsonl
// may be missing only when run.json is present (a run stopped before its
// first case). A partial last line (no newline at the end, not parseable) is
// dropped with a warning; any other bad line is an error naming the file and
// its line number.
StatusOr<RunData> LoadRunData(const std::string& dir);

// Parses the text of a results journal; `path` only names it in messages.
Status ParseResultsJournal(const std::string& text, const std::string& path, RunData* data);

// Gives every run a distinct label: the folder name is added where two runs
// share adapter@device.
void AssignLabels(std::vector<RunData>& runs);

// summary.json's "variant_load_ms" of one run: session creation of the
// models with variant entries against their stripped twins (VariantLoadStats
// in harness/results.h); null when no case measured a twin.
nlohmann::json VariantLoadOf(const RunData& data);

// summary.json as spec/results.md describes it, computed from the results and
// the plan (gate_failures counts the lines with gate_failure); adapter,
// device, versions, seconds, expectations, shard and shards, and any field
// this code does not know, are carried over from the previous summary.json.
nlohmann::json ComputeSummary(const RunData& data);

// Writes `text` to `path` through a temporary file and a rename, so that a
// reader never sees half a file.
Status WriteTextFile(const std::string& path, const std::string& text);

// Median, min, max and count ("repeats") of `values`; null when there are none.
nlohmann::json Stats(std::vector<double> values);

// States in the order reports list them: passes first, then what counts
// against the backend, then the rest.
const std::vector<std::string>& StateOrder();
bool IsKnownState(const std::string& state);
// FAIL, CRASH, TIMEOUT, FELL_BACK and XPASS: what fails the gate.
bool StateFailsGate(const std::string& state);
// Cases that a report lists among failing ones: the gate failures, ERROR
// and MISTRUSTED.
bool IsListedFailure(const CaseRecord& record);

}  // namespace parity
