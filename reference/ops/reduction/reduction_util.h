// Helpers shared by the reduction family's kernels: exact integer
// arithmetic (wrapping, as numpy does), type checks, and the outer/axis/inner
// decomposition of a shape around one axis.
#pragma once

#include <cstdint>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops {

// Integers are carried as uint64 two's-complement bit patterns so that sums
// and products wrap modulo 2^64 without undefined behaviour; a Tensor setter
// then wraps them to the element width.
inline uint64_t WrapAdd(uint64_t a, uint64_t b) { return a + b; }
inline uint64_t WrapMul(uint64_t a, uint64_t b) { return a * b; }
// a < b in the signedness of `dtype`.
inline bool IntLess(DataType dtype, uint64_t a, uint64_t b) {
  return IsSignedInteger(dtype) ? static_cast<int64_t>(a) < static_cast<int64_t>(b) : a < b;
}
// |a| of a signed value (wrapping at INT64_MIN), a itself when unsigned.
inline uint64_t IntAbs(DataType dtype, uint64_t a) {
  return IsSignedInteger(dtype) && static_cast<int64_t>(a) < 0 ? uint64_t{0} - a : a;
}
// The value as a double (exact below 2^53), honouring signedness.
inline double IntToDouble(DataType dtype, uint64_t a) {
  return IsSignedInteger(dtype) ? static_cast<double>(static_cast<int64_t>(a)) : static_cast<double>(a);
}

// True when the kernel should compute exactly in integers (integer and bool types).
inline bool IsExactInteger(DataType dtype) { return IsInteger(dtype) || dtype == DataType::kBool; }

// An error unless `dtype` is a floating-point type (every float format).
Status RequireFloat(const KernelContext& ctx, const Tensor& t, const char* what);
// An error unless `dtype` is a float or integer type (no bool, string, complex).
Status RequireNumeric(const KernelContext& ctx, const Tensor& t, const char* what);

// A shape split around `axis`: outer * dim * inner elements, where element
// (o, k, i) lives at flat index (o * dim + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1;
  int64_t dim = 1;
  int64_t inner = 1;
  int64_t At(int64_t o, int64_t k, int64_t i) const { return (o * dim + k) * inner + i; }
};
AxisSplit SplitAtAxis(const Shape& shape, int64_t axis);

// Element count of shape[begin, end).
int64_t Product(const Shape& shape, size_t begin, size_t end);

// Reads a scalar or one-element tensor as an int64 (for axis inputs).
StatusOr<int64_t> ScalarInt(const KernelContext& ctx, const Tensor& t, const char* what);
// Reads a scalar or one-element float tensor as a double.
StatusOr<double> ScalarDouble(const KernelContext& ctx, const Tensor& t, const char* what);

}  // namespace parity::ops
