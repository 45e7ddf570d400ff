// Parsing and checking of case.json (spec/case.schema.json): every key and
// value once, with errors that name the file and the key path.
#include "harness/case_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <span>
#include <string_view>

#include "harness/compare.h"

namespace parity {
namespace {

using nlohmann::json;

// The keys of each object case.json holds, by key path ("" the top level,
// "steps.carry[]" the objects of that list). The one list ParseCaseFile
// checks against and CaseFileKeyPaths reports.
constexpr std::string_view kTopKeys[] = {
    "operator", "output_operators", "tolerance", "steps", "fallback", "variant_targets", "variants",
    "check", "tags", "feature", "generator", "source", "suite", "why"};
constexpr std::string_view kCheckKeys[] = {"rule", "message"};
constexpr std::string_view kStepsKeys[] = {"carry"};
constexpr std::string_view kCarryKeys[] = {"output", "input"};
constexpr std::string_view kVariantsKeys[] = {"select"};

// Reads one case.json; `path_` is the file, for messages.
class Parser {
 public:
  explicit Parser(std::string path) : path_(std::move(path)) {}

  StatusOr<CaseFile> Parse(const json& root) {
    if (!root.is_object()) return Error("", "expected an object, got ", Show(root));
    PARITY_RETURN_IF_ERROR(CheckKeys(root, "", kTopKeys, {}));
    CaseFile file;
    for (const auto& [key, value] : root.items()) {
      if (key == "operator") {
        PARITY_ASSIGN_OR_RETURN(file.operator_name, String(value, key));
      } else if (key == "output_operators") {
        PARITY_ASSIGN_OR_RETURN(file.output_operators, StringMap(value, key));
      } else if (key == "tolerance") {
        PARITY_RETURN_IF_ERROR(CheckTolerance(value));
        file.tolerance = value;
      } else if (key == "steps") {
        PARITY_ASSIGN_OR_RETURN(file.steps, Steps(value));
      } else if (key == "fallback") {
        PARITY_ASSIGN_OR_RETURN(file.fallback, Fallback(value));
      } else if (key == "variant_targets") {
        PARITY_ASSIGN_OR_RETURN(file.variant_targets, StringList(value, key));
      } else if (key == "variants") {
        PARITY_ASSIGN_OR_RETURN(file.variants, Variants(value));
      } else if (key == "check") {
        PARITY_ASSIGN_OR_RETURN(file.check, Check(value));
      } else if (key == "tags") {
        PARITY_ASSIGN_OR_RETURN(file.tags, StringList(value, key));
      } else if (std::string* text = DescriptiveField(file, key)) {
        PARITY_ASSIGN_OR_RETURN(*text, String(value, key));
      } else {
        return Internal(path_, ": the key \"", key, "\" is known but not read");  // kTopKeys and this disagree
      }
    }
    return file;
  }

 private:
  template <typename... Args>
  Status Error(const std::string& key_path, const Args&... parts) const {
    if (key_path.empty()) return InvalidArgument(path_, ": ", parts...);
    return InvalidArgument(path_, ": \"", key_path, "\": ", parts...);
  }

  // The string field of a descriptive key, or null.
  static std::string* DescriptiveField(CaseFile& file, const std::string& key) {
    if (key == "feature") return &file.feature;
    if (key == "generator") return &file.generator;
    if (key == "source") return &file.source;
    if (key == "suite") return &file.suite;
    if (key == "why") return &file.why;
    return nullptr;
  }

  static std::string Show(const json& value) {
    std::string text = value.dump();
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
  }

  Status CheckKeys(const json& object, const std::string& at, std::span<const std::string_view> allowed,
                   std::span<const std::string_view> required) const {
    for (const auto& item : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
      std::string known;
      for (std::string_view key : allowed) known += StrCat(known.empty() ? "" : ", ", "\"", key, "\"");
      const std::string where = at.empty() ? "" : StrCat("\"", at, "\": ");
      return InvalidArgument(path_, ": ", where, "unknown key \"", item.key(), "\" (known: ", known, ")");
    }
    for (std::string_view key : required) {
      if (!object.contains(key)) return Error(at, "missing the key \"", key, "\"");
    }
    return Status::Ok();
  }

  StatusOr<std::string> String(const json& value, const std::string& at) const {
    if (!value.is_string()) return Error(at, "expected a string, got ", Show(value));
    return value.get<std::string>();
  }

  StatusOr<std::string> Name(const json& value, const std::string& at) const {
    PARITY_ASSIGN_OR_RETURN(std::string name, String(value, at));
    if (name.empty()) return Error(at, "expected a non-empty string");
    return name;
  }

  StatusOr<std::vector<std::string>> StringList(const json& value, const std::string& at) const {
    if (!value.is_array()) return Error(at, "expected a list of strings, got ", Show(value));
    std::vector<std::string> list;
    for (size_t i = 0; i < value.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(std::string item, String(value[i], StrCat(at, "[", i, "]")));
      list.push_back(std::move(item));
    }
    return list;
  }

  StatusOr<std::map<std::string, std::string>> StringMap(const json& value, const std::string& at) const {
    if (!value.is_object()) return Error(at, "expected an object of strings, got ", Show(value));
    std::map<std::string, std::string> map;
    for (const auto& [key, item] : value.items()) {
      PARITY_ASSIGN_OR_RETURN(map[key], Name(item, StrCat(at, ".", key)));
    }
    return map;
  }

  Status CheckTolerance(const json& value) const {
    // The override's own rules live with the policy; applied here to a
    // default so that a bad override is refused before any case runs.
    StatusOr<Tolerance> applied = TolerancePolicy::ApplyOverride(Tolerance{}, value);
    if (!applied.ok()) return InvalidArgument(path_, ": ", applied.status().message());
    return Status::Ok();
  }

  StatusOr<FallbackRule> Fallback(const json& value) const {
    if (value == "allowed") return FallbackRule::kAllowed;
    if (value == "forbidden") return FallbackRule::kForbidden;
    return Error("fallback", "expected \"allowed\" or \"forbidden\", got ", Show(value));
  }

  StatusOr<CaseSteps> Steps(const json& value) const {
    if (!value.is_object()) return Error("steps", "expected an object, e.g. {\"carry\": [...]}, got ", Show(value));
    PARITY_RETURN_IF_ERROR(CheckKeys(value, "steps", kStepsKeys, {}));
    CaseSteps steps;
    if (!value.contains("carry")) return steps;
    const json& carry = value.at("carry");
    if (!carry.is_array()) {
      return Error("steps.carry", "expected a list of {\"output\", \"input\"}, got ", Show(carry));
    }
    for (size_t i = 0; i < carry.size(); ++i) {
      const std::string at = StrCat("steps.carry[", i, "]");
      const json& entry = carry[i];
      if (!entry.is_object()) return Error(at, "expected {\"output\": NAME, \"input\": NAME}, got ", Show(entry));
      PARITY_RETURN_IF_ERROR(CheckKeys(entry, at, kCarryKeys, kCarryKeys));
      CaseCarry c;
      PARITY_ASSIGN_OR_RETURN(c.output, Name(entry.at("output"), at + ".output"));
      PARITY_ASSIGN_OR_RETURN(c.input, Name(entry.at("input"), at + ".input"));
      for (const CaseCarry& earlier : steps.carry) {
        if (earlier.input == c.input) {
          return Error(at, "input '", c.input, "' is carried twice (from '", earlier.output, "' and '", c.output,
                       "')");
        }
      }
      steps.carry.push_back(std::move(c));
    }
    return steps;
  }

  StatusOr<CaseVariants> Variants(const json& value) const {
    if (!value.is_object()) return Error("variants", "expected an object, e.g. {\"select\": {...}}, got ", Show(value));
    PARITY_RETURN_IF_ERROR(CheckKeys(value, "variants", kVariantsKeys, {}));
    CaseVariants variants;
    if (!value.contains("select")) return variants;
    const json& select = value.at("select");
    if (!select.is_object()) {
      return Error("variants.select", "expected an object of target lists (joined by ',') to entry ids, got ",
                   Show(select));
    }
    for (const auto& [targets, ids] : select.items()) {
      PARITY_ASSIGN_OR_RETURN(variants.select[targets], StringList(ids, StrCat("variants.select[\"", targets, "\"]")));
    }
    return variants;
  }

  StatusOr<CaseCheck> Check(const json& value) const {
    if (!value.is_object()) {
      return Error("check", "expected {\"rule\": STRING, \"message\": STRING}, got ", Show(value));
    }
    PARITY_RETURN_IF_ERROR(CheckKeys(value, "check", kCheckKeys, kCheckKeys));
    CaseCheck check;
    PARITY_ASSIGN_OR_RETURN(check.rule, Name(value.at("rule"), "check.rule"));
    PARITY_ASSIGN_OR_RETURN(check.message, String(value.at("message"), "check.message"));
    return check;
  }

  std::string path_;
};

}  // namespace

StatusOr<CaseFile> ParseCaseFile(const json& root, const std::string& path) { return Parser(path).Parse(root); }

StatusOr<CaseFile> ReadCaseFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError(path, ": cannot be read");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    return InvalidArgument(path, ": not valid JSON: ", e.what());
  }
  return ParseCaseFile(root, path);
}

std::vector<std::string> CaseFileKeyPaths() {
  std::vector<std::string> paths(std::begin(kTopKeys), std::end(kTopKeys));
  auto add = [&](std::string_view prefix, std::span<const std::string_view> keys) {
    for (std::string_view key : keys) paths.push_back(StrCat(prefix, ".", key));
  };
  add("check", kCheckKeys);
  add("steps", kStepsKeys);
  add("steps.carry[]", kCarryKeys);
  add("variants", kVariantsKeys);
  for (const std::string& key : TolerancePolicy::OverrideKeyPaths()) paths.push_back("tolerance." + key);
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace parity
