// Tensor: an ONNX tensor value in the reference evaluator — element type,
// shape, and data stored one element per slot (see dtype.h for layouts).
//
// Ownership: a Tensor shares its buffer with copies of itself (copying is
// cheap, as Reshape and Identity need). A kernel writes only into tensors it
// has just created; a tensor visible to anyone else is never written, except
// by the evaluator's in-place mode (EvalOptions::in_place), which writes an
// aliased input's buffer on purpose and first gives every other view of it
// its own copy (Clone).
// Thread safety: concurrent reads are safe; writes are not.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "reference/core/dtype.h"
#include "reference/core/status.h"

namespace parity {

using Shape = std::vector<int64_t>;

// Element count of a shape, or an error on a negative dimension or overflow.
StatusOr<int64_t> ElementCount(const Shape& shape);
std::string ShapeToString(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (dtype kUndefined, no data)

  // A zero-filled tensor (empty strings for kString). Fails, before any
  // allocation, on a bad shape or a size over the allocation limit.
  static StatusOr<Tensor> Create(DataType dtype, Shape shape);
  // A scalar (rank 0) or 1-D tensor from values; convenience for kernels and tests.
  static Tensor Scalar(DataType dtype, double value);
  static Tensor FromInt64s(Shape shape, const std::vector<int64_t>& values);
  // Rounds each value once to `dtype` (see float_formats.h for small floats;
  // integer types take the value truncated toward zero and wrapped, as a C
  // cast would; bool takes value != 0). `values.size()` must equal the count.
  static StatusOr<Tensor> FromDoubles(DataType dtype, Shape shape, const std::vector<double>& values,
                                      bool saturate = false);

  // The largest number of bytes one tensor may take; Create refuses more.
  // Default 16 GiB. Set once at start-up (it is a process-wide setting).
  static void SetAllocationLimit(int64_t bytes);
  static int64_t AllocationLimit();

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t axis) const { return shape_[static_cast<size_t>(axis)]; }
  int64_t size() const { return size_; }  // element count

  // Same data, another shape of the same element count (checked by caller).
  Tensor Reshaped(Shape shape) const;
  // A deep copy: the same type, shape and elements in a buffer of its own,
  // so that writing either never shows in the other (in-place aliasing).
  Tensor Clone() const;
  // Whether both tensors view one buffer (one is a copy, Reshaped or view of
  // the other), so that a write into one changes the other. False for
  // undefined tensors.
  bool SharesBufferWith(const Tensor& other) const {
    return (bytes_ && bytes_ == other.bytes_) || (strings_ && strings_ == other.strings_);
  }
  // How many tensors view this one's buffer (this one among them); 0 for
  // an undefined tensor. A device cache that keeps a tensor drops its
  // device copy once it alone holds the buffer.
  long BufferUseCount() const { return bytes_ ? bytes_.use_count() : (strings_ ? strings_.use_count() : 0); }

  // Typed access to the storage. T must match the storage of dtype():
  // float, double, int8_t..uint64_t, uint16_t for float16/bfloat16 bits,
  // uint8_t for bool and for the 8/6/4-bit floats' bits, int8_t/uint8_t for
  // int4/int2/uint4/uint2, std::complex<float/double>.
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_ ? bytes_->data() : nullptr); }
  template <typename T>
  T* mutable_data() { return reinterpret_cast<T*>(bytes_ ? bytes_->data() : nullptr); }
  const std::vector<std::string>& strings() const { return *strings_; }
  std::vector<std::string>& mutable_strings() { return *strings_; }
  const uint8_t* raw_bytes() const { return bytes_ ? bytes_->data() : nullptr; }
  uint8_t* mutable_raw_bytes() { return bytes_ ? bytes_->data() : nullptr; }
  size_t byte_size() const { return bytes_ ? bytes_->size() : 0; }

  // Element i as a double: exact for every float format and for integers up
  // to 2^53; bool as 0/1; complex gives the real part; strings are an error
  // of the caller (returns NaN).
  double GetDouble(int64_t i) const;
  // Element i of an integer or bool tensor, exactly (uint64 above INT64_MAX wraps).
  int64_t GetInt64(int64_t i) const;
  uint64_t GetUint64(int64_t i) const;
  std::complex<double> GetComplex(int64_t i) const;
  // Writes element i, rounding once as FromDoubles does.
  void SetDouble(int64_t i, double value, bool saturate = false);
  // Writes element i of an integer/bool tensor, wrapped to its width.
  void SetInt64(int64_t i, int64_t value);
  void SetUint64(int64_t i, uint64_t value);
  void SetComplex(int64_t i, std::complex<double> value);

  // All elements as doubles / int64s (see GetDouble / GetInt64).
  std::vector<double> ToDoubles() const;
  // Elements [begin, begin + count) as doubles into `out` (GetDouble's
  // values), and from doubles, each rounded once as SetDouble does: the bulk
  // forms that kernels working in blocks use.
  void ReadDoubles(int64_t begin, int64_t count, double* out) const;
  void WriteDoubles(int64_t begin, int64_t count, const double* values);
  std::vector<int64_t> ToInt64s() const;

  // "float32[2,3]"
  std::string Description() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  int64_t size_ = 0;
  std::shared_ptr<std::vector<uint8_t>> bytes_;
  std::shared_ptr<std::vector<std::string>> strings_;
};

}  // namespace parity
