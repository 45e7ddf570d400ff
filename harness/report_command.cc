// The `parity report` command: argument parsing and writing the files.
#include "harness/report_command.h"

#include <filesystem>
#include <iostream>

#include "harness/command_usage.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

std::string DefaultTitle(const std::vector<RunData>& runs) {
  std::string title = "ONNX Parity: ";
  for (size_t i = 0; i < runs.size(); ++i) title += (i ? ", " : "") + runs[i].label;
  return title;
}

}  // namespace

StatusOr<std::vector<RunData>> LoadRuns(const ReportOptions& options) {
  if (options.dirs.empty()) return InvalidArgument("give at least one run folder");
  if (options.dirs.size() > 1 && options.out_dir.empty()) {
    return InvalidArgument("several run folders need --out DIR");
  }
  std::vector<RunData> runs;
  for (const std::string& dir : options.dirs) {
    PARITY_ASSIGN_OR_RETURN(RunData run, LoadRunData(dir));
    runs.push_back(std::move(run));
  }
  AssignLabels(runs);
  return runs;
}

Status WriteReports(const std::vector<RunData>& runs, const ReportOptions& options) {
  const fs::path out = options.out_dir.empty() ? fs::path(options.dirs[0]) : fs::path(options.out_dir);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return IoError("cannot create ", out.string(), ": ", ec.message());
  const std::string title = options.title.empty() ? DefaultTitle(runs) : options.title;
  PARITY_RETURN_IF_ERROR(WriteJunit(runs, (out / "junit.xml").string()));
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((out / "report.md").string(), RenderMarkdown(runs, title)));
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((out / "report.html").string(), RenderHtml(runs, title)));
  return Status::Ok();
}

int RunReportCommand(const std::vector<std::string>& args) {
  ReportOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--out" || a == "--title") {
      if (i + 1 >= args.size()) {
        return CommandUsageError("report", a + " needs a value");
      }
      (a == "--out" ? options.out_dir : options.title) = args[++i];
    } else if (a == "--help" || a == "-h") {
      std::cout << CommandHelp("report");
      return 0;
    } else if (a.rfind("--", 0) == 0) {
      return CommandUsageError("report", "unknown option '" + a + "'");
    } else {
      options.dirs.push_back(a);
    }
  }
  StatusOr<std::vector<RunData>> runs = LoadRuns(options);
  if (!runs.ok()) {
    if (options.dirs.empty() || (options.dirs.size() > 1 && options.out_dir.empty())) {
      return CommandUsageError("report", runs.status().ToString());
    }
    std::cerr << "parity report: " << runs.status().ToString() << "\n";
    return 2;
  }
  for (const RunData& run : *runs) {
    for (const std::string& w : run.warnings) std::cerr << "parity report: warning: " << w << "\n";
  }
  Status written = WriteReports(*runs, options);
  // Several runs have no one summary; their own folders stay as they are.
  if (written.ok() && runs->size() == 1) {
    written = RefreshSummary(runs->front(), options.out_dir.empty() ? options.dirs[0] : options.out_dir);
  }
  if (!written.ok()) {
    std::cerr << "parity report: " << written.ToString() << "\n";
    return 1;
  }
  const std::string out = options.out_dir.empty() ? options.dirs[0] : options.out_dir;
  std::cout << "report: wrote junit.xml, report.md, report.html" << (options.dirs.size() == 1 ? ", summary.json" : "")
            << " to " << out << "\n";
  return 0;
}

}  // namespace parity
