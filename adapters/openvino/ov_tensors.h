// Values between the ABI and OpenVINO: the ONNX element types the adapter
// passes to OpenVINO, and copies between reference tensors (the form the
// ABI's TensorProtos are read into and written from) and ov::Tensor.
#pragma once

#include <optional>
#include <span>

#include <openvino/core/type/element_type.hpp>
#include <openvino/runtime/tensor.hpp>

#include "reference/core/status.h"
#include "reference/core/tensor.h"

namespace parity::adapters::openvino {

// OpenVINO's element type for an ONNX one, for the types whose elements
// are whole bytes and alike in both (float8 E4M3FN and E5M2, float16,
// bfloat16 and every integer, bool and float of 8 to 64 bits); nullopt for
// the rest (strings, complex, the packed 2-, 4- and 6-bit types, the FNUZ
// float8s), which the adapter refuses as UNSUPPORTED at creation.
std::optional<ov::element::Type> OvElementType(DataType type);

// The ONNX element types OvElementType maps, as onnx.TensorProto.DataType
// values: what the capabilities declare.
std::span<const int32_t> PassedDataTypes();

// A copy of `tensor` as OpenVINO's tensor of the same dims and type.
StatusOr<ov::Tensor> ToOvTensor(const Tensor& tensor, const std::string& what);

// A copy of OpenVINO's `tensor` as a reference tensor of type `declared`
// (the graph output's ONNX type); an element type other than `declared`'s
// is an error naming `what`.
StatusOr<Tensor> FromOvTensor(const ov::Tensor& tensor, DataType declared, const std::string& what);

}  // namespace parity::adapters::openvino
