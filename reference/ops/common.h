// Helpers shared by the operator kernels: numpy-style broadcasting, axis
// normalisation, strides and result construction. Every helper reports bad
// input as a Status built with the node's context (ctx.Error).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "reference/core/tensor.h"
#include "reference/eval/kernel.h"

namespace parity::ops {

// Row-major strides of a shape (in elements).
std::vector<int64_t> Strides(const Shape& shape);

// The numpy broadcast of several shapes, or an error naming both shapes.
StatusOr<Shape> BroadcastShapes(const KernelContext& ctx, const std::vector<Shape>& shapes);

// Maps a flat index of the broadcast output shape to the flat index of an
// input of shape `input` (right-aligned, size-1 dimensions repeat).
class BroadcastIndexer {
 public:
  BroadcastIndexer(const Shape& input, const Shape& output);
  int64_t operator()(int64_t output_index) const;
  bool identity() const { return identity_; }

 private:
  std::vector<int64_t> output_dims_;     // output shape
  std::vector<int64_t> input_strides_;   // 0 where the input dimension broadcasts
  bool identity_ = false;
};

// An axis in [-rank, rank) made non-negative, or an error.
StatusOr<int64_t> NormalizeAxis(const KernelContext& ctx, int64_t axis, int64_t rank);

// A tensor of `dtype` and `shape` holding `values` rounded once; an error
// (with the node named) if the shape is too large.
StatusOr<Value> MakeResult(const KernelContext& ctx, DataType dtype, Shape shape, const std::vector<double>& values);
// A new, zero-filled tensor, with the node named on failure.
StatusOr<Tensor> Allocate(const KernelContext& ctx, DataType dtype, Shape shape);

// How a kernel's sums round (KernelContext::float32_sums): exactly in double
// for the reference; in the conventional arithmetic of an error budget
// (spec/tolerance.md, "Error budgets"), for float32, float16 and bfloat16
// data, every partial sum rounds to float32, as a kernel that accumulates in
// float32 with a fused multiply-add does. float64 data always sums in double.
class Summation {
 public:
  Summation(const KernelContext& ctx, DataType data)
      : float32_(ctx.float32_sums() && IsFloat32OrHalf(data)) {}
  // sum + term, rounded once to float32 in the conventional arithmetic.
  double Add(double sum, double term) const { return float32_ ? static_cast<float>(sum + term) : sum + term; }
  // A term the kernel forms on its own (an exp), as a float32 kernel holds it.
  double Term(double term) const { return float32_ ? static_cast<float>(term) : term; }

 private:
  bool float32_;
};

// An error naming `what` unless `t` is float32, float16 or bfloat16, the
// types of operators that admit no other (float64 too in the double result,
// KernelContext::widened, which holds those types in float64).
Status RequireFloat32OrHalf(const KernelContext& ctx, const Tensor& t, const char* what);

// An uninitialised array of doubles for the heavy kernels' operands and
// products. Arrays of 2 MiB and more are backed by transparent huge pages
// where the system allows them (madvise): a 1024 x 1024 product then costs
// a few page faults instead of two thousand, which at that size took a
// quarter of MatMul's time. Throws std::bad_alloc like new.
struct FreeDoubles {
  void operator()(double* p) const;
};
using DoubleBuffer = std::unique_ptr<double[], FreeDoubles>;
DoubleBuffer AllocateDoubles(int64_t count);

// All of t's elements as doubles (GetDouble's values), and values written
// into t rounding once each (SetDouble): the bulk conversions of the heavy
// kernels, in parallel chunks of a size fixed by the tensor's. `finite`,
// when given, says whether no value is an infinity or a NaN (the
// MatrixView::known_finite of a product, gemm.h).
DoubleBuffer ReadAllDoubles(const Tensor& t, bool* finite = nullptr);
void WriteAllDoubles(const double* values, Tensor* t);

// Reads a 1-D (or scalar) integer tensor as int64 values.
std::vector<int64_t> ReadInt64s(const Tensor& tensor);

// Wraps a single tensor as the kernel result.
inline StatusOr<std::vector<Value>> Single(Tensor tensor) {
  return std::vector<Value>{Value::FromTensor(std::move(tensor))};
}
inline StatusOr<std::vector<Value>> Single(StatusOr<Tensor> tensor) {
  if (!tensor.ok()) return tensor.status();
  return std::vector<Value>{Value::FromTensor(std::move(tensor).value())};
}

}  // namespace parity::ops

// Returns ctx.Error(...) from the enclosing kernel when `cond` is false.
#define PARITY_KERNEL_CHECK(ctx, cond, ...) \
  do {                                      \
    if (!(cond)) return (ctx).Error(__VA_ARGS__); \
  } while (0)
