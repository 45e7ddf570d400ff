// summary.json: the counts, the gate and the timing statistics of a set of
// results, and the file written (spec/results.md).
#include "harness/results/summary.h"

#include <filesystem>

namespace parity {

void Summary::Add(const CaseResult& r, bool counts_for_gate) {
  const char* state = CaseStateName(r.state);
  ++total;
  ++by_state[state];
  ++by_operator[r.op.empty() ? kUnknownOperator : r.op][state];
  ++by_suite[r.suite][state];
  gate_failures += counts_for_gate;
  if (r.load_ms_cold) load_ms_cold.push_back(*r.load_ms_cold);
  if (std::optional<double> warm = Median(r.load_ms_warm)) load_ms_warm_median.push_back(*warm);
  if (r.load_ms_stripped_cold || !r.load_ms_stripped_warm.empty()) {
    variant_load.push_back(
        {r.load_ms_cold, Median(r.load_ms_warm), r.load_ms_stripped_cold, Median(r.load_ms_stripped_warm)});
  }
  if (!r.placement.empty()) {
    placement.Add(r);
    placement_by_suite[r.suite].Add(r);
    if (r.suite == kModelSuite) placement_by_model[r.name].Add(r);
  }
}

void PlacementTotals::Add(const CaseResult& r) {
  ++cases;
  if (r.run_cost) {
    ++cost_cases;
    copies.Add(*r.run_cost);
  }
  int64_t case_nodes = 0;
  for (auto it = r.placement.begin(); it != r.placement.end(); ++it) {
    if (!it->is_number()) continue;  // a line of another tool's making; results.cc reads counts as they are
    const auto n = it->get<int64_t>();
    nodes[it.key()] += n;
    case_nodes += n;
    if (it.key() == r.device) nodes_on_device += n;
  }
  // A line written before FLOPs were counted: none of its nodes' FLOPs is known.
  if (!r.placement_flops_unknown) {
    flops_unknown += case_nodes;
    return;
  }
  for (auto it = r.placement_flops.begin(); it != r.placement_flops.end(); ++it) {
    const double f = it->get<double>();  // a number: CaseResultFromJson checks
    flops[it.key()] += f;
    if (it.key() == r.device) flops_on_device += f;
  }
  flops_unknown += *r.placement_flops_unknown;
}

int64_t PlacementTotals::NodeCount() const {
  int64_t n = 0;
  for (const auto& [device, count] : nodes) n += count;
  return n;
}

double PlacementTotals::KnownFlops() const {
  double f = 0;
  for (const auto& [device, count] : flops) f += count;
  return f;
}

std::optional<double> PlacementTotals::NodeShare() const {
  const int64_t n = NodeCount();
  if (n <= 0) return std::nullopt;
  return static_cast<double>(nodes_on_device) / static_cast<double>(n);
}

std::optional<double> PlacementTotals::FlopShare() const {
  const double f = KnownFlops();
  if (!(f > 0)) return std::nullopt;
  return flops_on_device / f;
}

nlohmann::json PlacementTotals::ToJson() const {
  auto share = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"cases", cases},
                      {"nodes", nodes},
                      {"flops", flops},
                      {"flops_unknown_nodes", flops_unknown},
                      {"on_device", {{"nodes", share(NodeShare())}, {"flops", share(FlopShare())}}}};
  if (cost_cases > 0) {
    j["copies"] = {{"cases", cost_cases},
                   {"to_device_copies", copies.to_device_copies},
                   {"to_device_bytes", copies.to_device_bytes},
                   {"to_host_copies", copies.to_host_copies},
                   {"to_host_bytes", copies.to_host_bytes}};
  }
  return j;
}

nlohmann::json VariantLoadStats(const std::vector<VariantLoadSample>& samples) {
  std::vector<double> cold, warm, stripped_cold, stripped_warm, cold_ratio, warm_ratio;
  for (const VariantLoadSample& s : samples) {
    if (s.cold) cold.push_back(*s.cold);
    if (s.warm) warm.push_back(*s.warm);
    if (s.stripped_cold) stripped_cold.push_back(*s.stripped_cold);
    if (s.stripped_warm) stripped_warm.push_back(*s.stripped_warm);
    // A ratio needs both times, and a stripped time above zero.
    if (s.cold && s.stripped_cold && *s.stripped_cold > 0) cold_ratio.push_back(*s.cold / *s.stripped_cold);
    if (s.warm && s.stripped_warm && *s.stripped_warm > 0) warm_ratio.push_back(*s.warm / *s.stripped_warm);
  }
  if (cold.empty() || stripped_cold.empty()) return nullptr;
  auto median = [](const std::vector<double>& v) {
    const std::optional<double> m = Median(v);
    return m ? nlohmann::json(*m) : nlohmann::json(nullptr);
  };
  return {{"cases", samples.size()},
          {"cold", TimingStats(cold)},
          {"warm_median", TimingStats(warm)},
          {"stripped_cold", TimingStats(stripped_cold)},
          {"stripped_warm_median", TimingStats(stripped_warm)},
          {"cold_ratio", median(cold_ratio)},
          {"warm_ratio", median(warm_ratio)}};
}

nlohmann::json Summary::ToJson() const {
  nlohmann::json load = {{"cold", TimingStats(load_ms_cold)}, {"warm_median", TimingStats(load_ms_warm_median)}};
  nlohmann::json j = {{"total", total},       {"by_state", by_state},           {"by_operator", by_operator},
                      {"by_suite", by_suite}, {"load_ms", load},                {"gate_failures", gate_failures}};
  if (nlohmann::json variant = VariantLoadStats(variant_load); !variant.is_null()) j["variant_load_ms"] = variant;
  if (placement.cases > 0) {
    nlohmann::json p = placement.ToJson();
    p["by_suite"] = nlohmann::json::object();
    for (const auto& [suite, totals] : placement_by_suite) p["by_suite"][suite] = totals.ToJson();
    p["by_model"] = nlohmann::json::object();
    for (const auto& [name, totals] : placement_by_model) p["by_model"][name] = totals.ToJson();
    j["placement"] = p;
  }
  if (planned) j["planned"] = *planned;
  if (not_run) j["not_run"] = *not_run;
  return j;
}

Summary Summarize(const std::vector<CaseResult>& results) {
  Summary summary;
  for (const CaseResult& r : results) summary.Add(r);
  return summary;
}

nlohmann::json SummaryJson(const Summary& summary, nlohmann::json fields) {
  nlohmann::json j = fields.is_object() ? std::move(fields) : nlohmann::json::object();
  // Figures of earlier results no longer hold.
  j.erase("variant_load_ms");
  j.erase("placement");
  const nlohmann::json computed = summary.ToJson();
  for (auto it = computed.begin(); it != computed.end(); ++it) j[it.key()] = *it;
  return j;
}

Status WriteSummary(const std::string& dir, const Summary& summary, const nlohmann::json& fields) {
  const std::string path = (std::filesystem::path(dir) / "summary.json").string();
  return WriteFileAtomically(path, DumpJson(SummaryJson(summary, fields), 1) + "\n");
}

}  // namespace parity
