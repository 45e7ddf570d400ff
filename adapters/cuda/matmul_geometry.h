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

}  // namespace parity::adapters::cuda
