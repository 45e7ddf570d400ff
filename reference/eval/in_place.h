// The evaluator's in-place mode (EvalOptions::in_place, spec/aliasing.md):
// which nodes of the main graph write an aliased input's buffer, the order
// that runs them, and the run itself. A writer whose operator has an
// in-place form in the registry (OpRegistry::RegisterInPlace) writes its
// rows straight into the buffer; any other writer computes as usual and its
// result is copied in. No operator is named here: the kernels fill the slot.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"
#include "reference/core/value.h"
#include "reference/eval/registry.h"
#include "reference/model/alias_annotations.h"

namespace parity {

// What the main graph's writers do in place, worked out once per run.
struct InPlacePlan {
  std::vector<const onnx::NodeProto*> order;
  // The aliases each writer node computes (one node may write several).
  std::unordered_map<const onnx::NodeProto*, std::vector<const Alias*>> writes;
};

// `order` is a topological order of graph's nodes. With `writers_first`,
// each writer is moved up to run right after its ancestors (the order that
// exposes a read of the aliased input after the write). An error names an
// alias whose input is not a main-graph input or whose output no node makes.
StatusOr<InPlacePlan> PlanInPlace(const onnx::GraphProto& graph, const std::vector<const onnx::NodeProto*>& order,
                                  const std::vector<Alias>& aliases, bool writers_first,
                                  const std::string& model_name);

// What the run needs from the evaluator: the opsets in force (canonical
// domain -> version), running one node in the scope's `values`, and the
// deadline check between nodes.
struct InPlaceContext {
  const OpRegistry* registry = nullptr;
  const NodeKernels* node_kernels = nullptr;  // EvalOptions::node_kernels: their in-place forms come first
  const std::map<std::string, int64_t, std::less<>>* opsets = nullptr;
  std::function<Status(const onnx::NodeProto&)> run_node;
  std::function<Status()> check_deadline;
  std::string model_name;
};

// Runs the main graph's nodes in plan order on `values` (its inputs and
// initializers), writing each aliased input's buffer in place; the first
// `given_inputs` graph inputs are the caller's tensors, which are written.
Status RunInPlace(const onnx::GraphProto& graph, size_t given_inputs, const std::vector<Alias>& aliases,
                  const InPlacePlan& plan, std::unordered_map<std::string, Value>& values,
                  const InPlaceContext& context);

}  // namespace parity
