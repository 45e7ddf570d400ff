// Conversion between ONNX protobuf values (TensorProto, SequenceProto,
// OptionalProto) and reference Values, including tensors whose data lives in
// external files. Every size and offset is checked before it is used.
#pragma once

#include <optional>
#include <string>

#include <google/protobuf/io/zero_copy_stream.h>

#include "onnx/onnx-data.pb.h"
#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"
#include "reference/core/value.h"

namespace parity {

// Where external tensor data may be read from: only files inside `base_dir`
// (the model's folder). An empty base_dir refuses all external data.
struct ExternalDataPolicy {
  std::string base_dir;
};

// Reads a TensorProto. External data (data_location = EXTERNAL) is resolved
// by ResolveExternalDataPath under policy.base_dir, with offset and length
// checked against the file.
StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const ExternalDataPolicy& policy = {});
// The tensor of a serialized TensorProto that holds only dims, data_type,
// name and raw_data (what ONNX writes for a test input, and the protocol
// sends at every run), read straight from the wire format without a
// TensorProto in between; nullopt for any other message, well formed or
// not: TensorFromProto reads it then, and gives its errors.
std::optional<Tensor> TensorFromPlainWire(const void* data, size_t size);
// Checks, without reading it, that a tensor's external data is inside
// policy.base_dir and that its range lies inside the file.
Status CheckExternalData(const onnx::TensorProto& proto, const ExternalDataPolicy& policy);
// Writes a tensor into `proto` with raw_data (strings in string_data).
void TensorToProto(const Tensor& tensor, onnx::TensorProto* proto);

StatusOr<Value> ValueFromSequenceProto(const onnx::SequenceProto& proto);
StatusOr<Value> ValueFromOptionalProto(const onnx::OptionalProto& proto);
void ValueToSequenceProto(const Value& value, onnx::SequenceProto* proto);
void ValueToOptionalProto(const Value& value, onnx::OptionalProto* proto);

// Reads a test data file (input_K.pb / output_K.pb) whose kind is given by
// the graph's declared type: a TensorProto, SequenceProto or OptionalProto.
StatusOr<Value> ReadValueFile(const std::string& path, const onnx::TypeProto& declared_type);
// Writes a value in the form ReadValueFile reads.
Status WriteValueFile(const std::string& path, const Value& value, const std::string& name);

// Writes the bytes of `value`'s value file to `out`: the SequenceProto,
// OptionalProto or TensorProto named `name` that WriteValueFile stores. A
// tensor's raw_data is written from its own buffer rather than copied into
// the message first, so a large output is never held twice (output digests,
// harness/results/output_digest.h, stream it into SHA-256). False when the
// stream fails.
bool SerializeValue(const Value& value, const std::string& name, google::protobuf::io::ZeroCopyOutputStream* out);

// The real path of external data file `location`, which must name a regular
// file inside `base_dir`: an absolute location, a '..' component, or a
// symbolic link that leads outside base_dir is refused.
StatusOr<std::string> ResolveExternalDataPath(const std::string& base_dir, const std::string& location);

}  // namespace parity
