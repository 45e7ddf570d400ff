// Joining shards.
#include "harness/run/merge_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "harness/run/journal.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

StatusOr<nlohmann::json> ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read '", path.string(), "'");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path.string(), ": not valid JSON: ", e.what());
  }
}

Status Merge(const std::vector<std::string>& dirs, const std::string& out_dir) {
  if (dirs.empty()) return InvalidArgument("give the shard folders to merge");
  nlohmann::json settings, planned = nlohmann::json::array(), first_summary;
  std::map<std::string, std::string> owner;  // case dir -> shard folder with its result
  std::vector<CaseResult> results;
  std::vector<std::string> shards;
  double seconds = 0;
  int restarts = 0;
  for (const auto& dir : dirs) {
    PARITY_ASSIGN_OR_RETURN(nlohmann::json run, ReadJson(fs::path(dir) / "run.json"));
    nlohmann::json s = run.value("settings", nlohmann::json::object());
    shards.push_back(s.value("shard", "?"));
    s.erase("shard");
    if (settings.is_null()) {
      settings = s;
    } else if (s != settings) {
      return InvalidArgument(dir, " is not a shard of the same run as ", dirs[0], " (its settings differ)");
    }
    for (const auto& p : run.value("planned", nlohmann::json::array())) planned.push_back(p);
    PARITY_ASSIGN_OR_RETURN(std::vector<CaseResult> shard, ReadJournal((fs::path(dir) / "results.jsonl").string(), false));
    for (auto& r : shard) {
      auto [it, inserted] = owner.emplace(r.dir, dir);
      if (!inserted) return InvalidArgument("case ", r.dir, " has results in both ", it->second, " and ", dir);
      results.push_back(std::move(r));
    }
    StatusOr<nlohmann::json> summary = ReadJson(fs::path(dir) / "summary.json");
    if (summary.ok()) {
      if (first_summary.is_null()) first_summary = *summary;
      if (summary->value("adapter", nlohmann::json()).value("name", "") !=
              first_summary["adapter"].value("name", "") ||
          summary->value("device", nlohmann::json()).value("name", "") != first_summary["device"].value("name", "")) {
        return InvalidArgument(dir, " ran another adapter or device than ", dirs[0]);
      }
      seconds += summary->value("seconds", 0.0);
      restarts += summary->value("worker_restarts", 0);
    }
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return IoError("cannot create '", out_dir, "': ", ec.message());
  settings["shard"] = "1/1";
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "run.json").string(),
                                             nlohmann::json{{"settings", settings}, {"planned", planned}}.dump(1) + "\n"));
  std::string lines;
  Summary summary;
  int gate_failures = 0;
  for (const auto& r : results) {
    lines += ToJson(r).dump() + "\n";
    summary.Add(r);
    gate_failures += r.gate_failure;
  }
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "results.jsonl").string(), lines));
  nlohmann::json j = summary.ToJson();
  for (const char* key : {"adapter", "device", "versions", "expectations", "jobs"}) {
    if (first_summary.is_object() && first_summary.contains(key)) j[key] = first_summary[key];
  }
  j["planned"] = planned.size();
  j["seconds"] = seconds;  // the shards' own times added: machine time, not wall time
  j["worker_restarts"] = restarts;
  j["gate_failures"] = gate_failures;
  j["shard"] = nullptr;
  j["shards"] = shards;
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "summary.json").string(), j.dump(1) + "\n"));
  std::cout << "merged " << dirs.size() << " shard(s): " << results.size() << " results of " << planned.size()
            << " planned cases into " << out_dir << "\n";
  return Status::Ok();
}

}  // namespace

int RunMergeCommand(const std::vector<std::string>& dirs, const std::string& out_dir) {
  if (Status s = Merge(dirs, out_dir); !s.ok()) {
    std::cerr << "parity merge: " << s.ToString() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace parity
