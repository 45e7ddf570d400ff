// Tolerance policy loading (spec/tolerance.json) and the element-wise
// comparison of expected and actual outputs. The rules implemented here are
// written down in spec/tolerance.md; keep the two in step.
#include "harness/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <sstream>

#include "reference/core/float_formats.h"

namespace parity {

using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string KeyPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (int32_t v = 1; v <= kMaxDataType; ++v) {
    if (IsKnownDataType(v) && DataTypeName(static_cast<DataType>(v)) == name) return static_cast<DataType>(v);
  }
  return std::nullopt;
}

// The real type whose lattice a complex type's components live in.
DataType LatticeType(DataType type) {
  if (type == DataType::kComplex64) return DataType::kFloat;
  if (type == DataType::kComplex128) return DataType::kDouble;
  return type;
}

// `object` must be a JSON object with only `allowed` keys and all `required` ones.
Status CheckKeys(const json& object, const std::string& path, std::span<const std::string_view> allowed,
                 std::span<const std::string_view> required = {}) {
  if (!object.is_object()) return InvalidArgument(path, ": expected an object, got ", object.type_name());
  for (const auto& item : object.items()) {
    bool known = false;
    for (std::string_view key : allowed) known = known || item.key() == key;
    if (!known) {
      std::string list;
      for (std::string_view key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
      return InvalidArgument(KeyPath(path, item.key()), ": unknown key \"", item.key(), "\" (allowed here: ", list, ")");
    }
  }
  for (std::string_view key : required) {
    if (!object.contains(key)) return InvalidArgument(path, ": missing required key \"", key, "\"");
  }
  return Status::Ok();
}

Status CheckKeys(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed,
                 std::initializer_list<std::string_view> required = {}) {
  return CheckKeys(object, path, std::span(allowed.begin(), allowed.size()),
                   std::span(required.begin(), required.size()));
}

// The keys of a case.json "tolerance" override and of its "mistrust" object
// (TolerancePolicy::OverrideKeyPaths lists them for spec/case.schema.json).
constexpr std::string_view kOverrideKeys[] = {"ulp", "atol", "rtol", "signed_zero", "mistrust", "reason"};
constexpr std::string_view kMistrustKeys[] = {"min_elements", "zero_fraction"};

StatusOr<std::string> ReadReason(const json& object, const std::string& path) {
  if (!object.contains("reason")) return InvalidArgument(path, ": missing required key \"reason\"");
  const json& reason = object.at("reason");
  if (!reason.is_string() || reason.get<std::string>().empty()) {
    return InvalidArgument(KeyPath(path, "reason"), ": must be a non-empty string");
  }
  return reason.get<std::string>();
}

StatusOr<double> ReadNonNegative(const json& value, const std::string& path) {
  if (!value.is_number()) return InvalidArgument(path, ": expected a number, got ", value.type_name());
  const double v = value.get<double>();
  if (!(v >= 0.0) || !std::isfinite(v)) return InvalidArgument(path, ": must be a finite number >= 0, got ", v);
  return v;
}

StatusOr<int64_t> ReadCount(const json& value, const std::string& path) {
  if (!value.is_number_integer()) return InvalidArgument(path, ": expected an integer, got ", value.dump());
  const int64_t v = value.get<int64_t>();
  if (v < 0) return InvalidArgument(path, ": must be >= 0, got ", v);
  return v;
}

StatusOr<DataType> ReadFloatTypeName(const json& value, const std::string& path) {
  if (!value.is_string()) return InvalidArgument(path, ": expected a type name, got ", value.dump());
  const std::optional<DataType> type = DataTypeFromName(value.get<std::string>());
  if (!type) return InvalidArgument(path, ": unknown element type \"", value.get<std::string>(), "\"");
  if (!IsFloatingPoint(*type)) {
    return InvalidArgument(path, ": \"", value.get<std::string>(),
                           "\" is not a floating-point type (integer, bool and string outputs always compare "
                           "exactly; complex types use their component type)");
  }
  return *type;
}

StatusOr<MistrustRule> ReadMistrust(const json& value, const std::string& path, bool with_reason) {
  MistrustRule rule;
  if (value.is_boolean() && !value.get<bool>() && !with_reason) {
    rule.enabled = false;
    return rule;
  }
  if (with_reason) {
    PARITY_RETURN_IF_ERROR(
        CheckKeys(value, path, {"min_elements", "zero_fraction", "reason"}, {"min_elements", "zero_fraction"}));
    PARITY_RETURN_IF_ERROR(ReadReason(value, path).status());
  } else {
    if (!value.is_object()) return InvalidArgument(path, ": expected false or {min_elements, zero_fraction}");
    PARITY_RETURN_IF_ERROR(CheckKeys(value, path, kMistrustKeys, kMistrustKeys));
  }
  PARITY_ASSIGN_OR_RETURN(rule.min_elements, ReadCount(value.at("min_elements"), KeyPath(path, "min_elements")));
  PARITY_ASSIGN_OR_RETURN(rule.zero_fraction, ReadNonNegative(value.at("zero_fraction"), KeyPath(path, "zero_fraction")));
  if (rule.zero_fraction > 1.0) return InvalidArgument(KeyPath(path, "zero_fraction"), ": must be at most 1");
  return rule;
}

}  // namespace

// Turns the JSON of spec/tolerance.json into a TolerancePolicy; every error
// names the dotted path of the offending key.
class TolerancePolicy::Parser {
 public:
  static StatusOr<Bound> ReadBound(const json& value, const std::string& path, bool allow_formula) {
    Bound bound;
    if (value.is_number()) {
      PARITY_ASSIGN_OR_RETURN(bound.base, ReadNonNegative(value, path));
      return bound;
    }
    if (!allow_formula) {
      return InvalidArgument(path, ": expected a number (formulas belong in spec/tolerance.json), got ", value.dump());
    }
    PARITY_RETURN_IF_ERROR(CheckKeys(value, path, {"base", "u", "u_sqrt_n", "u_n", "u_sqrt_k", "u_k"}));
    const std::pair<const char*, double*> fields[] = {{"base", &bound.base},         {"u", &bound.u},
                                                      {"u_sqrt_n", &bound.u_sqrt_n}, {"u_n", &bound.u_n},
                                                      {"u_sqrt_k", &bound.u_sqrt_k}, {"u_k", &bound.u_k}};
    for (const auto& [key, target] : fields) {
      if (value.contains(key)) {
        PARITY_ASSIGN_OR_RETURN(*target, ReadNonNegative(value.at(key), KeyPath(path, key)));
      }
    }
    return bound;
  }

  // `extra_key` is one more key the caller reads itself ("match" of a rule).
  static StatusOr<Entry> ReadEntry(const json& value, const std::string& path, bool require_reason,
                                   bool allow_formula, std::string_view extra_key = "reason") {
    if (allow_formula) {
      PARITY_RETURN_IF_ERROR(CheckKeys(
          value, path, {"ulp", "atol", "rtol", "signed_zero", "mistrust", "accumulation_type", "reason", extra_key}));
    } else {
      PARITY_RETURN_IF_ERROR(CheckKeys(value, path, kOverrideKeys));
    }
    Entry entry;
    if (value.contains("accumulation_type")) {
      PARITY_ASSIGN_OR_RETURN(entry.accumulation_type,
                              ReadFloatTypeName(value.at("accumulation_type"), KeyPath(path, "accumulation_type")));
    }
    if (require_reason || value.contains("reason")) {
      PARITY_ASSIGN_OR_RETURN(entry.reason, ReadReason(value, path));
    }
    if (value.contains("ulp")) {
      PARITY_ASSIGN_OR_RETURN(entry.ulp, ReadCount(value.at("ulp"), KeyPath(path, "ulp")));
    }
    if (value.contains("atol")) {
      PARITY_ASSIGN_OR_RETURN(entry.atol, ReadBound(value.at("atol"), KeyPath(path, "atol"), allow_formula));
    }
    if (value.contains("rtol")) {
      PARITY_ASSIGN_OR_RETURN(entry.rtol, ReadBound(value.at("rtol"), KeyPath(path, "rtol"), allow_formula));
    }
    if (value.contains("signed_zero")) {
      if (!value.at("signed_zero").is_boolean()) return InvalidArgument(KeyPath(path, "signed_zero"), ": expected true or false");
      entry.signed_zero = value.at("signed_zero").get<bool>();
    }
    if (value.contains("mistrust")) {
      PARITY_ASSIGN_OR_RETURN(entry.mistrust, ReadMistrust(value.at("mistrust"), KeyPath(path, "mistrust"), false));
    }
    return entry;
  }

  static StatusOr<std::vector<std::string>> ReadNames(const json& value, const std::string& path) {
    if (!value.is_array()) return InvalidArgument(path, ": expected a list of names");
    std::vector<std::string> names;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) return InvalidArgument(path, "[", i, "]: expected a string");
      names.push_back(value[i].get<std::string>());
    }
    return names;
  }

  static StatusOr<std::vector<Rule>> ReadRules(const json& value, const std::string& path,
                                               const TolerancePolicy& policy) {
    if (!value.is_array()) return InvalidArgument(path, ": expected a list of rules");
    std::vector<Rule> rules;
    for (size_t i = 0; i < value.size(); ++i) {
      const std::string rule_path = path + "[" + std::to_string(i) + "]";
      Rule rule;
      PARITY_ASSIGN_OR_RETURN(rule.entry, ReadEntry(value[i], rule_path, true, true, "match"));
      if (!value[i].contains("match")) return InvalidArgument(rule_path, ": missing required key \"match\"");
      const json& match = value[i].at("match");
      const std::string match_path = KeyPath(rule_path, "match");
      PARITY_RETURN_IF_ERROR(CheckKeys(match, match_path, {"ops", "families", "dtypes"}));
      if (match.contains("ops")) {
        PARITY_ASSIGN_OR_RETURN(rule.ops, ReadNames(match.at("ops"), KeyPath(match_path, "ops")));
      }
      if (match.contains("families")) {
        PARITY_ASSIGN_OR_RETURN(rule.families, ReadNames(match.at("families"), KeyPath(match_path, "families")));
        for (const std::string& family : rule.families) {
          if (!policy.families_.count(family)) {
            return InvalidArgument(KeyPath(match_path, "families"), ": unknown family \"", family, "\"");
          }
        }
      }
      if (match.contains("dtypes")) {
        const json& dtypes = match.at("dtypes");
        if (!dtypes.is_array()) return InvalidArgument(KeyPath(match_path, "dtypes"), ": expected a list of names");
        for (size_t d = 0; d < dtypes.size(); ++d) {
          PARITY_ASSIGN_OR_RETURN(DataType type, ReadFloatTypeName(dtypes[d], KeyPath(match_path, "dtypes") + "[" +
                                                                                  std::to_string(d) + "]"));
          rule.dtypes.push_back(type);
        }
      }
      rules.push_back(std::move(rule));
    }
    return rules;
  }

  static StatusOr<TolerancePolicy> ReadPolicy(const json& root) {
    TolerancePolicy policy;
    PARITY_RETURN_IF_ERROR(CheckKeys(root, "(top level)",
                                     {"schema_version", "description", "unit_roundoff", "special_values", "mistrust",
                                      "budget", "onnx_runner", "default_family", "families", "ops", "rules",
                                      "adapters"},
                                     {"schema_version", "unit_roundoff", "special_values", "mistrust", "budget",
                                      "onnx_runner", "default_family", "families", "ops"}));
    if (root.at("schema_version") != 1) {
      return InvalidArgument("schema_version: this build reads version 1, got ", root.at("schema_version").dump());
    }
    if (root.contains("description") && !root.at("description").is_string()) {
      return InvalidArgument("description: expected a string");
    }

    // Every floating-point type needs its unit roundoff, so that no formula
    // ever meets a type it cannot scale.
    const json& roundoff = root.at("unit_roundoff");
    if (!roundoff.is_object()) return InvalidArgument("unit_roundoff: expected an object");
    for (const auto& item : roundoff.items()) {
      const std::string path = KeyPath("unit_roundoff", item.key());
      PARITY_ASSIGN_OR_RETURN(DataType type, ReadFloatTypeName(json(item.key()), path));
      PARITY_RETURN_IF_ERROR(CheckKeys(item.value(), path, {"value", "reason"}, {"value"}));
      PARITY_RETURN_IF_ERROR(ReadReason(item.value(), path).status());
      PARITY_ASSIGN_OR_RETURN(double u, ReadNonNegative(item.value().at("value"), KeyPath(path, "value")));
      if (u <= 0.0 || u > 1.0) return InvalidArgument(KeyPath(path, "value"), ": must be in (0, 1]");
      policy.unit_roundoff_[type] = u;
    }
    for (int32_t v = 1; v <= kMaxDataType; ++v) {
      const DataType type = static_cast<DataType>(v);
      if (IsFloatingPoint(type) && !policy.unit_roundoff_.count(type)) {
        return InvalidArgument("unit_roundoff: missing an entry for ", DataTypeName(type));
      }
    }

    // The NaN and infinity rules are fixed in code; the file must still state
    // them, so that a reader of the data sees every rule that applies.
    const json& special = root.at("special_values");
    PARITY_RETURN_IF_ERROR(CheckKeys(special, "special_values", {"nan", "inf", "zero"}, {"nan", "inf", "zero"}));
    for (const char* key : {"nan", "inf", "zero"}) {
      const std::string path = KeyPath("special_values", key);
      const json& rule = special.at(key);
      if (std::string_view(key) == "zero") {
        PARITY_RETURN_IF_ERROR(CheckKeys(rule, path, {"rule", "reason", "signed_zero"}, {"rule", "signed_zero"}));
        if (!rule.at("signed_zero").is_boolean()) return InvalidArgument(path, ".signed_zero: expected true or false");
        policy.signed_zero_default_ = rule.at("signed_zero").get<bool>();
      } else {
        PARITY_RETURN_IF_ERROR(CheckKeys(rule, path, {"rule", "reason"}, {"rule"}));
      }
      if (!rule.at("rule").is_string()) return InvalidArgument(path, ".rule: expected a string");
      PARITY_RETURN_IF_ERROR(ReadReason(rule, path).status());
    }

    PARITY_ASSIGN_OR_RETURN(policy.mistrust_, ReadMistrust(root.at("mistrust"), "mistrust", true));

    const json& budget = root.at("budget");
    PARITY_RETURN_IF_ERROR(CheckKeys(budget, "budget", {"factor", "mistrust_ratio", "reason"},
                                     {"factor", "mistrust_ratio", "reason"}));
    PARITY_ASSIGN_OR_RETURN(policy.budget_.reason, ReadReason(budget, "budget"));
    PARITY_ASSIGN_OR_RETURN(policy.budget_.factor, ReadNonNegative(budget.at("factor"), "budget.factor"));
    PARITY_ASSIGN_OR_RETURN(policy.budget_.mistrust_ratio,
                            ReadNonNegative(budget.at("mistrust_ratio"), "budget.mistrust_ratio"));
    if (policy.budget_.factor < 1.0) {
      return InvalidArgument("budget.factor: must be at least 1 (a backend may always be as accurate as the "
                             "conventional run), got ", policy.budget_.factor);
    }
    const json& runner = root.at("onnx_runner");
    PARITY_RETURN_IF_ERROR(CheckKeys(runner, "onnx_runner", {"rtol", "atol", "bfloat16_rtol", "reason"},
                                     {"rtol", "atol", "bfloat16_rtol", "reason"}));
    PARITY_ASSIGN_OR_RETURN(policy.onnx_runner_.bfloat16_rtol,
                            ReadNonNegative(runner.at("bfloat16_rtol"), "onnx_runner.bfloat16_rtol"));
    PARITY_ASSIGN_OR_RETURN(policy.onnx_runner_.reason, ReadReason(runner, "onnx_runner"));
    PARITY_ASSIGN_OR_RETURN(policy.onnx_runner_.rtol, ReadNonNegative(runner.at("rtol"), "onnx_runner.rtol"));
    PARITY_ASSIGN_OR_RETURN(policy.onnx_runner_.atol, ReadNonNegative(runner.at("atol"), "onnx_runner.atol"));

    const json& families = root.at("families");
    if (!families.is_object() || families.empty()) return InvalidArgument("families: expected a non-empty object");
    for (const auto& item : families.items()) {
      const std::string path = KeyPath("families", item.key());
      Family family;
      PARITY_RETURN_IF_ERROR(CheckKeys(item.value(), path, {"reason", "default", "dtypes"}, {"default"}));
      PARITY_ASSIGN_OR_RETURN(family.reason, ReadReason(item.value(), path));
      const std::string default_path = KeyPath(path, "default");
      PARITY_ASSIGN_OR_RETURN(family.defaults, ReadEntry(item.value().at("default"), default_path, false, true));
      PARITY_RETURN_IF_ERROR(CheckKeys(item.value().at("default"), default_path,
                                       {"ulp", "atol", "rtol", "signed_zero", "mistrust", "accumulation_type", "reason"},
                                       {"ulp", "atol", "rtol"}));
      if (item.value().contains("dtypes")) {
        const json& dtypes = item.value().at("dtypes");
        if (!dtypes.is_object()) return InvalidArgument(KeyPath(path, "dtypes"), ": expected an object");
        for (const auto& dtype_item : dtypes.items()) {
          const std::string dtype_path = KeyPath(KeyPath(path, "dtypes"), dtype_item.key());
          PARITY_ASSIGN_OR_RETURN(DataType type, ReadFloatTypeName(json(dtype_item.key()), dtype_path));
          PARITY_ASSIGN_OR_RETURN(family.by_dtype[type], ReadEntry(dtype_item.value(), dtype_path, true, true));
        }
      }
      policy.families_[item.key()] = std::move(family);
    }

    const json& default_family = root.at("default_family");
    PARITY_RETURN_IF_ERROR(CheckKeys(default_family, "default_family", {"family", "reason"}, {"family"}));
    PARITY_RETURN_IF_ERROR(ReadReason(default_family, "default_family").status());
    if (!default_family.at("family").is_string() || !policy.families_.count(default_family.at("family").get<std::string>())) {
      return InvalidArgument("default_family.family: must name one of the families, got ", default_family.at("family").dump());
    }
    policy.default_family_ = default_family.at("family").get<std::string>();

    const json& ops = root.at("ops");
    if (!ops.is_object()) return InvalidArgument("ops: expected an object mapping op_type to family");
    for (const auto& item : ops.items()) {
      if (!item.value().is_string() || !policy.families_.count(item.value().get<std::string>())) {
        return InvalidArgument(KeyPath("ops", item.key()), ": must name one of the families, got ", item.value().dump());
      }
      policy.op_family_[item.key()] = item.value().get<std::string>();
    }

    if (root.contains("rules")) {
      PARITY_ASSIGN_OR_RETURN(policy.rules_, ReadRules(root.at("rules"), "rules", policy));
    }
    if (root.contains("adapters")) {
      const json& adapters = root.at("adapters");
      if (!adapters.is_object()) return InvalidArgument("adapters: expected an object");
      for (const auto& item : adapters.items()) {
        const std::string path = KeyPath("adapters", item.key());
        PARITY_RETURN_IF_ERROR(CheckKeys(item.value(), path, {"reason", "rules"}, {"rules"}));
        PARITY_RETURN_IF_ERROR(ReadReason(item.value(), path).status());
        PARITY_ASSIGN_OR_RETURN(policy.adapter_rules_[item.key()],
                                ReadRules(item.value().at("rules"), KeyPath(path, "rules"), policy));
      }
    }
    return policy;
  }
};

StatusOr<TolerancePolicy> TolerancePolicy::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open tolerance policy ", path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError("cannot read tolerance policy ", path);
  StatusOr<TolerancePolicy> policy = Parse(text.str());
  if (!policy.ok()) return policy.status().WithContext(path);
  return policy;
}

StatusOr<TolerancePolicy> TolerancePolicy::Parse(const std::string& json_text) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {
    return InvalidArgument("tolerance policy is not valid JSON: ", e.what());
  }
  return Parser::ReadPolicy(root);
}

const std::string& TolerancePolicy::FamilyOf(std::string_view op_type) const {
  const auto it = op_family_.find(op_type);
  return it == op_family_.end() ? default_family_ : it->second;
}

Tolerance TolerancePolicy::For(std::string_view op_type, DataType dtype, const ShapeFacts& facts,
                               std::string_view adapter) const {
  Tolerance tol;
  tol.mistrust = mistrust_;
  tol.signed_zero = signed_zero_default_;
  if (!IsFloatingPoint(dtype) && !IsComplex(dtype)) {
    tol.reason = "integer, bool and string outputs compare exactly";
    return tol;
  }
  const DataType lattice = LatticeType(dtype);
  const std::string& family_name = FamilyOf(op_type);
  const Family& family = families_.find(family_name)->second;  // Parse checked that it exists

  int64_t ulp = 0;
  Bound atol, rtol;
  DataType roundoff_type = lattice;
  std::string reason;
  auto apply = [&](const Entry& entry, const std::string& source) {
    if (entry.accumulation_type) roundoff_type = *entry.accumulation_type;
    if (entry.ulp) ulp = *entry.ulp;
    if (entry.atol) atol = *entry.atol;
    if (entry.rtol) rtol = *entry.rtol;
    if (entry.signed_zero) tol.signed_zero = *entry.signed_zero;
    if (entry.mistrust) tol.mistrust = *entry.mistrust;
    if (!entry.reason.empty()) reason += (reason.empty() ? "" : "; ") + source + ": " + entry.reason;
  };
  auto matches = [&](const Rule& rule) {
    auto has = [](const auto& list, const auto& item) {
      return list.empty() || std::find(list.begin(), list.end(), item) != list.end();
    };
    const bool dtype_ok = rule.dtypes.empty() || has(rule.dtypes, lattice) || has(rule.dtypes, dtype);
    return has(rule.ops, std::string(op_type)) && has(rule.families, family_name) && dtype_ok;
  };

  reason = family_name + ": " + family.reason;
  apply(family.defaults, family_name);
  if (const auto it = family.by_dtype.find(lattice); it != family.by_dtype.end()) {
    apply(it->second, family_name + "/" + std::string(DataTypeName(lattice)));
  }
  for (const Rule& rule : rules_) {
    if (matches(rule)) apply(rule.entry, "rule");
  }
  if (const auto it = adapter_rules_.find(adapter); it != adapter_rules_.end()) {
    for (const Rule& rule : it->second) {
      if (matches(rule)) apply(rule.entry, "adapter " + std::string(adapter));
    }
  }

  const double u = unit_roundoff_.find(roundoff_type)->second;
  const double n = static_cast<double>(std::max<int64_t>(1, facts.reduced_length));
  const double k = static_cast<double>(std::max<int64_t>(1, facts.inner_dim));
  auto evaluate = [&](const Bound& b) {
    return b.base + u * (b.u + b.u_sqrt_n * std::sqrt(n) + b.u_n * n + b.u_sqrt_k * std::sqrt(k) + b.u_k * k);
  };
  tol.atol = evaluate(atol);
  tol.rtol = evaluate(rtol);
  tol.ulp = ulp;
  tol.reason = reason;
  return tol;
}

std::vector<std::string> TolerancePolicy::OverrideKeyPaths() {
  std::vector<std::string> paths(std::begin(kOverrideKeys), std::end(kOverrideKeys));
  for (std::string_view key : kMistrustKeys) paths.push_back("mistrust." + std::string(key));
  return paths;
}

StatusOr<Tolerance> TolerancePolicy::ApplyOverride(Tolerance base, const nlohmann::json& override_object) {
  PARITY_ASSIGN_OR_RETURN(Entry entry, Parser::ReadEntry(override_object, "tolerance", true, false));
  if (entry.ulp) base.ulp = *entry.ulp;
  if (entry.atol) base.atol = entry.atol->base;
  if (entry.rtol) base.rtol = entry.rtol->base;
  if (entry.signed_zero) base.signed_zero = *entry.signed_zero;
  if (entry.mistrust) base.mistrust = *entry.mistrust;
  base.reason = "case override: " + entry.reason;
  return base;
}

// ---------------------------------------------------------------------------
// Comparison.

namespace {

// An element of a floating-point lattice: its exact value and bit pattern.
struct FloatElement {
  double value;
  uint64_t bits;
};

FloatElement FromFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return {f, bits};
}

FloatElement FromDouble(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return {d, bits};
}

// `t` holds a real floating-point type.
FloatElement ReadFloat(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return FromFloat(t.data<float>()[i]);
    case DataType::kDouble: return FromDouble(t.data<double>()[i]);
    case DataType::kFloat16:
    case DataType::kBfloat16: {
      const uint16_t bits = t.data<uint16_t>()[i];
      return {DecodeSmallFloat(t.dtype(), bits), bits};
    }
    default: {
      const uint8_t bits = t.data<uint8_t>()[i];
      return {DecodeSmallFloat(t.dtype(), bits), bits};
    }
  }
}

// Position in the lattice: sign-magnitude encodings map to a signed integer
// that increases with the value, with -0 and +0 both at 0.
int64_t LatticeOrdinal(DataType type, uint64_t bits) {
  if (type == DataType::kFloat8E8M0) return static_cast<int64_t>(bits & 0xff);  // no sign bit
  const int width = type == DataType::kFloat ? 32 : type == DataType::kDouble ? 64 : PackedBits(type);
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

std::string NumberText(double value, DataType type) {
  char buffer[64];
  const auto result = type == DataType::kFloat ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(value))
                                               : std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string BitsText(DataType type, uint64_t bits) {
  const int width = type == DataType::kFloat ? 32 : type == DataType::kDouble ? 64 : PackedBits(type);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%0*llx", (width + 3) / 4, static_cast<unsigned long long>(bits));
  return buffer;
}

std::string FloatText(DataType type, FloatElement e) {
  return NumberText(e.value, type) + " (" + BitsText(type, e.bits) + ")";
}

// "[1,2] (flat 5)" for the flat index of a row-major tensor.
std::string IndexText(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  int64_t rest = flat;
  for (size_t axis = shape.size(); axis-- > 0;) {
    if (shape[axis] > 0) {
      index[axis] = rest % shape[axis];
      rest /= shape[axis];
    }
  }
  return ShapeToString(index) + " (flat " + std::to_string(flat) + ")";
}

struct ElementCheck {
  bool pass;
  double abs_error, rel_error, ulp_error;
};

ElementCheck CheckFloat(DataType type, FloatElement e, FloatElement a, const Tolerance& tol) {
  // NaN matches only NaN, whatever the payload; an infinity only itself.
  if (std::isnan(e.value) || std::isnan(a.value) || std::isinf(e.value) || std::isinf(a.value)) {
    const bool same = (std::isnan(e.value) && std::isnan(a.value)) || e.value == a.value;
    return same ? ElementCheck{true, 0, 0, 0} : ElementCheck{false, kInf, kInf, kInf};
  }
  const double abs_error = std::fabs(a.value - e.value);
  const double rel_error = e.value == 0 ? (abs_error == 0 ? 0.0 : kInf) : abs_error / std::fabs(e.value);
  const uint64_t ulp = UlpDistance(type, e.bits, a.bits);
  if (tol.signed_zero && e.value == 0 && a.value == 0 && std::signbit(e.value) != std::signbit(a.value)) {
    return {false, 0, 0, 1};  // adjacent once the two zeros are told apart
  }
  const bool pass = abs_error <= tol.atol + tol.rtol * std::fabs(e.value) || ulp <= static_cast<uint64_t>(tol.ulp);
  return {pass, abs_error, rel_error, static_cast<double>(ulp)};
}

class TensorComparer {
 public:
  TensorComparer(const Tensor& expected, const Tensor& actual, const Tolerance& tol, const ElementBudget* budget)
      : e_(expected), a_(actual), tol_(tol), type_(expected.dtype()), budget_(budget) {}

  ErrorStats Run() {
    stats_.elements = e_.size();
    for (int64_t i = 0; i < e_.size(); ++i) CheckElement(i);
    return stats_;
  }

 private:
  // `describe` runs only for the first mismatch; a template, not a
  // std::function, so that passing elements build nothing (a std::function
  // per element was a tenth of a large case's comparison time).
  template <typename Describe>
  void Record(int64_t i, const ElementCheck& check, const Describe& describe) {
    stats_.max_abs_error = std::max(stats_.max_abs_error, check.abs_error);
    stats_.max_rel_error = std::max(stats_.max_rel_error, check.rel_error);
    stats_.max_ulp_error = std::max(stats_.max_ulp_error, check.ulp_error);
    if (check.pass) return;
    if (stats_.mismatches++ == 0) {
      stats_.first_mismatch_index = i;
      stats_.first_mismatch = "at " + IndexText(e_.shape(), i) + ": " + describe();
    }
  }

  void CheckElement(int64_t i) {
    if (IsFloatingPoint(type_)) {
      const FloatElement e = ReadFloat(e_, i), a = ReadFloat(a_, i);
      ElementCheck check = CheckFloat(type_, e, a, tol_);
      if (!check.pass && budget_ && std::isfinite(a.value) && std::isfinite(e.value)) {
        const double wide = budget_->wide->GetDouble(i);
        if (std::isfinite(wide) &&
            std::fabs(a.value - wide) <= budget_->allowance + tol_.atol + tol_.rtol * std::fabs(wide)) {
          check.pass = true;
          ++stats_.budget_elements;
        }
      }
      Record(i, check, [&] { return "expected " + FloatText(type_, e) + " got " + FloatText(type_, a); });
    } else if (IsComplex(type_)) {
      CheckComplex(i);
    } else if (type_ == DataType::kString) {
      const std::string& e = e_.strings()[static_cast<size_t>(i)];
      const std::string& a = a_.strings()[static_cast<size_t>(i)];
      Record(i, {e == a, 0, 0, 0}, [&] { return "expected \"" + Clip(e) + "\" got \"" + Clip(a) + "\""; });
    } else if (type_ == DataType::kBool) {
      const bool e = e_.GetInt64(i) != 0, a = a_.GetInt64(i) != 0;
      const ElementCheck check = e == a ? ElementCheck{true, 0, 0, 0} : ElementCheck{false, 1, e ? 1.0 : kInf, 1};
      Record(i, check, [&] { return std::string("expected ") + (e ? "true" : "false") + " got " + (a ? "true" : "false"); });
    } else {
      CheckInteger(i);
    }
  }

  void CheckInteger(int64_t i) {
    double difference = 0, magnitude = 0;
    std::string e_text, a_text;
    if (IsUnsignedInteger(type_)) {
      const uint64_t e = e_.GetUint64(i), a = a_.GetUint64(i);
      difference = static_cast<double>(e > a ? e - a : a - e);
      magnitude = static_cast<double>(e);
      e_text = std::to_string(e), a_text = std::to_string(a);
    } else {
      const int64_t e = e_.GetInt64(i), a = a_.GetInt64(i);
      // Through uint64 so that the difference of extreme values does not overflow.
      difference = static_cast<double>(e > a ? static_cast<uint64_t>(e) - static_cast<uint64_t>(a)
                                             : static_cast<uint64_t>(a) - static_cast<uint64_t>(e));
      magnitude = std::fabs(static_cast<double>(e));
      e_text = std::to_string(e), a_text = std::to_string(a);
    }
    // atol below 1 admits no difference at all.
    const bool pass = difference == 0 || (tol_.atol >= 1 && difference <= std::floor(tol_.atol));
    const double rel = magnitude == 0 ? (difference == 0 ? 0 : kInf) : difference / magnitude;
    Record(i, {pass, difference, rel, difference}, [&] { return "expected " + e_text + " got " + a_text; });
  }

  void CheckComplex(int64_t i) {
    const bool is64 = type_ == DataType::kComplex64;
    const DataType part_type = LatticeType(type_);
    FloatElement e[2], a[2];
    if (is64) {
      const std::complex<float> ce = e_.data<std::complex<float>>()[i], ca = a_.data<std::complex<float>>()[i];
      e[0] = FromFloat(ce.real()), e[1] = FromFloat(ce.imag()), a[0] = FromFloat(ca.real()), a[1] = FromFloat(ca.imag());
    } else {
      const std::complex<double> ce = e_.data<std::complex<double>>()[i], ca = a_.data<std::complex<double>>()[i];
      e[0] = FromDouble(ce.real()), e[1] = FromDouble(ce.imag()), a[0] = FromDouble(ca.real()), a[1] = FromDouble(ca.imag());
    }
    const ElementCheck re = CheckFloat(part_type, e[0], a[0], tol_), im = CheckFloat(part_type, e[1], a[1], tol_);
    const ElementCheck both{re.pass && im.pass, std::max(re.abs_error, im.abs_error),
                            std::max(re.rel_error, im.rel_error), std::max(re.ulp_error, im.ulp_error)};
    auto text = [&](const FloatElement* c) {
      return "(" + NumberText(c[0].value, part_type) + ", " + NumberText(c[1].value, part_type) + ") (" +
             BitsText(part_type, c[0].bits) + ", " + BitsText(part_type, c[1].bits) + ")";
    };
    Record(i, both, [&] { return "expected " + text(e) + " got " + text(a); });
  }

  static std::string Clip(const std::string& s) { return s.size() <= 64 ? s : s.substr(0, 61) + "..."; }

  const Tensor& e_;
  const Tensor& a_;
  const Tolerance& tol_;
  const DataType type_;
  const ElementBudget* budget_;
  ErrorStats stats_;
};

// Why an expected tensor is too uninformative to trust a match, or "".
std::string DegenerateReason(const Tensor& expected, const MistrustRule& rule) {
  const DataType type = expected.dtype();
  if (!rule.enabled || type == DataType::kString || expected.size() < rule.min_elements || expected.size() == 0) {
    return "";
  }
  // Elements as (real, imaginary) doubles; integers beyond 2^53 may round,
  // which can only hide a difference between two huge values.
  auto element = [&](int64_t i) { return expected.GetComplex(i); };
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  int64_t zeros = 0;
  bool all_equal = true;
  const std::complex<double> first = element(0);
  for (int64_t i = 0; i < expected.size(); ++i) {
    const std::complex<double> v = element(i);
    if (v.real() == 0 && v.imag() == 0) ++zeros;
    all_equal = all_equal && same(v.real(), first.real()) && same(v.imag(), first.imag());
  }
  const int64_t n = expected.size();
  if (all_equal) return StrCat("degenerate expected output: all ", n, " elements are equal");
  if (static_cast<double>(zeros) > rule.zero_fraction * static_cast<double>(n)) {
    return StrCat("degenerate expected output: ", zeros, " of ", n, " elements are zero (more than ",
                  rule.zero_fraction * 100, "%)");
  }
  return "";
}

void Merge(OutputComparison& into, const OutputComparison& part, int64_t offset, const std::string& where) {
  ErrorStats& s = into.stats;
  s.max_abs_error = std::max(s.max_abs_error, part.stats.max_abs_error);
  s.max_rel_error = std::max(s.max_rel_error, part.stats.max_rel_error);
  s.max_ulp_error = std::max(s.max_ulp_error, part.stats.max_ulp_error);
  if (s.first_mismatch_index < 0 && part.stats.first_mismatch_index >= 0) {
    s.first_mismatch_index = offset + part.stats.first_mismatch_index;
    s.first_mismatch = where + ": " + part.stats.first_mismatch;
  }
  s.mismatches += part.stats.mismatches;
  s.elements += part.stats.elements;
  auto rank = [](CompareVerdict v) { return v == CompareVerdict::kMismatch ? 2 : v == CompareVerdict::kMistrusted ? 1 : 0; };
  if (rank(part.verdict) > rank(into.verdict)) {
    into.verdict = part.verdict;
    into.message = where + ": " + part.message;
  }
}

OutputComparison Mismatch(std::string message) {
  OutputComparison result;
  result.verdict = CompareVerdict::kMismatch;
  result.message = std::move(message);
  return result;
}

OutputComparison CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tol,
                                const ElementBudget* budget) {
  if (!expected.defined() || !actual.defined()) {
    if (!expected.defined() && !actual.defined()) return {};
    return Mismatch("expected " + (expected.defined() ? expected.Description() : std::string("no tensor")) +
                    ", got " + (actual.defined() ? actual.Description() : std::string("no tensor")));
  }
  if (expected.dtype() != actual.dtype()) {
    return Mismatch("element type mismatch: expected " + expected.Description() + ", got " + actual.Description());
  }
  if (expected.shape() != actual.shape()) {
    return Mismatch("shape mismatch: expected " + expected.Description() + ", got " + actual.Description());
  }
  OutputComparison result;
  if (budget && (!IsFloatingPoint(expected.dtype()) || !budget->wide ||
                 budget->wide->dtype() != DataType::kDouble || budget->wide->shape() != expected.shape())) {
    budget = nullptr;  // a budget is for real floating outputs, against a double result of their shape
  }
  result.stats = TensorComparer(expected, actual, tol, budget).Run();
  if (result.stats.mismatches > 0) {
    result.verdict = CompareVerdict::kMismatch;
    result.message = StrCat(result.stats.mismatches, " of ", result.stats.elements,
                            " elements differ beyond the tolerance; first ", result.stats.first_mismatch);
    return result;
  }
  result.message = DegenerateReason(expected, tol.mistrust);
  if (!result.message.empty()) result.verdict = CompareVerdict::kMistrusted;
  return result;
}

}  // namespace

uint64_t UlpDistance(DataType type, uint64_t expected_bits, uint64_t actual_bits) {
  const int64_t e = LatticeOrdinal(type, expected_bits), a = LatticeOrdinal(type, actual_bits);
  // Ordinals lie within (-2^63, 2^63), so the difference fits in uint64.
  return e > a ? static_cast<uint64_t>(e) - static_cast<uint64_t>(a) : static_cast<uint64_t>(a) - static_cast<uint64_t>(e);
}

const char* CompareVerdictName(CompareVerdict verdict) {
  switch (verdict) {
    case CompareVerdict::kMatch: return "match";
    case CompareVerdict::kMismatch: return "mismatch";
    case CompareVerdict::kMistrusted: return "mistrusted";
  }
  return "?";
}

OutputComparison CompareValues(const Value& expected, const Value& actual, const Tolerance& tol,
                               const ElementBudget* budget) {
  if (expected.kind() != actual.kind()) {
    return Mismatch("kind mismatch: expected " + expected.Description() + ", got " + actual.Description());
  }
  switch (expected.kind()) {
    case Value::Kind::kTensor: return CompareTensors(expected.tensor(), actual.tensor(), tol, budget);
    case Value::Kind::kOptional: {
      if (expected.has_element() != actual.has_element()) {
        return Mismatch("optional mismatch: expected " + expected.Description() + ", got " + actual.Description());
      }
      if (!expected.has_element()) return {};
      OutputComparison result;
      Merge(result, CompareValues(expected.element(), actual.element(), tol), 0, "optional element");
      return result;
    }
    case Value::Kind::kSequence: {
      const auto& e = expected.sequence();
      const auto& a = actual.sequence();
      if (e.size() != a.size()) {
        return Mismatch(StrCat("sequence length mismatch: expected ", e.size(), " elements, got ", a.size()));
      }
      const DataType et = expected.sequence_element_type(), at = actual.sequence_element_type();
      if (et != DataType::kUndefined && at != DataType::kUndefined && et != at) {
        return Mismatch("sequence element type mismatch: expected " + expected.Description() + ", got " +
                        actual.Description());
      }
      OutputComparison result;
      int64_t offset = 0;
      for (size_t i = 0; i < e.size(); ++i) {
        const OutputComparison part = CompareValues(e[i], a[i], tol);
        Merge(result, part, offset, "sequence element " + std::to_string(i));
        offset += part.stats.elements;
      }
      return result;
    }
  }
  return Mismatch("unknown value kind");
}

nlohmann::json ToJson(const ErrorStats& stats) {
  auto number = [](double v) -> json {
    if (std::isfinite(v)) return v;
    return std::isnan(v) ? "nan" : "inf";
  };
  json out;
  out["max_abs_error"] = number(stats.max_abs_error);
  out["max_rel_error"] = number(stats.max_rel_error);
  out["max_ulp_error"] = number(stats.max_ulp_error);
  out["mismatches"] = stats.mismatches;
  if (stats.budget_elements > 0) out["budget_elements"] = stats.budget_elements;
  out["elements"] = stats.elements;
  out["first_mismatch_index"] = stats.first_mismatch_index;
  out["first_mismatch"] = stats.first_mismatch.empty() ? json(nullptr) : json(stats.first_mismatch);
  return out;
}

}  // namespace parity
