// ONNX tensor element types: the enum (values equal TensorProto.DataType),
// names, classification, and how each is stored in a reference Tensor.
//
// Storage in memory is one element per slot, never packed: 4-bit, 2-bit and
// 6-bit types take one byte each (packing happens only in TensorProto I/O).
// float16, bfloat16 and the 8/6/4-bit floats are kept as their bit patterns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace parity {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
  kFloat6E2M3 = 27,
  kFloat6E3M2 = 28,
};

constexpr int32_t kMaxDataType = 28;

// True for a value of the enum that ONNX defines (and is not kUndefined).
bool IsKnownDataType(int32_t value);
// "float32", "float16", "int4", ... as numpy/ml_dtypes spell them.
std::string_view DataTypeName(DataType type);
// Bytes one element takes in a reference Tensor (strings: 0, kept apart).
size_t StorageSize(DataType type);
// Bits one element takes when packed in a TensorProto's raw_data.
int PackedBits(DataType type);

bool IsFloatingPoint(DataType type);  // every float format, not complex
bool IsSmallFloat(DataType type);     // float16, bfloat16 and the 8/6/4-bit floats
// float32, float16 and bfloat16: the types kernels compute with and
// accumulate in float32 (unlike float64, and the 8/6/4-bit floats, which
// hold quantized data).
inline bool IsFloat32OrHalf(DataType type) {
  return type == DataType::kFloat || type == DataType::kFloat16 || type == DataType::kBfloat16;
}
bool IsSignedInteger(DataType type);  // int2 .. int64
bool IsUnsignedInteger(DataType type);  // uint2 .. uint64 (not bool)
inline bool IsInteger(DataType type) { return IsSignedInteger(type) || IsUnsignedInteger(type); }
bool IsComplex(DataType type);
// Smallest and largest value of an integer type (int4: -8, 7).
int64_t IntegerMin(DataType type);
uint64_t IntegerMax(DataType type);

}  // namespace parity
