// How MatMul and Gemm map onto one strided-batched cuBLASLt call. cuBLASLt
// reads matrices column-major; a row-major [rows, cols] matrix is the same
// bytes as a column-major [cols, rows] one. So the row-major product
// Y = A · B is computed as the column-major Yᵀ = Bᵀ · Aᵀ: cuBLASLt's first
// operand is B's bytes, its second A's, and its output Y's, with m = N,
// n = M. Pure arithmetic on shapes, so that the device-free tests check it
// (matmul_test.cc runs it through a host emulation of the call).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/cuda/kernel_math.h"
#include "reference/core/status.h"
#include "reference/core/tensor.h"

namespace parity::adapters::cuda {

// One column-major operand of the call: rows x cols, leading dimension ld,
// read transposed when `transposed`, batch entries `batch_stride` elements
// apart (0: one matrix for every entry).
struct LtOperand {
  int64_t rows = 0, cols = 0, ld = 0;
  bool transposed = false;
  int64_t batch_stride = 0;
};

struct MatMulGeometry {
  int64_t m = 0, n = 0, k = 0;  // cuBLASLt's: m = N, n = M
  int64_t batch = 1;
  LtOperand first, second, out;  // first: B's bytes, second: A's, out: Y's
  Shape out_dims;                // Y's shape
  // An operand whose batch dims neither match the output's nor are all 1 is
  // expanded first into a full batch (the run makes that copy): the dims
  // it is read along, in elements.
  std::optional<Shape> expand_a, expand_b;
  std::string Text() const;  // "m=N n=M k=K batch=B ..." for messages and tests
};

// MatMul (numpy semantics: rank-1 operands promoted and their dim dropped
// from the output, batch dims broadcast), or an error naming the shapes.
StatusOr<MatMulGeometry> MatMulGeometryOf(const Shape& a, const Shape& b);

// Gemm: A [M, K] (or [K, M] with trans_a), B [K, N] (or [N, K] with trans_b).
StatusOr<MatMulGeometry> GemmGeometryOf(const Shape& a, const Shape& b, bool trans_a, bool trans_b);

// An 8-bit product (MatMulInteger, QLinearMatMul, a QDQ region) on
// cuBLASLt's int8 kernels. They take the "TN" form, with m, k and every
// leading dim a multiple of 4: B is packed transposed, as [n_pad, k_pad]
// rows, A as [m, k_pad] rows (kernel_math.h, Int8Pack), and the call's
// int32 sums are [m, n_pad] per batch entry. Batch dims may broadcast one
// way only: each operand is one matrix for every entry or one per entry.
struct Int8Geometry {
  int64_t m = 0, n = 0, k = 0, n_pad = 0, k_pad = 0;  // the operator's M, N, K
  int64_t batch = 1, a_matrices = 1, b_matrices = 1;
  Int8Pack a_pack, b_pack;  // from A's and B's bytes
  MatMulGeometry lt;        // the call on the packed operands
  Shape out_dims;
};

// The largest K whose sums of packed products (each at most 128 * 128 in
// magnitude) cuBLASLt's int32 accumulator holds.
inline constexpr int64_t kMaxInt8K = 131068;

// For A and B of MatMulInteger's shapes (flip: the operand is uint8), or an
// error naming what cuBLASLt's int8 path does not take.
StatusOr<Int8Geometry> Int8GeometryOf(const Shape& a, const Shape& b, bool flip_a, bool flip_b);

// A run's scales and zero points as the operator gives them: per tensor,
// B's also per column (n values).
struct Int8Parameters {
  int64_t a_zero = 0;
  std::vector<int64_t> b_zero = {0};
  double x_scale = 1, y_scale = 1, y_zero = 0;
  std::vector<double> w_scale = {1};
};

// The finishing of a product of geometry `g` into `out_type` (int32 for
// kInt32, float32 for kFloat, int8 or uint8 for kQuantize): the zero points
// of the packed operands (a uint8 one 128 less) and the scales. Its b_zero
// and w_scale point nowhere: the run sends `packed_b_zero` and p.w_scale to
// the device and points them there.
Int8Finish Int8FinishOf(const Int8Geometry& g, IntFinish finish, DataType out_type, const Int8Parameters& p,
                        std::vector<int64_t>& packed_b_zero);

}  // namespace parity::adapters::cuda
