// Reading expectations files.
#include "harness/expectations.h"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

namespace parity {

StatusOr<Expectations> Expectations::Load(const std::string& paths) {
  // Several files, comma-separated (one per suite), make one list.
  if (paths.find(',') != std::string::npos) {
    Expectations all;
    all.path_ = paths;
    size_t start = 0;
    while (start <= paths.size()) {
      const size_t end = std::min(paths.find(',', start), paths.size());
      PARITY_ASSIGN_OR_RETURN(Expectations one, Load(paths.substr(start, end - start)));
      for (auto& e : one.entries_) all.entries_.push_back(std::move(e));
      start = end + 1;
    }
    return all;
  }
  const std::string& path = paths;
  std::ifstream in(path);
  if (!in) return NotFound("expectations file '", path, "' cannot be opened");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path, ": not valid JSON: ", e.what());
  }
  if (!doc.is_object()) return InvalidArgument(path, ": must hold a JSON object");
  Expectations out;
  out.path_ = path;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    if (key == "adapter" || key == "comment") continue;
    if (key != "unsupported" && key != "xfail") {
      return InvalidArgument(path, ": unknown key '", key, "' (expected adapter, unsupported, xfail)");
    }
    if (!it->is_array()) return InvalidArgument(path, ": '", key, "' must be a list");
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& e = (*it)[i];
      const std::string where = path + ": " + key + "[" + std::to_string(i) + "]";
      ExpectationEntry entry;
      if (e.is_object() && e.contains("cases") && e["cases"].is_string()) {
        entry.globs = {e["cases"].get<std::string>()};
      } else if (e.is_object() && e.contains("cases") && e["cases"].is_array() && !e["cases"].empty()) {
        for (const auto& glob : e["cases"]) {
          if (!glob.is_string()) return InvalidArgument(where, ": every item of 'cases' must be a string");
          entry.globs.push_back(glob.get<std::string>());
        }
      } else {
        return InvalidArgument(where, " needs 'cases': a glob, or a non-empty list of globs");
      }
      entry.pattern = entry.globs[0];
      if (entry.globs.size() > 1) entry.pattern += " (and " + std::to_string(entry.globs.size() - 1) + " more)";
      if (!e.contains("reason") || !e["reason"].is_string() || e["reason"].get<std::string>().empty()) {
        return InvalidArgument(where, " ('", entry.pattern, "') needs a non-empty 'reason'");
      }
      entry.reason = e["reason"];
      entry.unsupported = key == "unsupported";
      entry.state = entry.unsupported ? "UNSUPPORTED" : "FAIL";
      if (e.contains("state")) {
        if (!e["state"].is_string()) return InvalidArgument(where, ": 'state' must be a string");
        entry.state = e["state"];
        const bool allowed = entry.unsupported ? entry.state == "UNSUPPORTED"
                                               : (entry.state == "FAIL" || entry.state == "MISTRUSTED");
        if (!allowed) {
          return InvalidArgument(where, ": state '", entry.state, "' is not allowed in '", key,
                                 "' (unsupported: UNSUPPORTED; xfail: FAIL or MISTRUSTED)");
        }
      }
      for (auto k = e.begin(); k != e.end(); ++k) {
        if (k.key() != "cases" && k.key() != "reason" && k.key() != "state") {
          return InvalidArgument(where, ": unknown key '", k.key(), "' (expected cases, reason, state)");
        }
      }
      out.entries_.push_back(std::move(entry));
    }
  }
  return out;
}

const ExpectationEntry* Expectations::Find(const std::string& case_name) const {
  for (const auto& e : entries_) {
    for (const auto& glob : e.globs) {
      if (fnmatch(glob.c_str(), case_name.c_str(), 0) == 0) return &e;
    }
  }
  return nullptr;
}

}  // namespace parity
