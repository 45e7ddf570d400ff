// The parts of one Attention node (attention.cc) that its two paths share:
// where each head's rows lie in Q, K, V and the caches, the additive bias of
// the masks, and the outputs written row by row. Built once per node, then
// read by every (batch, query head) task at once: nothing here is written
// after MakeProblem returns, except the output tensors, each task writing
// rows no other task writes.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "reference/eval/kernel.h"

namespace parity::ops::attention {

inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The rows of one input: 4-D [batch, heads, seq, size] as it is, or 3-D
// [batch, seq, heads * size] split into `heads` heads.
struct HeadLayout {
  const Tensor* tensor = nullptr;
  int64_t batch = 0, heads = 0, seq = 0, size = 0;
  bool three_d = false;

  // Flat index of element 0 of row s of head (b, h).
  int64_t RowStart(int64_t b, int64_t h, int64_t s) const {
    return three_d ? (b * seq + s) * heads * size + h * size : ((b * heads + h) * seq + s) * size;
  }
  // Rows [s0, s0 + count) of head (b, h) as doubles, `size` per row.
  void ReadRows(int64_t b, int64_t h, int64_t s0, int64_t count, double* out) const;
};

// The attention mask broadcast right-aligned to [batch, q_heads, q_len,
// total] after padding its last axis to `total` (bool: false, numeric: -inf).
class MaskReader {
 public:
  static StatusOr<MaskReader> Make(const KernelContext& ctx, const Tensor* mask, const Shape& target);
  bool present() const { return mask_ != nullptr; }
  // The additive bias of the mask at (b, h, i, j).
  double Bias(int64_t b, int64_t h, int64_t i, int64_t j) const;
  // Bias(b, h, i, j) for j in [j0, j1), into out[0, j1 - j0).
  void BiasRow(int64_t b, int64_t h, int64_t i, int64_t j0, int64_t j1, double* out) const;
  // Whether every bias is -inf or finite and below `limit` in magnitude:
  // then adding -inf for a masked key always gives -inf, never NaN
  // (+inf - inf), and a biased score cannot overflow, which the blocked path
  // needs.
  bool BiasesBelow(double limit) const { return !has_nan_or_positive_inf_ && max_finite_magnitude_ < limit; }

 private:
  int64_t RowIndex(int64_t b, int64_t h, int64_t i) const;
  const Tensor* mask_ = nullptr;
  bool is_bool_ = false;
  bool has_nan_or_positive_inf_ = false;
  double max_finite_magnitude_ = 0.0;
  std::vector<int64_t> dims_;
};

// Keys [lo, hi) are the ones the causal mask, the window and
// nonpad_kv_seqlen leave to a query row; every other key has -inf added.
struct KeyRange {
  int64_t lo = 0, hi = 0;
};

// One head's inputs in double: the Q rows of (b, h) and the K and V rows
// (past ++ current) of its kv head, row-major, in one buffer of the task
// that reads them (AttentionProblem::ReadHead).
struct HeadData {
  int64_t b = 0, h = 0;
  int64_t q_count = 0, k_count = 0, v_count = 0;  // elements
  const double* q = nullptr;  // q_len x head_size
  const double* k = nullptr;  // total x head_size
  const double* v = nullptr;  // total x v_size
  std::unique_ptr<double[]> storage;
};

struct AttentionProblem {
  HeadLayout q, k, v;              // the current inputs (k, v: kv heads)
  const Tensor* past_key = nullptr;  // [batch, kv_heads, past_len, size], or null
  const Tensor* past_value = nullptr;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, past_len = 0, total = 0;
  int64_t head_size = 0, v_size = 0;  // of Q/K rows and of V rows
  MaskReader mask;
  bool causal = false;
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
  std::vector<int64_t> nonpad_lens;            // empty without nonpad_kv_seqlen
  double scale = 1.0, softcap = 0.0;
  int64_t qk_mode = 0;  // qk_matmul_output_mode

  int64_t group() const { return q_heads / kv_heads; }
  // Position of query 0 among the keys, for the causal mask and the window:
  // the past length with a cache, nonpad_kv_seqlen[b] - q_len with an
  // external one, 0 otherwise.
  int64_t Offset(int64_t b) const;
  KeyRange AllowedKeys(int64_t b, int64_t i) const;
  // The inputs of query head (b, h): its Q rows and its kv head's K and V
  // rows, past rows then current ones.
  HeadData ReadHead(int64_t b, int64_t h) const;
};

// Validates the node's inputs and attributes (errors name what is wrong)
// and describes the problem. Reads no element of Q, K or V.
StatusOr<AttentionProblem> MakeProblem(const KernelContext& ctx);

// Where a head's output rows go: Y in Q's layout (3-D [batch, q_len,
// heads * v_size] or 4-D), each row rounded once to Y's type.
struct OutputRows {
  Tensor* y = nullptr;
  HeadLayout layout;
  void Write(int64_t b, int64_t h, int64_t i0, int64_t count, const double* rows) const;
};

}  // namespace parity::ops::attention
