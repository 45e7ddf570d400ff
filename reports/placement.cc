// The rows of the "Placement" section, shared by Markdown and HTML.
#include "reports/placement.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "reports/format.h"

namespace parity {

std::string FormatFlops(double flops) {
  static const char* const kPrefixes[] = {"", " k", " M", " G", " T", " P", " E"};
  size_t p = 0;
  while (std::fabs(flops) >= 1000 && p + 1 < std::size(kPrefixes)) {
    flops /= 1000;
    ++p;
  }
  char text[32];
  if (p == 0) std::snprintf(text, sizeof text, "%.0f", flops);
  else std::snprintf(text, sizeof text, "%.3g%s", flops, kPrefixes[p]);
  return text;
}

std::string PlacementCell(const PlacementTotals& t) {
  auto percent = [](const std::optional<double>& share) {
    if (!share) return std::string("–");
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", 100.0 * *share);
    return std::string(text);
  };
  std::string cell = percent(t.NodeShare()) + " of " + std::to_string(t.NodeCount()) + " nodes · " +
                     percent(t.FlopShare()) + " of " + FormatFlops(t.KnownFlops()) + " FLOP";
  if (t.flops_unknown > 0) cell += " · " + std::to_string(t.flops_unknown) + " nodes' FLOPs unknown";
  if (t.cost_cases > 0) {
    cell += " · copied " + FormatBytes(static_cast<double>(t.copies.to_device_bytes)) + " to the device and " +
            FormatBytes(static_cast<double>(t.copies.to_host_bytes)) + " back";
    if (t.cost_cases < t.cases) cell += " (" + std::to_string(t.cost_cases) + " cases counted)";
  }
  return cell;
}

std::vector<PlacementRow> BuildPlacementRows(const std::vector<RunData>& runs) {
  std::vector<Summary> summaries;
  bool any = false;
  std::set<std::string, bool (*)(const std::string&, const std::string&)> suites(NaturalLess), models(NaturalLess);
  for (const RunData& run : runs) {
    Summary s;
    for (const CaseResult& r : run.results) s.Add(r);
    any |= s.placement.cases > 0;
    for (const auto& [suite, totals] : s.placement_by_suite) suites.insert(suite);
    for (const auto& [name, totals] : s.placement_by_model) models.insert(name);
    summaries.push_back(std::move(s));
  }
  if (!any) return {};
  auto cell = [](const PlacementTotals* t) { return t && t->cases > 0 ? PlacementCell(*t) : std::string("–"); };
  auto find = [](const std::map<std::string, PlacementTotals>& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  };
  std::vector<PlacementRow> rows;
  rows.push_back({"all cases", {}});
  for (const Summary& s : summaries) rows.back().cells.push_back(cell(&s.placement));
  for (const std::string& suite : suites) {
    rows.push_back({"suite " + suite, {}});
    for (const Summary& s : summaries) rows.back().cells.push_back(cell(find(s.placement_by_suite, suite)));
  }
  for (const std::string& model : models) {
    rows.push_back({"model " + model, {}});
    for (const Summary& s : summaries) rows.back().cells.push_back(cell(find(s.placement_by_model, model)));
  }
  return rows;
}

}  // namespace parity
