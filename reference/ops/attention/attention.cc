// Attention (Operators.md, versions 23, 24 and 25): scaled dot-product
// attention with grouped-query heads, a key/value cache, additive or boolean
// masks, causal and sliding-window masking, soft capping and the optional
// QK output. Everything is computed in double and rounded once per output.
//
// The order of operations follows the spec's function body:
//   scores = (Q K^T) * scale; capped = softcap * tanh(scores / softcap);
//   biased = capped + bias; P = softmax(biased) with a fully masked row
//   (its bias is -inf everywhere) giving zeros; Y = P V.
// The bias sums the attention mask (bool: true -> 0, false -> -inf; its last
// axis padded with -inf/false up to the total sequence length), the causal
// mask (key j allowed iff j <= i + offset), the window (25) and the padding
// from nonpad_kv_seqlen (24), where offset is the past length with a cache,
// nonpad_kv_seqlen[b] - q_len with an external cache, and 0 otherwise.
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/attention/attention.h"

namespace parity::ops::attention {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A [batch, heads, seq, head_size] view of Q, K or V in doubles.
struct Heads {
  int64_t batch = 0, heads = 0, seq = 0, size = 0;
  std::vector<double> data;
  double at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return data[static_cast<size_t>(((b * heads + h) * seq + s) * size + d)];
  }
};

// 4-D inputs are taken as they are; 3-D [batch, seq, heads * size] ones are
// split into `num_heads` heads.
StatusOr<Heads> ToHeads(const KernelContext& ctx, const Tensor& t, int64_t num_heads, const char* name) {
  Heads h;
  const std::vector<double> values = t.ToDoubles();
  if (t.rank() == 4) {
    h.batch = t.dim(0), h.heads = t.dim(1), h.seq = t.dim(2), h.size = t.dim(3);
    h.data = values;
    return h;
  }
  if (t.rank() != 3) return ctx.Error(name, " must be 3-D or 4-D, got ", t.Description());
  if (num_heads <= 0) return ctx.Error("3-D inputs need positive q_num_heads and kv_num_heads attributes");
  if (t.dim(2) % num_heads != 0) {
    return ctx.Error(name, " hidden size ", t.dim(2), " is not a multiple of ", num_heads, " heads");
  }
  h.batch = t.dim(0), h.heads = num_heads, h.seq = t.dim(1), h.size = t.dim(2) / num_heads;
  h.data.resize(values.size());
  for (int64_t b = 0; b < h.batch; ++b)
    for (int64_t s = 0; s < h.seq; ++s)
      for (int64_t hh = 0; hh < h.heads; ++hh)
        for (int64_t d = 0; d < h.size; ++d)
          h.data[static_cast<size_t>(((b * h.heads + hh) * h.seq + s) * h.size + d)] =
              values[static_cast<size_t>((b * h.seq + s) * t.dim(2) + hh * h.size + d)];
  return h;
}

// past ++ current along the sequence axis (the present key or value).
StatusOr<Heads> AppendPast(const KernelContext& ctx, const Heads& current, const Tensor* past, const char* name) {
  if (!past) return current;
  if (past->rank() != 4 || past->dim(0) != current.batch || past->dim(1) != current.heads ||
      past->dim(3) != current.size) {
    return ctx.Error(name, " ", past->Description(), " does not match [", current.batch, ", ", current.heads,
                     ", past, ", current.size, "]");
  }
  Heads all = current;
  const int64_t past_len = past->dim(2);
  all.seq = past_len + current.seq;
  all.data.assign(static_cast<size_t>(all.batch * all.heads * all.seq * all.size), 0.0);
  const std::vector<double> p = past->ToDoubles();
  for (int64_t b = 0; b < all.batch; ++b)
    for (int64_t h = 0; h < all.heads; ++h)
      for (int64_t s = 0; s < all.seq; ++s)
        for (int64_t d = 0; d < all.size; ++d)
          all.data[static_cast<size_t>(((b * all.heads + h) * all.seq + s) * all.size + d)] =
              s < past_len ? p[static_cast<size_t>(((b * all.heads + h) * past_len + s) * all.size + d)]
                           : current.at(b, h, s - past_len, d);
  return all;
}

StatusOr<Tensor> HeadsToTensor(const KernelContext& ctx, const Heads& h, DataType dtype) {
  PARITY_ASSIGN_OR_RETURN(Tensor t, Allocate(ctx, dtype, {h.batch, h.heads, h.seq, h.size}));
  for (size_t i = 0; i < h.data.size(); ++i) t.SetDouble(static_cast<int64_t>(i), h.data[i]);
  return t;
}

// The attention mask, broadcast right-aligned to [batch, q_heads, q_len, total]
// after padding its last axis to `total` (bool: false, numeric: -inf).
class MaskReader {
 public:
  static StatusOr<MaskReader> Make(const KernelContext& ctx, const Tensor* mask, const Shape& target) {
    MaskReader r;
    if (!mask) return r;
    r.mask_ = mask;
    r.is_bool_ = mask->dtype() == DataType::kBool;
    if (mask->rank() < 1 || mask->rank() > 4) return ctx.Error("attn_mask must have rank 1 to 4, got ", mask->Description());
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
    return r;
  }
  // The additive bias of the mask at (b, h, i, j).
  double Bias(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!mask_) return 0.0;
    if (j >= dims_[3]) return kNegInf;  // the padded tail
    if (dims_[3] == 1) j = 0;
    const int64_t index = (((dims_[0] == 1 ? 0 : b) * dims_[1] + (dims_[1] == 1 ? 0 : h)) * dims_[2] +
                           (dims_[2] == 1 ? 0 : i)) * dims_[3] + j;
    if (is_bool_) return mask_->GetInt64(index) != 0 ? 0.0 : kNegInf;
    return mask_->GetDouble(index);
  }

 private:
  const Tensor* mask_ = nullptr;
  bool is_bool_ = false;
  std::vector<int64_t> dims_;
};

StatusOr<const Tensor*> OptionalTensor(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return static_cast<const Tensor*>(nullptr);
  return ctx.RequireTensor(i);
}

}  // namespace

StatusOr<std::vector<Value>> Attention(const KernelContext& ctx) {
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
  int64_t left_window = -1, right_window = -1;
  if (opset >= 25) {
    left_window = ctx.GetInt("left_window_size", -1);
    right_window = ctx.GetInt("right_window_size", -1);
    if (left_window < -1 || right_window < -1) {
      return ctx.Error("window sizes must be -1 or nonnegative, got ", left_window, " and ", right_window);
    }
  }
  const int64_t mode = ctx.GetInt("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return ctx.Error("qk_matmul_output_mode ", mode, " is not 0, 1, 2 or 3");
  if (ctx.has_attribute("softmax_precision")) {
    const int64_t p = ctx.GetInt("softmax_precision", 1);
    if (p != 1 && p != 10 && p != 11 && p != 16) return ctx.Error("softmax_precision ", p, " is not 1, 10, 11 or 16");
  }

  PARITY_ASSIGN_OR_RETURN(Heads q, ToHeads(ctx, *q_in, ctx.GetInt("q_num_heads", 0), "Q"));
  PARITY_ASSIGN_OR_RETURN(Heads k_cur, ToHeads(ctx, *k_in, ctx.GetInt("kv_num_heads", 0), "K"));
  PARITY_ASSIGN_OR_RETURN(Heads v_cur, ToHeads(ctx, *v_in, ctx.GetInt("kv_num_heads", 0), "V"));
  if (k_cur.batch != q.batch || v_cur.batch != q.batch || k_cur.size != q.size || v_cur.heads != k_cur.heads ||
      v_cur.seq != k_cur.seq) {
    return ctx.Error("Q, K and V shapes disagree: ", q_in->Description(), ", ", k_in->Description(), ", ",
                     v_in->Description());
  }
  if (k_cur.heads <= 0 || q.heads % k_cur.heads != 0) {
    return ctx.Error("q_num_heads ", q.heads, " is not a multiple of kv_num_heads ", k_cur.heads);
  }
  PARITY_ASSIGN_OR_RETURN(Heads k, AppendPast(ctx, k_cur, past_key, "past_key"));
  PARITY_ASSIGN_OR_RETURN(Heads v, AppendPast(ctx, v_cur, past_value, "past_value"));
  const int64_t past_len = past_key ? past_key->dim(2) : 0;
  if (past_value && past_value->dim(2) != past_len) return ctx.Error("past_key and past_value lengths differ");

  const int64_t batch = q.batch, q_heads = q.heads, q_len = q.seq, total = k.seq, v_size = v.size;
  const int64_t group = q_heads / k.heads;
  std::vector<int64_t> nonpad_lens;
  if (nonpad) {
    if (nonpad->size() != batch || !IsInteger(nonpad->dtype())) {
      return ctx.Error("nonpad_kv_seqlen must hold ", batch, " integers, got ", nonpad->Description());
    }
    nonpad_lens = nonpad->ToInt64s();
  }
  PARITY_ASSIGN_OR_RETURN(MaskReader masks, MaskReader::Make(ctx, mask, {batch, q_heads, q_len, total}));
  const bool causal = ctx.GetInt("is_causal", 0) != 0;
  const double scale = ctx.has_attribute("scale") ? static_cast<double>(ctx.GetFloat("scale", 1.0f))
                                                  : 1.0 / std::sqrt(static_cast<double>(q.size));
  const double softcap = static_cast<double>(ctx.GetFloat("softcap", 0.0f));

  std::vector<double> y(static_cast<size_t>(batch * q_heads * q_len * v_size), 0.0);
  std::vector<double> qk(static_cast<size_t>(batch * q_heads * q_len * total), 0.0);
  std::vector<double> scores(static_cast<size_t>(total)), capped(static_cast<size_t>(total)),
      bias(static_cast<size_t>(total)), biased(static_cast<size_t>(total)), probs(static_cast<size_t>(total));
  for (int64_t b = 0; b < batch; ++b) {
    // Position of query 0 among the keys, for the causal mask and the window.
    const int64_t offset = nonpad && !past_key ? nonpad_lens[static_cast<size_t>(b)] - q_len : past_len;
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t kv_head = h / group;
      for (int64_t i = 0; i < q_len; ++i) {
        double row_bias_max = kNegInf;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < q.size; ++d) dot += q.at(b, h, i, d) * k.at(b, kv_head, j, d);
          const size_t jj = static_cast<size_t>(j);
          scores[jj] = dot * scale;
          capped[jj] = softcap != 0.0 ? softcap * std::tanh(scores[jj] / softcap) : scores[jj];
          double add = masks.Bias(b, h, i, j);
          if (causal && j > i + offset) add += kNegInf;
          const int64_t diff = i + offset - j;
          if (left_window >= 0 && diff > left_window) add += kNegInf;
          if (right_window >= 0 && -diff > right_window) add += kNegInf;
          if (nonpad && j >= nonpad_lens[static_cast<size_t>(b)]) add += kNegInf;
          bias[jj] = add;
          biased[jj] = capped[jj] + add;
          row_bias_max = std::max(row_bias_max, add);
        }
        // Softmax; a row with no allowed key (its bias all -inf) is all zeros.
        const bool fully_masked = total == 0 || (std::isinf(row_bias_max) && row_bias_max < 0);
        double max_score = kNegInf;
        for (double s : biased) max_score = std::isnan(s) || std::isnan(max_score) ? std::numeric_limits<double>::quiet_NaN() : std::max(max_score, s);
        if (std::isinf(max_score) && max_score < 0) max_score = 0.0;
        double sum = 0.0;
        for (int64_t j = 0; j < total; ++j) {
          probs[static_cast<size_t>(j)] = std::exp(biased[static_cast<size_t>(j)] - max_score);
          sum += probs[static_cast<size_t>(j)];
        }
        if (sum == 0.0) sum = 1.0;
        for (double& p : probs) p = fully_masked ? 0.0 : p / sum;

        const size_t row = static_cast<size_t>(((b * q_heads + h) * q_len + i) * total);
        for (int64_t j = 0; j < total; ++j) {
          const size_t jj = static_cast<size_t>(j);
          qk[row + jj] = mode == 0 ? scores[jj] : mode == 1 ? capped[jj] : mode == 2 ? biased[jj] : probs[jj];
        }
        for (int64_t d = 0; d < v_size; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < total; ++j) acc += probs[static_cast<size_t>(j)] * v.at(b, kv_head, j, d);
          y[static_cast<size_t>(((b * q_heads + h) * q_len + i) * v_size + d)] = acc;
        }
      }
    }
  }

  std::vector<Value> outputs;
  const DataType out_type = q_in->dtype();
  if (q_in->rank() == 3) {
    // [batch, heads, q_len, v_size] -> [batch, q_len, heads * v_size]
    std::vector<double> y3(y.size());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < q_heads; ++h)
        for (int64_t i = 0; i < q_len; ++i)
          for (int64_t d = 0; d < v_size; ++d)
            y3[static_cast<size_t>((b * q_len + i) * q_heads * v_size + h * v_size + d)] =
                y[static_cast<size_t>(((b * q_heads + h) * q_len + i) * v_size + d)];
    PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, out_type, {batch, q_len, q_heads * v_size}, y3));
    outputs.push_back(std::move(out));
  } else {
    PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, out_type, {batch, q_heads, q_len, v_size}, y));
    outputs.push_back(std::move(out));
  }
  if (ctx.output_count() > 1) {
    PARITY_ASSIGN_OR_RETURN(Tensor present_key, HeadsToTensor(ctx, k, k_in->dtype()));
    PARITY_ASSIGN_OR_RETURN(Tensor present_value, HeadsToTensor(ctx, v, v_in->dtype()));
    outputs.push_back(Value::FromTensor(std::move(present_key)));
    outputs.push_back(Value::FromTensor(std::move(present_value)));
  }
  if (ctx.output_count() > 3) {
    PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, out_type, {batch, q_heads, q_len, total}, qk));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace parity::ops::attention
