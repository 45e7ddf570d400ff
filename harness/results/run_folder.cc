// Reading a run folder (results.jsonl, run.json, summary.json) and
// recomputing its summary.
#include "harness/results/run_folder.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

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

}  // namespace

StatusOr<RunFolder> LoadRunFolder(const std::string& dir) {
  RunFolder data;
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
    PARITY_ASSIGN_OR_RETURN(ResultsJournal journal, ParseResultsJournal(text, journal_path.string()));
    data.results = std::move(journal.results);
    data.warnings = std::move(journal.warnings);
  } else if (!fs::exists(run_path, ec)) {
    return NotFound(journal_path.string(), ": no such file (and no run.json): not a run folder");
  } else {
    data.warnings.push_back(journal_path.string() + ": missing; every planned case is NOT RUN");
  }

  std::set<std::pair<std::string, std::string>> done;
  for (const CaseResult& r : data.results) done.emplace(r.suite, r.name);
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
  return data;
}

Summary SummaryOf(const RunFolder& data) {
  Summary summary = Summarize(data.results);
  summary.planned = data.run.contains("planned") ? static_cast<int>(data.planned.size()) : summary.total;
  summary.not_run = static_cast<int>(data.not_run.size());
  return summary;
}

json CarriedSummaryFields(const RunFolder& data) {
  // Start from the previous summary so that fields this code does not know
  // (and those it carries over by design) survive a refresh.
  json s = data.summary.is_object() ? data.summary : json::object();
  if (!s.contains("adapter")) s["adapter"] = {{"name", data.adapter}};
  if (!s.contains("device") && !data.device.empty()) s["device"] = {{"name", data.device}};
  if (!s.contains("shard")) s["shard"] = data.run.value("shard", json());
  if (!s.contains("expectations") && data.run.contains("expectations")) s["expectations"] = data.run["expectations"];
  return s;
}

json RefreshedSummary(const RunFolder& folder) { return SummaryJson(SummaryOf(folder), CarriedSummaryFields(folder)); }

Status RefreshSummary(const RunFolder& folder, const std::string& out_dir) {
  return WriteSummary(out_dir, SummaryOf(folder), CarriedSummaryFields(folder));
}

}  // namespace parity
