// Model loading from files and bytes.
#include "reference/model/loader.h"

#include <filesystem>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>

#include "reference/model/graph.h"
#include "reference/model/tensor_io.h"

namespace parity {
namespace {

// The first tensor with external data under `policy` that does not check out.
class ExternalDataWalk {
 public:
  explicit ExternalDataWalk(const ExternalDataPolicy& policy) : policy_(policy) {}

  Status Graph(const onnx::GraphProto& graph) {
    for (const auto& t : graph.initializer()) PARITY_RETURN_IF_ERROR(Tensor(t));
    for (const auto& sparse : graph.sparse_initializer()) PARITY_RETURN_IF_ERROR(Sparse(sparse));
    return Nodes(graph.node());
  }

  Status Nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    for (const auto& node : nodes) {
      for (const auto& attr : node.attribute()) {
        if (attr.has_t()) PARITY_RETURN_IF_ERROR(Tensor(attr.t()));
        for (const auto& t : attr.tensors()) PARITY_RETURN_IF_ERROR(Tensor(t));
        if (attr.has_sparse_tensor()) PARITY_RETURN_IF_ERROR(Sparse(attr.sparse_tensor()));
        for (const auto& sparse : attr.sparse_tensors()) PARITY_RETURN_IF_ERROR(Sparse(sparse));
      }
      Status nested = Status::Ok();
      graph::ForEachSubgraph(node, [&](const onnx::GraphProto& g) {
        if (nested.ok()) nested = Graph(g);
      });
      PARITY_RETURN_IF_ERROR(nested);
    }
    return Status::Ok();
  }

 private:
  Status Tensor(const onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return Status::Ok();
    return CheckExternalData(t, policy_);
  }
  Status Sparse(const onnx::SparseTensorProto& sparse) {
    PARITY_RETURN_IF_ERROR(Tensor(sparse.values()));
    return Tensor(sparse.indices());
  }

  const ExternalDataPolicy& policy_;
};

}  // namespace

Status CheckModelExternalData(const LoadedModel& model) {
  const ExternalDataPolicy policy{model.base_dir};
  ExternalDataWalk walk(policy);
  Status status = walk.Graph(model.proto->graph());
  for (int i = 0; status.ok() && i < model.proto->functions_size(); ++i) {
    status = walk.Nodes(model.proto->functions(i).node());
  }
  return status.ok() ? status : status.WithContext("model '" + model.name + "'");
}

StatusOr<LoadedModel> LoadModelBytes(std::string_view bytes, std::string name, std::string base_dir) {
  if (static_cast<int64_t>(bytes.size()) > kMaxModelBytes) {
    return InvalidModel("model '", name, "' is ", bytes.size(), " bytes, over the 2 GiB protobuf limit");
  }
  auto proto = std::make_shared<onnx::ModelProto>();
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  // Nested graphs and functions can recurse deeply; protobuf refuses past this.
  stream.SetRecursionLimit(100);
  if (!proto->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return InvalidModel("model '", name, "' is not a valid ONNX ModelProto (malformed or truncated protobuf, ",
                        bytes.size(), " bytes)");
  }
  LoadedModel model;
  model.proto = std::move(proto);
  model.name = std::move(name);
  model.base_dir = std::move(base_dir);
  return model;
}

StatusOr<std::string> ReadProtobufFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec) return IoError("cannot read '", path, "': ", ec.message());
  if (!std::filesystem::is_regular_file(status)) return IoError("'", path, "' is not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return IoError("cannot read '", path, "': ", ec.message());
  if (static_cast<int64_t>(size) > kMaxModelBytes) {
    return InvalidModel("'", path, "' is ", size, " bytes, over the 2 GiB protobuf limit");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open '", path, "'");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) return IoError("short read from '", path, "'");
  return bytes;
}

StatusOr<LoadedModel> LoadModelFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return NotFound("model file '", path, "' does not exist");
  PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadProtobufFile(path));
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return LoadModelBytes(bytes, path, dir);
}

}  // namespace parity
