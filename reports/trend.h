// The reports' "Trends" section: where a report is given several runs of one
// adapter (at different times or versions), those runs in order with their
// pass counts and load-time medians, and the cases that changed state from
// one run to the next.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

// Changed cases listed per pair of consecutive runs before the list is cut
// with a note saying how many more there are.
inline constexpr size_t kMarkdownTrendChangeLimit = 50;
inline constexpr size_t kHtmlTrendChangeLimit = 200;

// One run of a trend: what its row of the trend table shows.
struct TrendPoint {
  std::string label;    // RunData::label
  std::string when;     // RunData::when, as written; empty when unknown
  std::string version;  // RunData::AdapterVersion()
  bool timed = false;   // `when` reads as a time, so the run was ordered by it
  std::map<std::string, int> by_state;  // state name (and kNotRun) -> cases
  int pass = 0;
  int total = 0;  // results and NOT RUN cases, the denominator of the pass rate
  int gate_failures = 0;  // results the gate counts (CountsForGate)
  // Milliseconds, as summary.json's load_ms: the median of load_ms_cold over
  // the cases, and the median of the per-case warm medians; NaN when none.
  double cold_median_ms = std::numeric_limits<double>::quiet_NaN();
  double warm_median_ms = std::numeric_limits<double>::quiet_NaN();
};

// One case whose state differs between two consecutive runs. `from` or `to`
// is empty where the case is absent from that run (neither a result nor a
// planned case): the case was added or removed.
struct CaseChange {
  std::string suite;
  std::string name;
  std::string from;
  std::string to;
};

// From points[index - 1] to points[index]: every change, state changes
// first, then added cases, then removed ones, each in natural order by suite
// and case.
struct TrendStep {
  size_t index = 0;
  std::vector<CaseChange> changes;
  int changed = 0, added = 0, removed = 0;
};

struct Trend {
  std::string adapter;
  std::vector<TrendPoint> points;  // in time order, then by version
  std::vector<TrendStep> steps;    // one per consecutive pair of points
  // Why the order is not all by time: runs without a readable time, which
  // keep their place among the report's runs of this adapter.
  std::vector<std::string> notes;
};

// One trend per adapter (RunFolder::adapter) that has two or more runs in
// `runs` differing in time or version, in the order the adapters first
// appear. Runs with a readable time are ordered by it, equal times by
// version (natural order), then by argument order; a run without one stays
// where it was among this adapter's runs. Empty when no adapter qualifies.
std::vector<Trend> BuildTrends(const std::vector<RunData>& runs);

// Seconds since 1970 of a time as reports and summary.json write it:
// "2026-11-22T06:30:16Z", "2026-11-22 06:30:16 UTC", fractions of seconds
// and "+hh:mm" offsets allowed; unset when `when` is not such a time.
std::optional<double> ParseRunTime(const std::string& when);

// The trend table: its columns and one row of formatted cells per point
// (raw text; each renderer escapes it).
struct TrendColumn {
  std::string heading;
  bool number;  // right-aligned
};
const std::vector<TrendColumn>& TrendColumns();
std::vector<std::vector<std::string>> TrendRows(const Trend& trend);

// "alpha@cpu (r1) → alpha@cpu (r2): 2 changed state, 1 added, 0 removed".
std::string StepTitle(const Trend& trend, const TrendStep& step);

// Pass count and the cold and warm load-time medians over the points, as one
// inline SVG (no script, every string escaped).
std::string TrendSvg(const Trend& trend);

}  // namespace parity
