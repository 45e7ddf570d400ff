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

struct Partition {
  std::vector<PlacedNode> nodes;  // the top-level nodes, in graph order
  // What runs the lowered nodes, by node; kernels.kernels points into them.
  std::vector<std::unique_ptr<LoweredNode>> lowered;
  NodeKernels kernels;
  double lower_ms = 0;  // wall time of the lowering, primitive creation (JIT) included

  size_t lowered_count() const { return lowered.size(); }
  // "name (op: reason)" of each node that fell back, joined by "; ".
  std::string FallbackList(size_t limit = 16) const;
};

// Claims each top-level node of `model` (after variant resolution) with
// `lowering`, which sees the node's static facts (reference/model/static_facts.h).
// A node whose lowering fails with anything but kUnimplemented fails the
// partition. Node addresses are those of `model.proto`, which must outlive
// the partition and be the model the evaluator runs.
StatusOr<Partition> PartitionModel(const LoadedModel& model, const Lowering& lowering, const std::string& device);

}  // namespace parity::adapters
