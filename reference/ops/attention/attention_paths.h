// The two ways Attention computes one (batch, query head): the exact path,
// row by row in the order of the spec's function body, which propagates
// every NaN and infinity as that body does; and the blocked path, GEMMs on
// query x key blocks with an online softmax, taken only where it cannot
// differ from the exact path except by rounding in double (BlockedPathFits).
#pragma once

#include <vector>

#include "reference/ops/attention/attention_problem.h"

namespace parity::ops::attention {

// Which path Attention takes. kAuto: the blocked path for every head it
// fits, the exact path for the rest and whenever the QK output is asked
// for. kExact and kBlocked force one path (tests compare them); kBlocked
// fails on a node where some head does not fit it.
enum class AttentionPath { kAuto, kExact, kBlocked };

StatusOr<std::vector<Value>> RunAttention(const KernelContext& ctx, AttentionPath path);

// Query rows x keys of one block of the blocked path. 256 x 256 measured
// fastest of the sizes from 64 to 512 (attention_bench.cc): fewer, larger
// dgemm calls spread their packing and GemmDouble's scan for special values
// over more work, while larger blocks lose again to the part of a diagonal
// block that a causal mask leaves out but the product still computes.
inline constexpr int64_t kQueryBlock = 256;
inline constexpr int64_t kKeyBlock = 256;

// Where the QK output (output 3) goes, in `mode` (qk_matmul_output_mode):
// 0 the scaled product, 1 after the soft cap, 2 after the bias, 3 the
// softmax.
struct QkOutput {
  Tensor* tensor = nullptr;
  int64_t mode = 0;
};

// The exact path over the rows of one head; writes Y's rows (and the QK
// output's, when `qk` has a tensor).
void AttendHeadExact(const AttentionProblem& p, const HeadData& head, const OutputRows& y, const QkOutput& qk);

// Whether the blocked path gives this head the exact path's result up to
// rounding: everything it reads is finite, no product or sum can overflow,
// and a masked key adds exactly -inf (MaskReader). Then a score is never
// NaN, a masked key's weight is exactly 0 and 0 x V is 0, so key blocks
// masked for a whole query block can be left out.
bool BlockedPathFits(const AttentionProblem& p, const HeadData& head);

// The blocked path over the rows of one head (BlockedPathFits must hold).
void AttendHeadBlocked(const AttentionProblem& p, const HeadData& head, const OutputRows& y);

}  // namespace parity::ops::attention
