// summary.json (spec/results.md): counts by state, operator and suite, the
// gate, and the timing statistics of a set of results, and the one writer of
// the file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"
#include "reference/core/status.h"

namespace parity {

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

// The suite whose cases the summary and the reports also show one by one
// as models (cases/models/: exported whole models).
inline constexpr const char* kModelSuite = "models";

// Where the nodes of a set of cases ran (results' "placement" and
// "placement_flops"): counts per device, and the share on each case's own
// device (CaseResult::device) against the rest (a device adapter's fallback
// to the reference). Cases without a placement are not counted.
struct PlacementTotals {
  int cases = 0;
  std::map<std::string, int64_t> nodes;  // device -> nodes
  std::map<std::string, double> flops;   // device -> FLOPs of its nodes whose FLOPs are known
  int64_t flops_unknown = 0;             // nodes whose FLOPs are not known
  int64_t nodes_on_device = 0;
  double flops_on_device = 0;
  // The copies between the host and the device of the cases whose adapter
  // counts them (ABI run_cost): the placement's price in traffic.
  int cost_cases = 0;
  RunCost copies;

  void Add(const CaseResult& result);
  int64_t NodeCount() const;
  double KnownFlops() const;
  // Shares in [0, 1]; unset when there is nothing to divide by.
  std::optional<double> NodeShare() const;
  std::optional<double> FlopShare() const;
  // {"cases", "nodes", "flops", "flops_unknown_nodes", "on_device": {"nodes", "flops"}}, shares null when
  // unset, and "copies" {"cases", "to_device_copies", "to_device_bytes", "to_host_copies", "to_host_bytes"}
  // when some case counted them.
  nlohmann::json ToJson() const;
};

// What summary.json computes from the results: counts by state, per operator
// and per suite, the gate, load-time statistics and, where the writer knows
// the plan, how many cases were planned and did not run.
struct Summary {
  std::map<std::string, int> by_state;
  std::map<std::string, std::map<std::string, int>> by_operator;  // op -> state -> count
  std::map<std::string, std::map<std::string, int>> by_suite;     // suite -> state -> count
  std::vector<double> load_ms_cold;
  std::vector<double> load_ms_warm_median;      // one per case that had warm repeats
  std::vector<VariantLoadSample> variant_load;  // one per case with a stripped twin measured
  PlacementTotals placement;                                  // every case
  std::map<std::string, PlacementTotals> placement_by_suite;  // suite -> its cases
  std::map<std::string, PlacementTotals> placement_by_model;  // case of kModelSuite -> itself
  int total = 0;
  int gate_failures = 0;          // results the gate counts
  std::optional<int> planned;     // "planned": written when set
  std::optional<int> not_run;     // "not_run": written when set

  // Counts `result`; the gate counts it by CountsForGate.
  void Add(const CaseResult& result) { Add(result, CountsForGate(result)); }
  // Counts `result`, the gate by the caller's rule (`parity eval` keeps
  // whether the expectations foresaw a case beside its line, not in it).
  void Add(const CaseResult& result, bool counts_for_gate);
  // The computed fields: "total", "by_state", "by_operator", "by_suite",
  // "load_ms", "gate_failures", and "variant_load_ms", "placement" (with
  // "by_suite" and "by_model"), "planned" and "not_run" where they apply.
  nlohmann::json ToJson() const;
};

// The summary of `results`, each counted by CountsForGate.
Summary Summarize(const std::vector<CaseResult>& results);

// summary.json's content: `fields` (what the writer knows besides the
// results: adapter, device, versions, seconds, shard...) with the computed
// fields of `summary` over them; a "variant_load_ms" in `fields` that the
// results no longer support is dropped.
nlohmann::json SummaryJson(const Summary& summary, nlohmann::json fields);

// Writes DIR/summary.json with SummaryJson's content, through a temporary
// file and a rename. The one writer of summary.json.
Status WriteSummary(const std::string& dir, const Summary& summary, const nlohmann::json& fields);

}  // namespace parity
