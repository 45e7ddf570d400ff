// Trends over runs of one adapter: the runs in time order, their counts and
// load-time medians, the cases that changed state between neighbours, and
// the chart of report.html (plain SVG shapes and text, no script).
#include "reports/trend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "reports/format.h"
#include "reports/load_chart.h"
#include "reports/matrix.h"

namespace parity {
namespace {

// Cases by suite, then name, in natural order.
struct CaseKeyLess {
  bool operator()(const std::pair<std::string, std::string>& a, const std::pair<std::string, std::string>& b) const {
    if (a.first != b.first) return NaturalLess(a.first, b.first);
    return NaturalLess(a.second, b.second);
  }
};
using CaseStates = std::map<std::pair<std::string, std::string>, std::string, CaseKeyLess>;

// Every case a run knows, with its state: its result's, or NOT RUN for a
// planned case without one.
CaseStates StatesOf(const RunData& run) {
  CaseStates states;
  for (const PlannedCase& c : run.not_run) states[{c.suite, c.name}] = kNotRun;
  for (const CaseResult& r : run.results) states[{r.suite, r.name}] = CaseStateName(r.state);
  return states;
}

TrendPoint PointOf(const RunData& run) {
  TrendPoint p;
  p.label = run.label;
  p.when = run.when;
  p.version = run.AdapterVersion();
  p.timed = ParseRunTime(run.when).has_value();
  for (const CaseResult& r : run.results) {
    ++p.by_state[CaseStateName(r.state)];
    if (CountsForGate(r)) ++p.gate_failures;
  }
  if (!run.not_run.empty()) p.by_state[kNotRun] = static_cast<int>(run.not_run.size());
  const auto pass = p.by_state.find(CaseStateName(CaseState::kPass));
  p.pass = pass == p.by_state.end() ? 0 : pass->second;
  p.total = static_cast<int>(run.results.size() + run.not_run.size());
  const LoadTimes times = LoadTimes::Of(run);
  p.cold_median_ms = times.ColdMedian();
  p.warm_median_ms = times.WarmMedian();
  return p;
}

TrendStep StepBetween(const RunData& before, const RunData& after, size_t index) {
  const CaseStates from = StatesOf(before), to = StatesOf(after);
  TrendStep step;
  step.index = index;
  std::vector<CaseChange> added, removed;
  for (const auto& [key, state] : from) {
    const auto it = to.find(key);
    if (it == to.end()) {
      removed.push_back({key.first, key.second, state, ""});
    } else if (it->second != state) {
      step.changes.push_back({key.first, key.second, state, it->second});
    }
  }
  for (const auto& [key, state] : to) {
    if (!from.count(key)) added.push_back({key.first, key.second, "", state});
  }
  step.changed = static_cast<int>(step.changes.size());
  step.added = static_cast<int>(added.size());
  step.removed = static_cast<int>(removed.size());
  step.changes.insert(step.changes.end(), added.begin(), added.end());
  step.changes.insert(step.changes.end(), removed.begin(), removed.end());
  return step;
}

// `members` (indexes into `runs`, in argument order) ordered by time, then
// version; a run without a readable time keeps its place, and a note says so.
std::vector<size_t> TimeOrder(const std::vector<RunData>& runs, const std::vector<size_t>& members,
                              std::vector<std::string>& notes) {
  struct Timed {
    double seconds;
    size_t run;
  };
  std::vector<Timed> timed;
  std::vector<size_t> slots;  // the places in `members` that timed runs hold
  for (size_t k = 0; k < members.size(); ++k) {
    const RunData& run = runs[members[k]];
    if (const std::optional<double> seconds = ParseRunTime(run.when)) {
      timed.push_back({*seconds, members[k]});
      slots.push_back(k);
    } else if (run.when.empty()) {
      notes.push_back(run.label + " has no time (no \"finished\" in its summary.json, no results.jsonl): it keeps "
                      "its place in the order of the arguments.");
    } else {
      notes.push_back(run.label + "'s time \"" + run.when + "\" cannot be read: it keeps its place in the order "
                      "of the arguments.");
    }
  }
  std::stable_sort(timed.begin(), timed.end(), [&](const Timed& a, const Timed& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return NaturalLess(runs[a.run].AdapterVersion(), runs[b.run].AdapterVersion());
  });
  std::vector<size_t> order = members;
  for (size_t j = 0; j < slots.size(); ++j) order[slots[j]] = timed[j].run;
  return order;
}

std::string Num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// One panel of the chart: values from 0 at the bottom to `max` at the top,
// a grid line every `step`.
struct Panel {
  double top, height, step, max;
  double Y(double v) const { return top + height * (1 - v / max); }
};

Panel PanelFor(double top, double height, double largest) {
  const double padded = std::max(largest, 1e-9) * 1.05;
  const double step = NiceStep(padded);
  return {top, height, step, step * std::ceil(padded / step)};
}

void DrawGrid(std::ostringstream& svg, const Panel& panel, double left, double right, const std::string& title) {
  for (double v = 0; v <= panel.max * 1.0001; v += panel.step) {
    svg << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(panel.Y(v)) << "\" x2=\"" << Num(right) << "\" y2=\""
        << Num(panel.Y(v)) << "\" class=\"grid\"/><text x=\"" << Num(left - 6) << "\" y=\"" << Num(panel.Y(v) + 4)
        << "\" text-anchor=\"end\">" << TickLabel(v) << "</text>";
  }
  svg << "<text x=\"" << Num(left) << "\" y=\"" << Num(panel.top - 10) << "\" class=\"axis-title\">" << title
      << "</text>";
}

// One line of the chart: a value per run (NaN where the run has none).
struct Series {
  std::vector<double> values;
  std::string colour;
  std::string what;     // in each dot's tooltip: "passing", "ms cold median"
  bool whole = false;   // a count: figures without decimals
  bool dashed = false;
  bool labelled = false;  // the figure written above each dot
};

// Lines through the finite values (broken where a run has none), a dot with
// a tooltip at each value and, when labelled, its figure.
void DrawSeries(std::ostringstream& svg, const Series& series, const std::vector<double>& x, const Panel& panel,
                const std::vector<std::string>& run_labels) {
  const auto figure = [&](double v) { return series.whole ? std::to_string(std::lround(v)) : FormatMs(v); };
  std::string points;
  const auto flush = [&] {
    if (points.find(' ') != std::string::npos) {
      svg << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << series.colour << "\""
          << (series.dashed ? " stroke-dasharray=\"6 4\"" : "") << " points=\"" << points << "\"/>";
    }
    points.clear();
  };
  for (size_t i = 0; i < series.values.size(); ++i) {
    if (!std::isfinite(series.values[i])) {
      flush();
      continue;
    }
    points += (points.empty() ? "" : " ") + Num(x[i]) + "," + Num(panel.Y(series.values[i]));
  }
  flush();
  for (size_t i = 0; i < series.values.size(); ++i) {
    const double v = series.values[i];
    if (!std::isfinite(v)) continue;
    svg << "<circle cx=\"" << Num(x[i]) << "\" cy=\"" << Num(panel.Y(v)) << "\" r=\"3.5\" fill=\"" << series.colour
        << "\"><title>" << HtmlEscape(run_labels[i]) << ": " << figure(v) << " " << series.what << "</title></circle>";
    if (series.labelled) {
      svg << "<text x=\"" << Num(x[i]) << "\" y=\"" << Num(panel.Y(v) - 8) << "\" text-anchor=\"middle\">"
          << figure(v) << "</text>";
    }
  }
}

// "2026-11-22 06:30" for a readable time; else the text as written.
std::string ShortTime(const TrendPoint& p) {
  if (p.when.empty()) return "no time";
  if (!p.timed) return Truncate(p.when, 20);
  std::string text = p.when.substr(0, 16);
  text[10] = ' ';
  return text;
}

}  // namespace

std::optional<double> ParseRunTime(const std::string& when) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, consumed = 0;
  double second = 0;
  char separator = 0;
  if (std::sscanf(when.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%n", &year, &month, &day, &separator, &hour, &minute,
                  &second, &consumed) != 7) {
    return std::nullopt;
  }
  if ((separator != 'T' && separator != ' ') || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || !(second >= 0 && second < 61)) {
    return std::nullopt;
  }
  std::string zone = when.substr(static_cast<size_t>(consumed));
  zone.erase(0, zone.find_first_not_of(' '));
  double offset_s = 0;
  if (!zone.empty() && zone != "Z" && zone != "UTC") {
    int zone_hour = 0, zone_minute = 0, zone_consumed = 0;
    char sign = 0;
    if (std::sscanf(zone.c_str(), "%c%2d:%2d%n", &sign, &zone_hour, &zone_minute, &zone_consumed) != 3 ||
        (sign != '+' && sign != '-') || static_cast<size_t>(zone_consumed) != zone.size()) {
      return std::nullopt;
    }
    offset_s = (sign == '+' ? 1 : -1) * (zone_hour * 3600.0 + zone_minute * 60.0);
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  return static_cast<double>(timegm(&tm)) + second - offset_s;
}

std::vector<Trend> BuildTrends(const std::vector<RunData>& runs) {
  // One trend per adapter on one device: runs on another device are another series.
  std::vector<std::string> adapters;  // "adapter@device", in the order they first appear
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string key = runs[i].device.empty() ? runs[i].adapter : runs[i].adapter + "@" + runs[i].device;
    if (!members.count(key)) adapters.push_back(key);
    members[key].push_back(i);
  }
  std::vector<Trend> trends;
  for (const std::string& adapter : adapters) {
    const std::vector<size_t>& group = members[adapter];
    const RunData& first = runs[group.front()];
    // The same folder given twice, say, is no trend.
    const bool differ = std::any_of(group.begin(), group.end(), [&](size_t i) {
      return runs[i].when != first.when || runs[i].AdapterVersion() != first.AdapterVersion();
    });
    if (group.size() < 2 || !differ) continue;
    Trend trend;
    trend.adapter = adapter;
    const std::vector<size_t> order = TimeOrder(runs, group, trend.notes);
    for (size_t k = 0; k < order.size(); ++k) {
      trend.points.push_back(PointOf(runs[order[k]]));
      if (k > 0) trend.steps.push_back(StepBetween(runs[order[k - 1]], runs[order[k]], k));
    }
    trends.push_back(std::move(trend));
  }
  return trends;
}

const std::vector<TrendColumn>& TrendColumns() {
  static const std::vector<TrendColumn> columns = {
      {"run", false},           {"finished", false},          {"version", false},
      {"pass", true},           {"pass rate", true},          {"gate failures", true},
      {"cold load median (ms)", true}, {"warm load median (ms)", true},
      {"cases by state", false}, {"since the run before", false}};
  return columns;
}

std::vector<std::vector<std::string>> TrendRows(const Trend& trend) {
  std::vector<std::vector<std::string>> rows;
  const auto ms = [](double v) { return std::isfinite(v) ? FormatMs(v) : std::string("–"); };
  std::vector<std::string> states = StateOrder();
  states.push_back(kNotRun);
  for (size_t i = 0; i < trend.points.size(); ++i) {
    const TrendPoint& p = trend.points[i];
    std::string by_state;
    for (const std::string& state : states) {
      const auto it = p.by_state.find(state);
      if (it != p.by_state.end()) by_state += (by_state.empty() ? "" : " · ") + state + " " + std::to_string(it->second);
    }
    std::string since = "–";
    if (i > 0) {
      const TrendStep& step = trend.steps[i - 1];
      since = step.changes.empty() ? "no change"
                                   : std::to_string(step.changed) + " changed, " + std::to_string(step.added) +
                                         " added, " + std::to_string(step.removed) + " removed";
    }
    rows.push_back({p.label, p.when.empty() ? "–" : p.when, p.version.empty() ? "–" : p.version,
                    std::to_string(p.pass), FormatPercent(p.pass, p.total), std::to_string(p.gate_failures),
                    ms(p.cold_median_ms), ms(p.warm_median_ms), by_state.empty() ? "–" : by_state, since});
  }
  return rows;
}

std::string StepTitle(const Trend& trend, const TrendStep& step) {
  return trend.points[step.index - 1].label + " → " + trend.points[step.index].label + ": " +
         std::to_string(step.changed) + " changed state, " + std::to_string(step.added) + " added, " +
         std::to_string(step.removed) + " removed";
}

std::string TrendSvg(const Trend& trend) {
  const size_t n = trend.points.size();
  if (n < 2) return "";
  const double width = 900, left = 80, right = 820, inset = 40, panel_height = 110, top = 30, gap = 50;
  std::vector<double> x;
  Series pass{{}, "#2f855a", "passing", /*whole=*/true, /*dashed=*/false, /*labelled=*/true};
  Series cold{{}, RunColour(0), "ms cold median", false, false, true};
  Series warm{{}, RunColour(0), "ms warm median", false, true, false};
  std::vector<std::string> labels;
  double most_passing = 1, slowest = 0;
  bool any_load = false;
  for (size_t i = 0; i < n; ++i) {
    const TrendPoint& p = trend.points[i];
    // Inset from the axes, so that a figure never sits on a tick label.
    x.push_back(left + inset + (right - left - 2 * inset) * static_cast<double>(i) / static_cast<double>(n - 1));
    pass.values.push_back(p.pass);
    cold.values.push_back(p.cold_median_ms);
    warm.values.push_back(p.warm_median_ms);
    labels.push_back(p.label);
    most_passing = std::max(most_passing, static_cast<double>(p.pass));
    for (double v : {p.cold_median_ms, p.warm_median_ms}) {
      if (std::isfinite(v)) slowest = std::max(slowest, v), any_load = true;
    }
  }
  const Panel passing = PanelFor(top, panel_height, most_passing);
  const Panel load = PanelFor(top + panel_height + gap, panel_height, slowest);
  const double axis_y = load.top + load.height;
  const double height = axis_y + 50;
  std::ostringstream svg;
  svg << "<svg class=\"chart trend-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(width)
      << "\" height=\"" << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " " << Num(height)
      << "\" role=\"img\" aria-label=\""
      << HtmlEscape("passing cases and median session creation time of " + trend.adapter + ", run by run") << "\">";
  DrawGrid(svg, passing, left, right, "cases passing");
  DrawSeries(svg, pass, x, passing, labels);
  if (any_load) {
    DrawGrid(svg, load, left, right, "session creation, median (ms): solid cold, dashed warm");
    DrawSeries(svg, cold, x, load, labels);
    DrawSeries(svg, warm, x, load, labels);
  } else {
    svg << "<text x=\"" << Num(left) << "\" y=\"" << Num(load.top + 20) << "\" class=\"muted\">no run measured a "
        << "load time</text>";
  }
  // Under the axis, each run's time and what tells it apart: its version
  // where versions differ, else its label. Thinned so that about ten fit.
  const bool versions_differ = std::any_of(trend.points.begin(), trend.points.end(),
                                           [&](const TrendPoint& p) { return p.version != trend.points[0].version; });
  const size_t every = (n + 9) / 10;
  for (size_t i = 0; i < n; i += every) {
    const TrendPoint& p = trend.points[i];
    svg << "<text x=\"" << Num(x[i]) << "\" y=\"" << Num(axis_y + 18) << "\" text-anchor=\"middle\">#" << i + 1
        << " " << HtmlEscape(ShortTime(p)) << "</text><text x=\"" << Num(x[i])
        << "\" y=\"" << Num(axis_y + 34) << "\" text-anchor=\"middle\" class=\"muted\">"
        << HtmlEscape(Truncate(versions_differ ? p.version : p.label, 32)) << "</text>";
  }
  svg << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(axis_y) << "\" x2=\"" << Num(right) << "\" y2=\""
      << Num(axis_y) << "\" class=\"axis\"/></svg>";
  return svg.str();
}

}  // namespace parity
