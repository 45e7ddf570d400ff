// report.html: one self-contained page (inline CSS and SVG, no script, no
// external resource) showing one or more runs side by side.
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

// Failing cases listed per run before the list is cut with a note.
inline constexpr size_t kHtmlFailureLimit = 100;
// A suite's operator table starts folded when it has more rows than this.
inline constexpr size_t kHtmlOpenSuiteRows = 40;

// Run facts, counts by state, the suite and operator matrix with pass rates
// (cells coloured by rate, non-pass counts in a title and a short note, NOT
// RUN where a cell was expected), failing cases with error statistics and
// repro lines, and load-time charts; where several runs are of one adapter,
// their trend (reports/trend.h) with its chart. Every string from a run is
// escaped.
std::string RenderHtml(const std::vector<RunData>& runs, const std::string& title);

}  // namespace parity
