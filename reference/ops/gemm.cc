// GemmDouble: fixed output tiles, each one single-threaded dgemm call.
#include "reference/ops/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include "reference/core/parallel.h"

namespace parity::ops {
namespace {

// Output tiles are kTile x kTile. 512 keeps the packing of A and B per
// tile small next to its arithmetic while giving a 1024 x 1024 product four
// tasks: 1024^3 on 2 threads ran at 143 GFLOP/s in 512-tiles, 132 in
// 256-tiles, against 161 for OpenBLAS splitting the call itself.
constexpr int64_t kTile = 512;
// Products below this many multiply-adds run as one call: splitting them
// costs more than it gains.
constexpr int64_t kSplitBelow = int64_t{1} << 22;
// Products below this many multiply-adds take the plain loop: a BLAS call
// costs more than the arithmetic (an elementwise Einsum went from 0.08 s to
// 0.13 s on 10^6 one-element products through dgemm).
constexpr int64_t kBlasFrom = 512;
// The multiply-adds one task of a batch takes on, in whole products.
constexpr int64_t kTaskWork = int64_t{1} << 16;

}  // namespace

// OpenBLAS's pthread build starts a server thread per core when it loads,
// and an idle one spins on sched_yield for about 2^28 cycles before it
// sleeps: on two cores that was about a third of the CPU samples of a short
// MatMul run, taken from the tiles.
// blas_thread_shutdown_ (exported by that build, declared in no header it
// ships) stops them; a call with one thread never starts them again.
extern "C" int blas_thread_shutdown_(void);

namespace {

// OpenBLAS's own threads stay off: the tiles are the parallelism, and a
// BLAS that split a call by the thread count could change sums with it.
void UseOneBlasThread() {
  static std::once_flag once;
  std::call_once(once, [] { UseOneBlasThreadNow(); });
}

// The exponent bits of each value, all set for an infinity or a NaN; a
// branch-free loop the compiler vectorises.
bool HasSpecialBits(const double* values, int64_t count) {
  constexpr uint64_t kExponent = 0x7FF0000000000000ull;
  bool special = false;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    special |= (bits & kExponent) == kExponent;
  }
  return special;
}

bool AllFinite(int64_t rows, int64_t cols, const MatrixView& v) {
  if (v.known_finite) return true;
  // rows x cols of op(M): the stored matrix is cols x rows when transposed.
  const int64_t outer = v.transposed ? cols : rows;
  const int64_t inner = v.transposed ? rows : cols;
  for (int64_t r = 0; r < outer; ++r) {
    if (HasSpecialBits(v.data + r * v.ld, inner)) return false;
  }
  return true;
}

double At(const MatrixView& v, int64_t r, int64_t c) {
  return v.transposed ? v.data[c * v.ld + r] : v.data[r * v.ld + c];
}

// The plain product, k in order: for operands with special values, and for
// products too small for a BLAS call.
void PlainProduct(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t k, const MatrixView& a,
                  const MatrixView& b, double* c, int64_t ldc) {
  for (int64_t i = m0; i < m1; ++i) {
    for (int64_t j = n0; j < n1; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += At(a, i, p) * At(b, p, j);
      c[i * ldc + j] = sum;
    }
  }
}

struct Tiling {
  int64_t rows = 1, cols = 1;  // tiles along m and n
  int64_t count() const { return rows * cols; }
};

Tiling TilesFor(int64_t m, int64_t n, int64_t k) {
  Tiling t;
  if (m * n * k < kSplitBelow) return t;
  t.rows = (m + kTile - 1) / kTile;
  t.cols = (n + kTile - 1) / kTile;
  return t;
}

void RunTile(int64_t tile, const Tiling& tiling, int64_t m, int64_t n, int64_t k, const MatrixView& a,
             const MatrixView& b, double* c, int64_t ldc, bool finite) {
  const int64_t tile_m = (m + tiling.rows - 1) / tiling.rows;
  const int64_t tile_n = (n + tiling.cols - 1) / tiling.cols;
  const int64_t m0 = (tile / tiling.cols) * tile_m, n0 = (tile % tiling.cols) * tile_n;
  const int64_t m1 = std::min(m, m0 + tile_m), n1 = std::min(n, n0 + tile_n);
  if (m0 >= m1 || n0 >= n1) return;
  if (!finite) {
    PlainProduct(m0, m1, n0, n1, k, a, b, c, ldc);
    return;
  }
  const double* a_tile = a.transposed ? a.data + m0 : a.data + m0 * a.ld;
  const double* b_tile = b.transposed ? b.data + n0 * b.ld : b.data + n0;
  cblas_dgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans, b.transposed ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m1 - m0), static_cast<blasint>(n1 - n0), static_cast<blasint>(k), 1.0, a_tile,
              static_cast<blasint>(std::max<int64_t>(a.ld, 1)), b_tile,
              static_cast<blasint>(std::max<int64_t>(b.ld, 1)), 0.0, c + m0 * ldc + n0,
              static_cast<blasint>(std::max<int64_t>(ldc, 1)));
}

void Gemm(int64_t m, int64_t n, int64_t k, const MatrixView& a, const MatrixView& b, double* c, int64_t ldc,
          bool parallel) {
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0);
    return;
  }
  UseOneBlasThread();
  // dgemm takes 32-bit sizes (Debian's OpenBLAS is LP64); larger ones, which
  // the allocation limit all but rules out, take the plain loop.
  const bool fits = std::max({k, a.ld, b.ld, ldc}) <= INT_MAX;
  const bool finite = fits && m * n * k >= kBlasFrom && AllFinite(m, k, a) && AllFinite(k, n, b);
  const Tiling tiling = TilesFor(m, n, k);
  auto run = [&](int64_t tile) { RunTile(tile, tiling, m, n, k, a, b, c, ldc, finite); };
  if (parallel) {
    ParallelFor(tiling.count(), run);
  } else {
    for (int64_t t = 0; t < tiling.count(); ++t) run(t);
  }
}

}  // namespace

bool HoldsSpecialValue(const double* values, int64_t count) { return HasSpecialBits(values, count); }

void GemmInOrder(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, double* c, int64_t ldc,
                 bool float32_steps) {
  if (m <= 0 || n <= 0) return;
  // B's rows, contiguous: a transposed B is laid out once.
  std::vector<double> b_rows;
  const double* rows = b.data;
  int64_t row_stride = b.ld;
  if (b.transposed) {
    b_rows.resize(static_cast<size_t>(k * n));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) b_rows[static_cast<size_t>(p * n + j)] = b.data[j * b.ld + p];
    rows = b_rows.data();
    row_stride = n;
  }
  // A task is 16 rows of C; within it, columns go in blocks of 256 so that
  // the 16 partial rows stay in cache while each row of B passes once.
  constexpr int64_t kRowsPerTask = 16;
  constexpr int64_t kColumnBlock = 256;
  ParallelFor((m + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t task) {
    const int64_t i0 = task * kRowsPerTask, i1 = std::min(m, i0 + kRowsPerTask);
    for (int64_t i = i0; i < i1; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0);
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
      const int64_t width = std::min(kColumnBlock, n - j0);
      for (int64_t p = 0; p < k; ++p) {
        const double* y = rows + p * row_stride + j0;
        for (int64_t i = i0; i < i1; ++i) {
          const double x = At(a, i, p);
          double* out = c + i * ldc + j0;
          if (float32_steps) {
            for (int64_t j = 0; j < width; ++j) out[j] = static_cast<float>(out[j] + x * y[j]);
          } else {
            for (int64_t j = 0; j < width; ++j) out[j] = out[j] + x * y[j];
          }
        }
      }
    }
  });
}

void UseOneBlasThreadNow() {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
}

void GemmDouble(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, double* c, int64_t ldc) {
  Gemm(m, n, k, a, b, c, ldc, true);
}

void GemmDoubleSerial(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, double* c, int64_t ldc) {
  Gemm(m, n, k, a, b, c, ldc, false);
}

void GemmDoubleBatched(int64_t count, int64_t m, int64_t n, int64_t k,
                       const std::function<GemmOperands(int64_t)>& operands) {
  const int64_t work = std::max<int64_t>(1, m * n * k);
  const int64_t per_task = std::max<int64_t>(1, kTaskWork / work);
  ParallelFor((count + per_task - 1) / per_task, [&](int64_t task) {
    const int64_t end = std::min(count, (task + 1) * per_task);
    for (int64_t i = task * per_task; i < end; ++i) {
      const GemmOperands o = operands(i);
      GemmDouble(m, n, k, o.a, o.b, o.c, o.ldc);
    }
  });
}

std::string BlasDescription() {
  // The config text starts with the library's name and version.
  std::string s = "OpenBLAS";
  if (const char* config = openblas_get_config()) s = config;
  if (const char* core = openblas_get_corename()) s += std::string(" (core ") + core + ")";
  return s;
}

}  // namespace parity::ops
