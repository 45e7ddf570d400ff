// The exact path of Attention (attention_paths.h): one query row at a time,
// every step of the spec's function body in double, in its order:
//   scores = (Q K^T) * scale; capped = softcap * tanh(scores / softcap);
//   biased = capped + bias; P = softmax(biased) with a fully masked row
//   (its bias is -inf everywhere) giving zeros; Y = P V.
// Nothing is skipped, so a NaN or an infinity anywhere in a head reaches its
// outputs exactly as the body's MatMul and Softmax would carry it (a NaN
// score under a -inf bias stays NaN; a zero weight times an infinite value is
// NaN).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/attention/attention_paths.h"

namespace parity::ops::attention {

void AttendHeadExact(const AttentionProblem& p, const HeadData& head, const OutputRows& y, const QkOutput& qk) {
  const int64_t b = head.b, h = head.h, total = p.total, dk = p.head_size, dv = p.v_size;
  const size_t n = static_cast<size_t>(total);
  std::vector<double> scores(n), capped(n), biased(n), probs(n), y_row(static_cast<size_t>(dv));
  for (int64_t i = 0; i < p.q_len; ++i) {
    const double* q_row = head.q + i * dk;
    const KeyRange allowed = p.AllowedKeys(b, i);
    double row_bias_max = kNegInf;
    for (int64_t j = 0; j < total; ++j) {
      const double* k_row = head.k + j * dk;
      double dot = 0.0;
      for (int64_t d = 0; d < dk; ++d) dot += q_row[d] * k_row[d];
      const size_t jj = static_cast<size_t>(j);
      scores[jj] = dot * p.scale;
      capped[jj] = p.softcap != 0.0 ? p.softcap * std::tanh(scores[jj] / p.softcap) : scores[jj];
      double add = p.mask.Bias(b, h, i, j);
      // One -inf for any number of the causal, window and padding masks:
      // x + -inf + -inf is x + -inf for every x, NaN and +inf included.
      if (j < allowed.lo || j >= allowed.hi) add += kNegInf;
      biased[jj] = capped[jj] + add;
      // The body's ReduceMax of the bias: a NaN in it is the maximum, so the
      // row is not fully masked and its softmax carries the NaN.
      row_bias_max = std::isnan(add) || std::isnan(row_bias_max) ? std::numeric_limits<double>::quiet_NaN()
                                                                 : std::max(row_bias_max, add);
    }
    // Softmax; a row with no allowed key (its bias all -inf) is all zeros.
    const bool fully_masked = total == 0 || (std::isinf(row_bias_max) && row_bias_max < 0);
    double max_score = kNegInf;
    for (double s : biased) {
      max_score = std::isnan(s) || std::isnan(max_score) ? std::numeric_limits<double>::quiet_NaN()
                                                         : std::max(max_score, s);
    }
    if (std::isinf(max_score) && max_score < 0) max_score = 0.0;
    double sum = 0.0;
    for (size_t j = 0; j < n; ++j) {
      probs[j] = std::exp(biased[j] - max_score);
      sum += probs[j];
    }
    if (sum == 0.0) sum = 1.0;
    for (double& prob : probs) prob = fully_masked ? 0.0 : prob / sum;

    if (qk.tensor) {
      const std::vector<double>& chosen = qk.mode == 0 ? scores : qk.mode == 1 ? capped : qk.mode == 2 ? biased : probs;
      qk.tensor->WriteDoubles(((b * p.q_heads + h) * p.q_len + i) * total, total, chosen.data());
    }
    for (int64_t d = 0; d < dv; ++d) {
      double acc = 0.0;
      for (int64_t j = 0; j < total; ++j) acc += probs[static_cast<size_t>(j)] * head.v[j * dv + d];
      y_row[static_cast<size_t>(d)] = acc;
    }
    y.Write(b, h, i, 1, y_row.data());
  }
}

}  // namespace parity::ops::attention
