// The ONNX model as the OpenVINO adapter hands it to OpenVINO: parsed by
// the reference's loader, variant entries resolved with no target (each
// keeps its main graph, spec/variants.md), external data read into the model under
// the ABI's containment rule (OpenVINO reads from memory, with no folder),
// and its graph inputs and outputs checked against the types the adapter
// passes.
#pragma once

#include <string>
#include <vector>

#include "reference/core/dtype.h"
#include "reference/core/status.h"
#include "reference/variants/variants.h"

namespace parity::adapters::openvino {

struct GraphValue {
  std::string name;
  DataType type = DataType::kUndefined;
  int64_t rank = -1;  // from the declared shape; -1 when it declares none
};

struct PreparedModel {
  std::string bytes;                     // the onnx.ModelProto OpenVINO reads
  std::vector<EntryDecision> decisions;  // one per variant entry, in CollectEntries order
  std::vector<GraphValue> inputs;        // graph inputs that are not initializers, in graph order
  std::vector<GraphValue> outputs;       // graph outputs, in graph order
  std::vector<std::string> initializers; // graph inputs with an initializer: values a run may override
  // Top-level nodes of the model that runs: the ABI's label ("name", or
  // "op_type#index" when unnamed), and the names OpenVINO's ONNX frontend
  // gives the operations it makes of the node (its name, else its outputs').
  std::vector<std::string> node_labels;
  std::vector<std::vector<std::string>> node_ov_names;
};

// `model_dir` is the folder of external data ("" refuses it); `name` opens
// every message. kUnimplemented for what the adapter does not pass
// (sequences, optionals, maps, element types outside ov_tensors.h).
StatusOr<PreparedModel> PrepareModel(const void* bytes, size_t size, const std::string& name,
                                     const std::string& model_dir);

}  // namespace parity::adapters::openvino
