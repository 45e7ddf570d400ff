// The tables of the "Stateful cases" section, shared by Markdown and HTML.
#include "reports/stateful.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>

#include "reports/format.h"

namespace parity {
namespace {

using nlohmann::json;

// What one run measured for one stateful case.
struct StepFigures {
  size_t steps = 0;
  std::optional<double> median_ms;
  std::optional<double> first_peak_kb, last_peak_kb, max_peak_kb;
  // From the adapter's run_cost, when it reports one: the device memory
  // held after the first and the last step, and the median bytes a step
  // copied back to the host.
  std::optional<double> first_device_bytes, last_device_bytes, median_to_host_bytes;
};

std::optional<double> PeakKb(const StepRecord& step) {
  if (!step.run_peak_rss_kb) return std::nullopt;
  return static_cast<double>(*step.run_peak_rss_kb);
}

StepFigures FiguresOf(const CaseResult& r) {
  StepFigures f;
  f.steps = r.steps.size();
  std::vector<double> ms;
  for (const StepRecord& step : r.steps) {
    ms.push_back(step.run_ms);
    if (std::optional<double> peak = PeakKb(step)) f.max_peak_kb = std::max(f.max_peak_kb.value_or(*peak), *peak);
  }
  f.median_ms = Median(ms);
  if (!r.steps.empty()) {
    f.first_peak_kb = PeakKb(r.steps.front());
    f.last_peak_kb = PeakKb(r.steps.back());
  }
  std::vector<double> to_host;
  for (const StepRecord& step : r.steps) {
    if (!step.cost) continue;
    to_host.push_back(static_cast<double>(step.cost->to_host_bytes));
    if (!f.first_device_bytes) f.first_device_bytes = static_cast<double>(step.cost->device_bytes);
    f.last_device_bytes = static_cast<double>(step.cost->device_bytes);
  }
  if (!to_host.empty()) f.median_to_host_bytes = Median(to_host);
  return f;
}

std::string Ms(const std::optional<double>& v) { return v ? FormatMs(*v) : "–"; }
std::string Kib(const std::optional<double>& v, bool sign = false) { return v ? FormatKib(*v, sign) : "–"; }
std::string Bytes(const std::optional<double>& v) { return v ? FormatBytes(*v) : "–"; }

}  // namespace

std::string FormatKib(double kib, bool sign) {
  char text[48];
  std::snprintf(text, sizeof text, sign ? "%+.1f MiB" : "%.1f MiB", kib / 1024.0);
  return text;
}

const std::vector<std::string>& StatefulCaseColumns() {
  static const std::vector<std::string> columns = {
      "suite", "case", "run", "state", "steps", "readback", "ms per step (median)", "peak, first step",
      "peak, last step", "growth (last − first)", "device memory, first / last step", "copied back per step (median)"};
  return columns;
}

const std::vector<std::string>& StatefulComparisonColumns() {
  static const std::vector<std::string> columns = {
      "suite", "case", "run A", "run B", "ms per step A", "ms per step B", "time B / A", "peak A", "peak B",
      "B saves (A − B)"};
  return columns;
}

StatefulTables BuildStatefulTables(const std::vector<RunData>& runs) {
  // (suite, case) -> (run index, record), in run order.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<size_t, const CaseResult*>>> cases;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const CaseResult& r : runs[i].results) {
      if (r.stateful()) cases[{r.suite, r.name}].push_back({i, &r});
    }
  }
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& [key, ran] : cases) order.push_back(key);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return NaturalLess(a.first, b.first);
    return NaturalLess(a.second, b.second);
  });
  StatefulTables tables;
  for (const auto& key : order) {
    const auto& ran = cases[key];
    std::vector<StepFigures> figures;
    for (const auto& [run, record] : ran) {
      const StepFigures f = FiguresOf(*record);
      figures.push_back(f);
      std::optional<double> growth;
      if (f.first_peak_kb && f.last_peak_kb) growth = *f.last_peak_kb - *f.first_peak_kb;
      tables.per_case.push_back({key.first, key.second, runs[run].label, CaseStateName(record->state), std::to_string(f.steps),
                                 record->state_readback.empty() ? "–" : record->state_readback, Ms(f.median_ms),
                                 Kib(f.first_peak_kb), Kib(f.last_peak_kb), Kib(growth, /*sign=*/true),
                                 f.first_device_bytes ? Bytes(f.first_device_bytes) + " / " + Bytes(f.last_device_bytes)
                                                      : "–",
                                 Bytes(f.median_to_host_bytes)});
    }
    // Each later run against the first: a saving is positive when B needs less.
    for (size_t b = 1; b < ran.size(); ++b) {
      const StepFigures& fa = figures[0];
      const StepFigures& fb = figures[b];
      std::string ratio = "–";
      if (fa.median_ms && fb.median_ms && *fa.median_ms > 0) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", *fb.median_ms / *fa.median_ms);
        ratio = text;
      }
      std::string saving = "–";
      if (fa.max_peak_kb && fb.max_peak_kb) {
        const double saved = *fa.max_peak_kb - *fb.max_peak_kb;
        saving = FormatKib(saved, /*sign=*/true);
        if (*fa.max_peak_kb > 0) {
          char text[32];
          std::snprintf(text, sizeof text, " (%+.1f%%)", 100.0 * saved / *fa.max_peak_kb);
          saving += text;
        }
      }
      tables.side_by_side.push_back({key.first, key.second, runs[ran[0].first].label, runs[ran[b].first].label,
                                     Ms(fa.median_ms), Ms(fb.median_ms), ratio, Kib(fa.max_peak_kb),
                                     Kib(fb.max_peak_kb), saving});
    }
  }
  return tables;
}

}  // namespace parity
