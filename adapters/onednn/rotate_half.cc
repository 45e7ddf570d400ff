// The rotary embedding as exporters write it without the RotaryEmbedding
// operator ("rotate half"):
//   x * cos + Concat(-x2, x1) * sin,   (x1, x2) = Split(x) in halves along the last axis
// six nodes (Mul, Split, Neg, Concat, Mul, Add) claimed as one region and
// run as four primitives (rotation.h): r = Concat(-x2, x1) by two
// reorders, t = r * sin, out = x * cos + t. In float32 this is the
// graph's arithmetic, rounding for rounding. In a 16-bit type t is rounded
// to it as the graph's Mul rounds it, and x * cos is not (the product of
// two 16-bit values is exact in float32) before the sum is rounded once;
// the error budget of the whole graph judges that (spec/tolerance.md).
#include <algorithm>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/onednn/rotation.h"

namespace parity::adapters::onednn {

RotatedHalves::RotatedHalves(DataType type, const std::vector<int64_t>& dims, const std::vector<int64_t>& sin_dims) {
  const dnnl_dt dt = *DnnlType(type);
  const dnnl::memory::desc whole = PlainDesc(dims, dt);
  bytes_ = whole.get_size();
  half_bytes_ = static_cast<size_t>(dims.back() / 2) * StorageSize(type);
  // A half of x (or of r): x's dims with the last halved, x's strides.
  dnnl_dims half_dims(dims.begin(), dims.end());
  half_dims.back() = dims.back() / 2;
  const dnnl::memory::desc half(half_dims, dt, whole.get_strides());
  const dnnl::memory::desc scale({1}, dnnl_dt::f32, {1});
  dnnl::primitive_attr negated;
  negated.set_scales_mask(DNNL_ARG_SRC, 0);
  negate_x2_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), half, Engine(), half, negated)),
                              {{DNNL_ARG_SRC, half}, {DNNL_ARG_DST, half}, {DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, scale}});
  copy_x1_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), half, Engine(), half)),
                            {{DNNL_ARG_SRC, half}, {DNNL_ARG_DST, half}});
  const dnnl::memory::desc sin = PlainDesc(LeftPad(sin_dims, dims.size()), dt);
  r_sin_ = BoundPrimitive(
      dnnl::binary(dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_mul, whole, sin, whole)),
      {{DNNL_ARG_SRC_0, whole}, {DNNL_ARG_SRC_1, sin}, {DNNL_ARG_DST, whole}});
}

void RotatedHalves::Run(const uint8_t* x, const void* sin, std::vector<uint8_t>& t) const {
  t.resize(bytes_);
  static const float kMinusOne = -1.0f;
  negate_x2_.Run({x + half_bytes_, t.data(), &kMinusOne});
  copy_x1_.Run({x, t.data() + half_bytes_});
  r_sin_.Run({t.data(), sin, t.data()});
}

BoundPrimitive CosPlus(DataType type, const std::vector<int64_t>& dims, const std::vector<int64_t>& cos_dims) {
  const dnnl_dt dt = *DnnlType(type);
  const dnnl::memory::desc whole = PlainDesc(dims, dt);
  const dnnl::memory::desc cos = PlainDesc(LeftPad(cos_dims, dims.size()), dt);
  dnnl::post_ops ops;
  ops.append_binary(dnnl::algorithm::binary_add, whole);
  dnnl::primitive_attr plus_t;
  plus_t.set_post_ops(ops);
  return BoundPrimitive(
      dnnl::binary(dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_mul, whole, cos, whole, plus_t)),
      {{DNNL_ARG_SRC_0, whole}, {DNNL_ARG_SRC_1, cos}, {DNNL_ARG_DST, whole},
       {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, whole}});
}

namespace {

struct RotateHalfPlan {
  RotatedHalves halves;
  BoundPrimitive x_cos_plus;
  std::vector<int64_t> dims;
};

// Inputs: x, cos, sin; every dim known at creation (the claim checks it).
class RotateHalfNode final : public ShapedNode<RotateHalfPlan> {
 public:
  explicit RotateHalfNode(DataType type) : type_(type) {}

 protected:
  StatusOr<RotateHalfPlan> MakePlan(const InputShapes& shapes) override {
    RotateHalfPlan plan;
    plan.dims = shapes[0];
    if (plan.dims.empty() || plan.dims.back() % 2 != 0) return InvalidArgument("x's last dim must be even");
    // cos and sin broadcast to x's dims (the claim checks it).
    plan.halves = RotatedHalves(type_, plan.dims, shapes[2]);
    plan.x_cos_plus = CosPlus(type_, plan.dims, shapes[1]);
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const RotateHalfPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    const uint8_t* x = ctx.tensor(0).raw_bytes();
    plan.halves.Run(x, ctx.tensor(2).raw_bytes(), t_);
    plan.x_cos_plus.Run({x, ctx.tensor(1).raw_bytes(), out.mutable_raw_bytes(), t_.data()});
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  std::vector<uint8_t> t_;  // Concat(-x2, x1), then times sin
};

// The other input of a two-input node that reads `value` once; empty if it does not.
std::string OtherInput(const onnx::NodeProto& node, const std::string& value) {
  if (node.input_size() != 2) return "";
  if (node.input(0) == value && node.input(1) != value) return node.input(1);
  if (node.input(1) == value && node.input(0) != value) return node.input(0);
  return "";
}

}  // namespace

// The region around `x`, the value both the Split and the Mul by cos read.
std::optional<RegionClaim> MatchRotateHalf(const RegionView& region, const std::string& x) {
  const std::vector<int64_t>* dims = region.facts().StaticDims(x);
  const std::optional<DataType> type = region.facts().TypeOf(x);
  if (!dims || dims->empty() || dims->back() <= 0 || dims->back() % 2 != 0 || !type || !IsComputedFloat(*type)) {
    return std::nullopt;
  }
  const int64_t last_axis = static_cast<int64_t>(dims->size()) - 1;
  auto on_last_axis = [&](const NodeView& view, int64_t fallback) {
    int64_t axis = view.GetInt("axis", fallback);
    if (axis < 0) axis += last_axis + 1;
    return axis == last_axis;
  };
  // Split(x) into two equal halves along the last axis.
  int split = -1, mul_cos = -1;
  for (int reader : region.consumers(x)) {
    const NodeView view = region.view(reader);
    if (IsOnnxOp(view, "Split") && view.node().input(0) == x) split = reader;
    if (IsOnnxOp(view, "Mul") && !OtherInput(view.node(), x).empty()) mul_cos = reader;
  }
  if (split < 0 || mul_cos < 0) return std::nullopt;
  const NodeView split_view = region.view(split);
  if (split_view.node().output_size() != 2 || split_view.has_input(1) || split_view.attribute("split") ||
      !on_last_axis(split_view, 0)) {
    return std::nullopt;
  }
  if (split_view.opset() >= 18 && split_view.GetInt("num_outputs", 2) != 2) return std::nullopt;
  // -x2, then Concat(-x2, x1) along the last axis.
  const int neg = region.sole_consumer(split, 1);
  const int concat = region.sole_consumer(split, 0);
  if (neg < 0 || concat < 0 || !IsOnnxOp(region.view(neg), "Neg") || region.sole_consumer(neg) != concat) {
    return std::nullopt;
  }
  const NodeView concat_view = region.view(concat);
  if (!IsOnnxOp(concat_view, "Concat") || concat_view.input_count() != 2 ||
      concat_view.node().input(0) != region.node(neg).output(0) ||
      concat_view.node().input(1) != split_view.node().output(0) || !on_last_axis(concat_view, 0)) {
    return std::nullopt;
  }
  // Concat(...) * sin and x * cos, added.
  const int mul_sin = region.sole_consumer(concat);
  if (mul_sin < 0 || !IsOnnxOp(region.view(mul_sin), "Mul")) return std::nullopt;
  const std::string sin = OtherInput(region.node(mul_sin), region.node(concat).output(0));
  const std::string cos = OtherInput(region.node(mul_cos), x);
  const int add = region.sole_consumer(mul_sin);
  if (sin.empty() || add < 0 || region.sole_consumer(mul_cos) != add || !IsOnnxOp(region.view(add), "Add") ||
      OtherInput(region.node(add), region.node(mul_sin).output(0)) != region.node(mul_cos).output(0)) {
    return std::nullopt;
  }
  for (const int n : {mul_sin, mul_cos, add}) {
    if (region.view(n).opset() < 7) return std::nullopt;  // broadcasting Mul and Add
  }
  for (const std::string& trig : {cos, sin}) {
    const std::vector<int64_t>* trig_dims = region.facts().StaticDims(trig);
    if (!trig_dims || region.facts().TypeOf(trig) != type || !BroadcastsInto(*trig_dims, *dims)) return std::nullopt;
  }
  for (const int n : {split, neg, concat, mul_sin, mul_cos, add}) {
    if (region.taken(n)) return std::nullopt;
  }
  RegionClaim claim;
  claim.nodes = {mul_cos, split, neg, concat, mul_sin, add};
  claim.inputs = {x, cos, sin};
  claim.outputs = {region.node(add).output(0)};
  return claim;
}

namespace {

// Anchored at the Mul by cos or at the Split, whichever comes first in the
// graph's order; the other anchor finds its members taken.
StatusOr<std::optional<RegionClaim>> LowerRotateHalf(const RegionView& region) {
  const onnx::NodeProto& anchor = region.node(region.anchor());
  std::optional<RegionClaim> claim;
  if (anchor.op_type() == "Split") {
    claim = MatchRotateHalf(region, anchor.input(0));
  } else {
    for (int i = 0; i < anchor.input_size() && !claim; ++i) claim = MatchRotateHalf(region, anchor.input(i));
  }
  if (!claim || std::find(claim->nodes.begin(), claim->nodes.end(), region.anchor()) == claim->nodes.end()) {
    return std::optional<RegionClaim>();
  }
  const DataType type = *region.facts().TypeOf(claim->inputs[0]);
  if (!PrepareRegion(std::make_unique<RotateHalfNode>(type), region, *claim).ok()) {
    return std::optional<RegionClaim>();  // oneDNN refused: the nodes are lowered one by one
  }
  return claim;
}

}  // namespace

void AddRotateHalfRegions(Lowering& lowering) {
  lowering.AddRegion("Mul", LowerRotateHalf);
  lowering.AddRegion("Split", LowerRotateHalf);
}

}  // namespace parity::adapters::onednn
