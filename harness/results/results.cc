// The results model: states, the gate rule, result lines written and read
// back, and results.jsonl (spec/results.md).
#include "harness/results/results.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

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

bool FailsGate(std::string_view state_name) {
  const std::optional<CaseState> state = CaseStateFromName(std::string(state_name));
  return state && FailsGate(*state);
}

const std::vector<std::string>& StateOrder() {
  static const std::vector<std::string> order = {"PASS",  "FAIL",        "CRASH", "TIMEOUT", "FELL_BACK", "XPASS",
                                                 "ERROR", "MISTRUSTED", "XFAIL", "UNSUPPORTED", "SKIP"};
  return order;
}

bool CountsForGate(const CaseResult& result) { return result.gate_failure || FailsGate(result.state); }

std::string DumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string AsJournalText(const std::string& text) {
  return nlohmann::json::parse(DumpJson(nlohmann::json(text))).get<std::string>();
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

std::optional<double> Median(std::vector<double> values) {
  const nlohmann::json stats = TimingStats(std::move(values));
  if (stats.is_null()) return std::nullopt;
  return stats["median"].get<double>();
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
  // Only a case whose session reported a placement has its FLOPs.
  if (r.placement_flops_unknown) {
    j["placement_flops"] = r.placement_flops;
    j["placement_flops_unknown"] = *r.placement_flops_unknown;
  }
  if (r.variant_targets) j["variant_targets"] = *r.variant_targets;
  if (r.variants_expected) j["variants_expected"] = *r.variants_expected;
  // Only a model with variant entries has a stripped twin; other lines stay as they were.
  if (r.load_ms_stripped_cold || !r.load_ms_stripped_warm.empty()) {
    j["load_ms_stripped_cold"] =
        r.load_ms_stripped_cold ? nlohmann::json(*r.load_ms_stripped_cold) : nlohmann::json(nullptr);
    j["load_ms_stripped_warm"] = TimingStats(r.load_ms_stripped_warm);
  }
  if (!r.load_ms_stripped_error.empty()) j["load_ms_stripped_error"] = r.load_ms_stripped_error;
  // Only an adapter with a compile step reports it; other lines stay as they were.
  if (r.compile_ms_cold) {
    j["compile_ms_cold"] = *r.compile_ms_cold;
    j["compile_ms_warm"] = TimingStats(r.compile_ms_warm);
    if (r.kernels_compiled) j["kernels_compiled"] = *r.kernels_compiled;
    if (r.kernels_deferred) j["kernels_deferred"] = *r.kernels_deferred;
  }
  // Only an adapter with a device of its own reports copies; other lines stay as they were.
  if (r.run_cost) j["run_cost"] = ToJson(*r.run_cost);
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
                            {"cost", s.cost ? ToJson(*s.cost) : nlohmann::json(nullptr)},
                            {"compared", s.compared},
                            {"max_ulp_error", s.max_ulp_error ? nlohmann::json(*s.max_ulp_error)
                                                              : nlohmann::json(nullptr)}});
    }
  }
  // Only `parity eval` computes digests; other lines stay as they were.
  if (!r.output_sha256.empty()) j["output_sha256"] = r.output_sha256;
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.expectation.empty()) j["expectation"] = r.expectation;
  if (r.gate_failure) j["gate_failure"] = true;
  return j;
}

void RunCost::Add(const RunCost& run) {
  runs += run.runs;
  to_device_copies += run.to_device_copies;
  to_device_bytes += run.to_device_bytes;
  to_host_copies += run.to_host_copies;
  to_host_bytes += run.to_host_bytes;
  device_bytes = run.device_bytes;
  device_peak_bytes = std::max(device_peak_bytes, run.device_peak_bytes);
}

namespace {

// RunCost's fields by their names in results.jsonl.
constexpr std::pair<const char*, int64_t RunCost::*> kRunCostFields[] = {
    {"runs", &RunCost::runs},
    {"to_device_copies", &RunCost::to_device_copies},
    {"to_device_bytes", &RunCost::to_device_bytes},
    {"to_host_copies", &RunCost::to_host_copies},
    {"to_host_bytes", &RunCost::to_host_bytes},
    {"device_bytes", &RunCost::device_bytes},
    {"device_peak_bytes", &RunCost::device_peak_bytes},
};

}  // namespace

nlohmann::json ToJson(const RunCost& cost) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, field] : kRunCostFields) j[name] = cost.*field;
  return j;
}

StatusOr<RunCost> RunCostFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("\"run_cost\" is not an object");
  RunCost cost;
  for (const auto& [name, field] : kRunCostFields) {
    const auto it = j.find(name);
    if (it == j.end()) continue;
    if (!it->is_number_integer()) return InvalidArgument("field \"", name, "\" of a run cost is not an integer");
    cost.*field = it->get<int64_t>();
  }
  return cost;
}

std::string ResultLine(const CaseResult& result) { return DumpJson(ToJson(result)) + "\n"; }

Status TakeString(const nlohmann::json& j, const char* key, bool required, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return InvalidArgument("missing field \"", key, "\"");
    return Status::Ok();
  }
  if (!it->is_string()) return InvalidArgument("field \"", key, "\" is not a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

namespace {

using nlohmann::json;

// A number field that may be null or absent; "inf" (spec/results.md writes
// non-finite numbers as strings) is left unset too, out of the statistics.
Status TakeOptionalNumber(const json& j, const char* key, std::optional<double>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null() || it->is_string()) return Status::Ok();
  if (!it->is_number()) return InvalidArgument("field \"", key, "\" is not a number");
  *out = it->get<double>();
  return Status::Ok();
}

// The median of a timing statistics object ({"median", ...}); the journal
// keeps statistics, not every repeat, so the median stands for them.
Status TakeMedian(const json& j, const char* key, std::vector<double>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return InvalidArgument("field \"", key, "\" is not an object");
  std::optional<double> median;
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(*it, "median", &median));
  if (median) *out = {*median};
  return Status::Ok();
}

// A list of names; lines written before such a field existed have none.
Status TakeNames(const json& j, const char* key, std::optional<std::vector<std::string>>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return InvalidArgument("field \"", key, "\" is not an array");
  std::vector<std::string> list;
  for (const auto& item : *it) {
    if (item.is_string()) list.push_back(item.get<std::string>());
  }
  *out = std::move(list);
  return Status::Ok();
}

// A JSON field kept as it is, of the given kind (array or object).
Status TakeJson(const json& j, const char* key, json::value_t kind, json* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (it->type() != kind) {
    return InvalidArgument("field \"", key, "\" is not ", kind == json::value_t::array ? "an array" : "an object");
  }
  *out = *it;
  return Status::Ok();
}

// "output_sha256": data set name -> array of hex digest strings.
Status TakeDigests(const json& j, json* out) {
  PARITY_RETURN_IF_ERROR(TakeJson(j, "output_sha256", json::value_t::object, out));
  for (const auto& [set, digests] : out->items()) {
    bool strings = digests.is_array();
    for (const auto& d : digests) strings = strings && d.is_string();
    if (!strings) return InvalidArgument("field \"output_sha256\" of \"", set, "\" is not an array of strings");
  }
  return Status::Ok();
}

Status TakeSteps(const json& j, std::vector<StepRecord>* steps) {
  auto it = j.find("steps");
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return InvalidArgument("field \"steps\" is not an array");
  for (const auto& item : *it) {
    if (!item.is_object() || !item.contains("step") || !item["step"].is_number_integer()) {
      return InvalidArgument("every entry of \"steps\" needs an integer \"step\"");
    }
    StepRecord s;
    s.step = item["step"].get<int>();
    if (item.contains("run_ms") && item["run_ms"].is_number()) s.run_ms = item["run_ms"].get<double>();
    for (const char* key : {"run_peak_rss_kb", "rss_kb"}) {
      if (!item.contains(key) || !item[key].is_number_integer()) continue;
      (std::string(key) == "rss_kb" ? s.rss_kb : s.run_peak_rss_kb) = item[key].get<int64_t>();
    }
    if (item.contains("cost") && !item["cost"].is_null()) {
      StatusOr<RunCost> cost = RunCostFromJson(item["cost"]);
      if (!cost.ok()) return cost.status().WithContext(StrCat("step ", s.step));
      s.cost = *cost;
    }
    if (item.contains("compared") && item["compared"].is_array()) {
      for (const auto& name : item["compared"]) {
        if (name.is_string()) s.compared.push_back(name.get<std::string>());
      }
    }
    if (item.contains("max_ulp_error") && item["max_ulp_error"].is_number()) {
      s.max_ulp_error = item["max_ulp_error"].get<double>();
    }
    steps->push_back(std::move(s));
  }
  return Status::Ok();
}

Status ParseResult(const json& j, CaseResult* r) {
  if (!j.is_object()) return InvalidArgument("expected a JSON object");
  PARITY_RETURN_IF_ERROR(TakeString(j, "case", true, &r->name));
  PARITY_RETURN_IF_ERROR(TakeString(j, "suite", true, &r->suite));
  std::string state;
  PARITY_RETURN_IF_ERROR(TakeString(j, "state", true, &state));
  const std::optional<CaseState> known = CaseStateFromName(state);
  if (!known) return InvalidArgument("unknown state \"", state, "\"");
  r->state = *known;
  PARITY_RETURN_IF_ERROR(TakeString(j, "dir", false, &r->dir));
  PARITY_RETURN_IF_ERROR(TakeString(j, "operator", false, &r->op));
  PARITY_RETURN_IF_ERROR(TakeString(j, "adapter", false, &r->adapter));
  PARITY_RETURN_IF_ERROR(TakeString(j, "device", false, &r->device));
  PARITY_RETURN_IF_ERROR(TakeString(j, "message", false, &r->message));
  PARITY_RETURN_IF_ERROR(TakeString(j, "expectation", false, &r->expectation));
  PARITY_RETURN_IF_ERROR(TakeString(j, "repro", false, &r->repro));
  PARITY_RETURN_IF_ERROR(TakeString(j, "load_ms_stripped_error", false, &r->load_ms_stripped_error));
  PARITY_RETURN_IF_ERROR(TakeString(j, "state_readback", false, &r->state_readback));
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "load_ms_cold", &r->load_ms_cold));
  // `parity eval` journals written before load_ms_cold existed say "load_ms".
  if (!j.contains("load_ms_cold")) PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "load_ms", &r->load_ms_cold));
  PARITY_RETURN_IF_ERROR(TakeMedian(j, "load_ms_warm", &r->load_ms_warm));
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "load_ms_stripped_cold", &r->load_ms_stripped_cold));
  PARITY_RETURN_IF_ERROR(TakeMedian(j, "load_ms_stripped_warm", &r->load_ms_stripped_warm));
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "compile_ms_cold", &r->compile_ms_cold));
  PARITY_RETURN_IF_ERROR(TakeMedian(j, "compile_ms_warm", &r->compile_ms_warm));
  std::optional<double> kernels;
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "kernels_compiled", &kernels));
  if (kernels) r->kernels_compiled = static_cast<int64_t>(*kernels);
  kernels.reset();
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "kernels_deferred", &kernels));
  if (kernels) r->kernels_deferred = static_cast<int64_t>(*kernels);
  if (auto cost = j.find("run_cost"); cost != j.end() && !cost->is_null()) {
    PARITY_ASSIGN_OR_RETURN(r->run_cost, RunCostFromJson(*cost));
  }
  std::optional<double> run_ms;
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "run_ms", &run_ms));
  r->run_ms = run_ms.value_or(0);
  PARITY_RETURN_IF_ERROR(TakeNames(j, "variant_targets", &r->variant_targets));
  PARITY_RETURN_IF_ERROR(TakeNames(j, "variants_expected", &r->variants_expected));
  PARITY_RETURN_IF_ERROR(TakeSteps(j, &r->steps));
  if (auto gate = j.find("gate_failure"); gate != j.end() && !gate->is_null()) {
    if (!gate->is_boolean()) return InvalidArgument("field \"gate_failure\" is not true or false");
    r->gate_failure = gate->get<bool>();
  }
  PARITY_RETURN_IF_ERROR(TakeJson(j, "outputs", json::value_t::array, &r->outputs));
  PARITY_RETURN_IF_ERROR(TakeJson(j, "variants", json::value_t::array, &r->variants));
  PARITY_RETURN_IF_ERROR(TakeJson(j, "placement", json::value_t::object, &r->placement));
  PARITY_RETURN_IF_ERROR(TakeJson(j, "placement_flops", json::value_t::object, &r->placement_flops));
  for (auto it = r->placement_flops.begin(); it != r->placement_flops.end(); ++it) {
    if (!it->is_number()) return InvalidArgument("field \"placement_flops\": \"", it.key(), "\" is not a number");
  }
  std::optional<double> unknown;
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "placement_flops_unknown", &unknown));
  if (unknown) r->placement_flops_unknown = static_cast<int64_t>(*unknown);
  PARITY_RETURN_IF_ERROR(TakeDigests(j, &r->output_sha256));
  return Status::Ok();
}

}  // namespace

StatusOr<CaseResult> CaseResultFromJson(const nlohmann::json& j) {
  CaseResult r;
  if (Status s = ParseResult(j, &r); !s.ok()) {
    if (r.name.empty()) return s;
    return s.WithContext(StrCat("result of '", r.name, "'"));
  }
  return r;
}

StatusOr<ResultsJournal> ParseResultsJournal(const std::string& text, const std::string& path) {
  ResultsJournal journal;
  std::map<std::pair<std::string, std::string>, std::pair<size_t, int>> seen;  // (suite, case) -> (index, line)
  size_t begin = 0;
  int line_number = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    const bool complete = end != std::string::npos;
    if (!complete) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() && !complete) {
      // A run killed in the middle of its last write (spec/results.md).
      journal.warnings.push_back(StrCat(path, ":", line_number, ": dropped a partial last line (", line.size(),
                                        " bytes without a newline)"));
      break;
    }
    CaseResult r;
    Status s = j.is_discarded() ? InvalidArgument("not valid JSON") : ParseResult(j, &r);
    if (!s.ok()) return s.WithContext(StrCat(path, ":", line_number));
    auto [it, inserted] = seen.emplace(std::make_pair(r.suite, r.name), std::make_pair(journal.results.size(), line_number));
    if (inserted) {
      journal.results.push_back(std::move(r));
    } else {
      journal.warnings.push_back(StrCat(path, ":", line_number, ": case ", r.suite, "/", r.name, " also on line ",
                                        it->second.second, "; the later line is used"));
      journal.results[it->second.first] = std::move(r);
      it->second.second = line_number;
    }
  }
  return journal;
}

StatusOr<ResultsJournal> ReadResultsJournal(const std::string& path, bool drop_partial_tail) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ResultsJournal{};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return IoError("error while reading ", path);
  std::string text = buffer.str();
  if (drop_partial_tail && !text.empty() && text.back() != '\n') {
    // The write of a killed run: its case runs again, after a line boundary.
    const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
      return IoError(path, ": cannot drop the partial last line: ", std::strerror(errno));
    }
    text.resize(keep);
  }
  return ParseResultsJournal(text, path);
}

Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out.flush()) return IoError("cannot write '", temporary, "'");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return IoError("cannot rename '", temporary, "' to '", path, "': ", ec.message());
  return Status::Ok();
}

}  // namespace parity
