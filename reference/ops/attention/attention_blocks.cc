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
#include <memory>

#include "reference/ops/attention/attention_paths.h"
#include "reference/ops/gemm.h"

namespace parity::ops::attention {
namespace {

// Every score, bias and accumulated value stays below this magnitude, far
// from DBL_MAX (1.8e308): no product or sum can overflow to an infinity the
// exact path would not have.
constexpr double kMagnitudeLimit = 1e300;

// The largest |x| of x[0, count), or +inf if some x is an infinity or a NaN
// (x * 0 is NaN exactly then). Four lanes, so that the comparisons need not
// wait for one another.
double MaxMagnitude(const double* x, int64_t count) {
  double largest[4] = {0.0, 0.0, 0.0, 0.0}, poison[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    for (int lane = 0; lane < 4; ++lane) {
      const double a = std::fabs(x[i + lane]);
      largest[lane] = a > largest[lane] ? a : largest[lane];
      poison[lane] += x[i + lane] * 0.0;
    }
  }
  for (; i < count; ++i) {
    largest[0] = std::max(largest[0], std::fabs(x[i]));
    poison[0] += x[i] * 0.0;
  }
  if (!(poison[0] + poison[1] + poison[2] + poison[3] == 0.0)) return HUGE_VAL;
  return std::max(std::max(largest[0], largest[1]), std::max(largest[2], largest[3]));
}

// The largest of row[a, e), in four lanes.
double RowMax(const double* row, int64_t a, int64_t e) {
  double top[4] = {kNegInf, kNegInf, kNegInf, kNegInf};
  int64_t c = a;
  for (; c + 4 <= e; c += 4) {
    for (int lane = 0; lane < 4; ++lane) top[lane] = row[c + lane] > top[lane] ? row[c + lane] : top[lane];
  }
  for (; c < e; ++c) top[0] = row[c] > top[0] ? row[c] : top[0];
  return std::max(std::max(top[0], top[1]), std::max(top[2], top[3]));
}

// The buffers of one task, sized for its head's blocks and left
// uninitialised: every element is written before it is read.
struct Scratch {
  Scratch(int64_t rows, int64_t cols, int64_t v_size)
      : scores(new double[static_cast<size_t>(rows * cols)]),
        product(new double[static_cast<size_t>(rows * v_size)]),
        acc(new double[static_cast<size_t>(rows * v_size)]),
        bias(new double[static_cast<size_t>(cols)]),
        row_max(new double[static_cast<size_t>(rows)]),
        row_sum(new double[static_cast<size_t>(rows)]),
        ranges(new KeyRange[static_cast<size_t>(rows)]) {}
  // S (rows x cols of the block), then the weights exp(S - row_max) in place.
  std::unique_ptr<double[]> scores;
  // P_blk V_blk, and the running sum of those products rescaled to the
  // current row maxima (rows x v_size).
  std::unique_ptr<double[]> product, acc;
  std::unique_ptr<double[]> bias;              // one row of the mask's bias
  std::unique_ptr<double[]> row_max, row_sum;  // per row: largest biased score, sum of weights
  std::unique_ptr<KeyRange[]> ranges;          // per row: the keys it may see
};

// Turns the scores of columns [a, e) of one row into weights against the
// row's running maximum (rescaling what the row has accumulated when the
// maximum grows); the other columns of the block get weight 0.
void WeighRow(const AttentionProblem& p, int64_t b, int64_t h, int64_t i, int64_t j0, int64_t a, int64_t e,
              int64_t cols, double* row, double* bias, double* row_max, double* row_sum, double* acc) {
  std::fill(row, row + a, 0.0);
  std::fill(row + e, row + cols, 0.0);
  if (a == e) return;
  // The exact path's steps, in its order: scale, cap, bias.
  for (int64_t c = a; c < e; ++c) row[c] *= p.scale;
  if (p.softcap != 0.0) {
    for (int64_t c = a; c < e; ++c) row[c] = p.softcap * std::tanh(row[c] / p.softcap);
  }
  if (p.mask.present()) {
    p.mask.BiasRow(b, h, i, j0 + a, j0 + e, bias);
    for (int64_t c = a; c < e; ++c) row[c] += bias[c - a];
  }
  const double old_max = *row_max;
  const double new_max = std::max(old_max, RowMax(row, a, e));
  if (new_max == kNegInf) {  // every key so far masked by the attention mask
    std::fill(row + a, row + e, 0.0);
    return;
  }
  double sum = 0.0;
  for (int64_t c = a; c < e; ++c) {
    row[c] = std::exp(row[c] - new_max);
    sum += row[c];
  }
  if (new_max != old_max && old_max != kNegInf) {
    // Earlier blocks were weighed against a smaller maximum.
    const double rescale = std::exp(old_max - new_max);
    *row_sum *= rescale;
    for (int64_t d = 0; d < p.v_size; ++d) acc[d] *= rescale;
  }
  *row_sum += sum;
  *row_max = new_max;
}

}  // namespace

bool BlockedPathFits(const AttentionProblem& p, const HeadData& head) {
  if (!std::isfinite(p.scale) || !std::isfinite(p.softcap)) return false;
  if (!p.mask.BiasesBelow(kMagnitudeLimit)) return false;
  const double q = MaxMagnitude(head.q, head.q_count), k = MaxMagnitude(head.k, head.k_count),
               v = MaxMagnitude(head.v, head.v_count);
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
  Scratch scratch(std::min(kQueryBlock, p.q_len), std::max<int64_t>(std::min(kKeyBlock, total), 1), dv);
  double* const acc = scratch.acc.get();
  for (int64_t i0 = 0; i0 < p.q_len; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, p.q_len - i0);
    // The keys some row of the block may see; key blocks outside add nothing.
    int64_t first = total, last = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const KeyRange range = scratch.ranges[r] = p.AllowedKeys(b, i0 + r);
      if (range.lo < range.hi) first = std::min(first, range.lo), last = std::max(last, range.hi);
    }
    std::fill(scratch.row_max.get(), scratch.row_max.get() + rows, kNegInf);
    std::fill(scratch.row_sum.get(), scratch.row_sum.get() + rows, 0.0);
    std::fill(acc, acc + rows * dv, 0.0);
    for (int64_t j0 = first < last ? first / kKeyBlock * kKeyBlock : total; j0 < last; j0 += kKeyBlock) {
      const int64_t cols = std::min(kKeyBlock, total - j0);
      double* const scores = scratch.scores.get();
      // The blocked path runs only on finite heads (attention_paths.h), and
      // the weights are exps of finite scores: no operand needs a scan.
      GemmDoubleSerial(rows, cols, dk, MatrixView{head.q + i0 * dk, dk, false, true},
                       MatrixView{head.k + j0 * dk, dk, true, true}, scores, cols);
      for (int64_t r = 0; r < rows; ++r) {
        // Columns [a, e) are allowed; the rest weigh exactly 0 (their bias is -inf).
        const int64_t a = std::clamp(scratch.ranges[r].lo - j0, int64_t{0}, cols);
        const int64_t e = std::clamp(scratch.ranges[r].hi - j0, a, cols);
        WeighRow(p, b, h, i0 + r, j0, a, e, cols, scores + r * cols, scratch.bias.get(), &scratch.row_max[r],
                 &scratch.row_sum[r], acc + r * dv);
      }
      double* const product = scratch.product.get();
      GemmDoubleSerial(rows, dv, cols, MatrixView{scores, cols, false, true},
                       MatrixView{head.v + j0 * dv, dv, false, true}, product, dv);
      for (int64_t x = 0; x < rows * dv; ++x) acc[x] += product[x];
    }
    // Each row divided by its sum, in place; a row with no allowed key has a
    // zero sum and gives zeros.
    for (int64_t r = 0; r < rows; ++r) {
      const double sum = scratch.row_sum[r];
      double* out = acc + r * dv;
      if (sum > 0.0) {
        for (int64_t d = 0; d < dv; ++d) out[d] /= sum;
      } else {
        std::fill(out, out + dv, 0.0);
      }
    }
    y.Write(b, h, i0, rows, acc);
  }
}

}  // namespace parity::ops::attention
