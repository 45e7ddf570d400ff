// report.md: a Markdown report of one or more runs for CI summaries and pull
// requests (GitHub-flavoured tables).
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

// Failing cases listed per run before the list is cut with a note.
inline constexpr size_t kMarkdownFailureLimit = 50;

// Title, run facts, counts by state, trends where several runs are of one
// adapter (reports/trend.h), the suite/operator matrix, failing cases with
// their repro lines, and load times.
std::string RenderMarkdown(const std::vector<RunData>& runs, const std::string& title);

}  // namespace parity
