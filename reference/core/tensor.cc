// Tensor storage, checked creation and element conversion.
#include "reference/core/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>

#include "reference/core/checked_size.h"
#include "reference/core/float_formats.h"

namespace parity {
namespace {

std::atomic<int64_t> g_allocation_limit{int64_t{16} << 30};

// Wraps a value to the width of an integer type the way a C cast would
// (two's complement for signed types), for the sub-byte types too.
int64_t WrapSigned(int64_t value, int bits) {
  if (bits >= 64) return value;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(value) & mask;
  if (u & (uint64_t{1} << (bits - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

// Truncates a double toward zero into int64 without undefined behaviour:
// NaN becomes 0 and values out of range clamp (the ONNX spec leaves
// out-of-range float-to-integer casts undefined; we choose a defined result).
int64_t TruncateToInt64(double value) {
  if (std::isnan(value)) return 0;
  if (value >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (value <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

uint64_t TruncateToUint64(double value) {
  if (std::isnan(value)) return 0;
  if (value < 0) return static_cast<uint64_t>(TruncateToInt64(value));
  if (value >= 18446744073709551615.0) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(value);
}

}  // namespace

StatusOr<int64_t> ElementCount(const Shape& shape) {
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    if (d < 0) return InvalidArgument("negative dimension ", d, " at axis ", i, " of shape ", ShapeToString(shape));
    const std::optional<int64_t> next = CheckedMul(count, d);  // the one rule: checked_size.h
    if (!next) return ResourceExhausted("element count of shape ", ShapeToString(shape), " overflows int64");
    count = *next;
  }
  return count;
}

std::string ShapeToString(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

void Tensor::SetAllocationLimit(int64_t bytes) { g_allocation_limit.store(bytes); }
int64_t Tensor::AllocationLimit() { return g_allocation_limit.load(); }

StatusOr<Tensor> Tensor::Create(DataType dtype, Shape shape) {
  if (!IsKnownDataType(static_cast<int32_t>(dtype))) {
    return InvalidArgument("unknown tensor element type ", static_cast<int32_t>(dtype));
  }
  PARITY_ASSIGN_OR_RETURN(int64_t count, ElementCount(shape));
  // Strings are counted at 32 bytes each: the size of an empty std::string.
  const int64_t element_bytes = dtype == DataType::kString ? 32 : static_cast<int64_t>(StorageSize(dtype));
  const std::optional<int64_t> checked_bytes = CheckedMul(count, element_bytes);
  if (!checked_bytes) {
    return ResourceExhausted("tensor ", DataTypeName(dtype), ShapeToString(shape), " is too large to address");
  }
  const int64_t bytes = *checked_bytes;
  if (bytes > AllocationLimit()) {
    return ResourceExhausted("tensor ", DataTypeName(dtype), ShapeToString(shape), " needs ", bytes,
                             " bytes, over the allocation limit of ", AllocationLimit(), " bytes");
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.size_ = count;
  if (dtype == DataType::kString) {
    t.strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(count));
  } else {
    t.bytes_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(bytes));
  }
  return t;
}

Tensor Tensor::Scalar(DataType dtype, double value) {
  StatusOr<Tensor> t = FromDoubles(dtype, {}, {value});
  assert(t.ok());  // a scalar of a known type always fits
  return t.ok() ? std::move(t).value() : Tensor();
}

Tensor Tensor::FromInt64s(Shape shape, const std::vector<int64_t>& values) {
  // Callers pass shapes they computed from `values`: a mismatch is our bug.
  // It asserts in debug builds and, in release builds, copies no more than
  // the tensor holds rather than writing past it.
  StatusOr<Tensor> t = Create(DataType::kInt64, std::move(shape));
  assert(t.ok() && t->size() == static_cast<int64_t>(values.size()));
  if (!t.ok()) return Tensor();
  const size_t n = std::min(values.size(), static_cast<size_t>(t->size()));
  std::copy(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n), t->mutable_data<int64_t>());
  return std::move(t).value();
}

StatusOr<Tensor> Tensor::FromDoubles(DataType dtype, Shape shape, const std::vector<double>& values,
                                     bool saturate) {
  PARITY_ASSIGN_OR_RETURN(Tensor t, Create(dtype, std::move(shape)));
  if (t.size() != static_cast<int64_t>(values.size())) {
    return Internal("FromDoubles: ", values.size(), " values for shape ", ShapeToString(t.shape()));
  }
  if (dtype == DataType::kString) return InvalidArgument("cannot make a string tensor from numbers");
  switch (dtype) {
    case DataType::kFloat: {
      float* out = t.mutable_data<float>();
      for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
      break;
    }
    case DataType::kDouble:
      std::copy(values.begin(), values.end(), t.mutable_data<double>());
      break;
    default:
      for (size_t i = 0; i < values.size(); ++i) t.SetDouble(static_cast<int64_t>(i), values[i], saturate);
  }
  return t;
}

Tensor Tensor::Reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  Tensor t = *this;
  // The copy takes no more than the original, which already passed the
  // allocation limit, so it is not checked again.
  if (bytes_) t.bytes_ = std::make_shared<std::vector<uint8_t>>(*bytes_);
  if (strings_) t.strings_ = std::make_shared<std::vector<std::string>>(*strings_);
  return t;
}

double Tensor::GetDouble(int64_t i) const {
  switch (dtype_) {
    case DataType::kFloat: return data<float>()[i];
    case DataType::kDouble: return data<double>()[i];
    case DataType::kInt8:
    case DataType::kInt4:
    case DataType::kInt2: return data<int8_t>()[i];
    case DataType::kUint8:
    case DataType::kUint4:
    case DataType::kUint2:
    case DataType::kBool: return data<uint8_t>()[i];
    case DataType::kInt16: return data<int16_t>()[i];
    case DataType::kUint16: return data<uint16_t>()[i];
    case DataType::kInt32: return data<int32_t>()[i];
    case DataType::kUint32: return data<uint32_t>()[i];
    case DataType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DataType::kUint64: return static_cast<double>(data<uint64_t>()[i]);
    case DataType::kFloat16:
    case DataType::kBfloat16: return DecodeSmallFloat(dtype_, data<uint16_t>()[i]);
    case DataType::kComplex64: return data<std::complex<float>>()[i].real();
    case DataType::kComplex128: return data<std::complex<double>>()[i].real();
    case DataType::kString:
    case DataType::kUndefined: return std::numeric_limits<double>::quiet_NaN();
    default: return DecodeSmallFloat(dtype_, data<uint8_t>()[i]);  // 8/6/4-bit floats
  }
}

int64_t Tensor::GetInt64(int64_t i) const {
  switch (dtype_) {
    case DataType::kInt8:
    case DataType::kInt4:
    case DataType::kInt2: return data<int8_t>()[i];
    case DataType::kUint8:
    case DataType::kUint4:
    case DataType::kUint2:
    case DataType::kBool: return data<uint8_t>()[i];
    case DataType::kInt16: return data<int16_t>()[i];
    case DataType::kUint16: return data<uint16_t>()[i];
    case DataType::kInt32: return data<int32_t>()[i];
    case DataType::kUint32: return data<uint32_t>()[i];
    case DataType::kInt64: return data<int64_t>()[i];
    case DataType::kUint64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: return TruncateToInt64(GetDouble(i));
  }
}

uint64_t Tensor::GetUint64(int64_t i) const {
  if (dtype_ == DataType::kUint64) return data<uint64_t>()[i];
  if (IsFloatingPoint(dtype_)) return TruncateToUint64(GetDouble(i));
  return static_cast<uint64_t>(GetInt64(i));
}

std::complex<double> Tensor::GetComplex(int64_t i) const {
  if (dtype_ == DataType::kComplex64) {
    const std::complex<float> c = data<std::complex<float>>()[i];
    return {c.real(), c.imag()};
  }
  if (dtype_ == DataType::kComplex128) return data<std::complex<double>>()[i];
  return {GetDouble(i), 0.0};
}

void Tensor::SetDouble(int64_t i, double value, bool saturate) {
  switch (dtype_) {
    case DataType::kFloat: mutable_data<float>()[i] = static_cast<float>(value); return;
    case DataType::kDouble: mutable_data<double>()[i] = value; return;
    case DataType::kBool: mutable_data<uint8_t>()[i] = value != 0.0 ? 1 : 0; return;
    case DataType::kUint64: mutable_data<uint64_t>()[i] = TruncateToUint64(value); return;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      mutable_data<uint16_t>()[i] = static_cast<uint16_t>(EncodeSmallFloat(dtype_, value, saturate));
      return;
    case DataType::kComplex64: mutable_data<std::complex<float>>()[i] = {static_cast<float>(value), 0.0f}; return;
    case DataType::kComplex128: mutable_data<std::complex<double>>()[i] = {value, 0.0}; return;
    case DataType::kString:
    case DataType::kUndefined: return;
    default:
      if (IsSmallFloat(dtype_)) {
        mutable_data<uint8_t>()[i] = static_cast<uint8_t>(EncodeSmallFloat(dtype_, value, saturate));
      } else {
        SetInt64(i, TruncateToInt64(value));
      }
  }
}

void Tensor::SetInt64(int64_t i, int64_t value) {
  switch (dtype_) {
    case DataType::kInt8: mutable_data<int8_t>()[i] = static_cast<int8_t>(value); return;
    case DataType::kInt4: mutable_data<int8_t>()[i] = static_cast<int8_t>(WrapSigned(value, 4)); return;
    case DataType::kInt2: mutable_data<int8_t>()[i] = static_cast<int8_t>(WrapSigned(value, 2)); return;
    case DataType::kUint8: mutable_data<uint8_t>()[i] = static_cast<uint8_t>(value); return;
    case DataType::kUint4: mutable_data<uint8_t>()[i] = static_cast<uint8_t>(value & 0xF); return;
    case DataType::kUint2: mutable_data<uint8_t>()[i] = static_cast<uint8_t>(value & 0x3); return;
    case DataType::kBool: mutable_data<uint8_t>()[i] = value != 0 ? 1 : 0; return;
    case DataType::kInt16: mutable_data<int16_t>()[i] = static_cast<int16_t>(value); return;
    case DataType::kUint16: mutable_data<uint16_t>()[i] = static_cast<uint16_t>(value); return;
    case DataType::kInt32: mutable_data<int32_t>()[i] = static_cast<int32_t>(value); return;
    case DataType::kUint32: mutable_data<uint32_t>()[i] = static_cast<uint32_t>(value); return;
    case DataType::kInt64: mutable_data<int64_t>()[i] = value; return;
    case DataType::kUint64: mutable_data<uint64_t>()[i] = static_cast<uint64_t>(value); return;
    default: SetDouble(i, static_cast<double>(value)); return;
  }
}

void Tensor::SetUint64(int64_t i, uint64_t value) {
  if (dtype_ == DataType::kUint64) {
    mutable_data<uint64_t>()[i] = value;
  } else if (IsFloatingPoint(dtype_) || IsComplex(dtype_)) {
    SetDouble(i, static_cast<double>(value));
  } else {
    SetInt64(i, static_cast<int64_t>(value));
  }
}

void Tensor::SetComplex(int64_t i, std::complex<double> value) {
  if (dtype_ == DataType::kComplex64) {
    mutable_data<std::complex<float>>()[i] = {static_cast<float>(value.real()), static_cast<float>(value.imag())};
  } else if (dtype_ == DataType::kComplex128) {
    mutable_data<std::complex<double>>()[i] = value;
  } else {
    SetDouble(i, value.real());
  }
}

std::vector<double> Tensor::ToDoubles() const {
  std::vector<double> out(static_cast<size_t>(size_));
  ReadDoubles(0, size_, out.data());
  return out;
}

void Tensor::ReadDoubles(int64_t begin, int64_t count, double* out) const {
  if (dtype_ == DataType::kFloat) {
    const float* in = data<float>() + begin;
    for (int64_t i = 0; i < count; ++i) out[i] = in[i];
  } else if (dtype_ == DataType::kDouble) {
    std::copy(data<double>() + begin, data<double>() + begin + count, out);
  } else {
    for (int64_t i = 0; i < count; ++i) out[i] = GetDouble(begin + i);
  }
}

void Tensor::WriteDoubles(int64_t begin, int64_t count, const double* values) {
  if (dtype_ == DataType::kFloat) {
    float* out = mutable_data<float>() + begin;
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(values[i]);
  } else if (dtype_ == DataType::kDouble) {
    std::copy(values, values + count, mutable_data<double>() + begin);
  } else {
    for (int64_t i = 0; i < count; ++i) SetDouble(begin + i, values[i]);
  }
}

std::vector<int64_t> Tensor::ToInt64s() const {
  std::vector<int64_t> out(static_cast<size_t>(size_));
  for (int64_t i = 0; i < size_; ++i) out[i] = GetInt64(i);
  return out;
}

std::string Tensor::Description() const {
  return std::string(DataTypeName(dtype_)) + ShapeToString(shape_);
}

}  // namespace parity
