// The double-precision matrix product under the reference's heavy operators
// (MatMul, Gemm, Conv, ConvTranspose, Einsum, the recurrent cells and
// Attention): OpenBLAS's dgemm on tiles of the output, run through
// ParallelFor (reference/core/parallel.h).
//
// Ground truth (spec/reference.md, "Matrix products"): every product and sum
// is in double (the BLAS may fuse a product into its sum, one rounding
// fewer); the caller rounds once to the output type. The tiles depend on
// (m, n, k) alone and each is one single-threaded dgemm call, so every
// element is summed in the same order for every thread count: results are
// bit-identical across --threads. Products under 512 multiply-adds (an
// elementwise product, a short dot) take the plain loop in k order, which
// costs less than a BLAS call. When A or B holds an infinity or a NaN the
// product is computed by the plain loop in k order instead, so IEEE special
// values propagate exactly as the operator text says, whatever the BLAS
// does with them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace parity::ops {

// A row-major matrix operand: element (r, c) of op(M) is data[r * ld + c],
// or data[c * ld + r] when transposed.
struct MatrixView {
  const double* data = nullptr;
  int64_t ld = 0;
  bool transposed = false;
  // The caller has checked that the operand holds no infinity or NaN
  // (HoldsSpecialValue), so the product skips its own scan: for operands
  // built from checked data, such as Conv's im2col columns.
  bool known_finite = false;
};

// True when some of the `count` values is an infinity or a NaN.
bool HoldsSpecialValue(const double* values, int64_t count);

// C[m x n] = op(A)[m x k] * op(B)[k x n]; C is row-major with leading
// dimension ldc and is overwritten (k = 0 gives zeros).
void GemmDouble(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, double* c, int64_t ldc);

// The same product on the calling thread only, one tile after another: for
// callers that already run inside a ParallelFor task of their own. Gives the
// same bits as GemmDouble.
void GemmDoubleSerial(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, double* c, int64_t ldc);

// One product of a batch: C = op(A) op(B), C row-major with leading dimension ldc.
struct GemmOperands {
  MatrixView a, b;
  double* c = nullptr;
  int64_t ldc = 0;
};

// `count` products of one shape (MatMul's and Einsum's batches): tasks of
// whole products, about 2^16 multiply-adds each, fixed by the shape; each
// product still splits into its own tiles. operands(i) gives product i.
void GemmDoubleBatched(int64_t count, int64_t m, int64_t n, int64_t k,
                       const std::function<GemmOperands(int64_t)>& operands);

// The conventional arithmetic's product (spec/tolerance.md, "Error
// budgets"): each C[i][j] is the sum over k in order, every partial sum
// rounded to float32 when `float32_steps` (as ops::Summation does), else in
// double. The same bits as that one-element-at-a-time loop, but rows of B
// are streamed so that the sums of a row of C advance together; rows of C
// are split into tasks of fixed size. No BLAS: its order is not this one.
void GemmInOrder(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, double* c, int64_t ldc,
                 bool float32_steps);

// Sets OpenBLAS to one thread and stops its idle server threads, as the
// reference runs it; for a benchmark that has just timed OpenBLAS's own
// threads. Not safe while a product is running.
void UseOneBlasThreadNow();

// The BLAS in use, for reports and benchmarks: "OpenBLAS 0.3.21 ... (core)".
std::string BlasDescription();

}  // namespace parity::ops
