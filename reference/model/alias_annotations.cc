// Reading the aliasing annotations (spec/aliasing.md, "Representation"):
// the "ai.onnx.alias.<output>" entries of a graph's metadata_props, parsed
// into Alias records, and whether a model carries any at all.
#include <string_view>
#include <unordered_set>

#include "reference/model/alias_annotations.h"

namespace parity {
namespace {

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

bool HasPrefix(const std::string& key) { return std::string_view(key).starts_with(kAliasKeyPrefix); }

template <typename Props>
bool AnyAliasKey(const Props& props) {
  for (const auto& prop : props) {
    if (HasPrefix(prop.key())) return true;
  }
  return false;
}

bool GraphHasAliases(const onnx::GraphProto& graph);

// Whether a graph that one of `nodes` holds, at any depth, is annotated.
bool SubgraphsHaveAliases(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  for (const auto& node : nodes) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() && GraphHasAliases(attr.g())) return true;
      for (const auto& g : attr.graphs()) {
        if (GraphHasAliases(g)) return true;
      }
    }
  }
  return false;
}

bool GraphHasAliases(const onnx::GraphProto& graph) {
  return AnyAliasKey(graph.metadata_props()) || SubgraphsHaveAliases(graph.node());
}

// One annotation: the output is everything after the prefix (dots
// allowed); the value's fields in any order, each at most once.
StatusOr<Alias> ParseAlias(const std::string& key, const std::string& value) {
  Alias alias;
  alias.output = key.substr(sizeof(kAliasKeyPrefix) - 1);
  if (alias.output.empty()) {
    return InvalidModel(kAliasRuleKey, ": key '", key, "' names no output (the output's name follows '",
                        kAliasKeyPrefix, "')");
  }
  const auto fail = [&](const auto&... why) {
    return InvalidModel(kAliasRuleKey, ": output '", alias.output, "' has annotation '", value, "': ", why...);
  };
  bool has_input = false, has_mode = false, has_region = false;
  std::string_view rest = value;
  while (true) {
    const size_t semicolon = rest.find(';');
    const std::string_view field = Trim(rest.substr(0, semicolon));
    if (field.empty()) return fail("an empty field (fields are separated by ';')");
    const size_t equals = field.find('=');
    if (equals == std::string_view::npos) {
      return fail("field '", field, "' is not name=value");
    }
    const std::string_view name = Trim(field.substr(0, equals));
    const std::string_view text = Trim(field.substr(equals + 1));
    bool* seen = nullptr;
    if (name == "input") {
      seen = &has_input;
      if (text.empty()) return fail("input is empty");
      if (!*seen) alias.input = std::string(text);
    } else if (name == "mode") {
      seen = &has_mode;
      if (text == "may") alias.mode = AliasMode::kMay;
      else if (text == "must") alias.mode = AliasMode::kMust;
      else return fail("unknown mode '", text, "' (may or must)");
    } else if (name == "region") {
      seen = &has_region;
      if (text == "whole") alias.region = AliasRegion::kWhole;
      else if (text == "scatter") alias.region = AliasRegion::kScatter;
      else return fail("unknown region '", text, "' (whole or scatter)");
    } else {
      return fail("unknown field '", name, "' (input, mode or region)");
    }
    if (*seen) return fail("field '", name, "' is given twice");
    *seen = true;
    if (semicolon == std::string_view::npos) break;
    rest = rest.substr(semicolon + 1);
  }
  if (!has_input) return fail("no input= field");
  return alias;
}

}  // namespace

StatusOr<std::vector<Alias>> ReadAliases(const onnx::GraphProto& graph) {
  std::vector<Alias> aliases;
  std::unordered_set<std::string> keys;
  for (const auto& prop : graph.metadata_props()) {
    if (!HasPrefix(prop.key())) continue;
    if (!keys.insert(prop.key()).second) {
      return InvalidModel(kAliasRuleKey, ": output '", prop.key().substr(sizeof(kAliasKeyPrefix) - 1),
                          "' is annotated twice (key '", prop.key(), "', second value '", prop.value(), "')");
    }
    PARITY_ASSIGN_OR_RETURN(Alias alias, ParseAlias(prop.key(), prop.value()));
    aliases.push_back(std::move(alias));
  }
  return aliases;
}

bool HasAliases(const onnx::ModelProto& model) {
  if (GraphHasAliases(model.graph())) return true;
  for (const auto& function : model.functions()) {
    if (AnyAliasKey(function.metadata_props()) || SubgraphsHaveAliases(function.node())) return true;
  }
  return false;
}

}  // namespace parity
