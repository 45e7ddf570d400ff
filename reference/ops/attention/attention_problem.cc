// Validation of an Attention node and the shared readers of its inputs
// (attention_problem.h).
#include "reference/ops/attention/attention_problem.h"

#include <algorithm>
#include <cmath>

#include "reference/ops/common.h"

namespace parity::ops::attention {
namespace {

StatusOr<const Tensor*> OptionalTensor(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return static_cast<const Tensor*>(nullptr);
  return ctx.RequireTensor(i);
}

StatusOr<HeadLayout> LayoutOf(const KernelContext& ctx, const Tensor& t, int64_t num_heads, const char* name) {
  HeadLayout h;
  h.tensor = &t;
  if (t.rank() == 4) {
    h.batch = t.dim(0), h.heads = t.dim(1), h.seq = t.dim(2), h.size = t.dim(3);
    return h;
  }
  if (t.rank() != 3) return ctx.Error(name, " must be 3-D or 4-D, got ", t.Description());
  if (num_heads <= 0) return ctx.Error("3-D inputs need positive q_num_heads and kv_num_heads attributes");
  if (t.dim(2) % num_heads != 0) {
    return ctx.Error(name, " hidden size ", t.dim(2), " is not a multiple of ", num_heads, " heads");
  }
  h.three_d = true;
  h.batch = t.dim(0), h.heads = num_heads, h.seq = t.dim(1), h.size = t.dim(2) / num_heads;
  return h;
}

Status CheckPast(const KernelContext& ctx, const Tensor* past, const HeadLayout& current, const char* name) {
  if (!past) return Status::Ok();
  if (past->rank() != 4 || past->dim(0) != current.batch || past->dim(1) != current.heads ||
      past->dim(3) != current.size) {
    return ctx.Error(name, " ", past->Description(), " does not match [", current.batch, ", ", current.heads,
                     ", past, ", current.size, "]");
  }
  return Status::Ok();
}

// a + b, or the int64 bound it passes: nonpad_kv_seqlen and the window
// sizes are free int64 values, and a key range only needs their order.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// Past rows then current rows of kv head (b, head) into `out`.
void Gather(const HeadLayout& current, const Tensor* past, int64_t past_len, int64_t b, int64_t head, double* out) {
  const int64_t size = current.size;
  if (past) past->ReadDoubles(((b * current.heads + head) * past_len) * size, past_len * size, out);
  current.ReadRows(b, head, 0, current.seq, out + past_len * size);
}

}  // namespace

void HeadLayout::ReadRows(int64_t b, int64_t h, int64_t s0, int64_t count, double* out) const {
  if (!three_d) {
    tensor->ReadDoubles(RowStart(b, h, s0), count * size, out);
    return;
  }
  for (int64_t s = 0; s < count; ++s) tensor->ReadDoubles(RowStart(b, h, s0 + s), size, out + s * size);
}

void OutputRows::Write(int64_t b, int64_t h, int64_t i0, int64_t count, const double* rows) const {
  const int64_t size = layout.size;
  if (!layout.three_d) {
    y->WriteDoubles(layout.RowStart(b, h, i0), count * size, rows);
    return;
  }
  for (int64_t s = 0; s < count; ++s) y->WriteDoubles(layout.RowStart(b, h, i0 + s), size, rows + s * size);
}

StatusOr<MaskReader> MaskReader::Make(const KernelContext& ctx, const Tensor* mask, const Shape& target) {
  MaskReader r;
  if (!mask) return r;
  r.mask_ = mask;
  r.is_bool_ = mask->dtype() == DataType::kBool;
  if (mask->rank() < 1 || mask->rank() > 4) {
    return ctx.Error("attn_mask must have rank 1 to 4, got ", mask->Description());
  }
  const int64_t offset = 4 - mask->rank();
  r.dims_.assign(4, 1);
  for (int64_t i = 0; i < mask->rank(); ++i) r.dims_[static_cast<size_t>(offset + i)] = mask->dim(i);
  if (r.dims_[3] > target[3]) {
    return ctx.Error("attn_mask's last dimension ", r.dims_[3], " exceeds the total sequence length ", target[3]);
  }
  for (size_t i = 0; i < 3; ++i) {
    if (r.dims_[i] != 1 && r.dims_[i] != target[i]) {
      return ctx.Error("attn_mask ", mask->Description(), " does not broadcast to ", ShapeToString(target));
    }
  }
  if (!r.is_bool_) {
    // In chunks: the mask may be as large as the scores.
    constexpr int64_t kChunk = 4096;
    std::vector<double> chunk(static_cast<size_t>(std::min(kChunk, mask->size())));
    for (int64_t begin = 0; begin < mask->size() && !r.has_nan_or_positive_inf_; begin += kChunk) {
      const int64_t count = std::min(kChunk, mask->size() - begin);
      mask->ReadDoubles(begin, count, chunk.data());
      for (int64_t i = 0; i < count; ++i) {
        const double x = chunk[static_cast<size_t>(i)];
        if (std::isnan(x) || x == -kNegInf) r.has_nan_or_positive_inf_ = true;
        if (std::isfinite(x)) r.max_finite_magnitude_ = std::max(r.max_finite_magnitude_, std::fabs(x));
      }
    }
  }
  return r;
}

int64_t MaskReader::RowIndex(int64_t b, int64_t h, int64_t i) const {
  return (((dims_[0] == 1 ? 0 : b) * dims_[1] + (dims_[1] == 1 ? 0 : h)) * dims_[2] + (dims_[2] == 1 ? 0 : i)) *
         dims_[3];
}

double MaskReader::Bias(int64_t b, int64_t h, int64_t i, int64_t j) const {
  if (!mask_) return 0.0;
  if (j >= dims_[3]) return kNegInf;  // the padded tail
  const int64_t index = RowIndex(b, h, i) + j;
  if (is_bool_) return mask_->GetInt64(index) != 0 ? 0.0 : kNegInf;
  return mask_->GetDouble(index);
}

void MaskReader::BiasRow(int64_t b, int64_t h, int64_t i, int64_t j0, int64_t j1, double* out) const {
  if (!mask_) {
    std::fill(out, out + (j1 - j0), 0.0);
    return;
  }
  const int64_t stored_end = std::max(j0, std::min(j1, dims_[3]));
  const int64_t row = RowIndex(b, h, i);
  if (is_bool_) {
    const uint8_t* bits = mask_->data<uint8_t>() + row;
    for (int64_t j = j0; j < stored_end; ++j) out[j - j0] = bits[j] != 0 ? 0.0 : kNegInf;
  } else {
    mask_->ReadDoubles(row + j0, stored_end - j0, out);
  }
  std::fill(out + (stored_end - j0), out + (j1 - j0), kNegInf);  // the padded tail
}

int64_t AttentionProblem::Offset(int64_t b) const {
  return !nonpad_lens.empty() && !past_key ? nonpad_lens[static_cast<size_t>(b)] - q_len : past_len;
}

KeyRange AttentionProblem::AllowedKeys(int64_t b, int64_t i) const {
  // Key j is masked when j > pos (causal), pos - j > left_window,
  // j - pos > right_window, or j >= nonpad_kv_seqlen[b].
  const int64_t pos = SaturatingAdd(i, Offset(b));
  int64_t lo = 0, hi = total;
  if (causal) hi = std::min(hi, SaturatingAdd(pos, 1));
  if (left_window >= 0) lo = std::max(lo, SaturatingAdd(pos, -left_window));
  if (right_window >= 0) hi = std::min(hi, SaturatingAdd(SaturatingAdd(pos, right_window), 1));
  if (!nonpad_lens.empty()) hi = std::min(hi, nonpad_lens[static_cast<size_t>(b)]);
  lo = std::min(lo, total);
  return {lo, std::max(lo, hi)};
}

HeadData AttentionProblem::ReadHead(int64_t b, int64_t h) const {
  HeadData head;
  head.b = b, head.h = h;
  head.q_count = q_len * head_size, head.k_count = total * head_size, head.v_count = total * v_size;
  // Left uninitialised: every element is read into below.
  head.storage.reset(new double[static_cast<size_t>(head.q_count + head.k_count + head.v_count)]);
  double* q_rows = head.storage.get();
  double* k_rows = q_rows + head.q_count;
  double* v_rows = k_rows + head.k_count;
  q.ReadRows(b, h, 0, q_len, q_rows);
  const int64_t kv_head = h / group();
  Gather(k, past_key, past_len, b, kv_head, k_rows);
  Gather(v, past_value, past_len, b, kv_head, v_rows);
  head.q = q_rows, head.k = k_rows, head.v = v_rows;
  return head;
}

StatusOr<AttentionProblem> MakeProblem(const KernelContext& ctx) {
  const int64_t opset = ctx.opset();
  PARITY_ASSIGN_OR_RETURN(const Tensor* q_in, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* k_in, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* v_in, ctx.RequireTensor(2));
  PARITY_ASSIGN_OR_RETURN(const Tensor* mask, OptionalTensor(ctx, 3));
  PARITY_ASSIGN_OR_RETURN(const Tensor* past_key, OptionalTensor(ctx, 4));
  PARITY_ASSIGN_OR_RETURN(const Tensor* past_value, OptionalTensor(ctx, 5));
  const Tensor* nonpad = nullptr;
  if (opset >= 24) {
    PARITY_ASSIGN_OR_RETURN(nonpad, OptionalTensor(ctx, 6));
  }
  for (const Tensor* t : {q_in, k_in, v_in}) {
    if (!IsFloatingPoint(t->dtype())) return ctx.Error("Q, K and V must be float tensors, got ", t->Description());
  }
  if (q_in->rank() != k_in->rank() || q_in->rank() != v_in->rank()) {
    return ctx.Error("Q, K and V must have the same rank: ", q_in->Description(), ", ", k_in->Description(), ", ",
                     v_in->Description());
  }
  if ((past_key == nullptr) != (past_value == nullptr)) return ctx.Error("past_key and past_value go together");
  if (ctx.output_requested(1) != ctx.output_requested(2)) {
    return ctx.Error("present_key and present_value go together");
  }
  if (nonpad && (past_key || ctx.output_requested(1))) {
    return ctx.Error("nonpad_kv_seqlen cannot be combined with past or present key/value");
  }
  const bool has_head_attrs = ctx.has_attribute("q_num_heads") || ctx.has_attribute("kv_num_heads");
  if (opset >= 25 && q_in->rank() == 4 && has_head_attrs) {
    return ctx.Error("q_num_heads and kv_num_heads must not be given for 4-D inputs");
  }
  AttentionProblem p;
  if (opset >= 25) {
    p.left_window = ctx.GetInt("left_window_size", -1);
    p.right_window = ctx.GetInt("right_window_size", -1);
    if (p.left_window < -1 || p.right_window < -1) {
      return ctx.Error("window sizes must be -1 or nonnegative, got ", p.left_window, " and ", p.right_window);
    }
  }
  p.qk_mode = ctx.GetInt("qk_matmul_output_mode", 0);
  if (p.qk_mode < 0 || p.qk_mode > 3) return ctx.Error("qk_matmul_output_mode ", p.qk_mode, " is not 0, 1, 2 or 3");
  if (ctx.has_attribute("softmax_precision")) {
    const int64_t precision = ctx.GetInt("softmax_precision", 1);
    if (precision != 1 && precision != 10 && precision != 11 && precision != 16) {
      return ctx.Error("softmax_precision ", precision, " is not 1, 10, 11 or 16");
    }
  }

  PARITY_ASSIGN_OR_RETURN(p.q, LayoutOf(ctx, *q_in, ctx.GetInt("q_num_heads", 0), "Q"));
  PARITY_ASSIGN_OR_RETURN(p.k, LayoutOf(ctx, *k_in, ctx.GetInt("kv_num_heads", 0), "K"));
  PARITY_ASSIGN_OR_RETURN(p.v, LayoutOf(ctx, *v_in, ctx.GetInt("kv_num_heads", 0), "V"));
  if (p.k.batch != p.q.batch || p.v.batch != p.q.batch || p.k.size != p.q.size || p.v.heads != p.k.heads ||
      p.v.seq != p.k.seq) {
    return ctx.Error("Q, K and V shapes disagree: ", q_in->Description(), ", ", k_in->Description(), ", ",
                     v_in->Description());
  }
  if (p.k.heads <= 0 || p.q.heads % p.k.heads != 0) {
    return ctx.Error("q_num_heads ", p.q.heads, " is not a multiple of kv_num_heads ", p.k.heads);
  }
  PARITY_RETURN_IF_ERROR(CheckPast(ctx, past_key, p.k, "past_key"));
  PARITY_RETURN_IF_ERROR(CheckPast(ctx, past_value, p.v, "past_value"));
  p.past_key = past_key;
  p.past_value = past_value;
  p.past_len = past_key ? past_key->dim(2) : 0;
  if (past_value && past_value->dim(2) != p.past_len) return ctx.Error("past_key and past_value lengths differ");

  p.batch = p.q.batch, p.q_heads = p.q.heads, p.kv_heads = p.k.heads, p.q_len = p.q.seq;
  p.total = p.past_len + p.k.seq;
  p.head_size = p.q.size, p.v_size = p.v.size;
  if (nonpad) {
    if (nonpad->size() != p.batch || !IsInteger(nonpad->dtype())) {
      return ctx.Error("nonpad_kv_seqlen must hold ", p.batch, " integers, got ", nonpad->Description());
    }
    p.nonpad_lens = nonpad->ToInt64s();
  }
  PARITY_ASSIGN_OR_RETURN(p.mask, MaskReader::Make(ctx, mask, {p.batch, p.q_heads, p.q_len, p.total}));
  p.causal = ctx.GetInt("is_causal", 0) != 0;
  p.scale = ctx.has_attribute("scale") ? static_cast<double>(ctx.GetFloat("scale", 1.0f))
                                       : 1.0 / std::sqrt(static_cast<double>(p.head_size));
  p.softcap = static_cast<double>(ctx.GetFloat("softcap", 0.0f));
  return p;
}

}  // namespace parity::ops::attention
