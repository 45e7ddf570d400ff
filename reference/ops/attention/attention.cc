// Attention (Operators.md, versions 23, 24 and 25): scaled dot-product
// attention with grouped-query heads, a key/value cache, additive or boolean
// masks, causal and sliding-window masking, soft capping and the optional
// QK output. Everything is computed in double and rounded once per output.
//
// The bias sums the attention mask (bool: true -> 0, false -> -inf; its last
// axis padded with -inf/false up to the total sequence length), the causal
// mask (key j allowed iff j <= i + offset), the window (25) and the padding
// from nonpad_kv_seqlen (24), where offset is the past length with a cache,
// nonpad_kv_seqlen[b] - q_len with an external cache, and 0 otherwise
// (attention_problem.h).
//
// Work is split into one task per (batch, query head), run through
// ParallelFor: each task reads only its head's rows in double and writes only
// its head's output rows, so memory grows linearly with the sequence and the
// result is the same for every thread count. A task takes the blocked path
// where it fits and the exact one otherwise (attention_paths.h).
#include <algorithm>
#include <cstring>

#include "reference/core/parallel.h"
#include "reference/ops/attention/attention.h"
#include "reference/ops/attention/attention_paths.h"
#include "reference/ops/common.h"

namespace parity::ops::attention {
namespace {

// Copies rows [0, count) of kv head (b, head) of `from` into `to` from row
// `to_row` of the same head, `to` being 4-D [batch, heads, total, size]:
// bytes as they are when the types agree (no rounding, NaN payloads kept),
// through double otherwise.
void CopyRows(const HeadLayout& from, int64_t b, int64_t head, int64_t count, Tensor* to, int64_t to_row,
              std::vector<double>* scratch) {
  const int64_t size = from.size;
  const int64_t to_start = ((b * from.heads + head) * to->dim(2) + to_row) * size;
  const bool contiguous = !from.three_d;
  const int64_t chunks = contiguous ? 1 : count;
  const int64_t chunk = contiguous ? count * size : size;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t src = from.RowStart(b, head, contiguous ? 0 : c);
    const int64_t dst = to_start + c * chunk;
    if (from.tensor->dtype() == to->dtype()) {
      const size_t width = StorageSize(to->dtype());
      std::memcpy(to->mutable_raw_bytes() + dst * width, from.tensor->raw_bytes() + src * width, chunk * width);
    } else {
      scratch->resize(static_cast<size_t>(chunk));
      from.tensor->ReadDoubles(src, chunk, scratch->data());
      to->WriteDoubles(dst, chunk, scratch->data());
    }
  }
}

// present = past ++ current along the sequence axis, in the type of the
// current input.
StatusOr<Tensor> Present(const KernelContext& ctx, const AttentionProblem& p, const HeadLayout& current,
                         const Tensor* past) {
  PARITY_ASSIGN_OR_RETURN(Tensor present,
                          Allocate(ctx, current.tensor->dtype(), {p.batch, p.kv_heads, p.total, current.size}));
  HeadLayout past_layout;
  if (past) past_layout = HeadLayout{past, p.batch, p.kv_heads, p.past_len, current.size, false};
  ParallelFor(p.batch * p.kv_heads, [&](int64_t task) {
    const int64_t b = task / p.kv_heads, head = task % p.kv_heads;
    std::vector<double> scratch;
    if (past) CopyRows(past_layout, b, head, p.past_len, &present, 0, &scratch);
    CopyRows(current, b, head, current.seq, &present, p.past_len, &scratch);
  });
  return present;
}

}  // namespace

StatusOr<std::vector<Value>> RunAttention(const KernelContext& ctx, AttentionPath path) {
  PARITY_ASSIGN_OR_RETURN(const AttentionProblem p, MakeProblem(ctx));
  const HeadLayout y_layout{nullptr, p.batch, p.q_heads, p.q_len, p.v_size, p.q.three_d};
  const Shape y_shape = p.q.three_d ? Shape{p.batch, p.q_len, p.q_heads * p.v_size}
                                    : Shape{p.batch, p.q_heads, p.q_len, p.v_size};
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, p.q.tensor->dtype(), y_shape));
  Tensor qk_tensor;
  QkOutput qk;
  if (ctx.output_requested(3)) {
    PARITY_ASSIGN_OR_RETURN(qk_tensor, Allocate(ctx, p.q.tensor->dtype(), {p.batch, p.q_heads, p.q_len, p.total}));
    qk = QkOutput{&qk_tensor, p.qk_mode};
  }
  if (path == AttentionPath::kBlocked && qk.tensor) {
    return ctx.Error("the blocked path does not write the QK output (output 3)");
  }
  const OutputRows rows{&y, y_layout};
  // One flag per task, never shared: which heads took the exact path.
  std::vector<char> exact(static_cast<size_t>(p.batch * p.q_heads), 0);
  ParallelFor(p.batch * p.q_heads, [&](int64_t task) {
    const HeadData head = p.ReadHead(task / p.q_heads, task % p.q_heads);
    const bool blocked = path != AttentionPath::kExact && !qk.tensor && BlockedPathFits(p, head);
    if (blocked) {
      AttendHeadBlocked(p, head, rows);
      return;
    }
    exact[static_cast<size_t>(task)] = 1;
    if (path != AttentionPath::kBlocked) AttendHeadExact(p, head, rows, qk);
  });
  if (path == AttentionPath::kBlocked) {
    for (size_t task = 0; task < exact.size(); ++task) {
      if (exact[task]) {
        return ctx.Error("the blocked path does not fit head ", task % p.q_heads, " of batch ", task / p.q_heads,
                         ": a value is not finite or too large");
      }
    }
  }

  std::vector<Value> outputs;
  outputs.push_back(Value::FromTensor(std::move(y)));
  if (ctx.output_count() > 1) {
    if (ctx.output_requested(1)) {
      PARITY_ASSIGN_OR_RETURN(Tensor present_key, Present(ctx, p, p.k, p.past_key));
      PARITY_ASSIGN_OR_RETURN(Tensor present_value, Present(ctx, p, p.v, p.past_value));
      outputs.push_back(Value::FromTensor(std::move(present_key)));
      outputs.push_back(Value::FromTensor(std::move(present_value)));
    } else {
      // Not asked for: placeholders, which the evaluator skips (unnamed outputs).
      outputs.resize(std::min<size_t>(3, ctx.output_count()));
    }
  }
  if (ctx.output_count() > 3) {
    outputs.push_back(qk.tensor ? Value::FromTensor(std::move(qk_tensor)) : Value());
  }
  return outputs;
}

StatusOr<std::vector<Value>> Attention(const KernelContext& ctx) { return RunAttention(ctx, AttentionPath::kAuto); }

}  // namespace parity::ops::attention
