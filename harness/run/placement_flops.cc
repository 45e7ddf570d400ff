// Placement FLOPs: the report's nodes matched to the graph, counted per device.
#include "harness/run/placement_flops.h"

#include <optional>
#include <unordered_map>

#include "reference/core/status.h"
#include "reference/model/static_facts.h"

namespace parity {

PlacementFlops CountPlacementFlops(const onnx::GraphProto& graph,
                                   const std::vector<std::pair<std::string, std::string>>& placement,
                                   const std::map<std::string, std::vector<int64_t>>& known_dims) {
  // The name a report gives each node (partition.h's PlacedNode::name).
  std::vector<std::string> names;
  std::unordered_map<std::string, int> by_name;  // a name that occurs twice maps to -1
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    names.push_back(node.name().empty() ? StrCat(node.op_type(), "#", i) : node.name());
    if (!node.name().empty()) {
      auto [it, added] = by_name.emplace(node.name(), i);
      if (!added) it->second = -1;
    }
  }
  bool aligned = placement.size() == names.size();
  for (size_t i = 0; aligned && i < names.size(); ++i) aligned = placement[i].first == names[i];

  const StaticFacts facts = StaticFacts::Infer(graph, known_dims);
  PlacementFlops out;
  for (size_t i = 0; i < placement.size(); ++i) {
    const auto& [node_name, device] = placement[i];
    int index = aligned ? static_cast<int>(i) : -1;
    if (!aligned) {
      const auto it = by_name.find(node_name);
      if (it != by_name.end()) index = it->second;
    }
    const std::optional<double> flops = index >= 0 ? NodeFlops(graph.node(index), facts) : std::nullopt;
    if (!flops) {
      ++out.unknown;
      continue;
    }
    out.by_device[device] += *flops;
  }
  return out;
}

}  // namespace parity
