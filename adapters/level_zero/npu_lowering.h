// The NPU's share of a model: which top-level nodes the driver runs (its
// layer query over the model's OpenVINO IR), the regions they form, each
// compiled by the driver as one graph, and the Compiled calls whose blobs
// the driver loads. Everything else falls back to the reference on the
// host (adapters/device/partition.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adapters/device/lowering.h"
#include "adapters/level_zero/npu_device.h"
#include "reference/model/loader.h"
#include "reference/model/static_facts.h"

namespace parity::adapters::level_zero {

// A part of a graph as a model of its own: the nodes (graph positions, in
// an order that computes them), the values they read from outside (graph
// inputs, other nodes' outputs, initializers a run may override) and those
// they give back. Initializers only they read are copied in as constants.
struct RegionCut {
  std::vector<int> nodes;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// The ONNX model of `cut` (graph name `name`), its inputs typed and shaped
// from `facts`, with `input_dims` (one per input, when given) in place of
// what the facts know: the NPU compiles static shapes only. `constants`
// are values of the graph the model holds as initializers (none of the
// cut's inputs).
StatusOr<std::string> RegionModelBytes(const onnx::ModelProto& model, const RegionCut& cut, const StaticFacts& facts,
                                       const std::string& name,
                                       const std::vector<std::vector<int64_t>>* input_dims = nullptr,
                                       const std::map<std::string, const Tensor*>* constants = nullptr);

// A region compiled by the driver from the IR of its ONNX model (converted
// by OpenVINO's ONNX frontend), with the static shapes of its outputs.
struct CompiledRegion {
  std::unique_ptr<NpuGraph> graph;
  std::vector<Shape> output_shapes;  // in the cut's output order
};
// `dynamic_output` (optional) is set when it failed because an output's
// shape is not static, although every input's is: it depends on values.
StatusOr<CompiledRegion> CompileRegion(NpuDevice& device, const std::string& onnx_bytes, const std::string& name,
                                       bool* dynamic_output = nullptr);

// The lowering for one model, made at session creation.
StatusOr<std::shared_ptr<const Lowering>> MakeNpuLowering(const LoadedModel& model, NpuDevice& device);

}  // namespace parity::adapters::level_zero
