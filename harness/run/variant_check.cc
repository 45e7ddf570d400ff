// Variant targets of a case, the selection it expects, and the check of
// what an adapter reports against it.
#include "harness/run/variant_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "harness/results/results.h"
#include "reference/variants/variants.h"

namespace parity {
namespace {

std::string BracketList(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "]";
}

}  // namespace

std::string JoinTargets(const std::vector<std::string>& targets) {
  std::string joined;
  for (size_t i = 0; i < targets.size(); ++i) joined += (i ? "," : "") + targets[i];
  return joined;
}

std::vector<std::string> SplitTargets(const std::string& text) {
  std::vector<std::string> targets;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) targets.push_back(item);
    start = comma + 1;
  }
  return targets;
}

StatusOr<std::vector<std::string>> VariantTargetsFor(const CaseInfo& info,
                                                     const std::optional<std::vector<std::string>>& command_line,
                                                     const std::vector<std::string>& declared) {
  if (command_line) return *command_line;
  if (info.case_file.variant_targets) return *info.case_file.variant_targets;
  return declared;
}

StatusOr<std::vector<std::string>> ExpectedSelection(const CaseInfo& info, const LoadedModel& model,
                                                     const std::vector<std::string>& targets,
                                                     const std::vector<std::string>& declared) {
  // An empty list is the adapter's own choice (spec/abi/parity_adapter.h),
  // which for the check is what it declares.
  const std::vector<std::string>& effective = targets.empty() ? declared : targets;
  const std::string key = JoinTargets(effective);
  if (info.case_file.variants) {
    const auto& select = info.case_file.variants->select;
    const std::string where = info.dir + "/case.json: \"variants\"";
    if (const auto pinned = select.find(key); pinned != select.end()) {
      std::set<std::string> known;
      std::string listed;
      for (const VariantEntry& e : CollectEntries(*model.proto)) {
        known.insert(e.id);
        listed += (listed.empty() ? "" : ", ") + e.id;
      }
      for (const std::string& id : pinned->second) {
        if (!known.count(id)) {
          return InvalidArgument(where, ".select[\"", key, "\"] names entry '", id,
                                 "', which the model does not have (its entries: ", listed, ")");
        }
      }
      return pinned->second;
    }
  }
  ResolveOptions options;
  options.targets = effective;
  const std::string context = StrCat("the reference cannot resolve the variant entries of ", model.name,
                                     " for targets ", BracketList(options.targets),
                                     ", so the selection to expect is unknown");
  // ResolveVariants checks the IR's rules itself, and refuses a model that breaks them.
  StatusOr<ResolvedModel> resolved = ResolveVariants(model, options);
  if (!resolved.ok()) {
    return resolved.status().WithContext(context);
  }
  std::vector<std::string> selected;
  for (const EntryDecision& d : resolved->decisions) {
    if (d.selected) selected.push_back(d.id);
  }
  return selected;
}

StatusOr<std::vector<std::string>> ReportedSelection(const nlohmann::json& variants,
                                                     const std::vector<VariantEntry>& entries) {
  std::vector<std::string> selected;
  if (!variants.is_array() || variants.empty()) return selected;  // the main graph ran
  std::map<std::string, const VariantEntry*> by_id;
  std::string listed;
  for (const VariantEntry& e : entries) {
    by_id[e.id] = &e;
    listed += (listed.empty() ? "" : ", ") + e.id;
  }
  auto malformed = [](auto&&... parts) { return InvalidArgument("variant report: ", parts...); };
  std::set<std::string> seen;
  for (const auto& v : variants) {
    if (!v.is_object() || !v.contains("entry") || !v["entry"].is_string() || !v.contains("chosen") ||
        !v["chosen"].is_string()) {
      return malformed("a choice is not {\"entry\", \"chosen\"} strings: ", DumpJson(v));
    }
    const std::string id = v["entry"].get<std::string>();
    const std::string chosen = v["chosen"].get<std::string>();
    const auto found = by_id.find(id);
    if (found == by_id.end()) {
      return malformed("reports entry '", id, "', which the model does not have (its entries: ", listed, ")");
    }
    if (!seen.insert(id).second) return malformed("entry ", id, " reported twice");
    if (chosen == "main") continue;
    if (chosen != found->second->call) {
      return malformed("entry ", id, " chosen '", chosen, "' but its call is '", found->second->call,
                       "' (a choice is the call or \"main\")");
    }
    selected.push_back(id);
  }
  if (seen.size() != entries.size()) {
    std::vector<std::string> missing;
    for (const VariantEntry& e : entries) {
      if (!seen.count(e.id)) missing.push_back(e.id);
    }
    return malformed("reports ", seen.size(), " of ", entries.size(), " entries (missing ", BracketList(missing),
                     "); a backend reports one choice per entry, or none");
  }
  return selected;
}

std::string SelectionMismatch(const std::vector<std::string>& targets, const std::vector<std::string>& selected,
                              const std::vector<std::string>& expected) {
  const std::set<std::string> got(selected.begin(), selected.end()), want(expected.begin(), expected.end());
  if (got == want) return "";
  return StrCat("variant selection: targets ", BracketList(targets), " selected ", BracketList(selected),
                ", expected ", BracketList(expected));
}

}  // namespace parity
