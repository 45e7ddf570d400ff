// Facts about each ONNX element type.
#include "reference/core/dtype.h"

namespace parity {

bool IsKnownDataType(int32_t value) { return value >= 1 && value <= kMaxDataType; }

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBfloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUint4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
    case DataType::kFloat8E8M0: return "float8e8m0";
    case DataType::kUint2: return "uint2";
    case DataType::kInt2: return "int2";
    case DataType::kFloat6E2M3: return "float6e2m3";
    case DataType::kFloat6E3M2: return "float6e3m2";
  }
  return "unknown";
}

size_t StorageSize(DataType type) {
  switch (type) {
    case DataType::kUndefined:
    case DataType::kString: return 0;
    case DataType::kDouble:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kFloat:
    case DataType::kInt32:
    case DataType::kUint32: return 4;
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kInt16:
    case DataType::kUint16: return 2;
    default: return 1;
  }
}

int PackedBits(DataType type) {
  switch (type) {
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1: return 4;
    case DataType::kUint2:
    case DataType::kInt2: return 2;
    case DataType::kFloat6E2M3:
    case DataType::kFloat6E3M2: return 6;
    case DataType::kBool: return 8;
    default: return static_cast<int>(StorageSize(type) * 8);
  }
}

bool IsFloatingPoint(DataType type) {
  switch (type) {
    case DataType::kFloat:
    case DataType::kDouble: return true;
    default: return IsSmallFloat(type);
  }
}

bool IsSmallFloat(DataType type) {
  switch (type) {
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat4E2M1:
    case DataType::kFloat8E8M0:
    case DataType::kFloat6E2M3:
    case DataType::kFloat6E3M2: return true;
    default: return false;
  }
}

bool IsSignedInteger(DataType type) {
  switch (type) {
    case DataType::kInt2:
    case DataType::kInt4:
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64: return true;
    default: return false;
  }
}

bool IsUnsignedInteger(DataType type) {
  switch (type) {
    case DataType::kUint2:
    case DataType::kUint4:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64: return true;
    default: return false;
  }
}

bool IsComplex(DataType type) { return type == DataType::kComplex64 || type == DataType::kComplex128; }

int64_t IntegerMin(DataType type) {
  switch (type) {
    case DataType::kInt2: return -2;
    case DataType::kInt4: return -8;
    case DataType::kInt8: return INT8_MIN;
    case DataType::kInt16: return INT16_MIN;
    case DataType::kInt32: return INT32_MIN;
    case DataType::kInt64: return INT64_MIN;
    default: return 0;
  }
}

uint64_t IntegerMax(DataType type) {
  switch (type) {
    case DataType::kInt2: return 1;
    case DataType::kInt4: return 7;
    case DataType::kInt8: return INT8_MAX;
    case DataType::kInt16: return INT16_MAX;
    case DataType::kInt32: return INT32_MAX;
    case DataType::kInt64: return INT64_MAX;
    case DataType::kUint2: return 3;
    case DataType::kUint4: return 15;
    case DataType::kUint8: return UINT8_MAX;
    case DataType::kUint16: return UINT16_MAX;
    case DataType::kUint32: return UINT32_MAX;
    case DataType::kUint64: return UINT64_MAX;
    case DataType::kBool: return 1;
    default: return 0;
  }
}

}  // namespace parity
