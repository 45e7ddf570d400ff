// Element types and tensor copies between the ABI and OpenVINO (ov_tensors.h).
// Both sides store one element per slot in the host's byte order, so a copy
// is one memcpy of the buffer.
#include "adapters/openvino/ov_tensors.h"

#include <cstring>

namespace parity::adapters::openvino {
namespace {

struct TypePair {
  DataType onnx;
  ov::element::Type_t ov;
};

constexpr TypePair kTypes[] = {
    {DataType::kFloat, ov::element::f32},          {DataType::kDouble, ov::element::f64},
    {DataType::kFloat16, ov::element::f16},        {DataType::kBfloat16, ov::element::bf16},
    {DataType::kFloat8E4M3FN, ov::element::f8e4m3}, {DataType::kFloat8E5M2, ov::element::f8e5m2},
    {DataType::kInt8, ov::element::i8},            {DataType::kUint8, ov::element::u8},
    {DataType::kInt16, ov::element::i16},          {DataType::kUint16, ov::element::u16},
    {DataType::kInt32, ov::element::i32},          {DataType::kUint32, ov::element::u32},
    {DataType::kInt64, ov::element::i64},          {DataType::kUint64, ov::element::u64},
    {DataType::kBool, ov::element::boolean},
};

}  // namespace

std::optional<ov::element::Type> OvElementType(DataType type) {
  for (const TypePair& pair : kTypes) {
    if (pair.onnx == type) return ov::element::Type(pair.ov);
  }
  return std::nullopt;
}

std::span<const int32_t> PassedDataTypes() {
  static const std::vector<int32_t> types = [] {
    std::vector<int32_t> out;
    for (const TypePair& pair : kTypes) out.push_back(static_cast<int32_t>(pair.onnx));
    return out;
  }();
  return types;
}

StatusOr<ov::Tensor> ToOvTensor(const Tensor& tensor, const std::string& what) {
  const std::optional<ov::element::Type> type = OvElementType(tensor.dtype());
  if (!type) {
    return Unimplemented(what, " is ", DataTypeName(tensor.dtype()), ", which the OpenVINO adapter does not pass");
  }
  ov::Shape shape;
  for (int64_t d : tensor.shape()) shape.push_back(static_cast<size_t>(d));
  ov::Tensor out(*type, shape);
  if (out.get_byte_size() != tensor.byte_size()) {
    return Internal(what, ": ", tensor.byte_size(), " bytes in the reference tensor, ", out.get_byte_size(),
                    " in OpenVINO's");
  }
  if (tensor.byte_size() > 0) std::memcpy(out.data(), tensor.raw_bytes(), tensor.byte_size());
  return out;
}

StatusOr<Tensor> FromOvTensor(const ov::Tensor& tensor, DataType declared, const std::string& what) {
  const std::optional<ov::element::Type> type = OvElementType(declared);
  if (!type || *type != tensor.get_element_type()) {
    return Internal(what, " is ", tensor.get_element_type().get_type_name(), " in OpenVINO, but the model declares ",
                    DataTypeName(declared));
  }
  Shape shape;
  for (size_t d : tensor.get_shape()) shape.push_back(static_cast<int64_t>(d));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(declared, shape));
  if (out.byte_size() != tensor.get_byte_size()) {
    return Internal(what, ": ", tensor.get_byte_size(), " bytes from OpenVINO for ", out.byte_size(),
                    " in the reference tensor");
  }
  if (out.byte_size() > 0) std::memcpy(out.mutable_raw_bytes(), tensor.data(), out.byte_size());
  return out;
}

}  // namespace parity::adapters::openvino
