// Reading a run folder (results.jsonl, run.json, summary.json) and
// recomputing its summary.
#include "reports/run_data.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/results.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

StatusOr<std::string> ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read ", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError("error while reading ", path.string());
  return text.str();
}

// Parses a whole JSON object file; a missing file gives an empty object.
StatusOr<json> ReadJsonObject(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return json::object();
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(path.string(), ": not valid JSON");
  if (!j.is_object()) return InvalidArgument(path.string(), ": expected a JSON object");
  return j;
}

// The string field `key` of `j`; absent or null gives "" unless required.
Status TakeString(const json& j, const char* key, bool required, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return InvalidArgument("missing field \"", key, "\"");
    return Status::Ok();
  }
  if (!it->is_string()) return InvalidArgument("field \"", key, "\" is not a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

// A number field that may be null or absent; "inf" (spec/results.md writes
// non-finite numbers as strings) is kept out of the statistics.
Status TakeOptionalNumber(const json& j, const char* key, std::optional<double>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null() || it->is_string()) return Status::Ok();
  if (!it->is_number()) return InvalidArgument("field \"", key, "\" is not a number");
  *out = it->get<double>();
  return Status::Ok();
}

Status ParseRecord(const json& j, CaseRecord* r) {
  if (!j.is_object()) return InvalidArgument("expected a JSON object");
  PARITY_RETURN_IF_ERROR(TakeString(j, "case", true, &r->name));
  PARITY_RETURN_IF_ERROR(TakeString(j, "suite", true, &r->suite));
  PARITY_RETURN_IF_ERROR(TakeString(j, "state", true, &r->state));
  if (!IsKnownState(r->state)) return InvalidArgument("unknown state \"", r->state, "\"");
  PARITY_RETURN_IF_ERROR(TakeString(j, "dir", false, &r->dir));
  PARITY_RETURN_IF_ERROR(TakeString(j, "operator", false, &r->op));
  PARITY_RETURN_IF_ERROR(TakeString(j, "adapter", false, &r->adapter));
  PARITY_RETURN_IF_ERROR(TakeString(j, "device", false, &r->device));
  PARITY_RETURN_IF_ERROR(TakeString(j, "message", false, &r->message));
  PARITY_RETURN_IF_ERROR(TakeString(j, "expectation", false, &r->expectation));
  PARITY_RETURN_IF_ERROR(TakeString(j, "repro", false, &r->repro));
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "load_ms_cold", &r->load_ms_cold));
  // `parity eval` journals written before load_ms_cold existed say "load_ms".
  if (!j.contains("load_ms_cold")) PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "load_ms", &r->load_ms_cold));
  if (auto warm = j.find("load_ms_warm"); warm != j.end() && !warm->is_null()) {
    if (!warm->is_object()) return InvalidArgument("field \"load_ms_warm\" is not an object");
    PARITY_RETURN_IF_ERROR(TakeOptionalNumber(*warm, "median", &r->load_ms_warm_median));
  }
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "load_ms_stripped_cold", &r->load_ms_stripped_cold));
  if (auto warm = j.find("load_ms_stripped_warm"); warm != j.end() && !warm->is_null()) {
    if (!warm->is_object()) return InvalidArgument("field \"load_ms_stripped_warm\" is not an object");
    PARITY_RETURN_IF_ERROR(TakeOptionalNumber(*warm, "median", &r->load_ms_stripped_warm_median));
  }
  std::optional<double> run_ms;
  PARITY_RETURN_IF_ERROR(TakeOptionalNumber(j, "run_ms", &run_ms));
  r->run_ms = run_ms.value_or(0);
  if (auto gate = j.find("gate_failure"); gate != j.end() && !gate->is_null()) {
    if (!gate->is_boolean()) return InvalidArgument("field \"gate_failure\" is not true or false");
    r->gate_failure = gate->get<bool>();
  }
  if (auto outputs = j.find("outputs"); outputs != j.end() && !outputs->is_null()) {
    if (!outputs->is_array()) return InvalidArgument("field \"outputs\" is not an array");
    r->outputs = *outputs;
  }
  if (auto steps = j.find("steps"); steps != j.end() && !steps->is_null()) {
    if (!steps->is_array()) return InvalidArgument("field \"steps\" is not an array");
    for (const json& step : *steps) {
      if (!step.is_object()) return InvalidArgument("an entry of \"steps\" is not an object");
    }
    r->stateful = true;
    r->steps = *steps;
  }
  PARITY_RETURN_IF_ERROR(TakeString(j, "state_readback", false, &r->state_readback));
  return Status::Ok();
}

Status ParsePlan(const json& run, const std::string& path, std::vector<PlannedCase>* plan) {
  auto it = run.find("planned");
  if (it == run.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return InvalidArgument(path, ": \"planned\" is not an array");
  for (size_t i = 0; i < it->size(); ++i) {
    PlannedCase p;
    const json& entry = (*it)[i];
    Status s = entry.is_object() ? TakeString(entry, "case", true, &p.name) : InvalidArgument("not an object");
    if (s.ok()) s = TakeString(entry, "suite", true, &p.suite);
    if (s.ok()) s = TakeString(entry, "operator", false, &p.op);
    if (!s.ok()) return s.WithContext(StrCat(path, ": planned[", i, "]"));
    plan->push_back(std::move(p));
  }
  return Status::Ok();
}

// "name" of an object such as summary.json's "adapter", or the string itself.
std::string NameOf(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("name") && j["name"].is_string()) return j["name"].get<std::string>();
  return "";
}

std::string FileTimeUtc(const fs::path& path) {
  std::error_code ec;
  const auto file_time = fs::last_write_time(path, ec);
  if (ec) return "";
  // GCC 12 has no clock_cast; both clocks tick in real time, so the offset
  // between their "now"s converts one to the other.
  const auto system_time = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      file_time - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  const std::time_t t = std::chrono::system_clock::to_time_t(system_time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace

const std::vector<std::string>& StateOrder() {
  static const std::vector<std::string> order = {"PASS",  "FAIL",        "CRASH", "TIMEOUT", "FELL_BACK", "XPASS",
                                                 "ERROR", "MISTRUSTED", "XFAIL", "UNSUPPORTED", "SKIP"};
  return order;
}

bool IsKnownState(const std::string& state) {
  const auto& order = StateOrder();
  return std::find(order.begin(), order.end(), state) != order.end();
}

bool StateFailsGate(const std::string& state) {
  return state == "FAIL" || state == "CRASH" || state == "TIMEOUT" || state == "FELL_BACK" || state == "XPASS";
}

bool CaseRecord::CountsForGate() const { return gate_failure || StateFailsGate(state); }

bool IsListedFailure(const CaseRecord& record) {
  return record.CountsForGate() || record.state == "ERROR" || record.state == "MISTRUSTED";
}

std::string RunData::AdapterVersion() const {
  const json adapter = summary.value("adapter", json());
  if (!adapter.is_object()) return "";
  std::string text = adapter.value("version", "");
  const std::string backend = adapter.value("backend_version", "");
  if (!backend.empty()) text += (text.empty() ? "backend " : " (backend ") + backend + (text.empty() ? "" : ")");
  return text;
}

std::string RunData::DeviceDescription() const {
  const json device_info = summary.value("device", json());
  if (!device_info.is_object()) return "";
  std::string kind = device_info.value("kind", "");
  std::string description = device_info.value("description", "");
  if (kind.empty()) return description;
  return description.empty() ? kind : kind + ", " + description;
}

Status ParseResultsJournal(const std::string& text, const std::string& path, RunData* data) {
  std::map<std::pair<std::string, std::string>, size_t> seen;  // (suite, case) -> index in results
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
      data->warnings.push_back(StrCat(path, ":", line_number, ": dropped a partial last line (", line.size(),
                                      " bytes without a newline)"));
      break;
    }
    CaseRecord r;
    r.line = line_number;
    Status s = j.is_discarded() ? InvalidArgument("not valid JSON") : ParseRecord(j, &r);
    if (!s.ok()) return s.WithContext(StrCat(path, ":", line_number));
    auto [it, inserted] = seen.emplace(std::make_pair(r.suite, r.name), data->results.size());
    if (inserted) {
      data->results.push_back(std::move(r));
    } else {
      data->warnings.push_back(StrCat(path, ":", line_number, ": case ", r.suite, "/", r.name,
                                      " also on line ", data->results[it->second].line, "; the later line is used"));
      data->results[it->second] = std::move(r);
    }
  }
  return Status::Ok();
}

StatusOr<RunData> LoadRunData(const std::string& dir) {
  RunData data;
  data.dir = dir;
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return NotFound(dir, ": not a folder");
  const fs::path run_path = root / "run.json";
  const fs::path journal_path = root / "results.jsonl";
  PARITY_ASSIGN_OR_RETURN(data.run, ReadJsonObject(run_path));
  PARITY_ASSIGN_OR_RETURN(data.summary, ReadJsonObject(root / "summary.json"));
  PARITY_RETURN_IF_ERROR(ParsePlan(data.run, run_path.string(), &data.planned));

  if (fs::exists(journal_path, ec)) {
    PARITY_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(journal_path));
    PARITY_RETURN_IF_ERROR(ParseResultsJournal(text, journal_path.string(), &data));
  } else if (!fs::exists(run_path, ec)) {
    return NotFound(journal_path.string(), ": no such file (and no run.json): not a run folder");
  } else {
    data.warnings.push_back(journal_path.string() + ": missing; every planned case is NOT RUN");
  }

  std::set<std::pair<std::string, std::string>> done;
  for (const CaseRecord& r : data.results) done.emplace(r.suite, r.name);
  for (const PlannedCase& p : data.planned) {
    if (!done.count({p.suite, p.name})) data.not_run.push_back(p);
  }

  data.adapter = NameOf(data.summary.value("adapter", json()));
  if (data.adapter.empty() && !data.results.empty()) data.adapter = data.results.front().adapter;
  if (data.adapter.empty()) {
    // run.json names the adapter as given on the command line: a name or a path.
    const std::string given = NameOf(data.run.value("adapter", json()));
    data.adapter = given.find('/') == std::string::npos ? given : fs::path(given).stem().string();
  }
  if (data.adapter.empty()) data.adapter = "unknown";
  data.device = NameOf(data.summary.value("device", json()));
  if (data.device.empty() && !data.results.empty()) data.device = data.results.front().device;
  if (data.device.empty()) data.device = NameOf(data.run.value("device", json()));
  data.label = data.device.empty() ? data.adapter : data.adapter + "@" + data.device;
  const json finished = data.summary.value("finished", json());
  data.when = finished.is_string() ? finished.get<std::string>() : FileTimeUtc(journal_path);
  return data;
}

void AssignLabels(std::vector<RunData>& runs) {
  std::map<std::string, int> uses;
  for (const RunData& r : runs) ++uses[r.label];
  for (RunData& r : runs) {
    if (uses[r.label] <= 1) continue;
    fs::path folder = fs::path(r.dir).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();  // "runs/a/" names "a"
    r.label += " (" + folder.filename().string() + ")";
  }
  // Folders with the same name under different parents: number them.
  std::map<std::string, int> seen;
  for (RunData& r : runs) {
    if (++seen[r.label] > 1) r.label += " #" + std::to_string(seen[r.label]);
  }
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write ", temporary);
    out << text;
    out.flush();
    if (!out) return IoError("error while writing ", temporary);
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) return IoError("cannot rename ", temporary, " to ", path, ": ", ec.message());
  return Status::Ok();
}

json Stats(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  // "repeats" (how many values) as `parity run` writes it, so a refresh
  // keeps the same fields.
  return {{"median", median}, {"min", values.front()}, {"max", values.back()}, {"repeats", n}};
}

json VariantLoadOf(const RunData& data) {
  std::vector<VariantLoadSample> samples;
  for (const CaseRecord& r : data.results) {
    if (!r.load_ms_stripped_cold && !r.load_ms_stripped_warm_median) continue;
    samples.push_back({r.load_ms_cold, r.load_ms_warm_median, r.load_ms_stripped_cold, r.load_ms_stripped_warm_median});
  }
  return VariantLoadStats(samples);
}

json ComputeSummary(const RunData& data) {
  // Start from the previous summary so that fields this code does not know
  // (and those it carries over by design) survive a refresh.
  json s = data.summary.is_object() ? data.summary : json::object();
  json by_state = json::object(), by_operator = json::object(), by_suite = json::object();
  std::vector<double> cold, warm;
  int gate_failures = 0;
  const auto count = [](json& slot) { slot = slot.is_null() ? 1 : slot.get<int>() + 1; };
  for (const CaseRecord& r : data.results) {
    count(by_state[r.state]);
    count(by_operator[r.op.empty() ? kUnknownOperator : r.op][r.state]);
    count(by_suite[r.suite][r.state]);
    if (r.load_ms_cold) cold.push_back(*r.load_ms_cold);
    if (r.load_ms_warm_median) warm.push_back(*r.load_ms_warm_median);
    gate_failures += r.CountsForGate();
  }
  const int total = static_cast<int>(data.results.size());
  s["total"] = total;
  s["planned"] = data.run.contains("planned") ? static_cast<int>(data.planned.size()) : total;
  s["not_run"] = static_cast<int>(data.not_run.size());
  s["by_state"] = by_state;
  s["by_operator"] = by_operator;
  s["by_suite"] = by_suite;
  s["load_ms"] = {{"cold", Stats(cold)}, {"warm_median", Stats(warm)}};
  if (json variant = VariantLoadOf(data); !variant.is_null()) {
    s["variant_load_ms"] = std::move(variant);
  } else {
    s.erase("variant_load_ms");  // a previous summary's figures no longer hold
  }
  if (!s.contains("adapter")) s["adapter"] = {{"name", data.adapter}};
  if (!s.contains("device") && !data.device.empty()) s["device"] = {{"name", data.device}};
  if (!s.contains("shard")) s["shard"] = data.run.value("shard", json());
  if (!s.contains("expectations") && data.run.contains("expectations")) s["expectations"] = data.run["expectations"];
  s["gate_failures"] = gate_failures;
  return s;
}

}  // namespace parity
