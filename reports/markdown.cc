// Rendering runs as GitHub-flavoured Markdown.
#include "reports/markdown.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "reports/format.h"
#include "reports/matrix.h"
#include "reports/placement.h"
#include "reports/stateful.h"
#include "reports/trend.h"

namespace parity {
namespace {

// A table row from cells that are already escaped.
std::string Row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& c : cells) row += " " + c + " |";
  return row + "\n";
}

// The header of a table with one column per run; run columns hold numbers
// (right-aligned) unless `text_columns`.
std::string HeaderRow(const std::vector<std::string>& first, const std::vector<RunData>& runs,
                      bool text_columns = false) {
  std::vector<std::string> cells = first;
  for (const RunData& run : runs) cells.push_back(MarkdownCell(run.label));
  std::string text = Row(cells);
  text += "|";
  for (size_t i = 0; i < cells.size(); ++i) text += i < first.size() || text_columns ? " --- |" : " ---: |";
  return text + "\n";
}

// "12/14 ✗": passes of all cases in the cell, and a mark for its kind.
std::string CellText(const MatrixCell& cell) {
  switch (cell.Kind()) {
    case CellKind::kEmpty: return "–";
    case CellKind::kNotRun: return kNotRun;
    case CellKind::kPass: return std::to_string(cell.Pass()) + "/" + std::to_string(cell.Total()) + " ✓";
    case CellKind::kFail:
      return std::to_string(cell.Pass()) + "/" + std::to_string(cell.Total()) + " ✗ (" +
             MarkdownCell(cell.NonPassText()) + ")";
    case CellKind::kMixed:
      return std::to_string(cell.Pass()) + "/" + std::to_string(cell.Total()) + " ~ (" +
             MarkdownCell(cell.NonPassText()) + ")";
  }
  return "";
}

// A fenced block that no backtick run inside `text` can close early.
std::string CodeBlock(const std::vector<std::string>& lines) {
  size_t longest = 0, run = 0;
  for (const std::string& line : lines) {
    for (char c : line) {
      run = c == '`' ? run + 1 : 0;
      longest = std::max(longest, run);
    }
    run = 0;
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string block = fence + "sh\n";
  for (const std::string& line : lines) {
    std::string one_line = SanitizeText(line);
    std::replace(one_line.begin(), one_line.end(), '\n', ' ');
    std::replace(one_line.begin(), one_line.end(), '\r', ' ');
    block += one_line + "\n";
  }
  return block + fence + "\n";
}

void RenderStates(const std::vector<RunData>& runs, std::ostringstream& md) {
  md << "## Cases by state\n\n" << HeaderRow({"state"}, runs);
  std::vector<std::map<std::string, int>> counts(runs.size());
  for (size_t c = 0; c < runs.size(); ++c) {
    for (const CaseResult& r : runs[c].results) ++counts[c][CaseStateName(r.state)];
    if (!runs[c].not_run.empty()) counts[c][kNotRun] = static_cast<int>(runs[c].not_run.size());
  }
  std::vector<std::string> states = StateOrder();
  states.push_back(kNotRun);
  for (const std::string& state : states) {
    std::vector<std::string> cells = {state};
    bool any = false;
    for (size_t c = 0; c < runs.size(); ++c) {
      const int n = counts[c].count(state) ? counts[c][state] : 0;
      any |= n > 0;
      const int total = static_cast<int>(runs[c].results.size() + runs[c].not_run.size());
      cells.push_back(std::to_string(n) + " (" + FormatPercent(n, total) + ")");
    }
    if (any) md << Row(cells);
  }
  md << "\n";
}

void RenderTrends(const std::vector<RunData>& runs, std::ostringstream& md) {
  const std::vector<Trend> trends = BuildTrends(runs);
  if (trends.empty()) return;
  md << "## Trends\n\nRuns of one adapter in the order they finished (equal times by version): pass counts, "
        "load-time medians, and the cases whose state changed from one run to the next (– where a case is not in "
        "that run).\n\n";
  for (const Trend& trend : trends) {
    md << "### " << MarkdownCell(trend.adapter) << " over " << trend.points.size() << " runs\n\n";
    for (const std::string& note : trend.notes) md << "- " << MarkdownCell(note) << "\n";
    if (!trend.notes.empty()) md << "\n";
    std::vector<std::string> header;
    std::string rule = "|";
    for (const TrendColumn& c : TrendColumns()) {
      header.push_back(MarkdownCell(c.heading));
      rule += c.number ? " ---: |" : " --- |";
    }
    md << Row(header) << rule << "\n";
    for (const auto& row : TrendRows(trend)) {
      std::vector<std::string> cells;
      for (const std::string& cell : row) cells.push_back(MarkdownCell(cell));
      md << Row(cells);
    }
    md << "\n";
    for (const TrendStep& step : trend.steps) {
      md << "**" << MarkdownCell(StepTitle(trend, step)) << "**\n\n";
      if (step.changes.empty()) continue;
      md << "| suite | case | from | to |\n| --- | --- | --- | --- |\n";
      const size_t shown = std::min(step.changes.size(), kMarkdownTrendChangeLimit);
      for (size_t i = 0; i < shown; ++i) {
        const CaseChange& c = step.changes[i];
        md << Row({MarkdownCell(c.suite), MarkdownCell(c.name), c.from.empty() ? "–" : c.from,
                   c.to.empty() ? "–" : c.to});
      }
      md << "\n";
      if (step.changes.size() > shown) md << "… and " << step.changes.size() - shown << " more.\n\n";
    }
  }
}

void RenderMatrix(const std::vector<RunData>& runs, std::ostringstream& md) {
  const Matrix m = BuildMatrix(runs);
  md << "## Matrix\n\nPasses of all cases per suite and operator: ✓ all pass, ✗ some case fails the gate, "
        "~ some case did not pass for another reason, NOT RUN expected but not run, – not in this run.\n\n";
  md << "### By suite\n\n" << HeaderRow({"suite"}, runs);
  for (const MatrixRow& s : m.suites) {
    std::vector<std::string> cells = {MarkdownCell(s.suite)};
    for (const MatrixCell& cell : s.cells) cells.push_back(CellText(cell));
    md << Row(cells);
  }
  // Long tables fold on renderers that know <details> (GitHub, GitLab).
  const bool fold = m.rows.size() > 40;
  md << "\n";
  if (fold) md << "<details><summary>By operator (" << m.rows.size() << " rows)</summary>\n\n";
  else md << "### By operator\n\n";
  md << HeaderRow({"suite", "operator"}, runs);
  for (const MatrixRow& row : m.rows) {
    std::vector<std::string> cells = {MarkdownCell(row.suite), MarkdownCell(row.op)};
    for (const MatrixCell& cell : row.cells) cells.push_back(CellText(cell));
    md << Row(cells);
  }
  md << (fold ? "\n</details>\n\n" : "\n");
}

void RenderFailures(const RunData& run, std::ostringstream& md) {
  const std::vector<const CaseResult*> failures = ListedFailures(run);
  md << "### " << MarkdownCell(run.label) << "\n\n";
  if (failures.empty()) {
    md << "No failing case.\n\n";
    return;
  }
  md << "| state | suite | case | message | max abs | max rel | max ulp | first mismatch |\n"
     << "| --- | --- | --- | --- | ---: | ---: | ---: | --- |\n";
  std::vector<std::string> repro;
  const size_t shown = std::min(failures.size(), kMarkdownFailureLimit);
  for (size_t i = 0; i < shown; ++i) {
    const CaseResult& r = *failures[i];
    const ErrorSummary e = SummarizeErrors(r);
    md << Row({CaseStateName(r.state), MarkdownCell(r.suite), MarkdownCell(r.name), MarkdownCell(Truncate(r.message, 300)),
               MarkdownCell(e.max_abs), MarkdownCell(e.max_rel), MarkdownCell(e.max_ulp),
               MarkdownCell(Truncate(e.first_mismatch, 200))});
    if (!r.repro.empty()) repro.push_back(r.repro);
  }
  md << "\n";
  if (failures.size() > shown) {
    md << "… and " << failures.size() - shown << " more in " << MarkdownCell(run.dir) << "/results.jsonl.\n\n";
  }
  if (!repro.empty()) md << "Repro:\n\n" << CodeBlock(repro) << "\n";
}

void RenderLoadTimes(const std::vector<RunData>& runs, std::ostringstream& md) {
  md << "## Load time\n\nSession creation per case, measured inside the worker.\n\n"
     << HeaderRow({"ms"}, runs);
  std::vector<std::vector<std::string>> rows(5);
  rows[0] = {"cold, median"};
  rows[1] = {"cold, min – max"};
  rows[2] = {"warm, median of the per-case medians"};
  rows[3] = {"warm, min – max of the per-case medians"};
  rows[4] = {"cases measured (cold / warm)"};
  for (const RunData& run : runs) {
    const LoadTimes t = LoadTimes::Of(run);
    const auto ms = [](double v) { return std::isnan(v) ? std::string("–") : FormatMs(v); };
    rows[0].push_back(ms(t.ColdMedian()));
    rows[1].push_back(t.cold.empty() ? "–" : FormatMs(t.cold.front()) + " – " + FormatMs(t.cold.back()));
    rows[2].push_back(ms(t.WarmMedian()));
    rows[3].push_back(t.warm_median.empty() ? "–"
                                            : FormatMs(t.warm_median.front()) + " – " + FormatMs(t.warm_median.back()));
    rows[4].push_back(std::to_string(t.cold.size()) + " / " + std::to_string(t.warm_median.size()));
  }
  for (const auto& row : rows) md << Row(row);
  md << "\n";
}

void RenderVariantLoadTimes(const std::vector<RunData>& runs, std::ostringstream& md) {
  const FactRows rows = VariantLoadRows(runs);
  if (rows.empty()) return;
  md << "## Variant models: session creation against the same model without entries\n\n"
        "Each model with variant entries is also loaded with its entries stripped, with the same options; a ratio "
        "above 1 is what the entries cost at session creation.\n\n"
     << HeaderRow({"ms"}, runs);
  for (const auto& [what, values] : rows) {
    std::vector<std::string> cells = {what};
    for (const std::string& v : values) cells.push_back(MarkdownCell(v));
    md << Row(cells);
  }
  md << "\n";
}

void RenderPlacement(const std::vector<RunData>& runs, std::ostringstream& md) {
  const std::vector<PlacementRow> rows = BuildPlacementRows(runs);
  if (rows.empty()) return;
  md << "## Placement\n\n" << kPlacementIntro << "\n\n" << HeaderRow({"nodes · FLOPs on the device"}, runs);
  for (const PlacementRow& row : rows) {
    std::vector<std::string> cells = {MarkdownCell(row.scope)};
    for (const std::string& c : row.cells) cells.push_back(MarkdownCell(c));
    md << Row(cells);
  }
  md << "\n";
}

void RenderStateful(const std::vector<RunData>& runs, std::ostringstream& md) {
  const StatefulTables tables = BuildStatefulTables(runs);
  if (tables.per_case.empty()) return;
  md << "## Stateful cases\n\nCases whose steps run on one session, carrying their state (a key/value cache) from "
        "step to step. Peak is the worker's resident memory high-water mark during one step's run. "
        "Device memory and what a step copied back come from the adapter's own count of its runs (ABI `run_cost`), "
        "where it keeps values on a device.\n\n";
  auto table = [&](const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows,
                   size_t text_columns) {
    std::vector<std::string> header;
    std::string rule = "|";
    for (size_t i = 0; i < columns.size(); ++i) {
      header.push_back(MarkdownCell(columns[i]));
      rule += i < text_columns ? " --- |" : " ---: |";
    }
    md << Row(header) << rule << "\n";
    for (const auto& row : rows) {
      std::vector<std::string> cells;
      for (const std::string& cell : row) cells.push_back(MarkdownCell(cell));
      md << Row(cells);
    }
    md << "\n";
  };
  table(StatefulCaseColumns(), tables.per_case, 6);
  if (!tables.side_by_side.empty()) {
    md << "Side by side: the same case on two runs; B saves what run A's peak exceeds B's.\n\n";
    table(StatefulComparisonColumns(), tables.side_by_side, 4);
  }
}

}  // namespace

std::string RenderMarkdown(const std::vector<RunData>& runs, const std::string& title) {
  std::ostringstream md;
  md << "# " << MarkdownCell(title) << "\n\n## Runs\n\n" << HeaderRow({""}, runs, /*text_columns=*/true);
  for (const auto& [what, values] : RunFacts(runs)) {
    std::vector<std::string> cells = {what};
    for (const std::string& v : values) cells.push_back(MarkdownCell(v));
    md << Row(cells);
  }
  md << "\n";
  RenderStates(runs, md);
  RenderTrends(runs, md);
  RenderMatrix(runs, md);
  md << "## Failing cases\n\nStates that fail the gate, ERROR and MISTRUSTED; the repro lines run one case alone.\n\n";
  for (const RunData& run : runs) RenderFailures(run, md);
  RenderLoadTimes(runs, md);
  RenderVariantLoadTimes(runs, md);
  RenderPlacement(runs, md);
  RenderStateful(runs, md);
  std::vector<std::string> warnings;
  for (const RunData& run : runs) warnings.insert(warnings.end(), run.warnings.begin(), run.warnings.end());
  if (!warnings.empty()) {
    md << "## Warnings\n\n";
    for (const std::string& w : warnings) md << "- " << MarkdownCell(w) << "\n";
    md << "\n";
  }
  return md.str();
}

}  // namespace parity
