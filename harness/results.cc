// Result states and their JSON form (spec/results.md).
#include "harness/results.h"

#include <algorithm>

namespace parity {

const char* CaseStateName(CaseState state) {
  switch (state) {
    case CaseState::kPass: return "PASS";
    case CaseState::kFail: return "FAIL";
    case CaseState::kUnsupported: return "UNSUPPORTED";
    case CaseState::kSkip: return "SKIP";
    case CaseState::kXfail: return "XFAIL";
    case CaseState::kXpass: return "XPASS";
    case CaseState::kCrash: return "CRASH";
    case CaseState::kTimeout: return "TIMEOUT";
    case CaseState::kError: return "ERROR";
    case CaseState::kMistrusted: return "MISTRUSTED";
    case CaseState::kFellBack: return "FELL_BACK";
  }
  return "?";
}

std::optional<CaseState> CaseStateFromName(const std::string& name) {
  for (int s = 0; s <= static_cast<int>(CaseState::kFellBack); ++s) {
    if (name == CaseStateName(static_cast<CaseState>(s))) return static_cast<CaseState>(s);
  }
  return std::nullopt;
}

bool FailsGate(CaseState state) {
  switch (state) {
    case CaseState::kFail:
    case CaseState::kCrash:
    case CaseState::kTimeout:
    case CaseState::kFellBack:
    case CaseState::kXpass: return true;
    default: return false;
  }
}

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ShellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") ==
                           std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

nlohmann::json TimingStats(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {{"median", median}, {"min", values.front()}, {"max", values.back()}, {"repeats", n}};
}

nlohmann::json ToJson(const CaseResult& r) {
  nlohmann::json j = {
      {"case", r.name},
      {"suite", r.suite},
      {"dir", r.dir},
      {"operator", r.op},
      {"adapter", r.adapter},
      {"device", r.device},
      {"state", CaseStateName(r.state)},
      {"load_ms_cold", r.load_ms_cold ? nlohmann::json(*r.load_ms_cold) : nlohmann::json(nullptr)},
      {"load_ms_warm", TimingStats(r.load_ms_warm)},
      {"run_ms", r.run_ms},
      {"outputs", r.outputs},
      {"variants", r.variants},
      {"placement", r.placement},
      {"repro", r.repro},
  };
  if (r.variant_targets) j["variant_targets"] = *r.variant_targets;
  if (r.variants_expected) j["variants_expected"] = *r.variants_expected;
  // Only a model with variant entries has a stripped twin; other lines stay as they were.
  if (r.load_ms_stripped_cold || !r.load_ms_stripped_warm.empty()) {
    j["load_ms_stripped_cold"] =
        r.load_ms_stripped_cold ? nlohmann::json(*r.load_ms_stripped_cold) : nlohmann::json(nullptr);
    j["load_ms_stripped_warm"] = TimingStats(r.load_ms_stripped_warm);
  }
  if (!r.load_ms_stripped_error.empty()) j["load_ms_stripped_error"] = r.load_ms_stripped_error;
  // Only a stateful case has steps; other lines stay as they were.
  if (!r.state_readback.empty() || !r.steps.empty()) {
    j["state_readback"] = r.state_readback;
    j["steps"] = nlohmann::json::array();
    auto kb = [](const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    for (const StepRecord& s : r.steps) {
      j["steps"].push_back({{"step", s.step},
                            {"run_ms", s.run_ms},
                            {"run_peak_rss_kb", kb(s.run_peak_rss_kb)},
                            {"rss_kb", kb(s.rss_kb)},
                            {"compared", s.compared},
                            {"max_ulp_error", s.max_ulp_error ? nlohmann::json(*s.max_ulp_error)
                                                              : nlohmann::json(nullptr)}});
    }
  }
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.expectation.empty()) j["expectation"] = r.expectation;
  if (r.gate_failure) j["gate_failure"] = true;
  return j;
}

StatusOr<CaseResult> CaseResultFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("a result must be a JSON object");
  for (const char* key : {"case", "suite", "dir", "state"}) {
    if (!j.contains(key) || !j[key].is_string()) return InvalidArgument("a result needs the string field '", key, "'");
  }
  CaseResult r;
  r.name = j["case"];
  r.suite = j["suite"];
  r.dir = j["dir"];
  const std::optional<CaseState> state = CaseStateFromName(j["state"]);
  if (!state) return InvalidArgument("result of '", r.name, "': unknown state '", j["state"].get<std::string>(), "'");
  r.state = *state;
  auto text = [&](const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; };
  r.op = text("operator");
  r.adapter = text("adapter");
  r.device = text("device");
  r.message = text("message");
  r.expectation = text("expectation");
  r.repro = text("repro");
  r.load_ms_stripped_error = text("load_ms_stripped_error");
  if (j.contains("load_ms_cold") && j["load_ms_cold"].is_number()) r.load_ms_cold = j["load_ms_cold"].get<double>();
  if (j.contains("load_ms_warm") && j["load_ms_warm"].is_object() && j["load_ms_warm"].contains("median") &&
      j["load_ms_warm"]["median"].is_number()) {
    // The journal keeps statistics, not every repeat; the median stands for them.
    r.load_ms_warm = {j["load_ms_warm"]["median"].get<double>()};
  }
  if (j.contains("load_ms_stripped_cold") && j["load_ms_stripped_cold"].is_number()) {
    r.load_ms_stripped_cold = j["load_ms_stripped_cold"].get<double>();
  }
  if (j.contains("load_ms_stripped_warm") && j["load_ms_stripped_warm"].is_object() &&
      j["load_ms_stripped_warm"].contains("median") && j["load_ms_stripped_warm"]["median"].is_number()) {
    r.load_ms_stripped_warm = {j["load_ms_stripped_warm"]["median"].get<double>()};
  }
  // Lists of names; lines written before these fields existed have none.
  auto names = [&](const char* key) -> std::optional<std::vector<std::string>> {
    if (!j.contains(key) || !j[key].is_array()) return std::nullopt;
    std::vector<std::string> list;
    for (const auto& item : j[key]) {
      if (item.is_string()) list.push_back(item.get<std::string>());
    }
    return list;
  };
  r.variant_targets = names("variant_targets");
  r.variants_expected = names("variants_expected");
  if (j.contains("run_ms") && j["run_ms"].is_number()) r.run_ms = j["run_ms"].get<double>();
  r.state_readback = text("state_readback");
  if (j.contains("steps") && j["steps"].is_array()) {
    for (const auto& item : j["steps"]) {
      if (!item.is_object() || !item.contains("step") || !item["step"].is_number_integer()) {
        return InvalidArgument("result of '", r.name, "': every entry of \"steps\" needs an integer \"step\"");
      }
      StepRecord s;
      s.step = item["step"].get<int>();
      if (item.contains("run_ms") && item["run_ms"].is_number()) s.run_ms = item["run_ms"].get<double>();
      for (const char* key : {"run_peak_rss_kb", "rss_kb"}) {
        if (!item.contains(key) || !item[key].is_number_integer()) continue;
        (std::string(key) == "rss_kb" ? s.rss_kb : s.run_peak_rss_kb) = item[key].get<int64_t>();
      }
      if (item.contains("compared") && item["compared"].is_array()) {
        for (const auto& name : item["compared"]) {
          if (name.is_string()) s.compared.push_back(name.get<std::string>());
        }
      }
      if (item.contains("max_ulp_error") && item["max_ulp_error"].is_number()) {
        s.max_ulp_error = item["max_ulp_error"].get<double>();
      }
      r.steps.push_back(std::move(s));
    }
  }
  r.gate_failure = j.contains("gate_failure") && j["gate_failure"].is_boolean() && j["gate_failure"].get<bool>();
  if (j.contains("outputs")) r.outputs = j["outputs"];
  if (j.contains("variants")) r.variants = j["variants"];
  if (j.contains("placement")) r.placement = j["placement"];
  return r;
}

void Summary::Add(const CaseResult& r) {
  ++total;
  ++by_state[CaseStateName(r.state)];
  ++by_operator[r.op][CaseStateName(r.state)];
  ++by_suite[r.suite][CaseStateName(r.state)];
  if (r.load_ms_cold) load_ms_cold.push_back(*r.load_ms_cold);
  if (!r.load_ms_warm.empty()) {
    const nlohmann::json stats = TimingStats(r.load_ms_warm);
    load_ms_warm_median.push_back(stats["median"].get<double>());
  }
  if (r.load_ms_stripped_cold || !r.load_ms_stripped_warm.empty()) {
    auto median = [](const std::vector<double>& v) -> std::optional<double> {
      if (v.empty()) return std::nullopt;
      return TimingStats(v)["median"].get<double>();
    };
    variant_load.push_back({r.load_ms_cold, median(r.load_ms_warm), r.load_ms_stripped_cold,
                            median(r.load_ms_stripped_warm)});
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
    const nlohmann::json stats = TimingStats(v);
    return stats.is_null() ? nlohmann::json(nullptr) : stats["median"];
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
  nlohmann::json j = {{"total", total},       {"by_state", by_state}, {"by_operator", by_operator},
                      {"by_suite", by_suite}, {"load_ms", load}};
  if (nlohmann::json variant = VariantLoadStats(variant_load); !variant.is_null()) j["variant_load_ms"] = variant;
  return j;
}

}  // namespace parity
