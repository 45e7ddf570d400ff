// Joining shards: one run folder from the folders of its shards.
#include "harness/run/merge_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "harness/results/results.h"
#include "harness/results/summary.h"
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

// summary[key]["name"], or empty when absent or not text.
std::string NameOf(const nlohmann::json& summary, const char* key) {
  if (!summary.contains(key) || !summary[key].is_object()) return "";
  const nlohmann::json& o = summary[key];
  return o.contains("name") && o["name"].is_string() ? o["name"].get<std::string>() : "";
}

double NumberOf(const nlohmann::json& summary, const char* key) {
  return summary.contains(key) && summary[key].is_number() ? summary[key].get<double>() : 0.0;
}

Status Merge(const std::vector<std::string>& dirs, const std::string& out_dir) {
  if (dirs.empty()) return InvalidArgument("give the shard folders to merge");
  nlohmann::json settings, planned = nlohmann::json::array(), first_summary;
  std::map<std::string, std::string> owner;  // case dir -> shard folder with its result
  std::vector<CaseResult> results;
  std::vector<std::string> shards;
  double seconds = 0;
  int restarts = 0;
  int shard_count = 0;
  std::map<int, std::string> shard_dirs;  // shard index -> folder
  std::string finished;
  int memory_restarts = 0;
  for (const auto& dir : dirs) {
    PARITY_ASSIGN_OR_RETURN(nlohmann::json run, ReadJson(fs::path(dir) / "run.json"));
    if (!run.is_object() || !run.contains("settings") || !run["settings"].is_object()) {
      return InvalidArgument(dir, "/run.json has no settings object: not a folder parity run wrote");
    }
    nlohmann::json s = run["settings"];
    const std::string shard_name = s.contains("shard") && s["shard"].is_string() ? s["shard"].get<std::string>() : "";
    int index = 0, count = 0;
    char slash = 0;
    if (std::sscanf(shard_name.c_str(), "%d%c%d", &index, &slash, &count) != 3 || slash != '/' || index < 1 ||
        index > count) {
      return InvalidArgument(dir, "/run.json: shard '", shard_name, "' is not I/N");
    }
    if (shard_count == 0) shard_count = count;
    if (count != shard_count) {
      return InvalidArgument(dir, " is shard ", shard_name, ", but ", dirs[0], " is of a run in ", shard_count, " shards");
    }
    if (auto [it, inserted] = shard_dirs.emplace(index, dir); !inserted) {
      return InvalidArgument(dir, " and ", it->second, " are both shard ", shard_name);
    }
    shards.push_back(shard_name);
    s.erase("shard");
    if (settings.is_null()) {
      settings = s;
    } else if (s != settings) {
      return InvalidArgument(dir, " is not a shard of the same run as ", dirs[0], " (its settings differ)");
    }
    for (const auto& p : run.value("planned", nlohmann::json::array())) planned.push_back(p);
    PARITY_ASSIGN_OR_RETURN(ResultsJournal shard,
                            ReadResultsJournal((fs::path(dir) / "results.jsonl").string(), /*drop_partial_tail=*/false));
    for (auto& r : shard.results) {
      auto [it, inserted] = owner.emplace(r.dir, dir);
      if (!inserted) return InvalidArgument("case ", r.dir, " has results in both ", it->second, " and ", dir);
      results.push_back(std::move(r));
    }
    StatusOr<nlohmann::json> summary = ReadJson(fs::path(dir) / "summary.json");
    if (summary.ok() && summary->is_object()) {
      if (first_summary.is_null()) first_summary = *summary;
      if (NameOf(*summary, "adapter") != NameOf(first_summary, "adapter") ||
          NameOf(*summary, "device") != NameOf(first_summary, "device")) {
        return InvalidArgument(dir, " ran another adapter or device than ", dirs[0]);
      }
      seconds += NumberOf(*summary, "seconds");
      restarts += static_cast<int>(NumberOf(*summary, "worker_restarts"));
      memory_restarts += static_cast<int>(NumberOf(*summary, "memory_restarts"));
      if (summary->contains("finished") && (*summary)["finished"].is_string()) {
        finished = std::max(finished, (*summary)["finished"].get<std::string>());
      }
    }
  }
  if (static_cast<int>(shard_dirs.size()) != shard_count) {
    std::string missing;
    for (int i = 1; i <= shard_count; ++i) {
      if (!shard_dirs.count(i)) missing += StrCat(missing.empty() ? "" : ", ", i, "/", shard_count);
    }
    return InvalidArgument("shard(s) ", missing, " missing: merging part of a run would hide the cases it did not run");
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return IoError("cannot create '", out_dir, "': ", ec.message());
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<FolderLock> lock, FolderLock::Acquire(out_dir, "parity merge"));
  settings["shard"] = "1/1";
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "run.json").string(),
                                             DumpJson({{"settings", settings}, {"planned", planned}}, 1) + "\n"));
  std::string lines;
  for (const auto& r : results) lines += ResultLine(r);
  PARITY_RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "results.jsonl").string(), lines));
  Summary summary = Summarize(results);
  summary.planned = static_cast<int>(planned.size());
  nlohmann::json fields = nlohmann::json::object();
  for (const char* key : {"adapter", "device", "versions", "expectations", "jobs"}) {
    if (first_summary.is_object() && first_summary.contains(key)) fields[key] = first_summary[key];
  }
  fields["seconds"] = seconds;  // the shards' own times added: machine time, not wall time
  fields["worker_restarts"] = restarts;
  fields["memory_restarts"] = memory_restarts;
  if (!finished.empty()) fields["finished"] = finished;
  fields["shard"] = nullptr;
  fields["shards"] = shards;
  PARITY_RETURN_IF_ERROR(WriteSummary(out_dir, summary, fields));
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
