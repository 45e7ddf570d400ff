// The partition of a model between a device backend and the reference
// (../shared/DESIGN.md, "Device adapters"), written once for every device
// adapter: the lowering claims the top-level nodes it can run, and each
// other node falls back to the reference's kernels on the host. The
// evaluator runs the whole graph in order, taking the lowered node's kernel
// where there is one (EvalOptions::node_kernels), so fallback regions and
// device regions interleave node by node and the values between them are
// host tensors: on a host device (the CPU) no copy is made at a boundary;
// a device with its own memory counts its copies itself.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adapters/device/lowering.h"
#include "reference/eval/kernel.h"
#include "reference/model/loader.h"

namespace parity::adapters {

// The device name the report gives a node that fell back: it ran on the
// reference's kernels on the host CPU.
inline constexpr const char kFallbackDevice[] = "reference";

struct PlacedNode {
  std::string name;    // node name, or "op_type#index" (parity_node_placement.node)
  std::string device;  // the backend's device, or kFallbackDevice
  std::string reason;  // why it fell back; empty when lowered
};

// The domain of the node that stands for a fused region in the model the
// evaluator runs (never in a model a user sees).
inline constexpr const char kRegionDomain[] = "org.onnxparity.device";

struct Partition {
  std::vector<PlacedNode> nodes;  // the top-level nodes of the model as given, in graph order
  // The model the evaluator runs: the one given, or, when regions were
  // claimed, a copy where each region is one node of kRegionDomain.
  LoadedModel model;
  // What runs the lowered nodes, by node; kernels.kernels points into them.
  std::vector<std::unique_ptr<LoweredNode>> lowered;
  NodeKernels kernels;
  double lower_ms = 0;    // wall time of the whole partition
  double compile_ms = 0;  // of which inside the lowerings' calls: claims and kernel creation (JIT)
  size_t deferred_count = 0;  // lowered nodes and regions whose kernel waits for the first run

  // Kernels made: one per lowered node and one per region.
  size_t lowered_count() const { return lowered.size(); }
  // Nodes that run on the reference's kernels (a region's nodes are not among them).
  size_t fallback_count() const;
  // "name (op: reason)" of each node that fell back, joined by "; ".
  std::string FallbackList(size_t limit = 16) const;
};

// Claims the top-level nodes of `model` (after variant resolution) with
// `lowering`, which sees the static facts of their values
// (reference/model/static_facts.h): in topological order, each node not yet
// claimed is offered first to the regions anchored at its operator, then to
// its own lowering. A lowering that fails with anything but kUnimplemented
// fails the partition. The kernels are keyed by nodes of `Partition::model`,
// which is the model the evaluator must run.
StatusOr<Partition> PartitionModel(const LoadedModel& model, const Lowering& lowering, const std::string& device);

}  // namespace parity::adapters
