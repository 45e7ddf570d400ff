// RotaryEmbedding-23 on oneDNN's binary primitive. Each pair (x1, x2) of
// a head's first rotary_embedding_dim features becomes
//   x1 * cos - x2 * sin,  x1 * sin + x2 * cos
// as two binary products whose second term is a float32 temporary and
// whose sum is a binary post-op, the pairs read through strided views of
// x (halves, or even and odd features when interleaved), cos and sin
// broadcast over the heads. The rest of each head is copied by a reorder.
// In float32 each product and the sum round once in float32 (the
// elementwise_compound tolerance); a 16-bit product is exact in float32,
// so only the sum rounds before the output's one rounding.
#include <cstring>

#include "adapters/onednn/attention_parts.h"
#include "reference/ops/common.h"

namespace parity::adapters::onednn {
namespace {

using tag = dnnl::memory::format_tag;

struct RotaryPlan {
  dnnl::binary x2_sin, x2_cos;    // temporaries
  dnnl::binary x1_cos_minus, x1_sin_plus;  // outputs, with the temporary as a post-op
  dnnl::memory::desc x1, x2, trig, temp;
};

class RotaryNode final : public LoweredNode {
 public:
  explicit RotaryNode(DataType type) : type_(type), dt_(*DnnlType(type)) {}
  bool deferred() const override { return true; }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    try {
      return Compute(ctx);
    } catch (const dnnl::error& e) {
      return ctx.Error("running its oneDNN primitives failed: ", DnnlError(e));
    }
  }

 private:
  StatusOr<std::vector<Value>> Compute(const KernelContext& ctx);

  DataType type_;
  dnnl_dt dt_;
  std::map<std::vector<int64_t>, RotaryPlan> plans_;
  ReorderCache reorders_;
  std::vector<uint8_t> cos_rows_, sin_rows_;
  std::vector<float> t_, u_;
};

StatusOr<std::vector<Value>> RotaryNode::Compute(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* cos_cache, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* sin_cache, ctx.RequireTensor(2));
  for (const Tensor* t : {x, cos_cache, sin_cache}) {
    if (t->dtype() != type_) return ctx.Error("was lowered for ", DataTypeName(type_), " inputs, got ", t->Description());
  }
  const Tensor* position_ids = nullptr;
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(position_ids, ctx.RequireTensor(3));
  }
  const bool interleaved = ctx.GetInt("interleaved", 0) != 0;
  // The checks and messages of the reference (reference/ops/attention/rotary_embedding.cc).
  int64_t batch = 0, seq = 0, heads = 0, head_size = 0;
  if (x->rank() == 4) {
    batch = x->dim(0), heads = x->dim(1), seq = x->dim(2), head_size = x->dim(3);
  } else if (x->rank() == 3) {
    const int64_t num_heads = ctx.GetInt("num_heads", 0);
    if (num_heads <= 0) return ctx.Error("a 3-D input needs a positive num_heads attribute");
    if (x->dim(2) % num_heads != 0) {
      return ctx.Error("hidden size ", x->dim(2), " is not a multiple of num_heads ", num_heads);
    }
    batch = x->dim(0), seq = x->dim(1), heads = num_heads, head_size = x->dim(2) / num_heads;
  } else {
    return ctx.Error("input must be 3-D or 4-D, got ", x->Description());
  }
  int64_t rotary_dim = ctx.GetInt("rotary_embedding_dim", 0);
  if (rotary_dim == 0) rotary_dim = head_size;
  if (rotary_dim < 0 || rotary_dim > head_size || rotary_dim % 2 != 0) {
    return ctx.Error("rotary_embedding_dim ", rotary_dim, " must be even and at most the head size ", head_size);
  }
  const int64_t half = rotary_dim / 2;
  if (cos_cache->shape() != sin_cache->shape() || cos_cache->rank() < 1 ||
      cos_cache->dim(cos_cache->rank() - 1) != half) {
    return ctx.Error("cos_cache ", cos_cache->Description(), " and sin_cache ", sin_cache->Description(),
                     " must have the same shape with last dimension ", half);
  }
  const size_t width = StorageSize(type_);
  const uint8_t* cos_base = cos_cache->raw_bytes();
  const uint8_t* sin_base = sin_cache->raw_bytes();
  if (position_ids) {
    if (cos_cache->rank() != 2) return ctx.Error("with position_ids the caches must be 2-D, got ", cos_cache->Description());
    if (position_ids->shape() != Shape({batch, seq})) {
      return ctx.Error("position_ids ", position_ids->Description(), " must have shape [", batch, ", ", seq, "]");
    }
    // The caches' rows of each (batch, position), gathered: moved, not computed.
    const size_t row = static_cast<size_t>(half) * width;
    cos_rows_.resize(static_cast<size_t>(batch * seq) * row);
    sin_rows_.resize(cos_rows_.size());
    for (int64_t i = 0; i < batch * seq; ++i) {
      const int64_t p = position_ids->GetInt64(i);
      if (p < 0 || p >= cos_cache->dim(0)) return ctx.Error("position id ", p, " is outside the cache of ", cos_cache->dim(0));
      if (row == 0) continue;
      std::memcpy(cos_rows_.data() + static_cast<size_t>(i) * row, cos_base + static_cast<size_t>(p) * row, row);
      std::memcpy(sin_rows_.data() + static_cast<size_t>(i) * row, sin_base + static_cast<size_t>(p) * row, row);
    }
    cos_base = cos_rows_.data();
    sin_base = sin_rows_.data();
  } else if (cos_cache->shape() != Shape({batch, seq, half})) {
    return ctx.Error("without position_ids the caches must have shape [", batch, ", ", seq, ", ", half, "], got ",
                     cos_cache->Description());
  }

  PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, x->shape()));
  if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
  // Features past rotary_embedding_dim pass through: copy all, then rotate.
  const dnnl::memory::desc whole({x->size()}, dt_, {1});
  reorders_.Run(ViewAt(whole, x->raw_bytes(), 0), ViewAt(whole, out.raw_bytes(), 0));
  if (half == 0) {
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

  // [batch, seq, heads, half] views: the strides of a (b, s, h) head row in x.
  const bool four_d = x->rank() == 4;
  const dnnl_dims strides = four_d ? dnnl_dims{heads * seq * head_size, head_size, seq * head_size, interleaved ? 2 : 1}
                                   : dnnl_dims{seq * heads * head_size, heads * head_size, head_size, interleaved ? 2 : 1};
  const int64_t x2_offset = interleaved ? 1 : half;
  const std::vector<int64_t> key = {batch, seq, heads, head_size, half, four_d, interleaved};
  auto found = plans_.find(key);
  if (found == plans_.end()) {
    RotaryPlan plan;
    const dnnl_dims dims = {batch, seq, heads, half};
    plan.x1 = dnnl::memory::desc(dims, dt_, strides);
    plan.x2 = plan.x1;
    plan.trig = dnnl::memory::desc({batch, seq, 1, half}, dt_, {seq * half, half, half, 1});
    plan.temp = dnnl::memory::desc(dims, dnnl_dt::f32, tag::abcd);
    auto product = [&](const dnnl::memory::desc& dst, dnnl::algorithm post, bool with_post) {
      dnnl::primitive_attr attr;
      if (with_post) {
        dnnl::post_ops ops;
        ops.append_binary(post, plan.temp);
        attr.set_post_ops(ops);
      }
      return dnnl::binary(dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_mul, plan.x1, plan.trig, dst, attr));
    };
    plan.x2_sin = product(plan.temp, dnnl::algorithm::binary_add, false);
    plan.x2_cos = plan.x2_sin;
    plan.x1_cos_minus = product(plan.x1, dnnl::algorithm::binary_sub, true);
    plan.x1_sin_plus = product(plan.x1, dnnl::algorithm::binary_add, true);
    found = plans_.emplace(key, std::move(plan)).first;
    Counts().at_run += 1;
  }
  const RotaryPlan& plan = found->second;
  const size_t count = static_cast<size_t>(batch * seq * heads * half);
  t_.resize(count);
  u_.resize(count);
  dnnl::memory t(plan.temp, Engine(), t_.data()), u(plan.temp, Engine(), u_.data());
  dnnl::memory x1 = ViewAt(plan.x1, x->raw_bytes(), 0), x2 = ViewAt(plan.x2, x->raw_bytes(), x2_offset);
  dnnl::memory c = ViewAt(plan.trig, cos_base, 0), s = ViewAt(plan.trig, sin_base, 0);
  // t = x2 sin, u = x2 cos; then out1 = x1 cos - t, out2 = x1 sin + u.
  plan.x2_sin.execute(Stream(), {{DNNL_ARG_SRC_0, x2}, {DNNL_ARG_SRC_1, s}, {DNNL_ARG_DST, t}});
  plan.x2_cos.execute(Stream(), {{DNNL_ARG_SRC_0, x2}, {DNNL_ARG_SRC_1, c}, {DNNL_ARG_DST, u}});
  const int post = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
  plan.x1_cos_minus.execute(Stream(), {{DNNL_ARG_SRC_0, x1}, {DNNL_ARG_SRC_1, c},
                                       {DNNL_ARG_DST, ViewAt(plan.x1, out.raw_bytes(), 0)}, {post, t}});
  plan.x1_sin_plus.execute(Stream(), {{DNNL_ARG_SRC_0, x1}, {DNNL_ARG_SRC_1, s},
                                      {DNNL_ARG_DST, ViewAt(plan.x2, out.raw_bytes(), x2_offset)}, {post, u}});
  Stream().wait();
  return std::vector<Value>{Value::FromTensor(std::move(out))};
}

}  // namespace

StatusOr<std::unique_ptr<LoweredNode>> LowerRotaryEmbedding(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2}));
  return std::unique_ptr<LoweredNode>(std::make_unique<RotaryNode>(*view.input_type(0)));
}

}  // namespace parity::adapters::onednn
