// Prepares a model for OpenVINO (onnx_model.h).
#include "adapters/openvino/onnx_model.h"

#include <set>
#include <string_view>

#include "adapters/openvino/ov_tensors.h"
#include "reference/model/loader.h"
#include "reference/model/tensor_io.h"

namespace parity::adapters::openvino {
namespace {

// Replaces, in place, every tensor of `graph` (initializers, tensor
// attributes, and those of its subgraphs) whose data is EXTERNAL by the same
// tensor with its data inline, read under `policy` (tensor_io.h).
Status InlineExternalData(onnx::GraphProto& graph, const ExternalDataPolicy& policy, const std::string& name);

Status InlineTensor(onnx::TensorProto& tensor, const ExternalDataPolicy& policy, const std::string& what) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status();
  PARITY_ASSIGN_OR_RETURN(Tensor read, TensorFromProto(tensor, policy));
  const std::string tensor_name = tensor.name();
  tensor.Clear();
  TensorToProto(read, &tensor);
  tensor.set_name(tensor_name);
  return Status();
}

Status InlineExternalData(onnx::GraphProto& graph, const ExternalDataPolicy& policy, const std::string& name) {
  for (onnx::TensorProto& init : *graph.mutable_initializer()) {
    PARITY_RETURN_IF_ERROR(InlineTensor(init, policy, name));
  }
  for (const onnx::SparseTensorProto& sparse : graph.sparse_initializer()) {
    if (sparse.values().data_location() == onnx::TensorProto::EXTERNAL ||
        sparse.indices().data_location() == onnx::TensorProto::EXTERNAL) {
      return Unimplemented(name, ": sparse initializer '", sparse.values().name(),
                           "' keeps its data in an external file, which the OpenVINO adapter does not read");
    }
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) PARITY_RETURN_IF_ERROR(InlineTensor(*attr.mutable_t(), policy, name));
      for (onnx::TensorProto& t : *attr.mutable_tensors()) PARITY_RETURN_IF_ERROR(InlineTensor(t, policy, name));
      if (attr.has_g()) PARITY_RETURN_IF_ERROR(InlineExternalData(*attr.mutable_g(), policy, name));
      for (onnx::GraphProto& g : *attr.mutable_graphs()) PARITY_RETURN_IF_ERROR(InlineExternalData(g, policy, name));
    }
  }
  return Status();
}

std::string KindName(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return "a sequence";
  if (type.has_optional_type()) return "an optional";
  if (type.has_map_type()) return "a map";
  if (type.has_sparse_tensor_type()) return "a sparse tensor";
  return "a value of no tensor type";
}

// A graph input or output as the adapter passes it: a tensor of a type
// OvElementType maps.
StatusOr<GraphValue> PassedValue(const onnx::ValueInfoProto& info, const char* role, const std::string& name) {
  const onnx::TypeProto& type = info.type();
  if (!type.has_tensor_type()) {
    return Unimplemented(name, ": graph ", role, " '", info.name(), "' is ", KindName(type),
                         "; the OpenVINO adapter passes tensors only");
  }
  const int32_t elem = type.tensor_type().elem_type();
  if (!IsKnownDataType(elem)) {
    return InvalidModel(name, ": graph ", role, " '", info.name(), "' has element type ", elem);
  }
  const auto dtype = static_cast<DataType>(elem);
  if (!OvElementType(dtype)) {
    return Unimplemented(name, ": graph ", role, " '", info.name(), "' is ", DataTypeName(dtype),
                         ", which the OpenVINO adapter does not pass");
  }
  const int64_t rank = type.tensor_type().has_shape() ? type.tensor_type().shape().dim_size() : -1;
  return GraphValue{info.name(), dtype, rank};
}

}  // namespace

StatusOr<PreparedModel> PrepareModel(const void* bytes, size_t size, const std::string& name,
                                     const std::string& model_dir) {
  if (!bytes && size > 0) return InvalidArgument(name, ": no model bytes");
  PARITY_ASSIGN_OR_RETURN(LoadedModel loaded,
                          LoadModelBytes(std::string_view(static_cast<const char*>(bytes), bytes ? size : 0), name,
                                         model_dir));
  PreparedModel prepared;
  onnx::ModelProto model;
  if (HasVariants(*loaded.proto)) {
    // No targets: OpenVINO compiles no Compiled blob of ours, and its ONNX
    // frontend does not convert the model-local functions that portable
    // entries call, so every entry keeps its main graph (a backend that
    // knows no variants does the same). The decisions still go to the report.
    ResolveOptions options;
    PARITY_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveVariants(loaded, options));
    model = std::move(resolved.model);
    prepared.decisions = std::move(resolved.decisions);
  } else {
    model = *loaded.proto;
  }
  PARITY_RETURN_IF_ERROR(InlineExternalData(*model.mutable_graph(), ExternalDataPolicy{model_dir}, name));
  for (onnx::FunctionProto& function : *model.mutable_functions()) {
    for (onnx::NodeProto& node : *function.mutable_node()) {
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL) {
          return Unimplemented(name, ": function '", function.name(), "' holds a tensor with external data, which ",
                               "the OpenVINO adapter does not read");
        }
      }
    }
  }

  const onnx::GraphProto& graph = model.graph();
  std::set<std::string> initialized;
  for (const onnx::TensorProto& init : graph.initializer()) initialized.insert(init.name());
  for (const onnx::SparseTensorProto& init : graph.sparse_initializer()) initialized.insert(init.values().name());
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initialized.count(input.name())) {
      prepared.initializers.push_back(input.name());
      continue;
    }
    PARITY_ASSIGN_OR_RETURN(GraphValue value, PassedValue(input, "input", name));
    prepared.inputs.push_back(std::move(value));
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    PARITY_ASSIGN_OR_RETURN(GraphValue value, PassedValue(output, "output", name));
    prepared.outputs.push_back(std::move(value));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    prepared.node_labels.push_back(node.name().empty() ? StrCat(node.op_type(), "#", i) : node.name());
    std::vector<std::string> ov_names;
    if (!node.name().empty()) ov_names.push_back(node.name());
    for (const std::string& out : node.output()) {
      if (!out.empty()) ov_names.push_back(out);
    }
    prepared.node_ov_names.push_back(std::move(ov_names));
  }
  if (!model.SerializeToString(&prepared.bytes)) return Internal(name, ": the prepared model does not serialize");
  return prepared;
}

}  // namespace parity::adapters::openvino
