// Reading variant entries out of a model, and removing them (variants.h).
#include <algorithm>
#include <charconv>
#include <functional>

#include "reference/model/graph_index.h"
#include "reference/variants/variants.h"

namespace parity {
namespace {

using graph::ForEachSubgraph;
using graph::NodeLabel;

VariantEntry ReadEntry(const onnx::GraphProto& graph, const std::string& graph_path, const std::string& id_prefix,
                       int index) {
  const onnx::EquivalentSubgraphProto& proto = graph.equivalent_subgraph(index);
  VariantEntry entry;
  entry.id = StrCat(id_prefix, "e", index);
  entry.graph_path = graph_path;
  entry.index = index;
  entry.graph = &graph;
  entry.proto = &proto;
  entry.compiled = proto.op_type() == kCompiledOp;
  entry.call = StrCat(proto.domain().empty() ? "ai.onnx" : proto.domain(), ":", proto.op_type());
  for (const auto& prop : proto.metadata_props()) {
    if (prop.key() == kTargetKey) entry.target = prop.value();
    if (prop.key() == kPriorityKey) {
      // A malformed priority is VAR-METADATA's to report; here it counts as 0.
      int32_t value = 0;
      const std::string& text = prop.value();
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error == std::errc() && end == text.data() + text.size()) entry.priority = value;
    }
  }
  return entry;
}

// Visits `graph` and, depth-first in node order with attributes by name, the
// graphs its nodes hold. Attribute order in a NodeProto is the writer's
// choice; sorting by name keeps ids and the visiting order independent of it.
void VisitGraphs(const onnx::GraphProto& graph, const std::string& path, const std::string& id_prefix,
                 const std::function<void(const onnx::GraphProto&, const std::string&, const std::string&)>& visit) {
  visit(graph, path, id_prefix);
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto& node = graph.node(n);
    std::vector<const onnx::AttributeProto*> attributes;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() || attr.graphs_size() > 0) attributes.push_back(&attr);
    }
    if (attributes.empty()) continue;  // no subgraph: skip building a label, a real cost at a million nodes
    std::sort(attributes.begin(), attributes.end(),
              [](const auto* a, const auto* b) { return a->name() < b->name(); });
    const std::string label = NodeLabel(node, n);
    for (const onnx::AttributeProto* attr : attributes) {
      if (attr->has_g()) {
        const std::string where = StrCat(label, ".", attr->name());
        VisitGraphs(attr->g(), StrCat(path, "/", where), StrCat(id_prefix, where, "/"), visit);
      }
      for (int g = 0; g < attr->graphs_size(); ++g) {
        const std::string where = StrCat(label, ".", attr->name(), "[", g, "]");
        VisitGraphs(attr->graphs(g), StrCat(path, "/", where), StrCat(id_prefix, where, "/"), visit);
      }
    }
  }
}

bool GraphHasVariants(const onnx::GraphProto& graph) {
  if (graph.equivalent_subgraph_size() > 0) return true;
  bool found = false;
  for (const auto& node : graph.node()) {
    ForEachSubgraph(node, [&](const onnx::GraphProto& g) { found = found || GraphHasVariants(g); });
    if (found) return true;
  }
  return false;
}

void StripGraph(onnx::GraphProto& graph) {
  graph.clear_equivalent_subgraph();
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) StripGraph(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) StripGraph(g);
    }
  }
}

}  // namespace

std::vector<VariantEntry> CollectEntries(const onnx::ModelProto& model) {
  std::vector<VariantEntry> entries;
  VisitGraphs(model.graph(), "main", "",
              [&](const onnx::GraphProto& graph, const std::string& path, const std::string& id_prefix) {
                for (int i = 0; i < graph.equivalent_subgraph_size(); ++i) {
                  entries.push_back(ReadEntry(graph, path, id_prefix, i));
                }
              });
  return entries;
}

// Entries in function bodies are not entries, but a model holding them
// has variants to refuse (VAR-PLACE) and to strip.
bool HasVariants(const onnx::ModelProto& model) {
  if (GraphHasVariants(model.graph())) return true;
  for (const auto& function : model.functions()) {
    for (const auto& node : function.node()) {
      for (const auto& attr : node.attribute()) {
        if (attr.has_g() && GraphHasVariants(attr.g())) return true;
        for (const auto& g : attr.graphs()) {
          if (GraphHasVariants(g)) return true;
        }
      }
    }
  }
  return false;
}

onnx::ModelProto StripVariants(const onnx::ModelProto& model) {
  onnx::ModelProto stripped = model;
  StripGraph(*stripped.mutable_graph());
  for (auto& function : *stripped.mutable_functions()) {
    for (auto& node : *function.mutable_node()) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.has_g()) StripGraph(*attr.mutable_g());
        for (auto& g : *attr.mutable_graphs()) StripGraph(g);
      }
    }
  }
  return stripped;
}

}  // namespace parity
