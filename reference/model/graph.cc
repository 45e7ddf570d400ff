// The graph layer's walks (graph.h): labels, outer-scope reads, topological order.
#include "reference/model/graph.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace parity {

std::string_view CanonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

namespace graph {

std::string NodeLabel(const onnx::NodeProto& node, int position) {
  return node.name().empty() ? StrCat(node.op_type(), "#", position) : node.name();
}

std::string DescribeNode(const onnx::NodeProto& node, int position) {
  std::string label = "node ";
  if (position >= 0) label += std::to_string(position) + " ";
  label += "'" + node.name() + "' (";
  if (!node.domain().empty()) label += node.domain() + ".";
  return label + node.op_type() + ")";
}

bool HasGraphAttribute(const onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(), HoldsGraphs);
}

namespace {

// The names one graph defines, with the scope of the graph that holds it.
struct Scope {
  std::unordered_set<std::string_view> defined;
  const Scope* parent = nullptr;
  bool Defines(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent) {
      if (s->defined.count(name)) return true;
    }
    return false;
  }
};

struct OuterReadSink {
  std::unordered_set<std::string_view> seen, seen_entries;
  std::vector<std::string_view>* reads;
  std::vector<std::string_view>* entry_reads;
};

void WalkOuterReads(const onnx::GraphProto& graph, const Scope* parent, OuterReadSink& sink) {
  Scope scope;
  scope.parent = parent;
  for (const auto& i : graph.input()) scope.defined.insert(i.name());
  for (const auto& t : graph.initializer()) scope.defined.insert(t.name());
  for (const auto& s : graph.sparse_initializer()) scope.defined.insert(s.values().name());
  for (const auto& node : graph.node()) {
    for (const auto& o : node.output()) {
      if (!o.empty()) scope.defined.insert(o);
    }
  }
  auto read = [&](std::string_view name) {
    if (!name.empty() && !scope.Defines(name) && sink.seen.insert(name).second) sink.reads->push_back(name);
  };
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) read(in);
    ForEachSubgraph(node, [&](const onnx::GraphProto& g) { WalkOuterReads(g, &scope, sink); });
  }
  for (const auto& o : graph.output()) read(o.name());
  if (sink.entry_reads) {
    for (const auto& entry : graph.equivalent_subgraph()) {
      for (const auto& in : entry.input()) {
        if (!in.empty() && !scope.Defines(in) && sink.seen_entries.insert(in).second) sink.entry_reads->push_back(in);
      }
    }
  }
}

}  // namespace

void CollectOuterReads(const onnx::GraphProto& graph, std::vector<std::string_view>* reads,
                       std::vector<std::string_view>* entry_reads) {
  OuterReadSink sink;
  sink.reads = reads;
  sink.entry_reads = entry_reads;
  WalkOuterReads(graph, nullptr, sink);
}

void CollectSubgraphOuterReads(const onnx::NodeProto& node, std::vector<std::string_view>* reads,
                               std::vector<std::string_view>* entry_reads) {
  if (!HasGraphAttribute(node)) return;
  OuterReadSink sink;
  sink.reads = reads;
  sink.entry_reads = entry_reads;
  ForEachSubgraph(node, [&](const onnx::GraphProto& g) { WalkOuterReads(g, nullptr, sink); });
}

std::string DescribeCycle(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                          const std::vector<uint8_t>& emitted) {
  std::string cycle;
  int shown = 0;
  for (int i = 0; i < nodes.size() && shown < 8; ++i) {
    if (!emitted[static_cast<size_t>(i)]) cycle += (shown++ ? ", " : "") + DescribeNode(nodes[i]);
  }
  return cycle;
}

StatusOr<std::vector<const onnx::NodeProto*>> TopologicalOrder(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& where) {
  const int n = nodes.size();
  std::unordered_map<std::string_view, int32_t> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : nodes[i].output()) {
      if (!o.empty()) producer.emplace(o, i);
    }
  }
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  auto dependencies = [&](int32_t i, auto&& depend) {
    auto read = [&](std::string_view name) {
      auto it = name.empty() ? producer.end() : producer.find(name);
      if (it != producer.end()) depend(it->second);
    };
    for (const auto& in : nodes[i].input()) read(in);
    std::vector<std::string_view> outer;
    CollectSubgraphOuterReads(nodes[i], &outer);
    for (std::string_view name : outer) read(name);
  };
  std::vector<uint8_t> emitted;
  const std::vector<int32_t> sorted = StableTopologicalSort(
      ids, static_cast<size_t>(n), dependencies, [](int32_t i) { return i; }, &emitted);
  if (static_cast<int>(sorted.size()) != n) {
    return InvalidModel(where, ": the graph has a cycle through ", DescribeCycle(nodes, emitted));
  }
  std::vector<const onnx::NodeProto*> order;
  order.reserve(sorted.size());
  for (int32_t i : sorted) order.push_back(&nodes[i]);
  return order;
}

}  // namespace graph
}  // namespace parity
