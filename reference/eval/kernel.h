// The interface between the evaluator and operator kernels: a kernel gets a
// KernelContext (the node, its input values, its attributes, a way to run
// subgraphs) and returns one Value per node output.
//
// Kernels compute in double (integers exactly in int64/uint64) and round once
// to the output type. They report bad input with ctx.Error(...), which names
// the node; they never abort.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"
#include "reference/core/value.h"

namespace parity {

class KernelContext {
 public:
  // How a kernel runs a graph-valued attribute (If, Loop, Scan, ...): the
  // subgraph sees the values of the scope that runs this node.
  using SubgraphRunner =
      std::function<StatusOr<std::vector<Value>>(const onnx::GraphProto&, const std::vector<Value>&)>;

  KernelContext(const onnx::NodeProto& node, std::vector<const Value*> inputs, int64_t opset,
                SubgraphRunner run_subgraph)
      : node_(node), inputs_(std::move(inputs)), opset_(opset), run_subgraph_(std::move(run_subgraph)) {}

  const onnx::NodeProto& node() const { return node_; }
  // The version of the node's domain in the opset imports in force.
  int64_t opset() const { return opset_; }

  // Whether the kernel's sums of float32, float16 and bfloat16 data round to
  // float32 after every step (the conventional arithmetic of
  // EvalOptions::arithmetic) instead of accumulating exactly in double.
  // Kernels read it through ops::Summation.
  bool float32_sums() const { return float32_sums_; }
  void set_float32_sums(bool on) { float32_sums_ = on; }
  // Whether the run keeps float32, float16 and bfloat16 values in float64
  // (the double result of EvalOptions::arithmetic): a kernel whose operator
  // admits only those types then takes float64 in their place.
  bool widened() const { return widened_; }
  void set_widened(bool on) { widened_ = on; }

  // Inputs: absent ones (beyond the list or named "") are null.
  size_t input_count() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const Value& input(size_t i) const { return *inputs_[i]; }
  // The tensor of input i (precondition: has_input(i); a non-tensor input
  // yields an undefined tensor — use RequireTensor to get an error instead).
  const Tensor& tensor(size_t i) const;
  // Input i as a tensor, or an error naming the input when it is absent or not a tensor.
  StatusOr<const Tensor*> RequireTensor(size_t i) const;

  size_t output_count() const { return static_cast<size_t>(node_.output_size()); }
  bool output_requested(size_t i) const {
    return i < output_count() && !node_.output(static_cast<int>(i)).empty();
  }

  // Attributes (inside a function body, references are already resolved).
  const onnx::AttributeProto* attribute(std::string_view name) const;
  bool has_attribute(std::string_view name) const { return attribute(name) != nullptr; }
  int64_t GetInt(std::string_view name, int64_t fallback) const;
  float GetFloat(std::string_view name, float fallback) const;
  std::string GetString(std::string_view name, std::string fallback = "") const;
  std::vector<int64_t> GetInts(std::string_view name) const;
  std::vector<float> GetFloats(std::string_view name) const;
  std::vector<std::string> GetStrings(std::string_view name) const;
  StatusOr<Tensor> GetTensor(std::string_view name) const;
  const onnx::GraphProto* GetGraph(std::string_view name) const;

  StatusOr<std::vector<Value>> RunSubgraph(const onnx::GraphProto& graph, const std::vector<Value>& inputs) const {
    return run_subgraph_(graph, inputs);
  }

  // An InvalidArgument status whose message starts with the node's name and type.
  template <typename... Args>
  Status Error(const Args&... args) const {
    return InvalidArgument(NodeLabel(), ": ", args...);
  }
  std::string NodeLabel() const;

 private:
  const onnx::NodeProto& node_;
  std::vector<const Value*> inputs_;
  int64_t opset_;
  SubgraphRunner run_subgraph_;
  bool float32_sums_ = false;
  bool widened_ = false;
};

// A kernel returns the values of the node's outputs in order; it may return
// fewer than output_count() when the missing trailing outputs are not requested.
using Kernel = std::function<StatusOr<std::vector<Value>>(const KernelContext&)>;

// The in-place form of a kernel whose output 0 may share the buffer of its
// input 0 (spec/aliasing.md, region "scatter"): it writes only what the
// kernel would change straight into `buffer`, which shares the buffer of
// input 0, after the same checks; on an error nothing has been written.
// The evaluator's in-place mode calls it instead of the kernel.
using InPlaceKernel = std::function<Status(const KernelContext&, Tensor& buffer)>;

// Kernels chosen for particular nodes rather than for an operator
// (EvalOptions::node_kernels), keyed by the node's address.
struct NodeKernels {
  std::unordered_map<const onnx::NodeProto*, Kernel> kernels;
  std::unordered_map<const onnx::NodeProto*, InPlaceKernel> in_place;
  // Told of each buffer the evaluator writes on the host in place, outside
  // these kernels: an aliased input's buffer that a whole-region alias
  // fills, or that the reference's own in-place kernel writes. A backend
  // that keeps device copies of host buffers drops its copy of that one.
  std::function<void(const Tensor&)> host_wrote;
  // Asked before the evaluator reads a tensor's bytes on the host: each
  // tensor input of a node that runs on the host (not one of these
  // kernels), an aliased buffer copied or written there, a whole-region
  // alias's result. A backend that leaves its kernels' results on a device
  // until the host needs them (the host buffer allocated, its bytes not yet
  // copied back) fills the buffer here; an error fails the node.
  std::function<Status(const Tensor&)> host_reads;
  // Asked first when a whole-region alias's result `from` goes into the
  // aliased buffer `into` (same type and shape): a backend that holds
  // `from` on its device copies it there into its copy of `into`, which is
  // then the current one (the host bytes are behind until read, through
  // host_reads), and answers true; false leaves the copy to the evaluator,
  // on the host.
  std::function<StatusOr<bool>(const Tensor& from, const Tensor& into)> copy_into;
  // Every tensor in `value` (a sequence's elements, an optional's element)
  // through host_reads, when it is set.
  Status HostReads(const Value& value) const;
  const Kernel* Find(const onnx::NodeProto& node) const {
    const auto it = kernels.find(&node);
    return it == kernels.end() ? nullptr : &it->second;
  }
  const InPlaceKernel* FindInPlace(const onnx::NodeProto& node) const {
    const auto it = in_place.find(&node);
    return it == in_place.end() ? nullptr : &it->second;
  }
};

}  // namespace parity
