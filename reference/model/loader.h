// Loading ONNX models from files or bytes. A malformed or truncated protobuf
// gives an error status, never a crash; external data is resolved later, when
// tensors are read, under the model's folder only (tensor_io.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"

namespace parity {

struct LoadedModel {
  std::shared_ptr<const onnx::ModelProto> proto;
  std::string name;      // the path, or the name given with the bytes: used in messages
  std::string base_dir;  // folder for external data; empty for bytes with no folder
};

// Models larger than this are refused before parsing (protobuf's own limit is 2 GiB).
constexpr int64_t kMaxModelBytes = (int64_t{2} << 30) - 1;

// The bytes of a file that holds one protobuf message (a model, a test data
// value): it must be a regular file of at most kMaxModelBytes, refused
// before it is read otherwise.
StatusOr<std::string> ReadProtobufFile(const std::string& path);

StatusOr<LoadedModel> LoadModelFile(const std::string& path);
StatusOr<LoadedModel> LoadModelBytes(std::string_view bytes, std::string name, std::string base_dir = "");

// Checks, without reading them, every tensor of the model whose
// data_location is EXTERNAL: initializers and sparse initializers of the
// main graph and of every subgraph, and tensor attributes of nodes (model
// functions' included). Each must resolve inside model.base_dir with its
// range inside the file (CheckExternalData, tensor_io.h). The first problem
// is returned, prefixed with the model's name; a model without external
// data passes whatever its base_dir.
Status CheckModelExternalData(const LoadedModel& model);

}  // namespace parity
