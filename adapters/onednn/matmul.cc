// MatMul and Gemm on oneDNN's matmul primitive: float32 and the 16-bit
// floats this CPU computes, accumulating in float32 (oneDNN's rule), with
// Gemm's alpha as a source scale and its C as a binary-add post-op; and the
// region of a MatMul or Gemm with the bias Add and the activation after it.
#include <algorithm>
#include <cstring>
#include <cmath>
#include <optional>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

struct MatMulPlan {
  // The matmul with src, weights and dst bound, then Gemm's alpha (a
  // source scale) when it is not 1 and its C (a binary-add post-op).
  BoundPrimitive bound;
  dnnl::memory::desc src, weights, dst, bias;  // bias: Gemm's C, when it has one
  std::vector<int64_t> out_dims;               // the ONNX output's dims
  DataType type = DataType::kFloat;
  float alpha = 1;
  int64_t k = 0;  // the sums' length (Gemm: with K = 0 the result is C alone)
};

// ONNX MatMul (numpy's rules): a 1-D operand gains a dim of 1 that the
// result drops; batch dims broadcast.
class MatMulNode final : public ShapedNode<MatMulPlan> {
 public:
  explicit MatMulNode(DataType type) : type_(type) {}

 protected:
  StatusOr<MatMulPlan> MakePlan(const InputShapes& shapes) override {
    PARITY_ASSIGN_OR_RETURN(const MatMulShapes dims, NumpyMatMulShapes(shapes[0], shapes[1]));
    MatMulPlan plan;
    plan.type = type_;
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(dims.a, dt);
    plan.weights = PlainDesc(dims.b, dt);
    plan.dst = PlainDesc(dims.c, dt);
    plan.out_dims = dims.out;
    plan.bound = BoundPrimitive(dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.src, plan.weights, plan.dst)),
                                {{DNNL_ARG_SRC, plan.src}, {DNNL_ARG_WEIGHTS, plan.weights}, {DNNL_ARG_DST, plan.dst}});
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const MatMulPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.type, plan.out_dims));
    if (out.size() > 0 && ctx.tensor(0).size() > 0 && ctx.tensor(1).size() > 0) {
      plan.bound.Run({ctx.tensor(0).raw_bytes(), ctx.tensor(1).raw_bytes(), out.mutable_raw_bytes()});
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
    plan.k = k;
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
    std::vector<std::pair<int, dnnl::memory::desc>> args = {
        {DNNL_ARG_SRC, plan.src}, {DNNL_ARG_WEIGHTS, plan.weights}, {DNNL_ARG_DST, plan.dst}};
    if (alpha_ != 1) args.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, dnnl::memory::desc({1}, dnnl_dt::f32, {1})});
    if (has_c_) args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, plan.bias});
    plan.bound = BoundPrimitive(
        dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.src, plan.weights, plan.dst, attr)), args);
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const MatMulPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.type, plan.out_dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    if (plan.k == 0) {
      // Sums of nothing: alpha x 0 + C (beta is 1 when C is there), C
      // broadcast over [M, N]: element copies, no arithmetic.
      const int64_t n = plan.out_dims[1];
      const size_t width = StorageSize(plan.type);
      std::fill(out.mutable_raw_bytes(), out.mutable_raw_bytes() + out.byte_size(), 0);
      if (!plan.bias.is_zero()) {
        const Tensor& c = ctx.tensor(2);
        const std::vector<int64_t> c_dims = LeftPad(c.shape(), 2);
        for (int64_t i = 0; i < out.size(); ++i) {
          const int64_t row = c_dims[0] == 1 ? 0 : i / n, col = c_dims[1] == 1 ? 0 : i % n;
          std::memcpy(out.mutable_raw_bytes() + i * width, c.raw_bytes() + (row * c_dims[1] + col) * width, width);
        }
      }
      return std::vector<Value>{Value::FromTensor(std::move(out))};
    }
    const void* c = has_c_ ? ctx.tensor(2).raw_bytes() : nullptr;
    if (plan.alpha != 1) {
      plan.bound.Run({ctx.tensor(0).raw_bytes(), ctx.tensor(1).raw_bytes(), out.mutable_raw_bytes(), &plan.alpha, c});
    } else {
      plan.bound.Run({ctx.tensor(0).raw_bytes(), ctx.tensor(1).raw_bytes(), out.mutable_raw_bytes(), c});
    }
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


// --- The region: MatMul or Gemm, then a bias Add, an activation, a gate ---
//
// The nodes that follow a MatMul (or Gemm) along a chain of sole consumers
// become post-ops of its matmul primitive: an Add of any tensor that
// broadcasts to the product's dims without widening it (a binary-add
// post-op), then an activation that oneDNN's eltwise post-op computes as
// ONNX does (SiLU written as x * Sigmoid(x), two nodes, among them), then
// a Mul by such a tensor (a binary-mul post-op: the gate of a SwiGLU
// feed-forward layer). The whole chain is computed in float32 and rounded once.
// Relu is not among them: oneDNN's relu maps NaN to 0 (eltwise.cc runs it as
// a binary max instead), nor Exp (NaN to +inf), HardSigmoid (NaN to 1), Log,
// Softplus, Mish and Gelu with erf (eltwise.cc says why).

struct Activation {
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  float alpha = 0, beta = 0;
};

std::optional<Activation> FusableActivation(const NodeView& view) {
  if (!view.node().domain().empty() && view.node().domain() != "ai.onnx") return std::nullopt;
  const std::string& op = view.node().op_type();
  using dnnl::algorithm;
  if (op == "Tanh") return Activation{algorithm::eltwise_tanh};
  if (op == "Sigmoid") return Activation{algorithm::eltwise_logistic};
  if (op == "Elu") return Activation{algorithm::eltwise_elu, view.GetFloat("alpha", 1.0f)};
  if (op == "HardSwish") return Activation{algorithm::eltwise_hardswish, 1.0f / 6.0f, 0.5f};
  if (op == "Swish") return Activation{algorithm::eltwise_swish, view.GetFloat("alpha", 1.0f)};
  if (op == "Gelu" && view.GetString("approximate", "none") == "tanh") return Activation{algorithm::eltwise_gelu_tanh};
  if (op == "LeakyRelu") {
    // alpha 0 maps NaN and -inf to 0 in oneDNN; ONNX's 0 * x is NaN there.
    const float alpha = view.GetFloat("alpha", 0.01f);
    if (alpha != 0 && !std::isnan(alpha)) return Activation{algorithm::eltwise_relu, alpha};
  }
  return std::nullopt;
}

struct FusedPlan {
  // The matmul with its arguments bound in the order A, B, dst, [alpha],
  // then the region's other inputs (C, bias, gate) as they come.
  BoundPrimitive primitive;
  dnnl::memory::desc src, weights, dst;
  std::vector<dnnl::memory::desc> addends;  // C and the bias, in post-op order
  dnnl::memory::desc gate;                  // the Mul's other operand, when it is fused
  std::vector<int64_t> out_dims;
};

// The region's runner. Inputs: A, B, then Gemm's C when it has one, then
// the bias when the Add is fused, then the gate when the Mul is.
class FusedMatMulNode final : public ShapedNode<FusedPlan> {
 public:
  FusedMatMulNode(DataType type, bool gemm, bool trans_a, bool trans_b, float alpha, int addends,
                  std::optional<Activation> activation, bool gated)
      : type_(type), gemm_(gemm), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), addends_(addends),
        activation_(activation), gated_(gated) {}

 protected:
  StatusOr<FusedPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& a = shapes[0];
    const std::vector<int64_t>& b = shapes[1];
    const dnnl_dt dt = *DnnlType(type_);
    FusedPlan plan;
    if (gemm_) {
      if (a.size() != 2 || b.size() != 2) return InvalidArgument("Gemm takes 2-D A and B");
      const int64_t m = trans_a_ ? a[1] : a[0], k = trans_a_ ? a[0] : a[1];
      const int64_t kb = trans_b_ ? b[1] : b[0], n = trans_b_ ? b[0] : b[1];
      if (k != kb) return InvalidArgument("Gemm: A' is [", m, ", ", k, "] and B' is [", kb, ", ", n, "]");
      plan.src = trans_a_ ? dnnl::memory::desc({m, k}, dt, {1, m}) : dnnl::memory::desc({m, k}, dt, {k, 1});
      plan.weights = trans_b_ ? dnnl::memory::desc({k, n}, dt, {1, k}) : dnnl::memory::desc({k, n}, dt, {n, 1});
      plan.out_dims = {m, n};
    } else {
      // Both operands have rank 2 or more (the region's claim checks it), so
      // the output's dims are the product's.
      PARITY_ASSIGN_OR_RETURN(const MatMulShapes dims, NumpyMatMulShapes(a, b));
      plan.out_dims = dims.c;
      plan.src = PlainDesc(dims.a, dt);
      plan.weights = PlainDesc(dims.b, dt);
    }
    plan.dst = PlainDesc(plan.out_dims, dt);
    dnnl::primitive_attr attr;
    if (alpha_ != 1) attr.set_scales_mask(DNNL_ARG_SRC, 0);
    dnnl::post_ops ops;
    for (int i = 0; i < addends_; ++i) {
      const std::vector<int64_t> addend = LeftPad(shapes[static_cast<size_t>(2 + i)], plan.out_dims.size());
      if (addend.size() != plan.out_dims.size()) return InvalidArgument("an addend of higher rank than the product");
      for (size_t d = 0; d < addend.size(); ++d) {
        if (addend[d] != 1 && addend[d] != plan.out_dims[d]) return InvalidArgument("an addend that does not broadcast to the product");
      }
      plan.addends.push_back(PlainDesc(addend, dt));
      ops.append_binary(dnnl::algorithm::binary_add, plan.addends.back());
    }
    if (activation_) ops.append_eltwise(activation_->algorithm, activation_->alpha, activation_->beta);
    if (gated_) {
      const std::vector<int64_t> gate = LeftPad(shapes[static_cast<size_t>(2 + addends_)], plan.out_dims.size());
      if (!BroadcastsInto(gate, plan.out_dims)) return InvalidArgument("a gate that does not broadcast to the product");
      plan.gate = PlainDesc(gate, dt);
      ops.append_binary(dnnl::algorithm::binary_mul, plan.gate);
    }
    attr.set_post_ops(ops);
    std::vector<std::pair<int, dnnl::memory::desc>> args = {
        {DNNL_ARG_SRC, plan.src}, {DNNL_ARG_WEIGHTS, plan.weights}, {DNNL_ARG_DST, plan.dst}};
    if (alpha_ != 1) args.push_back({DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, dnnl::memory::desc({1}, dnnl_dt::f32, {1})});
    for (size_t i = 0; i < plan.addends.size(); ++i) {
      args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1, plan.addends[i]});
    }
    if (gated_) {
      // Its post-op comes after the addends' and the activation's.
      const int index = static_cast<int>(plan.addends.size()) + (activation_ ? 1 : 0);
      args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, plan.gate});
    }
    plan.primitive = BoundPrimitive(
        dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.src, plan.weights, plan.dst, attr)), args);
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const FusedPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    const void* a = ctx.tensor(0).raw_bytes();
    const void* b = ctx.tensor(1).raw_bytes();
    void* dst = out.mutable_raw_bytes();
    // Up to three more inputs: C, the bias, the gate.
    const void* rest[3] = {};
    for (size_t i = 2; i < ctx.input_count() && i < 5; ++i) rest[i - 2] = ctx.tensor(i).raw_bytes();
    if (alpha_ != 1) {
      plan.primitive.Run({a, b, dst, &alpha_, rest[0], rest[1], rest[2]});
    } else {
      plan.primitive.Run({a, b, dst, rest[0], rest[1], rest[2]});
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  bool gemm_, trans_a_, trans_b_;
  float alpha_;
  int addends_;
  std::optional<Activation> activation_;
  bool gated_;
};

// No region at this anchor: the single-node lowering is tried.
StatusOr<std::optional<RegionClaim>> NoRegion() { return std::optional<RegionClaim>(); }

// SiLU as exporters write it: `value` (output 0 of node `producer`) read by
// exactly a Sigmoid and a Mul of it by that Sigmoid's output, neither a
// graph output nor taken. The Sigmoid and the Mul, or nullopt.
std::optional<std::pair<int, int>> SiluAfter(const RegionView& region, int producer) {
  const std::string& value = region.node(producer).output(0);
  const std::vector<int>& readers = region.consumers(value);
  if (readers.size() != 2 || region.is_graph_output(value)) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const int sigmoid = readers[static_cast<size_t>(k)], mul = readers[static_cast<size_t>(1 - k)];
    if (!IsOnnxOp(region.view(sigmoid), "Sigmoid") || !IsOnnxOp(region.view(mul), "Mul") ||
        region.view(mul).opset() < 7 || region.sole_consumer(sigmoid) != mul || region.taken(mul)) {
      continue;
    }
    const onnx::NodeProto& m = region.node(mul);
    const std::string& gate = region.node(sigmoid).output(0);
    if (m.input_size() == 2 && ((m.input(0) == value && m.input(1) == gate) || (m.input(1) == value && m.input(0) == gate))) {
      return std::make_pair(sigmoid, mul);
    }
  }
  return std::nullopt;
}

StatusOr<std::optional<RegionClaim>> LowerMatMulRegion(const RegionView& region) {
  const int anchor = region.anchor();
  const NodeView mm = region.view(anchor);
  const bool gemm = mm.node().op_type() == "Gemm";
  // Only what the single-node lowering would claim, with every dim known
  // (the bias must not widen the product) and none zero (an empty sum).
  if (!RequireSameComputedFloat(mm, {0, 1, 2}).ok()) return NoRegion();
  const DataType type = *mm.input_type(0);
  const std::vector<int64_t>* a = mm.input_dims(0);
  const std::vector<int64_t>* b = mm.input_dims(1);
  if (!a || !b || a->size() < 2 || b->size() < 2) return NoRegion();
  if (gemm && (a->size() != 2 || b->size() != 2)) return NoRegion();
  for (const auto* dims : {a, b}) {
    for (int64_t d : *dims) {
      if (d == 0) return NoRegion();
    }
  }
  const bool has_c = gemm && mm.has_input(2);
  if (has_c && (mm.GetFloat("beta", 1.0f) != 1.0f || !mm.input_dims(2))) return NoRegion();
  const bool trans_a = gemm && mm.GetInt("transA", 0) != 0, trans_b = gemm && mm.GetInt("transB", 0) != 0;
  std::vector<int64_t> out;
  if (gemm) {
    out = {trans_a ? (*a)[1] : (*a)[0], trans_b ? (*b)[0] : (*b)[1]};
  } else {
    // Shapes that do not multiply are left to the single-node lowering,
    // which says why.
    StatusOr<MatMulShapes> dims = NumpyMatMulShapes(*a, *b);
    if (!dims.ok()) return NoRegion();
    out = dims->c;
  }
  if (has_c && !BroadcastsInto(*mm.input_dims(2), out)) return NoRegion();

  RegionClaim claim;
  claim.nodes = {anchor};
  claim.inputs = {mm.node().input(0), mm.node().input(1)};
  if (has_c) claim.inputs.push_back(mm.node().input(2));
  int last = anchor;
  int next = region.sole_consumer(anchor);
  if (next >= 0) {
    const NodeView add = region.view(next);
    const std::string& product = region.node(last).output(0);
    if (add.node().op_type() == "Add" && (add.node().domain().empty() || add.node().domain() == "ai.onnx") &&
        add.opset() >= 7 && add.input_count() == 2 && (add.node().input(0) == product) != (add.node().input(1) == product)) {
      const std::string& bias = add.node().input(0) == product ? add.node().input(1) : add.node().input(0);
      const std::vector<int64_t>* dims = region.facts().StaticDims(bias);
      if (region.facts().TypeOf(bias) == type && dims && BroadcastsInto(*dims, out)) {
        claim.nodes.push_back(next);
        claim.inputs.push_back(bias);
        last = next;
        next = region.sole_consumer(next);
      }
    }
  }
  std::optional<Activation> activation;
  if (next >= 0) {
    activation = FusableActivation(region.view(next));
    if (activation) {
      claim.nodes.push_back(next);
      last = next;
      next = region.sole_consumer(next);
    }
  } else if (const std::optional<std::pair<int, int>> silu = SiluAfter(region, last)) {
    activation = Activation{dnnl::algorithm::eltwise_swish, 1.0f};
    claim.nodes.push_back(silu->first);
    claim.nodes.push_back(silu->second);
    last = silu->second;
    next = region.sole_consumer(last);
  }
  const int addends = static_cast<int>(claim.inputs.size()) - 2;
  bool gated = false;
  if (next >= 0 && IsOnnxOp(region.view(next), "Mul") && region.view(next).opset() >= 7) {
    const onnx::NodeProto& mul = region.node(next);
    const std::string& value = region.node(last).output(0);
    if (mul.input_size() == 2 && (mul.input(0) == value) != (mul.input(1) == value)) {
      const std::string& gate = mul.input(0) == value ? mul.input(1) : mul.input(0);
      const std::vector<int64_t>* dims = region.facts().StaticDims(gate);
      if (region.facts().TypeOf(gate) == type && dims && BroadcastsInto(*dims, out)) {
        claim.nodes.push_back(next);
        claim.inputs.push_back(gate);
        last = next;
        gated = true;
      }
    }
  }
  if (claim.nodes.size() == 1) return NoRegion();
  claim.outputs = {region.node(last).output(0)};
  auto node = std::make_unique<FusedMatMulNode>(type, gemm, trans_a, trans_b, gemm ? mm.GetFloat("alpha", 1.0f) : 1.0f,
                                                addends, activation, gated);
  // The shapes are all static: the plan is made now, through a view of the
  // region's inputs.
  PARITY_RETURN_IF_ERROR(PrepareRegion(std::move(node), region, claim));
  return std::optional<RegionClaim>(std::move(claim));
}

}  // namespace

void AddMatMulLowerings(Lowering& lowering) {
  lowering.Add("MatMul", LowerMatMul);
  lowering.Add("Gemm", LowerGemm);
  lowering.AddRegion("MatMul", LowerMatMulRegion);
  lowering.AddRegion("Gemm", LowerMatMulRegion);
}

}  // namespace parity::adapters::onednn
