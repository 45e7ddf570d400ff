// The oneDNN lowering of Attention (opsets 23 and 24, and 25's windows,
// which the bias carries) as one node made of oneDNN primitives, and the family's table (TensorScatter in place in
// tensor_scatter.cc, RotaryEmbedding in rotary_embedding.cc).
//
// Per group of batch entries (all of them, or one at a time when
// nonpad_kv_seqlen gives each its own length), with the query heads that
// share a key/value head laid out as rows of one product:
//   scores = matmul(Q, K^T) with the scale as a source scale, the soft cap
//            (x/c, tanh, *c) and the additive bias as post-ops, in float32;
//   P      = softmax(scores) in float32;
//   Y      = matmul(P, V) in float32, rounded once to Y's type (a reorder).
// The bias sums the mask (bool: 0 / -inf, float: as given, its last axis
// padded with -inf), the causal mask, the windows and the keys past
// nonpad_kv_seqlen,
// built on the host in the smallest shape that broadcasts. A row whose bias
// is -inf everywhere gets zero weights, as the reference gives (oneDNN's
// softmax would give NaN there). With nonpad_kv_seqlen only the first keys
// of each batch entry are read, rounded up to kKeyBlock so that a decode
// step reuses the primitives of the step before.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "adapters/onednn/attention_parts.h"
#include "adapters/onednn/lowerings.h"
#include "reference/ops/attention/attention_problem.h"

namespace parity::adapters::onednn {
namespace {

using ops::attention::AttentionProblem;
using tag = dnnl::memory::format_tag;

// Keys read per batch entry with nonpad_kv_seqlen: its length rounded up to
// a multiple of this (at most the cache length). A decode step then meets
// the shapes of the step before and reuses its primitives; the extra keys
// are masked with -inf like every key past the length.
constexpr int64_t kKeyBlock = 64;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Where the key (or value) rows lie, in elements: row t of kv head h of
// batch entry b starts at b * batch + h * head + t * row.
struct RowStrides {
  int64_t batch = 0, head = 0, row = 0;
};

// The primitives of one group shape. Post-ops of `scores` cover the stages
// up to `fused` (0 scaled, 1 capped, 2 biased); the rest run on their own.
struct GroupPlan {
  dnnl::memory::desc q, k_t, scores, bias, v, v_f32, y;
  dnnl::matmul qk, pv;
  std::optional<dnnl::eltwise_forward> cap;  // when the soft cap is not fused
  std::optional<dnnl::binary> add_bias;      // when the bias is not fused
  dnnl::softmax_forward softmax;
  int fused = 2;
  int bias_post_op = -1;  // index of the bias among the qk post-ops
  // The primitives of every run, with their arguments bound: qk (q, k_t,
  // scores, scale, then the bias when it is a post-op), softmax (scores in
  // place), v_to_f32 (16-bit V into v_f32), pv (scores, V, y) and y_out (y
  // rounded into Y's type and layout).
  BoundPrimitive qk_bound, softmax_bound, v_to_f32, pv_bound, y_out;
  bool pv_into_y = false;  // pv writes Y itself (float32), and y_out is not run
};

// One group: batch entries [b0, b0 + count), keys [0, keys).
struct Group {
  int64_t b0 = 0, count = 0, keys = 0;
};

class AttentionNode final : public LoweredNode {
 public:
  explicit AttentionNode(DataType type) : type_(type), dt_(*DnnlType(type)) {}
  // The runner of a region that ends in the Transpose and Reshape merging
  // Y's heads (LowerAttentionMergedHeads): `node` is the Attention node,
  // whose attributes and opset the region's own node does not carry, and
  // Y is written as [batch, seq, heads * size] straight away.
  AttentionNode(DataType type, const onnx::NodeProto& node, int64_t opset)
      : type_(type), dt_(*DnnlType(type)), attention_(node), opset_(opset) {}
  bool deferred() const override { return true; }  // the key lengths are read from the inputs

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    if (!attention_) return RunAs(ctx);
    std::vector<const Value*> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i) inputs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
    return RunAs(KernelContext(*attention_, std::move(inputs), opset_, nullptr));
  }

 private:
  bool merged_heads() const { return attention_.has_value(); }
  // Where Y's rows lie: [batch, seq, heads * size] for 3-D inputs and for
  // a merged-heads region, else [batch, heads, seq, size].
  RowStrides YRows(const AttentionProblem& p) const {
    const int64_t hq = p.q_heads, s_len = p.q_len, dv = p.v_size;
    if (p.q.three_d || merged_heads()) return {s_len * hq * dv, dv, hq * dv};
    return {hq * s_len * dv, s_len * dv, dv};
  }

  StatusOr<std::vector<Value>> RunAs(const KernelContext& ctx) {
    PARITY_ASSIGN_OR_RETURN(const AttentionProblem p, ops::attention::MakeProblem(ctx));
    for (const Tensor* t : {p.q.tensor, p.k.tensor, p.v.tensor, p.past_key, p.past_value}) {
      if (t && t->dtype() != type_) return ctx.Error("was lowered for ", DataTypeName(type_), " inputs, got ", t->Description());
    }
    try {
      return Compute(ctx, p);
    } catch (const dnnl::error& e) {
      return ctx.Error("running its oneDNN primitives failed: ", DnnlError(e));
    }
  }

  StatusOr<std::vector<Value>> Compute(const KernelContext& ctx, const AttentionProblem& p);
  Status Present(const AttentionProblem& p, const ops::attention::HeadLayout& current, const Tensor* past,
                 Tensor& present);
  StatusOr<const GroupPlan*> Plan(const AttentionProblem& p, const Group& g, const RowStrides& k,
                                  const RowStrides& v, const dnnl::memory::dims& bias_dims, int qk_mode);
  // The bias of group `g` into bias_ (dims `dims`), and which of its rows
  // are -inf everywhere into masked_rows_; false when no key is masked.
  bool BuildBias(const AttentionProblem& p, const Group& g, dnnl::memory::dims& dims);

  DataType type_;
  dnnl_dt dt_;
  std::map<std::vector<int64_t>, std::unique_ptr<GroupPlan>> plans_;
  ReorderCache reorders_;
  // Scratch of one run, kept for the next (Run is called from one thread).
  std::vector<float> scores_, bias_, v_f32_, y_f32_;
  std::vector<uint8_t> q_rows_;
  std::vector<char> masked_rows_;
  const Tensor* mask_tensor_ = nullptr;  // input 3 of the current run
  float scale_ = 1;
  std::optional<onnx::NodeProto> attention_;  // a merged-heads region's Attention node
  int64_t opset_ = 0;
};

// Strides of 4-D [batch, heads, seq, size] rows, or of 3-D [batch, seq, heads * size].
RowStrides StridesOf(const ops::attention::HeadLayout& l) {
  if (l.three_d) return {l.seq * l.heads * l.size, l.size, l.heads * l.size};
  return {l.heads * l.seq * l.size, l.seq * l.size, l.size};
}

dnnl::memory::desc RowsDesc(int64_t batch, int64_t heads, int64_t rows, int64_t size, const RowStrides& s,
                            dnnl_dt type) {
  return dnnl::memory::desc({batch, heads, rows, size}, type, {s.batch, s.head, s.row, 1});
}

Status AttentionNode::Present(const AttentionProblem& p, const ops::attention::HeadLayout& current,
                              const Tensor* past, Tensor& present) {
  PARITY_ASSIGN_OR_RETURN(present, NewTensor(type_, {p.batch, p.kv_heads, p.total, current.size}));
  const RowStrides to{p.kv_heads * p.total * current.size, p.total * current.size, current.size};
  if (present.size() == 0) return Status::Ok();
  if (past && p.past_len > 0) {
    const RowStrides from{p.kv_heads * p.past_len * current.size, p.past_len * current.size, current.size};
    reorders_.Run(ViewAt(RowsDesc(p.batch, p.kv_heads, p.past_len, current.size, from, dt_), past->raw_bytes(), 0),
                  ViewAt(RowsDesc(p.batch, p.kv_heads, p.past_len, current.size, to, dt_), present.raw_bytes(), 0));
  }
  if (current.seq > 0) {
    reorders_.Run(
        ViewAt(RowsDesc(p.batch, p.kv_heads, current.seq, current.size, StridesOf(current), dt_),
               current.tensor->raw_bytes(), 0),
        ViewAt(RowsDesc(p.batch, p.kv_heads, current.seq, current.size, to, dt_), present.raw_bytes(),
               p.past_len * current.size));
  }
  return Status::Ok();
}

bool AttentionNode::BuildBias(const AttentionProblem& p, const Group& g, dnnl::memory::dims& dims) {
  const int64_t group = p.group(), s_len = p.q_len, rows_all = group * s_len;
  const bool has_mask = p.mask.present();
  const Tensor* mask = nullptr;
  std::vector<int64_t> mdims(4, 1);
  if (has_mask) {
    // The mask tensor is input 3; MaskReader keeps its broadcast dims private,
    // so read them from the tensor the same way (right-aligned to rank 4).
    mask = mask_tensor_;
    for (int64_t i = 0; i < mask->rank(); ++i) mdims[static_cast<size_t>(4 - mask->rank() + i)] = mask->dim(i);
  }
  const bool windowed = p.left_window >= 0 || p.right_window >= 0;
  const bool by_head = has_mask && mdims[1] > 1;
  const bool by_row = by_head || (has_mask && mdims[2] > 1) || ((p.causal || windowed) && s_len > 1);
  const bool limited = !p.nonpad_lens.empty() || p.causal || windowed;
  if (!has_mask && !limited) return false;
  // nonpad_kv_seqlen (and the causal offset it sets) differs by batch entry.
  const bool by_batch = (has_mask && mdims[0] > 1) || !p.nonpad_lens.empty();
  const int64_t nb = by_batch ? g.count : 1;
  const int64_t nh = by_head ? p.kv_heads : 1;
  const int64_t nr = by_row ? rows_all : 1;
  dims = {nb, nh, nr, g.keys};
  bias_.resize(static_cast<size_t>(nb * nh * nr * g.keys));
  masked_rows_.assign(static_cast<size_t>(nb * nh * nr), 0);
  std::vector<double> row(static_cast<size_t>(g.keys));
  for (int64_t bb = 0; bb < nb; ++bb) {
    const int64_t b = g.b0 + bb;
    for (int64_t kv = 0; kv < nh; ++kv) {
      for (int64_t r = 0; r < nr; ++r) {
        const int64_t i = r % s_len, h = kv * group + r / s_len;
        p.mask.BiasRow(b, h, i, 0, g.keys, row.data());
        const ops::attention::KeyRange allowed = p.AllowedKeys(b, i);
        const size_t at = static_cast<size_t>(((bb * nh + kv) * nr + r) * g.keys);
        float row_max = kNegInf;
        for (int64_t j = 0; j < g.keys; ++j) {
          double add = row[static_cast<size_t>(j)];
          if (j < allowed.lo || j >= allowed.hi) add += ops::attention::kNegInf;
          const float value = static_cast<float>(add);
          bias_[at + static_cast<size_t>(j)] = value;
          row_max = std::isnan(value) ? value : std::max(row_max, value);
        }
        // Every key of the row masked (the keys not read lie past
        // nonpad_kv_seqlen, so they are masked too): its weights are zero.
        if (row_max == kNegInf) masked_rows_[static_cast<size_t>((bb * nh + kv) * nr + r)] = 1;
      }
    }
  }
  return true;
}

StatusOr<const GroupPlan*> AttentionNode::Plan(const AttentionProblem& p, const Group& g, const RowStrides& k,
                                               const RowStrides& v, const dnnl::memory::dims& bias_dims,
                                               int qk_mode) {
  const int64_t rows = p.group() * p.q_len;
  std::vector<int64_t> key = {g.count, g.keys, p.kv_heads, rows, p.head_size, p.v_size, k.batch, k.head, k.row,
                              v.batch, v.head, v.row, qk_mode, p.q_heads, p.q.three_d ? 1 : 0,
                              static_cast<int64_t>(bias_dims.size())};
  key.insert(key.end(), bias_dims.begin(), bias_dims.end());
  auto& slot = plans_[key];
  if (slot) return slot.get();
  auto plan = std::make_unique<GroupPlan>();
  const int64_t n = g.count, hkv = p.kv_heads, keys = g.keys, dk = p.head_size, dv = p.v_size;
  plan->q = dnnl::memory::desc({n, hkv, rows, dk}, dt_, tag::abcd);
  // K^T: [n, hkv, dk, keys] read through the rows' strides.
  plan->k_t = dnnl::memory::desc({n, hkv, dk, keys}, dt_, {k.batch, k.head, 1, k.row});
  plan->scores = dnnl::memory::desc({n, hkv, rows, keys}, dnnl_dt::f32, tag::abcd);
  plan->v = RowsDesc(n, hkv, keys, dv, v, dt_);
  plan->v_f32 = dnnl::memory::desc({n, hkv, keys, dv}, dnnl_dt::f32, tag::abcd);
  plan->y = dnnl::memory::desc({n, hkv, rows, dv}, dnnl_dt::f32, tag::abcd);
  plan->fused = qk_mode < 0 ? 2 : std::min(qk_mode, 2);
  const float softcap = static_cast<float>(p.softcap);
  dnnl::post_ops ops;
  int count = 0;
  if (softcap != 0 && plan->fused >= 1) {
    ops.append_eltwise(dnnl::algorithm::eltwise_linear, 1.0f / softcap, 0.0f);
    ops.append_eltwise(dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
    ops.append_eltwise(dnnl::algorithm::eltwise_linear, softcap, 0.0f);
    count += 3;
  } else if (softcap != 0) {
    dnnl::post_ops cap_ops;
    cap_ops.append_eltwise(dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
    cap_ops.append_eltwise(dnnl::algorithm::eltwise_linear, softcap, 0.0f);
    dnnl::primitive_attr cap_attr;
    cap_attr.set_post_ops(cap_ops);
    plan->cap = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
        Engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_linear, plan->scores, plan->scores,
        1.0f / softcap, 0.0f, cap_attr));
  }
  if (!bias_dims.empty()) {
    plan->bias = dnnl::memory::desc(bias_dims, dnnl_dt::f32, tag::abcd);
    if (plan->fused >= 2) {
      ops.append_binary(dnnl::algorithm::binary_add, plan->bias);
      plan->bias_post_op = count++;
    } else {
      plan->add_bias = dnnl::binary(
          dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_add, plan->scores, plan->bias, plan->scores));
    }
  }
  dnnl::primitive_attr attr;
  attr.set_scales_mask(DNNL_ARG_SRC, 0);
  attr.set_post_ops(ops);
  plan->qk = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan->q, plan->k_t, plan->scores, attr));
  plan->softmax = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
      Engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_accurate, plan->scores, plan->scores, 3));
  // P V in float32: a 16-bit V is first converted (exactly) to float32.
  plan->pv = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan->scores,
                                                       type_ == DataType::kFloat ? plan->v : plan->v_f32, plan->y));
  std::vector<std::pair<int, dnnl::memory::desc>> qk_args = {{DNNL_ARG_SRC, plan->q},
                                                             {DNNL_ARG_WEIGHTS, plan->k_t},
                                                             {DNNL_ARG_DST, plan->scores},
                                                             {DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC,
                                                              dnnl::memory::desc({1}, dnnl_dt::f32, {1})}};
  if (plan->bias_post_op >= 0) {
    qk_args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(plan->bias_post_op) | DNNL_ARG_SRC_1, plan->bias});
  }
  plan->qk_bound = BoundPrimitive(plan->qk, qk_args);
  plan->softmax_bound = BoundPrimitive(plan->softmax, {{DNNL_ARG_SRC, plan->scores}, {DNNL_ARG_DST, plan->scores}});
  const dnnl::memory::desc& v_read = type_ == DataType::kFloat ? plan->v : plan->v_f32;
  if (type_ != DataType::kFloat) {
    plan->v_to_f32 = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan->v, Engine(), plan->v_f32)),
                                    {{DNNL_ARG_FROM, plan->v}, {DNNL_ARG_TO, plan->v_f32}});
  }
  plan->pv_bound = BoundPrimitive(plan->pv, {{DNNL_ARG_SRC, plan->scores}, {DNNL_ARG_WEIGHTS, v_read}, {DNNL_ARG_DST, plan->y}});
  // y is [n, kv heads, group * seq, dv], which is [n, q heads, seq, dv]: into Y's layout.
  const int64_t hq = p.q_heads, s_len = p.q_len;
  if (type_ == DataType::kFloat) {
    // Y in float32 needs no rounding: P V writes it in place where one
    // stride steps through a kv head's rows (group * seq of them, query
    // head by query head), which saves the reorder below.
    const RowStrides y = YRows(p);
    const int64_t group = p.group();
    std::optional<dnnl::memory::dims> strides;
    if (group == 1) {
      strides = dnnl::memory::dims{y.batch, y.head, y.row, 1};
    } else if (s_len == 1) {
      strides = dnnl::memory::dims{y.batch, group * y.head, y.head, 1};
    } else if (y.head == s_len * y.row) {
      strides = dnnl::memory::dims{y.batch, group * y.head, y.row, 1};
    }
    if (strides) {
      const dnnl::memory::desc y_in_place({n, hkv, rows, dv}, dnnl_dt::f32, *strides);
      try {
        const dnnl::matmul::primitive_desc pd(Engine(), plan->scores, plan->v, y_in_place);
        // Not where oneDNN would run its reference kernel for the strides.
        if (std::string(pd.impl_info_str()).find("ref") == std::string::npos) {
          plan->pv_bound = BoundPrimitive(dnnl::matmul(pd), {{DNNL_ARG_SRC, plan->scores},
                                                             {DNNL_ARG_WEIGHTS, plan->v},
                                                             {DNNL_ARG_DST, y_in_place}});
          plan->pv_into_y = true;
        }
      } catch (const dnnl::error&) {
        // Refused: y and the reorder, as for a 16-bit Y.
      }
    }
  }
  if (!plan->pv_into_y) {
    const dnnl::memory::desc y_plain({n, hq, s_len, dv}, dnnl_dt::f32, tag::abcd);
    const dnnl::memory::desc y_view = RowsDesc(n, hq, s_len, dv, YRows(p), dt_);
    plan->y_out = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), y_plain, Engine(), y_view)),
                                 {{DNNL_ARG_FROM, y_plain}, {DNNL_ARG_TO, y_view}});
  }
  Counts().at_run += 1;
  slot = std::move(plan);
  return slot.get();
}

StatusOr<std::vector<Value>> AttentionNode::Compute(const KernelContext& ctx, const AttentionProblem& p) {
  const int64_t batch = p.batch, hq = p.q_heads, hkv = p.kv_heads, s_len = p.q_len, total = p.total;
  const int64_t dk = p.head_size, dv = p.v_size, rows = p.group() * s_len;
  mask_tensor_ = ctx.has_input(3) ? &ctx.tensor(3) : nullptr;

  // Keys and values: the present outputs (past ++ current) when there is a
  // past or they are asked for, else the inputs where they lie.
  Tensor present_k, present_v;
  const bool want_present = ctx.output_requested(1);
  const bool concat = p.past_key != nullptr || want_present;
  RowStrides k_rows = StridesOf(p.k), v_rows = StridesOf(p.v);
  const uint8_t* k_base = p.k.tensor->raw_bytes();
  const uint8_t* v_base = p.v.tensor->raw_bytes();
  if (concat) {
    PARITY_RETURN_IF_ERROR(Present(p, p.k, p.past_key, present_k));
    PARITY_RETURN_IF_ERROR(Present(p, p.v, p.past_value, present_v));
    k_rows = {hkv * total * dk, total * dk, dk};
    v_rows = {hkv * total * dv, total * dv, dv};
    k_base = present_k.raw_bytes();
    v_base = present_v.raw_bytes();
  }

  // Q as [batch, q heads, seq, size], which is [batch, kv heads, group * seq, size].
  const uint8_t* q_base = p.q.tensor->raw_bytes();
  const size_t width = StorageSize(type_);
  if (p.q.three_d && p.q.tensor->size() > 0) {
    q_rows_.resize(static_cast<size_t>(p.q.tensor->size()) * width);
    reorders_.Run(ViewAt(RowsDesc(batch, hq, s_len, dk, StridesOf(p.q), dt_), q_base, 0),
                  ViewAt(dnnl::memory::desc({batch, hq, s_len, dk}, dt_, tag::abcd), q_rows_.data(), 0));
    q_base = q_rows_.data();
  }

  PARITY_ASSIGN_OR_RETURN(Tensor y, NewTensor(type_, p.q.three_d || merged_heads()
                                                     ? std::vector<int64_t>{batch, s_len, hq * dv}
                                                                 : std::vector<int64_t>{batch, hq, s_len, dv}));
  const bool want_qk = ctx.output_requested(3);
  Tensor qk;
  if (want_qk) {
    PARITY_ASSIGN_OR_RETURN(qk, NewTensor(type_, {batch, hq, s_len, total}));
  }
  const int qk_mode = want_qk ? static_cast<int>(p.qk_mode) : -1;
  const RowStrides y_rows = YRows(p);

  // The groups: every batch entry at once, or one at a time with its own
  // key count when nonpad_kv_seqlen is given (all keys when the QK output,
  // which has a column per key, is asked for).
  std::vector<Group> groups;
  if (p.nonpad_lens.empty() || want_qk) {
    groups.push_back({0, batch, total});
  } else {
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t valid = std::clamp<int64_t>(p.nonpad_lens[static_cast<size_t>(b)], 0, total);
      groups.push_back({b, 1, std::min(total, (valid + kKeyBlock - 1) / kKeyBlock * kKeyBlock)});
    }
  }
  scale_ = static_cast<float>(p.scale);
  for (const Group& g : groups) {
    if (g.count == 0 || rows == 0 || hkv == 0) continue;
    const int64_t y_group = g.b0 * hq * s_len * dv;  // Y's rows of the group start here in either layout
    if (g.keys == 0 || dv == 0) {
      // No key is read: every weight is zero, and so is every output row.
      std::fill(y.mutable_raw_bytes() + y_group * width, y.mutable_raw_bytes() + (y_group + g.count * hq * s_len * dv) * width, 0);
      continue;
    }
    dnnl::memory::dims bias_dims;
    const bool has_bias = BuildBias(p, g, bias_dims);
    PARITY_ASSIGN_OR_RETURN(const GroupPlan* plan, Plan(p, g, k_rows, v_rows, has_bias ? bias_dims : dnnl::memory::dims{}, qk_mode));
    const int64_t score_count = g.count * hkv * rows * g.keys;
    scores_.resize(static_cast<size_t>(score_count));
    plan->qk_bound.Run({q_base + static_cast<size_t>(g.b0 * hq * s_len * dk) * width,
                        k_base + static_cast<size_t>(g.b0 * k_rows.batch) * width, scores_.data(), &scale_,
                        bias_.data()});
    // The QK output in its mode, written at the stage it names; and the
    // stages past the product that are not its post-ops. Memory objects
    // over the scores are made only for these, which a decode step lacks.
    auto write_qk = [&](int stage) {
      if (qk_mode != stage) return;
      reorders_.Run(dnnl::memory(plan->scores, Engine(), scores_.data()),
                    ViewAt(dnnl::memory::desc({g.count, hkv, rows, g.keys}, dt_, tag::abcd), qk.raw_bytes(),
                           g.b0 * hq * s_len * total));
      Stream().wait();
    };
    if (plan->fused < 1) write_qk(0);
    if (plan->cap) {
      dnnl::memory scores(plan->scores, Engine(), scores_.data());
      plan->cap->execute(Stream(), {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}});
    }
    if (plan->fused < 2) write_qk(1);
    if (plan->add_bias) {
      dnnl::memory scores(plan->scores, Engine(), scores_.data()), bias(plan->bias, Engine(), bias_.data());
      plan->add_bias->execute(Stream(), {{DNNL_ARG_SRC_0, scores}, {DNNL_ARG_SRC_1, bias}, {DNNL_ARG_DST, scores}});
    }
    write_qk(2);
    plan->softmax_bound.Run({scores_.data(), scores_.data()});
    if (has_bias) {
      // Rows with every key masked: zero weights (the reference's rule),
      // where oneDNN's softmax of -inf everywhere gives NaN.
      const int64_t nb = bias_dims[0], nh = bias_dims[1], nr = bias_dims[2];
      for (int64_t bb = 0; bb < g.count; ++bb)
        for (int64_t kv = 0; kv < hkv; ++kv)
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t at = ((nb == 1 ? 0 : bb) * nh + (nh == 1 ? 0 : kv)) * nr + (nr == 1 ? 0 : r);
            if (!masked_rows_[static_cast<size_t>(at)]) continue;
            float* row = scores_.data() + ((bb * hkv + kv) * rows + r) * g.keys;
            std::fill(row, row + g.keys, 0.0f);
          }
    }
    write_qk(3);
    // V in float32 for the second product (a copy for 16-bit types; float32 is read in place).
    const uint8_t* v_read = v_base + static_cast<size_t>(g.b0 * v_rows.batch) * width;
    if (type_ != DataType::kFloat) {
      v_f32_.resize(static_cast<size_t>(g.count * hkv * g.keys * dv));
      plan->v_to_f32.Run({v_read, v_f32_.data()});
      v_read = reinterpret_cast<const uint8_t*>(v_f32_.data());
    }
    uint8_t* y_at = y.mutable_raw_bytes() + static_cast<size_t>(g.b0 * y_rows.batch) * width;
    if (plan->pv_into_y) {
      plan->pv_bound.Run({scores_.data(), v_read, y_at});
    } else {
      y_f32_.resize(static_cast<size_t>(g.count * hkv * rows * dv));
      plan->pv_bound.Run({scores_.data(), v_read, y_f32_.data()});
      // Rounded once into Y's type and layout.
      plan->y_out.Run({y_f32_.data(), y_at});
    }
  }

  std::vector<Value> outputs;
  outputs.push_back(Value::FromTensor(std::move(y)));
  if (ctx.output_count() > 1) {
    if (want_present) {
      outputs.push_back(Value::FromTensor(std::move(present_k)));
      outputs.push_back(Value::FromTensor(std::move(present_v)));
    } else {
      outputs.resize(std::min<size_t>(3, ctx.output_count()));  // not asked for: placeholders
    }
  }
  if (ctx.output_count() > 3) outputs.push_back(want_qk ? Value::FromTensor(std::move(qk)) : Value());
  return outputs;
}

StatusOr<std::unique_ptr<LoweredNode>> LowerAttention(const NodeView& view) {
  if (view.opset() > 25) return NotLowered("Attention-", view.opset(), " (lowered: opsets 23 to 25)");
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2, 4, 5}));
  if (view.has_input(3)) {
    const std::optional<DataType> mask = view.input_type(3);
    if (!mask) return NotLowered("the type of attn_mask is not known before the run");
    if (*mask != DataType::kBool && *mask != *view.input_type(0)) {
      return NotLowered("attn_mask of type ", DataTypeName(*mask), " (lowered: bool, or Q's type)");
    }
  }
  // With a V head size of 0, Y is empty but the QK output is not; the
  // lowering writes no score then, so it claims the QK output only where
  // V's head size is known to be nonzero.
  if (view.node().output_size() > 3 && !view.node().output(3).empty()) {
    const ValueFacts* v = view.input_facts(2);
    if (!v || !v->dims || v->dims->empty() || v->dims->back() <= 0) {
      return NotLowered("the QK output with a V head size not known to be nonzero before the run");
    }
  }
  return std::unique_ptr<LoweredNode>(std::make_unique<AttentionNode>(*view.input_type(0)));
}

// Attention whose Y goes only through Transpose(perm 0, 2, 1, 3) and a
// Reshape to [batch, seq, heads * size], as exporters write the merge of
// the heads: one region whose Y is written in that layout by the reorder
// that rounds it anyway, one node and one primitive fewer.
StatusOr<std::optional<RegionClaim>> LowerAttentionMergedHeads(const RegionView& region) {
  const int anchor = region.anchor();
  const NodeView attention = region.view(anchor);
  const onnx::NodeProto& node = attention.node();
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) return std::optional<RegionClaim>();
  }
  if (attention.input_rank(0) != 4 || !LowerAttention(attention).ok()) return std::optional<RegionClaim>();
  const int transpose = region.sole_consumer(anchor);
  if (transpose < 0 || !IsOnnxOp(region.view(transpose), "Transpose") ||
      region.view(transpose).GetInts("perm") != std::vector<int64_t>{0, 2, 1, 3}) {
    return std::optional<RegionClaim>();
  }
  const int reshape = region.sole_consumer(transpose);
  if (reshape < 0 || !IsOnnxOp(region.view(reshape), "Reshape") || region.view(reshape).opset() < 5 ||
      region.node(reshape).input(0) != region.node(transpose).output(0)) {
    return std::optional<RegionClaim>();
  }
  const std::vector<int64_t>* moved = region.facts().StaticDims(region.node(transpose).output(0));
  const std::vector<int64_t>* merged = region.facts().StaticDims(region.node(reshape).output(0));
  if (!moved || !merged || moved->size() != 4 ||
      *merged != std::vector<int64_t>{(*moved)[0], (*moved)[1], (*moved)[2] * (*moved)[3]}) {
    return std::optional<RegionClaim>();
  }
  RegionClaim claim;
  claim.nodes = {anchor, transpose, reshape};
  claim.inputs.assign(node.input().begin(), node.input().end());
  claim.outputs = {region.node(reshape).output(0)};
  claim.runner = std::make_unique<AttentionNode>(*attention.input_type(0), node, attention.opset());
  return std::optional<RegionClaim>(std::move(claim));
}

}  // namespace

void AddAttentionLowerings(Lowering& lowering) {
  lowering.AddRegion("Attention", LowerAttentionMergedHeads);
  lowering.Add("Attention", LowerAttention);
  lowering.Add("TensorScatter", LowerTensorScatter);
  lowering.Add("RotaryEmbedding", LowerRotaryEmbedding);
}

}  // namespace parity::adapters::onednn
