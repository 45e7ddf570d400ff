// `parity report DIR... [--out DIR] [--title TEXT]`: renders junit.xml,
// report.md and report.html from run folders (spec/results.md), and with
// one DIR also a refreshed summary.json.
#pragma once

#include <string>
#include <vector>

#include "reference/core/status.h"
#include "reports/run_data.h"

namespace parity {

struct ReportOptions {
  std::vector<std::string> dirs;  // run folders; several are shown side by side
  std::string out_dir;            // empty: the only run folder
  std::string title;              // empty: "ONNX Parity: <labels>"
};

// Checks the options and loads every run folder, with distinct labels.
StatusOr<std::vector<RunData>> LoadRuns(const ReportOptions& options);

// Writes the reports of `runs` (junit.xml, report.md, report.html) into
// options.out_dir, or the one run folder.
Status WriteReports(const std::vector<RunData>& runs, const ReportOptions& options);

// `args` are the words after `report`. With one run folder, its summary.json
// is recomputed (RefreshSummary) into the output folder too. Returns 0 on success, 2 on bad
// arguments or an unreadable run folder, 1 when an output cannot be written.
int RunReportCommand(const std::vector<std::string>& args);

}  // namespace parity
