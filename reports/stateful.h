// The reports' "Stateful cases" section: per stateful case and run, the
// steps' time and the worker's peak memory at the first and the last step,
// and, for an adapter that reports its runs' copies, its device memory and
// what each step copied back;
// and, where two runs ran the same case, the two side by side with what the
// second saves (e.g. an adapter that updates its caches in place).
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

// Rows of formatted cells, one table each; a table is empty when no run has
// a stateful case (per_case) or no case was run by two runs (side_by_side).
struct StatefulTables {
  std::vector<std::vector<std::string>> per_case;
  std::vector<std::vector<std::string>> side_by_side;
};

// Column headings of the two tables.
const std::vector<std::string>& StatefulCaseColumns();
const std::vector<std::string>& StatefulComparisonColumns();

// Cases are those whose line has "steps" (spec/results.md), ordered by suite
// and case, then by run. Each side-by-side row sets a run against the first
// run of the report that ran the same case; memory is the largest
// run_peak_rss_kb over the steps.
StatefulTables BuildStatefulTables(const std::vector<RunData>& runs);

// KiB as MiB with one decimal ("12.3 MiB"); with `sign`, "+" before a gain.
std::string FormatKib(double kib, bool sign = false);

}  // namespace parity
