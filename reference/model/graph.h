// The graph layer: what every walk over an ONNX graph needs, written once for
// the validator, the evaluator, variant resolution and the aliasing rules:
// canonical domains, how messages name a node, the names a subgraph reads
// from outside, and a stable topological sort. Per-graph indexes of
// producers and consumers are in graph_index.h.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"

namespace parity {

// "" and "ai.onnx" name the same domain; both are returned as "".
std::string_view CanonicalDomain(std::string_view domain);

namespace graph {

// How ids name a node: "<name>", or "<op_type>#<position>" when it has none
// (entry ids, graph paths of variants and aliasing messages).
std::string NodeLabel(const onnx::NodeProto& node, int position);

// How messages describe a node: "node 'name' (domain.op_type)", with its
// position first ("node 3 'name' (Op)") when `position` >= 0.
std::string DescribeNode(const onnx::NodeProto& node, int position = -1);

inline bool HoldsGraphs(const onnx::AttributeProto& attr) { return attr.has_g() || attr.graphs_size() > 0; }
bool HasGraphAttribute(const onnx::NodeProto& node);

// Calls fn(graph) for every graph the attributes of `node` hold, in
// attribute order (`g`, then `graphs` in order).
template <typename Fn>
void ForEachSubgraph(const onnx::NodeProto& node, Fn&& fn) {
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) fn(attr.g());
    for (const auto& g : attr.graphs()) fn(g);
  }
}

// The names `graph` and its nested subgraphs read without defining them
// (a graph defines its inputs, initializers, sparse initializers and node
// outputs; its outputs are reads), each once, in the order first read.
// `entry_reads`, when given, receives the inputs of its and nested graphs'
// variant entries (equivalent_subgraph) that are not defined in them.
// The views point into the graph's strings.
void CollectOuterReads(const onnx::GraphProto& graph, std::vector<std::string_view>* reads,
                       std::vector<std::string_view>* entry_reads = nullptr);

// What the subgraphs of `node` read from the scope that runs the node, each
// once (nothing for a node without graph attributes); `entry_reads` as in
// CollectOuterReads.
void CollectSubgraphOuterReads(const onnx::NodeProto& node, std::vector<std::string_view>* reads,
                               std::vector<std::string_view>* entry_reads = nullptr);

// Kahn's algorithm over the nodes `ids` (each below `total`), taking among
// the ready nodes the one with the smallest key(id), so that an order that
// is already topological stays as it is. for_each_dependency(id, fn) calls
// fn(d) for every node d that must come before `id` (repeats allowed).
// Returns the sorted ids; fewer than ids.size() when cycles hold the rest
// back. `emitted`, when given, is resized to `total` and marks what was sorted.
template <typename ForEachDependency, typename Key>
std::vector<int32_t> StableTopologicalSort(std::span<const int32_t> ids, size_t total,
                                           ForEachDependency&& for_each_dependency, Key&& key,
                                           std::vector<uint8_t>* emitted = nullptr) {
  std::vector<int32_t> pending(total, 0), edge_begin(total + 1, 0);
  std::vector<std::pair<int32_t, int32_t>> edges;  // (dependency, node)
  for (int32_t id : ids) {
    for_each_dependency(id, [&](int32_t d) {
      edges.emplace_back(d, id);
      ++edge_begin[static_cast<size_t>(d) + 1];
      ++pending[static_cast<size_t>(id)];
    });
  }
  for (size_t i = 0; i < total; ++i) edge_begin[i + 1] += edge_begin[i];
  std::vector<int32_t> consumers(edges.size());
  std::vector<int32_t> fill(edge_begin.begin(), edge_begin.end() - 1);
  for (const auto& [d, id] : edges) consumers[static_cast<size_t>(fill[static_cast<size_t>(d)]++)] = id;
  using Item = std::pair<int64_t, int32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int32_t id : ids) {
    if (pending[static_cast<size_t>(id)] == 0) ready.emplace(key(id), id);
  }
  std::vector<int32_t> sorted;
  sorted.reserve(ids.size());
  if (emitted) emitted->assign(total, 0);
  while (!ready.empty()) {
    const int32_t id = ready.top().second;
    ready.pop();
    sorted.push_back(id);
    if (emitted) (*emitted)[static_cast<size_t>(id)] = 1;
    for (int32_t k = edge_begin[static_cast<size_t>(id)]; k < edge_begin[static_cast<size_t>(id) + 1]; ++k) {
      const int32_t c = consumers[static_cast<size_t>(k)];
      if (--pending[static_cast<size_t>(c)] == 0) ready.emplace(key(c), c);
    }
  }
  return sorted;
}

// The nodes of one graph in an order where each runs after the producers of
// what it reads (its inputs and what its subgraphs read from outside),
// keeping the given order where it already is one. An error, prefixed with
// `where`, names up to eight nodes of a cycle.
StatusOr<std::vector<const onnx::NodeProto*>> TopologicalOrder(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& where);

// The message of a cycle among `nodes`: up to eight of those left unsorted.
std::string DescribeCycle(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                          const std::vector<uint8_t>& emitted);

}  // namespace graph
}  // namespace parity
