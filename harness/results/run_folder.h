// One run folder as the results library reads it (spec/results.md): the
// results journal, the plan and settings of run.json, the previous
// summary.json, and the summary recomputed from them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"
#include "harness/results/summary.h"
#include "reference/core/status.h"

namespace parity {

// One entry of run.json's "planned".
struct PlannedCase {
  std::string name;
  std::string suite;
  std::string op;
};

struct RunFolder {
  std::string dir;
  nlohmann::json run = nlohmann::json::object();      // run.json; empty when the folder has none
  nlohmann::json summary = nlohmann::json::object();  // the folder's summary.json; empty when none
  std::vector<CaseResult> results;
  std::vector<PlannedCase> planned;  // the plan of run.json; empty when there is no run.json
  std::vector<PlannedCase> not_run;  // planned cases without a result, in plan order
  std::vector<std::string> warnings;  // e.g. a partial last line that was dropped
  std::string adapter;  // adapter name, from summary.json, the results or run.json; "unknown" when none says
  std::string device;   // device name, likewise; may be empty
};

// Reads DIR/results.jsonl (ReadResultsJournal), DIR/run.json and
// DIR/summary.json. results.jsonl may be missing only when run.json is
// present (a run stopped before its first case).
StatusOr<RunFolder> LoadRunFolder(const std::string& dir);

// The summary of the folder's results, with "planned" (run.json's plan, else
// the results) and "not_run".
Summary SummaryOf(const RunFolder& folder);

// The fields of a refreshed summary.json besides the computed ones: those of
// the previous summary.json (adapter, device, versions, seconds, shard,
// expectations, and any this code does not know), with the adapter and
// device names, the shard and the expectations filled in where it had none.
nlohmann::json CarriedSummaryFields(const RunFolder& folder);

// summary.json recomputed from the folder: SummaryJson of SummaryOf over
// CarriedSummaryFields.
nlohmann::json RefreshedSummary(const RunFolder& folder);

// Writes the recomputed summary.json of `folder` into `out_dir`.
Status RefreshSummary(const RunFolder& folder, const std::string& out_dir);

}  // namespace parity
