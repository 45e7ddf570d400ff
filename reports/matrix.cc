// Building the report model (matrix, facts, failures, load times) from
// loaded runs.
#include "reports/matrix.h"

#include "reports/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace parity {

int MatrixCell::Pass() const {
  auto it = states.find("PASS");
  return it == states.end() ? 0 : it->second;
}

int MatrixCell::Total() const {
  int total = not_run;
  for (const auto& [state, n] : states) total += n;
  return total;
}

CellKind MatrixCell::Kind() const {
  if (states.empty()) return not_run > 0 || absent > 0 ? CellKind::kNotRun : CellKind::kEmpty;
  if (gate_failures > 0) return CellKind::kFail;
  return Pass() == Total() && absent == 0 ? CellKind::kPass : CellKind::kMixed;
}

std::string MatrixCell::NonPassText() const {
  std::string text;
  const auto add = [&](const std::string& what, int n) {
    if (n > 0) text += (text.empty() ? "" : ", ") + what + " " + std::to_string(n);
  };
  for (const std::string& state : StateOrder()) {
    if (state == "PASS") continue;
    auto it = states.find(state);
    if (it != states.end()) add(state, it->second);
  }
  add(kNotRun, not_run);
  // Only those the states above do not already explain.
  int unforeseen = gate_failures;
  for (const auto& [state, n] : states) unforeseen -= FailsGate(state) ? n : 0;
  add("unforeseen by the expectations", unforeseen);
  if (absent > 0) text += (text.empty() ? "" : ", ") + std::to_string(absent) + " operator(s) not in this run's plan";
  return text;
}

void MatrixCell::Add(const MatrixCell& other) {
  for (const auto& [state, n] : other.states) states[state] += n;
  not_run += other.not_run;
  absent += other.absent;
  gate_failures += other.gate_failures;
}

Matrix BuildMatrix(const std::vector<RunData>& runs) {
  using Key = std::pair<std::string, std::string>;  // (suite, operator)
  const auto op_of = [](const std::string& op) { return op.empty() ? std::string(kUnknownOperator) : op; };
  struct NaturalKeyLess {
    bool operator()(const Key& a, const Key& b) const {
      if (a.first != b.first) return NaturalLess(a.first, b.first);
      return NaturalLess(a.second, b.second);
    }
  };
  std::map<Key, std::vector<MatrixCell>, NaturalKeyLess> cells;
  std::set<Key> planned_anywhere;
  std::vector<std::set<Key>> planned_by(runs.size());
  const auto cell = [&](const Key& key, size_t column) -> MatrixCell& {
    auto& row = cells[key];
    row.resize(runs.size());
    return row[column];
  };
  for (size_t c = 0; c < runs.size(); ++c) {
    for (const CaseResult& r : runs[c].results) {
      MatrixCell& x = cell({r.suite, op_of(r.op)}, c);
      ++x.states[CaseStateName(r.state)];
      x.gate_failures += CountsForGate(r);
    }
    for (const PlannedCase& p : runs[c].not_run) ++cell({p.suite, op_of(p.op)}, c).not_run;
    for (const PlannedCase& p : runs[c].planned) {
      planned_by[c].insert({p.suite, op_of(p.op)});
      planned_anywhere.insert({p.suite, op_of(p.op)});
    }
  }
  Matrix m;
  for (const RunData& r : runs) m.columns.push_back(r.label);
  for (auto& [key, row_cells] : cells) {
    MatrixRow row{key.first, key.second, std::move(row_cells)};
    row.cells.resize(runs.size());
    for (size_t c = 0; c < runs.size(); ++c) {
      MatrixCell& x = row.cells[c];
      // Another run planned this row and this one has nothing for it: the
      // column is missing cases it should have, not simply different.
      if (x.Total() == 0 && planned_anywhere.count(key) && !planned_by[c].count(key)) x.absent = 1;
    }
    if (m.suites.empty() || m.suites.back().suite != row.suite) {
      m.suites.push_back({row.suite, "", std::vector<MatrixCell>(runs.size())});
      m.first_row.push_back(m.rows.size());
      m.row_count.push_back(0);
    }
    for (size_t c = 0; c < runs.size(); ++c) m.suites.back().cells[c].Add(row.cells[c]);
    ++m.row_count.back();
    m.rows.push_back(std::move(row));
  }
  return m;
}

std::vector<const CaseResult*> ListedFailures(const RunData& run) {
  std::vector<const CaseResult*> failures;
  for (const CaseResult& r : run.results) {
    if (IsListedFailure(r)) failures.push_back(&r);
  }
  const auto& order = StateOrder();
  const auto rank = [&](const std::string& state) { return std::find(order.begin(), order.end(), state) - order.begin(); };
  std::sort(failures.begin(), failures.end(), [&](const CaseResult* a, const CaseResult* b) {
    const auto rank_a = rank(CaseStateName(a->state)), rank_b = rank(CaseStateName(b->state));
    if (rank_a != rank_b) return rank_a < rank_b;
    if (a->suite != b->suite) return NaturalLess(a->suite, b->suite);
    return NaturalLess(a->name, b->name);
  });
  return failures;
}

FactRows RunFacts(const std::vector<RunData>& runs) {
  FactRows rows = {{"adapter", {}}, {"version", {}},  {"device", {}},       {"finished", {}},
                   {"seconds", {}}, {"cases", {}},    {"shard", {}},        {"expectations", {}},
                   {"results", {}}};
  for (const RunData& run : runs) {
    const nlohmann::json summary = RefreshedSummary(run);
    const auto text = [](const nlohmann::json& j) -> std::string {
      if (j.is_string()) return j.get<std::string>();
      return j.is_null() ? "–" : j.dump();
    };
    std::string device = run.device.empty() ? "–" : run.device;
    if (const std::string description = run.DeviceDescription(); !description.empty()) {
      device += " (" + description + ")";
    }
    char seconds[32] = "–";
    if (const auto s = summary.value("seconds", nlohmann::json()); s.is_number()) {
      std::snprintf(seconds, sizeof seconds, "%.1f", s.get<double>());
    }
    const std::string version = run.AdapterVersion();
    const std::string expectations = text(summary.value("expectations", nlohmann::json()));
    std::vector<std::string> values = {
        run.adapter,
        version.empty() ? "–" : version,
        device,
        run.when.empty() ? "–" : run.when,
        seconds,
        std::to_string(run.results.size()) + " with results of " + text(summary["planned"]) + " planned, " +
            std::to_string(run.not_run.size()) + " not run",
        text(summary.value("shard", nlohmann::json())),
        expectations.empty() ? "–" : expectations,
        run.dir};
    for (size_t i = 0; i < rows.size(); ++i) rows[i].second.push_back(values[i]);
  }
  // The adapter's declaration (summary.json adapter.honours_aliasing), shown
  // when some run has one: older runs' reports stay as they were.
  std::vector<std::string> aliasing;
  bool declared = false;
  for (const RunData& run : runs) {
    const nlohmann::json adapter = run.summary.value("adapter", nlohmann::json());
    const bool has =
        adapter.is_object() && adapter.contains("honours_aliasing") && adapter["honours_aliasing"].is_boolean();
    declared |= has;
    aliasing.push_back(has ? (adapter["honours_aliasing"].get<bool>() ? "yes" : "no") : "–");
  }
  if (declared) rows.insert(rows.begin() + 2, {"honours aliasing", aliasing});
  return rows;
}

FactRows VariantLoadRows(const std::vector<RunData>& runs) {
  FactRows rows = {{"models with entries measured", {}},
                   {"cold, median: with entries / stripped", {}},
                   {"cold, ratio (median per model)", {}},
                   {"warm, median of medians: with entries / stripped", {}},
                   {"warm, ratio (median per model)", {}}};
  bool any = false;
  const auto ms = [](const nlohmann::json& stats) {
    return stats.is_object() && stats["median"].is_number() ? FormatMs(stats["median"].get<double>())
                                                            : std::string("–");
  };
  const auto ratio = [](const nlohmann::json& r) {
    if (!r.is_number()) return std::string("–");
    char text[32];
    std::snprintf(text, sizeof text, "%.2f×", r.get<double>());
    return std::string(text);
  };
  for (const RunData& run : runs) {
    const nlohmann::json v = SummaryOf(run).ToJson().value("variant_load_ms", nlohmann::json());
    if (v.is_null()) {
      for (auto& row : rows) row.second.push_back("–");
      continue;
    }
    any = true;
    rows[0].second.push_back(std::to_string(v["cases"].get<int>()));
    rows[1].second.push_back(ms(v["cold"]) + " / " + ms(v["stripped_cold"]));
    rows[2].second.push_back(ratio(v["cold_ratio"]));
    rows[3].second.push_back(ms(v["warm_median"]) + " / " + ms(v["stripped_warm_median"]));
    rows[4].second.push_back(ratio(v["warm_ratio"]));
  }
  return any ? rows : FactRows{};
}

LoadTimes LoadTimes::Of(const RunData& run) {
  LoadTimes t;
  for (const CaseResult& r : run.results) {
    if (r.load_ms_cold) t.cold.push_back(*r.load_ms_cold);
    if (std::optional<double> warm = Median(r.load_ms_warm)) t.warm_median.push_back(*warm);
  }
  std::sort(t.cold.begin(), t.cold.end());
  std::sort(t.warm_median.begin(), t.warm_median.end());
  return t;
}

namespace {
double MedianOfSorted(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace

double LoadTimes::ColdMedian() const { return MedianOfSorted(cold); }
double LoadTimes::WarmMedian() const { return MedianOfSorted(warm_median); }

}  // namespace parity
