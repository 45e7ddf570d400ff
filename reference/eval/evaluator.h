// The reference evaluator: runs an ONNX model in topological order with the
// kernels of an OpRegistry, expanding model-local functions (by domain, name
// and overload) and the function bodies of spec/functions for operators with
// no kernel. Subgraphs (If, Loop, Scan, SequenceMap) see their outer scope.
//
// Thread safety: Run may be called from several threads at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "reference/eval/function_library.h"
#include "reference/eval/registry.h"
#include "reference/model/alias_annotations.h"
#include "reference/model/loader.h"
#include "reference/model/tensor_io.h"

namespace parity {

// The arithmetic of a run (spec/tolerance.md, "Error budgets").
enum class Arithmetic {
  // The ground truth: every kernel computes in double and rounds each output
  // once to its declared type.
  kReference,
  // The double result: floating values of float32, float16 and bfloat16 are
  // kept in float64 between nodes (graph inputs, initializers and every
  // node's outputs are widened), so nothing rounds to a storage type except
  // what the graph asks for: a Cast to such a type rounds, then widens.
  // Graph outputs come back as float64.
  kWide,
  // An ordinary low-precision run: operators with a body in spec/functions/
  // run from it, each node's output is rounded to its declared type, and the
  // sums of float32 and narrower data round to float32 at every step
  // (KernelContext::float32_sums), as a float32-accumulating kernel does.
  kConventional,
};
const char* ArithmeticName(Arithmetic arithmetic);  // "reference", "wide", "conventional"

struct EvalOptions {
  // The kernels; required (the reference's: ReferenceRegistry() of
  // reference/ops/reference_registry.h, passed in by the layer above).
  const OpRegistry* registry = nullptr;
  const FunctionLibrary* functions = nullptr;  // null: FunctionLibrary::Standard()
  int max_call_depth = 64;                     // nested function calls and subgraphs
  // A run that is still going after this many seconds stops with
  // DEADLINE_EXCEEDED; checked before each node (so also between loop
  // iterations), not inside a kernel. 0: no limit.
  double time_limit_seconds = 0;
  // Expand an operator from its body in `functions` even when the registry
  // has a kernel for it (found by domain, name and overload, as the fallback
  // expansion is). Lets tests check each body against its direct kernel
  // (function_bodies_test.cc) and lets a user run the spec's definitions.
  bool prefer_function_bodies = false;
  Arithmetic arithmetic = Arithmetic::kReference;
  // In-place mode (spec/aliasing.md): each alias listed really shares its
  // input's buffer. The writer of the output writes into the tensor passed
  // for that input (region kScatter: only the rows its TensorScatter writes;
  // kWhole: the result is copied into the buffer, whose size must match),
  // and the output returned shares that buffer, so Run changes the caller's
  // input tensors. A value that shared the buffer before the write (an
  // Identity or Reshape view) is given its own copy first, so results stay
  // the functional ones. The aliases must have passed ValidateAliases,
  // except in the checking mode (CheckAliasSharing), whose point is to run
  // invalid ones.
  std::vector<Alias> in_place;
  // With in_place: run each writer as early as its own inputs allow, the
  // order that exposes a read of the aliased input after the write.
  bool writers_first = false;
  // Kernels for single nodes of the main graph, taking precedence over the
  // registry and every function body for those nodes (by address in the
  // model this evaluator runs): how a device adapter runs the nodes its
  // lowering claimed while every other node runs as the reference does
  // (adapters/device/). Null: none. Must outlive the evaluator.
  const NodeKernels* node_kernels = nullptr;
};

struct InPlacePlan;  // in_place.h

class Evaluator {
 public:
  // Checks that every opset import is usable; does not run anything.
  static StatusOr<std::unique_ptr<Evaluator>> Create(LoadedModel model, EvalOptions options = {});

  // `inputs` are matched to graph.input in order; an input that also has an
  // initializer may be left out (the initializer is used).
  StatusOr<std::vector<Value>> Run(const std::vector<Value>& inputs) const;

  const LoadedModel& model() const { return model_; }

 private:
  struct Scope;
  struct PreparedGraph;
  using OpsetMap = std::map<std::string, int64_t, std::less<>>;

  Evaluator(LoadedModel model, EvalOptions options);

  StatusOr<std::vector<Value>> RunGraph(const onnx::GraphProto& graph, const std::vector<Value>& inputs,
                                        const Scope* outer, const OpsetMap& opsets, int depth) const;
  Status RunNodes(const std::vector<const onnx::NodeProto*>& order, Scope& scope, const OpsetMap& opsets,
                  int depth) const;
  Status CheckDeadline() const;
  Status RunNode(const onnx::NodeProto& node, Scope& scope, const OpsetMap& opsets, int depth) const;
  StatusOr<std::vector<Value>> CallFunction(const onnx::FunctionProto& function, const onnx::NodeProto& call,
                                            const std::vector<const Value*>& inputs, const OpsetMap& caller_opsets,
                                            int depth) const;
  StatusOr<std::shared_ptr<const PreparedGraph>> Prepare(const onnx::GraphProto& graph) const;
  // The body of `function` as `call` sees it (attribute references resolved,
  // absent inputs blanked), made once per (function, call) and kept, so
  // that subgraphs in it have stable addresses for the Prepare cache.
  struct FunctionBody;
  StatusOr<std::shared_ptr<const FunctionBody>> InstantiateBody(const onnx::FunctionProto& function,
                                                                const onnx::NodeProto& call) const;

  LoadedModel model_;
  EvalOptions options_;
  OpsetMap model_opsets_;
  // Model-local functions by (domain, name, overload).
  std::map<std::tuple<std::string, std::string, std::string>, const onnx::FunctionProto*> local_functions_;
  // Deadline of the run in progress on this thread (time_limit_seconds).
  static thread_local std::chrono::steady_clock::time_point deadline_;
  mutable std::mutex prepared_mutex_;
  mutable std::unordered_map<const onnx::GraphProto*, std::shared_ptr<const PreparedGraph>> prepared_;
  // Instantiated function bodies by (function, call node); guarded by prepared_mutex_.
  mutable std::map<std::pair<const onnx::FunctionProto*, const onnx::NodeProto*>,
                   std::shared_ptr<const FunctionBody>>
      bodies_;
  // The in-place plan of the main graph (EvalOptions::in_place), made on the
  // first run; guarded by prepared_mutex_.
  mutable std::shared_ptr<const InPlacePlan> in_place_plan_;
};

}  // namespace parity
