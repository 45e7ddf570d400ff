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
  j.erase("variant_load_ms");  // figures of earlier results no longer hold
  const nlohmann::json computed = summary.ToJson();
  for (auto it = computed.begin(); it != computed.end(); ++it) j[it.key()] = *it;
  return j;
}

Status WriteSummary(const std::string& dir, const Summary& summary, const nlohmann::json& fields) {
  const std::string path = (std::filesystem::path(dir) / "summary.json").string();
  return WriteFileAtomically(path, DumpJson(SummaryJson(summary, fields), 1) + "\n");
}

}  // namespace parity
