// The blocked path of Attention (attention_paths.h): for each block of query
// rows, S = Q_blk K_blk^T on GemmDoubleSerial for each block of keys that a
// row of it may see, scaled, capped and biased as the exact path does, then
// an online softmax in double (a running maximum and sum per row; the
// accumulator of P V rescaled when the maximum grows) and P_blk V_blk on
// GemmDoubleSerial. Each row is divided by its sum once at the end and
// rounded once to Y's type.
//
// The blocks lie on a fixed grid of the problem's shape, and a head runs on
// one thread in that order, so the sums of every element are the same for
// every thread count.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "reference/ops/attention/attention_paths.h"
#include "reference/ops/gemm.h"

namespace parity::ops::attention {
namespace {

// Query rows x keys of one block. 64 x 128 keeps S, the exponentials and
// the accumulator in the caches and wastes a quarter of a diagonal block
// under a causal mask; the products still run near dgemm's small-matrix rate.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 128;

// Every score, bias and accumulated value stays below this magnitude, far
// from DBL_MAX (1.8e308): no product or sum can overflow to an infinity the
// exact path would not have.
constexpr double kMagnitudeLimit = 1e300;

// The largest |x|, or +inf if some x is an infinity or a NaN.
double MaxMagnitude(const std::vector<double>& values) {
  double largest = 0.0;
  bool finite = true;
  for (double x : values) {
    const double a = std::fabs(x);
    finite &= a <= DBL_MAX;  // false for NaN too
    largest = a > largest ? a : largest;
  }
  return finite ? largest : HUGE_VAL;
}

// Running state of one query block: per row the largest biased score seen
// (row_max), the sum of exp(score - row_max) (row_sum) and the unnormalised
// P V (acc, rows x v_size).
struct BlockState {
  std::vector<double> row_max, row_sum, acc;
  void Reset(int64_t rows, int64_t v_size) {
    std::fill(row_max.begin(), row_max.begin() + rows, kNegInf);
    std::fill(row_sum.begin(), row_sum.begin() + rows, 0.0);
    std::fill(acc.begin(), acc.begin() + rows * v_size, 0.0);
  }
};

}  // namespace

bool BlockedPathFits(const AttentionProblem& p, const HeadData& head) {
  if (!std::isfinite(p.scale) || !std::isfinite(p.softcap)) return false;
  if (!p.mask.BiasesBelow(kMagnitudeLimit)) return false;
  const double q = MaxMagnitude(head.q), k = MaxMagnitude(head.k), v = MaxMagnitude(head.v);
  // |score| <= head_size * max|q| * max|k| * |scale|; a soft cap only makes
  // it smaller. Weights are at most 1, so |acc| <= total * max|v|. An
  // infinite or NaN operand makes a bound infinite.
  const double score_bound = static_cast<double>(p.head_size) * q * k * std::fabs(p.scale);
  const double acc_bound = static_cast<double>(p.total) * v;
  return score_bound < kMagnitudeLimit && acc_bound < kMagnitudeLimit && q <= DBL_MAX && k <= DBL_MAX &&
         v <= DBL_MAX;
}

void AttendHeadBlocked(const AttentionProblem& p, const HeadData& head, const OutputRows& y) {
  const int64_t b = head.b, h = head.h, dk = p.head_size, dv = p.v_size, total = p.total;
  std::vector<double> s(static_cast<size_t>(kQueryBlock * kKeyBlock));
  std::vector<double> product(static_cast<size_t>(kQueryBlock * dv)), out(static_cast<size_t>(kQueryBlock * dv));
  std::vector<double> bias(static_cast<size_t>(kKeyBlock));
  std::vector<KeyRange> ranges(static_cast<size_t>(kQueryBlock));
  BlockState state;
  state.row_max.resize(static_cast<size_t>(kQueryBlock));
  state.row_sum.resize(static_cast<size_t>(kQueryBlock));
  state.acc.resize(static_cast<size_t>(kQueryBlock * dv));

  for (int64_t i0 = 0; i0 < p.q_len; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, p.q_len - i0);
    // The keys some row of the block may see; blocks outside add nothing.
    int64_t first = total, last = 0;
    for (int64_t r = 0; r < rows; ++r) {
      ranges[r] = p.AllowedKeys(b, i0 + r);
      if (ranges[r].lo < ranges[r].hi) first = std::min(first, ranges[r].lo), last = std::max(last, ranges[r].hi);
    }
    state.Reset(rows, dv);
    for (int64_t j0 = first < last ? first / kKeyBlock * kKeyBlock : total; j0 < last; j0 += kKeyBlock) {
      const int64_t cols = std::min(kKeyBlock, total - j0);
      GemmDoubleSerial(rows, cols, dk, MatrixView{head.q.data() + i0 * dk, dk, false},
                       MatrixView{head.k.data() + j0 * dk, dk, true}, s.data(), kKeyBlock);
      for (int64_t r = 0; r < rows; ++r) {
        double* row = s.data() + r * kKeyBlock;
        // Columns [a, e) are allowed; the rest weigh exactly 0 (their bias is -inf).
        const int64_t a = std::clamp(ranges[r].lo - j0, int64_t{0}, cols);
        const int64_t e = std::clamp(ranges[r].hi - j0, a, cols);
        std::fill(row, row + a, 0.0);
        std::fill(row + e, row + cols, 0.0);
        if (a == e) continue;
        for (int64_t c = a; c < e; ++c) row[c] *= p.scale;
        if (p.softcap != 0.0) {
          for (int64_t c = a; c < e; ++c) row[c] = p.softcap * std::tanh(row[c] / p.softcap);
        }
        if (p.mask.present()) {
          p.mask.BiasRow(b, h, i0 + r, j0 + a, j0 + e, bias.data());
          for (int64_t c = a; c < e; ++c) row[c] += bias[c - a];
        }
        double block_max = kNegInf;
        for (int64_t c = a; c < e; ++c) block_max = row[c] > block_max ? row[c] : block_max;
        const double old_max = state.row_max[r];
        const double new_max = std::max(old_max, block_max);
        if (new_max == kNegInf) {  // every key so far masked by the attention mask
          std::fill(row + a, row + e, 0.0);
          continue;
        }
        double sum = 0.0;
        for (int64_t c = a; c < e; ++c) {
          row[c] = std::exp(row[c] - new_max);
          sum += row[c];
        }
        if (new_max != old_max && old_max != kNegInf) {
          // Earlier blocks were weighed against a smaller maximum.
          const double rescale = std::exp(old_max - new_max);
          state.row_sum[r] *= rescale;
          double* acc = state.acc.data() + r * dv;
          for (int64_t d = 0; d < dv; ++d) acc[d] *= rescale;
        }
        state.row_sum[r] += sum;
        state.row_max[r] = new_max;
      }
      GemmDoubleSerial(rows, dv, cols, MatrixView{s.data(), kKeyBlock, false},
                       MatrixView{head.v.data() + j0 * dv, dv, false}, product.data(), dv);
      for (int64_t x = 0; x < rows * dv; ++x) state.acc[x] += product[x];
    }
    // A row with no allowed key has a zero sum and gives zeros.
    for (int64_t r = 0; r < rows; ++r) {
      const double sum = state.row_sum[r];
      for (int64_t d = 0; d < dv; ++d) out[r * dv + d] = sum > 0.0 ? state.acc[r * dv + d] / sum : 0.0;
    }
    y.Write(b, h, i0, rows, out.data());
  }
}

}  // namespace parity::ops::attention
