// A device adapter's lowering (../shared/DESIGN.md, "Device adapters"): the
// table of operators a backend can run, each with the function that claims
// one node and makes what runs it. The partition (partition.h) walks the
// graph with it; every node no entry claims runs on the reference's kernels
// on the host.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reference/core/status.h"
#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"
#include "reference/model/graph.h"
#include "reference/model/static_facts.h"

namespace parity::adapters {

// One node as a lowering sees it at session creation: its attributes, the
// opset it is read at, and the static facts of its values.
class NodeView {
 public:
  NodeView(const onnx::NodeProto& node, int64_t opset, const StaticFacts& facts)
      : node_(node), opset_(opset), facts_(facts) {}

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  const StaticFacts& facts() const { return facts_; }

  bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  int input_count() const { return node_.input_size(); }
  std::optional<DataType> input_type(int i) const {
    return has_input(i) ? facts_.TypeOf(node_.input(i)) : std::nullopt;
  }
  std::optional<DataType> output_type(int i) const {
    return i < node_.output_size() && !node_.output(i).empty() ? facts_.TypeOf(node_.output(i)) : std::nullopt;
  }
  // Dims when all are known, else null.
  const std::vector<int64_t>* input_dims(int i) const {
    return has_input(i) ? facts_.StaticDims(node_.input(i)) : nullptr;
  }
  const ValueFacts* input_facts(int i) const { return has_input(i) ? facts_.Find(node_.input(i)) : nullptr; }
  // The rank when known, else -1.
  int64_t input_rank(int i) const {
    const ValueFacts* f = input_facts(i);
    return f && f->dims ? static_cast<int64_t>(f->dims->size()) : -1;
  }

  const onnx::AttributeProto* attribute(std::string_view name) const {
    for (const auto& a : node_.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  int64_t GetInt(std::string_view name, int64_t fallback) const {
    const auto* a = attribute(name);
    return a ? a->i() : fallback;
  }
  float GetFloat(std::string_view name, float fallback) const {
    const auto* a = attribute(name);
    return a ? a->f() : fallback;
  }
  std::string GetString(std::string_view name, std::string fallback = "") const {
    const auto* a = attribute(name);
    return a ? a->s() : fallback;
  }
  std::optional<std::vector<int64_t>> GetInts(std::string_view name) const {
    const auto* a = attribute(name);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::string label() const { return graph::DescribeNode(node_); }

 private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  const StaticFacts& facts_;
};

// What runs one claimed node. Made at session creation (where the backend
// compiles: primitives whose shapes are known then are created then), run
// by the evaluator in place of the reference's kernel for that node only.
// Run is called from the session's one thread at a time.
class LoweredNode {
 public:
  virtual ~LoweredNode() = default;
  // Same contract as a reference Kernel: the node's outputs, or an error
  // that names the node.
  virtual StatusOr<std::vector<Value>> Run(const KernelContext& ctx) = 0;
  // The in-place form (spec/aliasing.md, region "scatter"): writes only the
  // rows it changes into `buffer`, the aliased input's tensor. Only for
  // nodes whose lowering said in_place() is true.
  virtual bool in_place() const { return false; }
  // Whether its kernel waits for the first run (the shapes were not known
  // at creation), asked right after the lowering made it.
  virtual bool deferred() const { return false; }
  virtual Status RunInPlace(const KernelContext& ctx, Tensor& buffer) {
    (void)buffer;
    return ctx.Error("has no in-place form on this backend");
  }
};

// kUnimplemented from a lowering means "not claimed", its message the reason
// the report and FALLBACK_REQUIRED give; any other error fails the session.
using LowerFn = std::function<StatusOr<std::unique_ptr<LoweredNode>>(const NodeView&)>;

// Not claimed: the reason, which names what the backend lacks.
template <typename... Args>
Status NotLowered(const Args&... args) {
  return Status(StatusCode::kUnimplemented, StrCat(args...));
}

// A region (a fused group of nodes: MatMul with its bias and activation, a
// quantized MatMul between its DequantizeLinear and QuantizeLinear nodes)
// as its lowering sees the graph around one anchor node.
class RegionView {
 public:
  RegionView(const onnx::GraphProto& graph, int anchor, const std::map<std::string, int64_t>& opsets,
             const StaticFacts& facts, const std::map<std::string, std::vector<int>>& consumers,
             const std::map<std::string, int>& producers, const std::vector<bool>& taken)
      : graph_(graph), anchor_(anchor), opsets_(opsets), facts_(facts), consumers_(consumers),
        producers_(producers), taken_(taken) {}

  int anchor() const { return anchor_; }
  const onnx::NodeProto& node(int index) const { return graph_.node(index); }
  NodeView view(int index) const {
    const auto it = opsets_.find(std::string(CanonicalDomain(node(index).domain())));
    return NodeView(node(index), it == opsets_.end() ? 0 : it->second, facts_);
  }
  const StaticFacts& facts() const { return facts_; }
  // The node that produces `value`, or -1 (a graph input, an initializer).
  int producer(const std::string& value) const {
    const auto it = producers_.find(value);
    return it == producers_.end() ? -1 : it->second;
  }
  // The nodes that read `value`, in graph order.
  const std::vector<int>& consumers(const std::string& value) const {
    static const std::vector<int> kNone;
    const auto it = consumers_.find(value);
    return it == consumers_.end() ? kNone : it->second;
  }
  bool is_graph_output(const std::string& value) const {
    for (const auto& o : graph_.output()) {
      if (o.name() == value) return true;
    }
    return false;
  }
  // The one node that reads output `output` of node `index`, when exactly
  // one node reads it, it is no graph output and no other region has
  // taken that node; else -1. The test of a chain a region may extend along.
  int sole_consumer(int index, int output = 0) const {
    if (output >= node(index).output_size()) return -1;
    const std::string& value = node(index).output(output);
    const std::vector<int>& readers = consumers(value);
    if (value.empty() || readers.size() != 1 || is_graph_output(value) || taken(readers[0])) return -1;
    return readers[0];
  }
  bool taken(int index) const { return taken_[static_cast<size_t>(index)]; }
  // Whether `value` is an initializer of the graph that no graph input
  // overrides: the same tensor at every run of a session.
  bool is_constant(const std::string& value) const {
    for (const auto& i : graph_.input()) {
      if (i.name() == value) return false;
    }
    for (const auto& init : graph_.initializer()) {
      if (init.name() == value) return true;
    }
    return false;
  }

 private:
  const onnx::GraphProto& graph_;
  int anchor_;
  const std::map<std::string, int64_t>& opsets_;
  const StaticFacts& facts_;
  const std::map<std::string, std::vector<int>>& consumers_;
  const std::map<std::string, int>& producers_;
  const std::vector<bool>& taken_;
};

// What a region lowering claims: the nodes, the values the runner reads
// (its KernelContext's inputs, in this order; "" for an absent one) and
// those it writes (its outputs, in this order). Every value a node of the
// region produces and a node outside it (or the graph's outputs) reads must
// be among `outputs`.
struct RegionClaim {
  std::vector<int> nodes;  // graph positions, the anchor among them
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::unique_ptr<LoweredNode> runner;
};

// nullopt: no region at this anchor (the single-node lowering is tried);
// kUnimplemented: not claimed, with the reason; another error fails the session.
using RegionFn = std::function<StatusOr<std::optional<RegionClaim>>(const RegionView&)>;

// The operators of one backend. Domains are canonical ("" for ai.onnx).
class Lowering {
 public:
  void Add(std::string_view domain, std::string_view op_type, LowerFn lower) {
    table_[{std::string(domain), std::string(op_type)}] = std::move(lower);
  }
  void Add(std::string_view op_type, LowerFn lower) { Add("", op_type, std::move(lower)); }
  const LowerFn* Find(std::string_view domain, std::string_view op_type) const {
    const auto it = table_.find({std::string(domain), std::string(op_type)});
    return it == table_.end() ? nullptr : &it->second;
  }
  // A region anchored at nodes of this operator; tried before the node's
  // own lowering, in the order added.
  void AddRegion(std::string_view domain, std::string_view op_type, RegionFn region) {
    regions_[{std::string(domain), std::string(op_type)}].push_back(std::move(region));
  }
  void AddRegion(std::string_view op_type, RegionFn region) { AddRegion("", op_type, std::move(region)); }
  const std::vector<RegionFn>* FindRegions(std::string_view domain, std::string_view op_type) const {
    const auto it = regions_.find({std::string(domain), std::string(op_type)});
    return it == regions_.end() ? nullptr : &it->second;
  }
  // Told of each buffer the evaluator writes on the host in place
  // (NodeKernels::host_wrote): a backend that keeps device copies of host
  // buffers sets it. PartitionModel passes it on.
  std::function<void(const Tensor&)> host_wrote;
  // Asked before the host reads a tensor (NodeKernels::host_reads): a
  // backend whose kernels leave their results on its device until the host
  // needs them sets it. PartitionModel passes it on.
  std::function<Status(const Tensor&)> host_reads;
  // Asked to copy a whole-region alias's result into the aliased buffer on
  // the device (NodeKernels::copy_into). PartitionModel passes it on.
  std::function<StatusOr<bool>(const Tensor& from, const Tensor& into)> copy_into;

  // "domain:op_type" of every entry, sorted, "ai.onnx" for the empty domain.
  std::vector<std::string> Operators() const {
    std::vector<std::string> out;
    for (const auto& [key, fn] : table_) out.push_back((key.first.empty() ? "ai.onnx" : key.first) + ":" + key.second);
    return out;
  }

 private:
  std::map<std::pair<std::string, std::string>, LowerFn> table_;
  std::map<std::pair<std::string, std::string>, std::vector<RegionFn>> regions_;
};

}  // namespace parity::adapters
