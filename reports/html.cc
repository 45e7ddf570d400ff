// Rendering runs as one self-contained HTML page.
#include "reports/html.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/format.h"
#include "reports/load_chart.h"
#include "reports/matrix.h"
#include "reports/placement.h"
#include "reports/stateful.h"
#include "reports/trend.h"

namespace parity {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff;margin:24px;max-width:1500px}
h1{font-size:24px;margin:0 0 12px}
h2{font-size:19px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid #d0d7de}
h3{font-size:16px;margin:18px 0 8px}
table{border-collapse:collapse;margin:6px 0 12px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.matrix{table-layout:fixed}
table.matrix td{vertical-align:middle}
table.matrix th.name,table.matrix td.name{width:260px;overflow-wrap:anywhere}
table.matrix th.col{width:170px;text-align:center;overflow-wrap:anywhere}
td.cell{text-align:center;white-space:nowrap;font-variant-numeric:tabular-nums}
td.cell b{font-weight:600}
td.cell small{display:block;font-size:11px;color:#3b4046}
td.pass{background:hsl(130,50%,82%)}
td.notrun{background:repeating-linear-gradient(45deg,#e4e6e9 0 6px,#f4f5f6 6px 12px);color:#3b4046;font-weight:700;letter-spacing:.02em}
td.empty{color:#8c959f}
details{margin:4px 0 8px}
details>summary{cursor:pointer;padding:4px 6px;background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px}
details>summary span.rate{margin-left:12px;font-size:12px;color:#3b4046}
.legend{font-size:12px;color:#3b4046;margin:6px 0}
.legend span.swatch{display:inline-block;min-width:46px;padding:1px 6px;margin:0 4px 0 12px;border:1px solid #d0d7de;text-align:center}
table.failures{width:100%;table-layout:fixed}
table.failures td{overflow-wrap:anywhere}
table.failures col.state{width:118px}table.failures col.case{width:22%}table.failures col.stat{width:92px}
table.failures td.state{white-space:nowrap}
table.failures col.mismatch{width:20%}
.state{font-weight:700;font-size:12px}
.state-FAIL,.state-CRASH,.state-TIMEOUT,.state-FELL_BACK,.state-XPASS{color:#b42318}
.state-ERROR{color:#8a4b00}.state-MISTRUSTED{color:#6b46c1}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;padding:1px 4px;border-radius:3px;overflow-wrap:anywhere}
div.repro{margin-top:4px}
.muted{color:#57606a;fill:#57606a}
.warning{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:4px}
svg.chart{display:block;margin:8px 0 16px;font:12px system-ui,sans-serif;fill:#1f2328}
svg.chart .grid{stroke:#d0d7de;stroke-width:1}
svg.chart .axis{stroke:#57606a;stroke-width:1}
svg.chart .frame{fill:none;stroke:#57606a}
svg.chart .axis-title{font-weight:600}
)";

// Short codes for the note under a matrix cell; the full names are in the
// cell's title and in the legend.
const std::map<std::string, std::string>& ShortCodes() {
  static const std::map<std::string, std::string> codes = {
      {"FAIL", "F"},   {"CRASH", "C"},       {"TIMEOUT", "T"}, {"FELL_BACK", "FB"},      {"XPASS", "XP"},
      {"ERROR", "E"},  {"MISTRUSTED", "M"},  {"XFAIL", "XF"},  {"UNSUPPORTED", "U"},     {"SKIP", "S"},
      {kNotRun, "NR"}};
  return codes;
}

// Background by pass rate: green for all passing; red to orange where a case
// fails the gate; yellow to yellow-green where cases did not pass for other
// reasons (unsupported, skipped, not run...).
std::string CellStyle(const MatrixCell& cell) {
  const double rate = cell.Total() ? static_cast<double>(cell.Pass()) / cell.Total() : 0;
  char style[64];
  switch (cell.Kind()) {
    case CellKind::kFail: std::snprintf(style, sizeof style, "background:hsl(%.0f,80%%,84%%)", 40 * rate); break;
    case CellKind::kMixed: std::snprintf(style, sizeof style, "background:hsl(%.0f,70%%,82%%)", 46 + 34 * rate); break;
    default: return "";
  }
  return style;
}

std::string Cell(const MatrixCell& cell) {
  switch (cell.Kind()) {
    case CellKind::kEmpty: return "<td class=\"cell empty\" title=\"not in this run\">–</td>";
    case CellKind::kNotRun:
      return "<td class=\"cell notrun\" title=\"" + HtmlEscape(cell.NonPassText()) + "\">" + kNotRun + "</td>";
    default: break;
  }
  std::string note;
  for (const std::string& state : StateOrder()) {
    auto it = cell.states.find(state);
    if (state != "PASS" && it != cell.states.end()) note += (note.empty() ? "" : " ") + ShortCodes().at(state) + std::to_string(it->second);
  }
  if (cell.not_run) note += (note.empty() ? "" : " ") + std::string("NR") + std::to_string(cell.not_run);
  if (cell.absent) note += (note.empty() ? "" : " ") + std::string("NR ") + std::to_string(cell.absent) + " op";
  const std::string rate = FormatPercent(cell.Pass(), cell.Total());
  std::string td = "<td class=\"cell";
  td += cell.Kind() == CellKind::kPass ? " pass\"" : "\" style=\"" + CellStyle(cell) + "\"";
  td += " title=\"" + HtmlEscape(cell.Kind() == CellKind::kPass ? "all pass" : cell.NonPassText()) + "\">";
  td += "<b>" + std::to_string(cell.Pass()) + "/" + std::to_string(cell.Total()) + "</b> " + rate;
  // An empty note keeps every row of the matrix the same height.
  td += "<small>" + (note.empty() ? std::string("&nbsp;") : note) + "</small>";
  return td + "</td>";
}

std::string ColumnHeaders(const Matrix& m, const std::string& first) {
  std::string row = "<tr><th class=\"name\">" + first + "</th>";
  for (const std::string& c : m.columns) row += "<th class=\"col\">" + HtmlEscape(c) + "</th>";
  return row + "</tr>";
}

void RenderFacts(const std::vector<RunData>& runs, std::ostringstream& h) {
  h << "<h2>Runs</h2><table><tr><th></th>";
  for (const RunData& run : runs) h << "<th>" << HtmlEscape(run.label) << "</th>";
  h << "</tr>";
  for (const auto& [what, values] : RunFacts(runs)) {
    h << "<tr><th>" << what << "</th>";
    for (const std::string& v : values) h << "<td>" << HtmlEscape(v) << "</td>";
    h << "</tr>";
  }
  h << "</table>";
}

void RenderStates(const std::vector<RunData>& runs, std::ostringstream& h) {
  h << "<h2>Cases by state</h2><table><tr><th>state</th>";
  for (const RunData& run : runs) h << "<th>" << HtmlEscape(run.label) << "</th>";
  h << "</tr>";
  std::vector<std::string> states = StateOrder();
  states.push_back(kNotRun);
  for (const std::string& state : states) {
    std::vector<int> counts;
    for (const RunData& run : runs) {
      counts.push_back(state == kNotRun ? static_cast<int>(run.not_run.size())
                                        : static_cast<int>(std::count_if(run.results.begin(), run.results.end(),
                                                                         [&](const CaseResult& r) { return CaseStateName(r.state) == state; })));
    }
    if (std::all_of(counts.begin(), counts.end(), [](int n) { return n == 0; })) continue;
    h << "<tr><th class=\"state state-" << (state == kNotRun ? "NOT_RUN" : state) << "\">" << state << "</th>";
    for (size_t c = 0; c < runs.size(); ++c) {
      const int total = static_cast<int>(runs[c].results.size() + runs[c].not_run.size());
      h << "<td class=\"num\">" << counts[c] << " <span class=\"muted\">(" << FormatPercent(counts[c], total)
        << ")</span></td>";
    }
    h << "</tr>";
  }
  h << "</table>";
}

std::string StateCell(const std::string& state) {
  if (state.empty()) return "<td class=\"muted\">–</td>";
  const std::string css = state == kNotRun ? "NOT_RUN" : state;
  return "<td class=\"state state-" + css + "\">" + HtmlEscape(state) + "</td>";
}

void RenderTrends(const std::vector<RunData>& runs, std::ostringstream& h) {
  const std::vector<Trend> trends = BuildTrends(runs);
  if (trends.empty()) return;
  h << "<h2 id=\"trends\">Trends</h2><p class=\"muted\">Runs of one adapter in the order they finished (equal "
       "times by version): pass counts, load-time medians, and the cases whose state changed from one run to the "
       "next (– where a case is not in that run).</p>";
  for (size_t t = 0; t < trends.size(); ++t) {
    const Trend& trend = trends[t];
    h << "<h3>" << HtmlEscape(trend.adapter) << " over " << trend.points.size() << " runs</h3>";
    for (const std::string& note : trend.notes) h << "<p class=\"muted trend-note\">" << HtmlEscape(note) << "</p>";
    h << TrendSvg(trend) << "<table class=\"trend\" id=\"trend-" << t + 1 << "\"><tr>";
    for (const TrendColumn& c : TrendColumns()) h << "<th>" << HtmlEscape(c.heading) << "</th>";
    h << "</tr>";
    for (const auto& row : TrendRows(trend)) {
      h << "<tr>";
      for (size_t i = 0; i < row.size(); ++i) {
        h << (TrendColumns()[i].number ? "<td class=\"num\">" : "<td>") << HtmlEscape(row[i]) << "</td>";
      }
      h << "</tr>";
    }
    h << "</table>";
    for (const TrendStep& step : trend.steps) {
      if (step.changes.empty()) {
        h << "<p class=\"muted\">" << HtmlEscape(StepTitle(trend, step)) << "</p>";
        continue;
      }
      h << "<details class=\"trend-step\"" << (step.changes.size() <= kHtmlOpenSuiteRows ? " open" : "")
        << "><summary>" << HtmlEscape(StepTitle(trend, step))
        << "</summary><table class=\"trend-changes\"><tr><th>suite</th><th>case</th><th>from</th><th>to</th></tr>";
      const size_t shown = std::min(step.changes.size(), kHtmlTrendChangeLimit);
      for (size_t i = 0; i < shown; ++i) {
        const CaseChange& c = step.changes[i];
        h << "<tr><td>" << HtmlEscape(c.suite) << "</td><td>" << HtmlEscape(c.name) << "</td>" << StateCell(c.from)
          << StateCell(c.to) << "</tr>";
      }
      h << "</table>";
      if (step.changes.size() > shown) h << "<p class=\"muted\">" << step.changes.size() - shown << " more</p>";
      h << "</details>";
    }
  }
}

void RenderLegend(std::ostringstream& h) {
  h << "<p class=\"legend\">Cell: passes/cases and pass rate; hover for the count of each other state."
       "<span class=\"swatch\" style=\"background:hsl(130,50%,82%)\">all</span>pass"
       "<span class=\"swatch\" style=\"background:hsl(70,70%,82%)\">some</span>did not pass, none failed"
       "<span class=\"swatch\" style=\"background:hsl(20,80%,84%)\">any</span>failed the gate"
       "<span class=\"swatch\" style=\"background:repeating-linear-gradient(45deg,#e4e6e9 0 6px,#f4f5f6 6px 12px)\">"
       "NOT RUN</span>expected, no result"
       "<span class=\"swatch\">–</span>not in this run<br>Notes: ";
  bool first = true;
  for (const std::string& state : StateOrder()) {
    if (state == "PASS") continue;
    h << (first ? "" : ", ") << ShortCodes().at(state) << " " << state;
    first = false;
  }
  h << ", NR NOT RUN (NR n op: operators that another run planned and this one did not).</p>";
}

void RenderMatrix(const std::vector<RunData>& runs, std::ostringstream& h) {
  const Matrix m = BuildMatrix(runs);
  h << "<h2>Matrix</h2>";
  RenderLegend(h);
  h << "<h3>By suite</h3><table class=\"matrix\" id=\"matrix\">" << ColumnHeaders(m, "suite");
  for (const MatrixRow& s : m.suites) {
    h << "<tr><td class=\"name\">" << HtmlEscape(s.suite) << "</td>";
    for (const MatrixCell& cell : s.cells) h << Cell(cell);
    h << "</tr>";
  }
  h << "</table><h3>By operator</h3>";
  for (size_t i = 0; i < m.suites.size(); ++i) {
    const MatrixRow& s = m.suites[i];
    // A long suite starts folded even when it fails: the suite table above
    // and the failing cases below already point at what to open.
    h << "<details" << (m.row_count[i] <= kHtmlOpenSuiteRows ? " open" : "") << "><summary><b>"
      << HtmlEscape(s.suite) << "</b> · " << m.row_count[i] << " operators";
    for (size_t c = 0; c < s.cells.size(); ++c) {
      h << "<span class=\"rate\">" << HtmlEscape(m.columns[c]) << " "
        << FormatPercent(s.cells[c].Pass(), s.cells[c].Total()) << "</span>";
    }
    h << "</summary><table class=\"matrix\">" << ColumnHeaders(m, "operator");
    for (size_t r = m.first_row[i]; r < m.first_row[i] + m.row_count[i]; ++r) {
      h << "<tr><td class=\"name\">" << HtmlEscape(m.rows[r].op) << "</td>";
      for (const MatrixCell& cell : m.rows[r].cells) h << Cell(cell);
      h << "</tr>";
    }
    h << "</table></details>";
  }
}

void RenderFailures(const RunData& run, std::ostringstream& h) {
  const std::vector<const CaseResult*> failures = ListedFailures(run);
  h << "<h3>" << HtmlEscape(run.label) << " · " << failures.size() << " failing</h3>";
  if (failures.empty()) {
    h << "<p class=\"muted\">No failing case.</p>";
    return;
  }
  h << "<table class=\"failures\"><colgroup><col class=\"state\"><col class=\"case\"><col>"
       "<col class=\"stat\"><col class=\"stat\"><col class=\"stat\"><col class=\"mismatch\"></colgroup>"
       "<tr><th>state</th><th>suite / case</th><th>message and repro</th><th>max abs</th><th>max rel</th>"
       "<th>max ulp</th><th>first mismatch</th></tr>";
  const size_t shown = std::min(failures.size(), kHtmlFailureLimit);
  for (size_t i = 0; i < shown; ++i) {
    const CaseResult& r = *failures[i];
    const ErrorSummary e = SummarizeErrors(r);
    h << "<tr><td class=\"state state-" << CaseStateName(r.state) << "\">" << CaseStateName(r.state) << "</td><td>" << HtmlEscape(r.suite)
      << " / <b>" << HtmlEscape(r.name) << "</b>";
    if (!r.op.empty()) h << "<br><span class=\"muted\">" << HtmlEscape(r.op) << "</span>";
    h << "</td><td>" << HtmlEscape(Truncate(r.message, 600));
    if (!r.expectation.empty()) h << "<br><span class=\"muted\">expectation: " << HtmlEscape(r.expectation) << "</span>";
    if (!r.repro.empty()) h << "<div class=\"repro\"><code>" << HtmlEscape(r.repro) << "</code></div>";
    h << "</td><td class=\"num\">" << HtmlEscape(e.max_abs) << "</td><td class=\"num\">" << HtmlEscape(e.max_rel)
      << "</td><td class=\"num\">" << HtmlEscape(e.max_ulp) << "</td><td>" << HtmlEscape(Truncate(e.first_mismatch, 300))
      << "</td></tr>";
  }
  h << "</table>";
  if (failures.size() > shown) {
    h << "<p class=\"muted\">" << failures.size() - shown << " more in <code>" << HtmlEscape(run.dir)
      << "/results.jsonl</code></p>";
  }
}

void RenderLoadTimes(const std::vector<RunData>& runs, std::ostringstream& h) {
  h << "<h2>Load time</h2><p class=\"muted\">Session creation per case, measured inside the worker: the first "
       "(cold) and the median of the warm repeats.</p>";
  const std::string bars = LoadBarsSvg(runs);
  if (bars.empty()) {
    h << "<p class=\"muted\">No run measured a load time.</p>";
    return;
  }
  h << bars << LoadCurveSvg(runs);
  h << "<table><tr><th>ms</th>";
  for (const RunData& run : runs) h << "<th>" << HtmlEscape(run.label) << "</th>";
  h << "</tr>";
  std::vector<LoadTimes> times;
  for (const RunData& run : runs) times.push_back(LoadTimes::Of(run));
  const auto row = [&](const char* what, auto value) {
    h << "<tr><th>" << what << "</th>";
    for (const LoadTimes& t : times) h << "<td class=\"num\">" << value(t) << "</td>";
    h << "</tr>";
  };
  const auto ms = [](double v) { return v != v ? std::string("–") : FormatMs(v); };
  const auto range = [](const std::vector<double>& v) {
    return v.empty() ? std::string("–") : FormatMs(v.front()) + " – " + FormatMs(v.back());
  };
  row("cold, median", [&](const LoadTimes& t) { return ms(t.ColdMedian()); });
  row("cold, min – max", [&](const LoadTimes& t) { return range(t.cold); });
  row("warm, median of medians", [&](const LoadTimes& t) { return ms(t.WarmMedian()); });
  row("warm, min – max of medians", [&](const LoadTimes& t) { return range(t.warm_median); });
  row("cases measured (cold / warm)",
      [](const LoadTimes& t) { return std::to_string(t.cold.size()) + " / " + std::to_string(t.warm_median.size()); });
  h << "</table>";
}

void RenderVariantLoadTimes(const std::vector<RunData>& runs, std::ostringstream& h) {
  const FactRows rows = VariantLoadRows(runs);
  if (rows.empty()) return;
  h << "<h3>Variant models: session creation against the same model without entries</h3><p class=\"muted\">Each "
       "model with variant entries is also loaded with its entries stripped, with the same options; a ratio above 1 "
       "is what the entries cost at session creation.</p><table id=\"variant-load\"><tr><th>ms</th>";
  for (const RunData& run : runs) h << "<th>" << HtmlEscape(run.label) << "</th>";
  h << "</tr>";
  for (const auto& [what, values] : rows) {
    h << "<tr><th>" << HtmlEscape(what) << "</th>";
    for (const std::string& v : values) h << "<td class=\"num\">" << HtmlEscape(v) << "</td>";
    h << "</tr>";
  }
  h << "</table>";
}

void RenderPlacement(const std::vector<RunData>& runs, std::ostringstream& h) {
  const std::vector<PlacementRow> rows = BuildPlacementRows(runs);
  if (rows.empty()) return;
  h << "<h2>Placement</h2><p class=\"muted\">" << HtmlEscape(kPlacementIntro)
    << "</p><table id=\"placement\"><tr><th>nodes · FLOPs on the device</th>";
  for (const RunData& run : runs) h << "<th>" << HtmlEscape(run.label) << "</th>";
  h << "</tr>";
  for (const PlacementRow& row : rows) {
    h << "<tr><th>" << HtmlEscape(row.scope) << "</th>";
    for (const std::string& c : row.cells) h << "<td class=\"num\">" << HtmlEscape(c) << "</td>";
    h << "</tr>";
  }
  h << "</table>";
}

void RenderStateful(const std::vector<RunData>& runs, std::ostringstream& h) {
  const StatefulTables tables = BuildStatefulTables(runs);
  if (tables.per_case.empty()) return;
  h << "<h2>Stateful cases</h2><p class=\"muted\">Cases whose steps run on one session, carrying their state (a "
       "key/value cache) from step to step. Peak is the worker's resident memory high-water mark during one step's "
       "run. Device memory and what a step copied back come from the adapter's own count of its runs (ABI "
       "<code>run_cost</code>), where it keeps values on a device.</p>";
  auto table = [&](const char* id, const std::vector<std::string>& columns,
                   const std::vector<std::vector<std::string>>& rows, size_t text_columns) {
    h << "<table id=\"" << id << "\"><tr>";
    for (const std::string& c : columns) h << "<th>" << HtmlEscape(c) << "</th>";
    h << "</tr>";
    for (const auto& row : rows) {
      h << "<tr>";
      for (size_t i = 0; i < row.size(); ++i) {
        h << (i < text_columns ? "<td>" : "<td class=\"num\">") << HtmlEscape(row[i]) << "</td>";
      }
      h << "</tr>";
    }
    h << "</table>";
  };
  table("stateful", StatefulCaseColumns(), tables.per_case, 6);
  if (!tables.side_by_side.empty()) {
    h << "<p class=\"muted\">Side by side: the same case on two runs; B saves what run A's peak exceeds B's.</p>";
    table("stateful-side-by-side", StatefulComparisonColumns(), tables.side_by_side, 4);
  }
}

}  // namespace

std::string RenderHtml(const std::vector<RunData>& runs, const std::string& title) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<title>" << HtmlEscape(title) << "</title><style>" << kStyle << "</style></head>\n<body>\n<h1>"
    << HtmlEscape(title) << "</h1>\n";
  std::vector<std::string> warnings;
  for (const RunData& run : runs) warnings.insert(warnings.end(), run.warnings.begin(), run.warnings.end());
  if (!warnings.empty()) {
    h << "<div class=\"warning\"><b>Warnings</b><ul>";
    for (const std::string& w : warnings) h << "<li>" << HtmlEscape(w) << "</li>";
    h << "</ul></div>\n";
  }
  RenderFacts(runs, h);
  h << "\n";
  RenderStates(runs, h);
  h << "\n";
  RenderTrends(runs, h);
  RenderMatrix(runs, h);
  h << "\n<h2>Failing cases</h2><p class=\"muted\">States that fail the gate, ERROR and MISTRUSTED, most severe "
       "first; each repro line runs the case alone.</p>";
  for (const RunData& run : runs) RenderFailures(run, h);
  h << "\n";
  RenderLoadTimes(runs, h);
  RenderVariantLoadTimes(runs, h);
  RenderPlacement(runs, h);
  RenderStateful(runs, h);
  h << "\n</body></html>\n";
  return h.str();
}

}  // namespace parity
