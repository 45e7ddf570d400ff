// cuBLASLt's strided-batched call as its documentation defines it, on the
// host in double, for the device-free tests of the geometries that the
// adapter hands it (lowering_test.cc, quantized_test.cc).
#pragma once

#include <vector>

#include "adapters/cuda/matmul_geometry.h"

namespace parity::adapters::cuda {

// out = alpha * op(first) · op(second) + beta * out, each operand
// column-major (element (r, c) at r + c * ld), op transposing it when its
// layout says so.
inline void EmulateLt(const MatMulGeometry& g, const std::vector<double>& first, const std::vector<double>& second,
                      double alpha, double beta, std::vector<double>& out) {
  auto at = [](const LtOperand& o, const std::vector<double>& data, int64_t batch, int64_t r, int64_t c) {
    // op(X)(r, c) is X(c, r) when transposed.
    return o.transposed ? data[static_cast<size_t>(batch * o.batch_stride + c + r * o.ld)]
                        : data[static_cast<size_t>(batch * o.batch_stride + r + c * o.ld)];
  };
  for (int64_t p = 0; p < g.batch; ++p) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < g.k; ++k) sum += at(g.first, first, p, i, k) * at(g.second, second, p, k, j);
        double& y = out[static_cast<size_t>(p * g.out.batch_stride + i + j * g.out.ld)];
        y = alpha * sum + beta * y;
      }
    }
  }
}

}  // namespace parity::adapters::cuda
