// MatMul and Gemm on oneDNN's matmul primitive: float32 and the 16-bit
// floats this CPU computes, accumulating in float32 (oneDNN's rule), with
// Gemm's alpha as a source scale and its C as a binary-add post-op.
#include <algorithm>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

struct MatMulPlan {
  dnnl::matmul primitive;
  dnnl::memory::desc src, weights, dst, bias;  // bias: Gemm's C, when it has one
  std::vector<int64_t> out_dims;               // the ONNX output's dims
  DataType type = DataType::kFloat;
  float alpha = 1;
};

// ONNX MatMul (numpy's rules): a 1-D operand gains a dim of 1 that the
// result drops; batch dims broadcast.
class MatMulNode final : public ShapedNode<MatMulPlan> {
 public:
  explicit MatMulNode(DataType type) : type_(type) {}

 protected:
  StatusOr<MatMulPlan> MakePlan(const InputShapes& shapes) override {
    std::vector<int64_t> a = shapes[0], b = shapes[1];
    if (a.empty() || b.empty()) return InvalidArgument("MatMul of a scalar");
    const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    const size_t rank = std::max(a.size(), b.size());
    a = LeftPad(a, rank);
    b = LeftPad(b, rank);
    if (a[rank - 1] != b[rank - 2]) {
      return InvalidArgument("MatMul of [", a[rank - 2], ", ", a[rank - 1], "] by [", b[rank - 2], ", ", b[rank - 1],
                             "]: inner dims differ");
    }
    std::vector<int64_t> c(rank);
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return InvalidArgument("MatMul batch dims do not broadcast");
      c[i] = std::max(a[i], b[i]);
      if (a[i] == 0 || b[i] == 0) c[i] = 0;
    }
    c[rank - 2] = a[rank - 2];
    c[rank - 1] = b[rank - 1];
    MatMulPlan plan;
    plan.type = type_;
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(a, dt);
    plan.weights = PlainDesc(b, dt);
    plan.dst = PlainDesc(c, dt);
    plan.out_dims = c;
    if (a_vector) plan.out_dims.erase(plan.out_dims.end() - 2);
    if (b_vector) plan.out_dims.pop_back();
    plan.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.src, plan.weights, plan.dst));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const MatMulPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.type, plan.out_dims));
    if (out.size() > 0 && ctx.tensor(0).size() > 0 && ctx.tensor(1).size() > 0) {
      plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)},
                                        {DNNL_ARG_WEIGHTS, Wrap(ctx.tensor(1), plan.weights)},
                                        {DNNL_ARG_DST, Wrap(out, plan.dst)}});
      Stream().wait();
    } else if (out.size() > 0) {
      std::fill(out.mutable_raw_bytes(), out.mutable_raw_bytes() + out.byte_size(), 0);  // K = 0: sums of nothing
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
};

// Gemm: alpha * A' B' + C, with A' and B' read through transposed strides.
class GemmNode final : public ShapedNode<MatMulPlan> {
 public:
  GemmNode(DataType type, bool trans_a, bool trans_b, float alpha, bool has_c)
      : type_(type), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), has_c_(has_c) {}

 protected:
  StatusOr<MatMulPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& a = shapes[0];
    const std::vector<int64_t>& b = shapes[1];
    if (a.size() != 2 || b.size() != 2) return InvalidArgument("Gemm takes 2-D A and B");
    const int64_t m = trans_a_ ? a[1] : a[0], k = trans_a_ ? a[0] : a[1];
    const int64_t kb = trans_b_ ? b[1] : b[0], n = trans_b_ ? b[0] : b[1];
    if (k != kb) return InvalidArgument("Gemm: A' is [", m, ", ", k, "] and B' is [", kb, ", ", n, "]");
    MatMulPlan plan;
    plan.type = type_;
    plan.alpha = alpha_;
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = trans_a_ ? dnnl::memory::desc({m, k}, dt, {1, m}) : dnnl::memory::desc({m, k}, dt, {k, 1});
    plan.weights = trans_b_ ? dnnl::memory::desc({k, n}, dt, {1, k}) : dnnl::memory::desc({k, n}, dt, {n, 1});
    plan.dst = PlainDesc({m, n}, dt);
    plan.out_dims = {m, n};
    dnnl::primitive_attr attr;
    if (alpha_ != 1) attr.set_scales_mask(DNNL_ARG_SRC, 0);
    if (has_c_) {  // C may be a scalar, whose dims are empty as an absent input's are
      std::vector<int64_t> c = LeftPad(shapes[2], 2);
      if (c.size() != 2 || (c[0] != 1 && c[0] != m) || (c[1] != 1 && c[1] != n)) {
        return InvalidArgument("Gemm: C does not broadcast to [", m, ", ", n, "]");
      }
      plan.bias = PlainDesc(c, dt);
      dnnl::post_ops ops;
      ops.append_binary(dnnl::algorithm::binary_add, plan.bias);
      attr.set_post_ops(ops);
    }
    plan.primitive =
        dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.src, plan.weights, plan.dst, attr));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const MatMulPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.type, plan.out_dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)},
                                                  {DNNL_ARG_WEIGHTS, Wrap(ctx.tensor(1), plan.weights)},
                                                  {DNNL_ARG_DST, Wrap(out, plan.dst)}};
    float alpha = plan.alpha;
    if (alpha != 1) {
      args[DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC] =
          dnnl::memory(dnnl::memory::desc({1}, dnnl_dt::f32, {1}), Engine(), &alpha);
    }
    if (!plan.bias.is_zero()) {
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = Wrap(ctx.tensor(2), plan.bias);
    }
    plan.primitive.execute(Stream(), args);
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  bool trans_a_, trans_b_;
  float alpha_;
  bool has_c_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerMatMul(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1}));
  if (view.input_rank(0) == 0 || view.input_rank(1) == 0) return NotLowered("a scalar operand");
  return Prepared(std::make_unique<MatMulNode>(*view.input_type(0)), view);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerGemm(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2}));
  const float beta = view.GetFloat("beta", 1.0f);
  if (view.has_input(2) && beta != 1.0f) return NotLowered("beta ", beta, " (oneDNN adds C unscaled)");
  return Prepared(std::make_unique<GemmNode>(*view.input_type(0), view.GetInt("transA", 0) != 0,
                                             view.GetInt("transB", 0) != 0, view.GetFloat("alpha", 1.0f),
                                             view.has_input(2)),
                  view);
}

}  // namespace

void AddMatMulLowerings(Lowering& lowering) {
  lowering.Add("MatMul", LowerMatMul);
  lowering.Add("Gemm", LowerGemm);
}

}  // namespace parity::adapters::onednn
