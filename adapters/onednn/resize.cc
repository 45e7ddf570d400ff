// The oneDNN lowering of Resize on oneDNN's resampling primitive, for the
// forms whose results are ONNX's:
// - oneDNN maps output position o to input coordinate
//   (o + 0.5) * in / out - 0.5, which is ONNX's half_pixel with the scale
//   out / in, and pytorch_half_pixel when no output extent is 1;
// - its nearest rounds that coordinate half up (half away from zero, and
//   the coordinate is never below -0.5): ONNX's round_prefer_ceil, and
//   round_prefer_floor too on an axis where no coordinate is a tie;
// - its linear clamps to the edge as ONNX's does.
// The output extents must be known when the node is claimed: a constant
// `sizes` input (an initializer or Constant). A `scales` input is refused:
// its float values are not among the static facts, and ONNX's coordinate
// uses the given scale, which differs from out / in when in * scale is not
// whole. Antialias, axes, other keep_aspect_ratio_policy values, cubic and
// the other coordinate modes are refused.
#include <string>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

struct ResizePlan {
  dnnl::resampling_forward primitive;
  dnnl::memory::desc src, dst;
};

class ResizeNode final : public ShapedNode<ResizePlan> {
 public:
  ResizeNode(DataType type, dnnl::algorithm algorithm, std::vector<int64_t> sizes)
      : type_(type), algorithm_(algorithm), sizes_(std::move(sizes)) {}

 protected:
  StatusOr<ResizePlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    if (x.size() != sizes_.size() || x[0] != sizes_[0] || x[1] != sizes_[1]) {
      return InvalidArgument("Resize: sizes do not keep X's rank, N and C");
    }
    ResizePlan plan;
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(x, dt);
    plan.dst = PlainDesc(sizes_, dt);
    plan.primitive = dnnl::resampling_forward(dnnl::resampling_forward::primitive_desc(
        Engine(), dnnl::prop_kind::forward_inference, algorithm_, plan.src, plan.dst));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ResizePlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, sizes_));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)}, {DNNL_ARG_DST, Wrap(out, plan.dst)}});
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  dnnl::algorithm algorithm_;
  std::vector<int64_t> sizes_;
};

// Whether some output position of an axis maps to a coordinate halfway
// between two inputs: (o + 0.5) * in / out - 0.5 = k + 0.5, in integers
// (2o + 1) * in = 2 (k + 1) * out.
bool HasTie(int64_t in, int64_t out) {
  for (int64_t o = 0; o < out; ++o) {
    if (((2 * o + 1) * in) % (2 * out) == 0) return true;
  }
  return false;
}

StatusOr<std::unique_ptr<LoweredNode>> LowerResize(const NodeView& view) {
  if (view.opset() < 11) return NotLowered("Resize before opset 11 takes scales only");
  const std::string mode = view.GetString("mode", "nearest");
  const std::optional<DataType> type = view.input_type(0);
  const bool integer = type && (*type == DataType::kInt8 || *type == DataType::kUint8);
  if (!(mode == "nearest" && integer)) PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  if (mode != "nearest" && mode != "linear") return NotLowered("mode '", mode, "' (oneDNN resamples nearest and linear)");
  const std::string coordinates = view.GetString("coordinate_transformation_mode", "half_pixel");
  if (coordinates != "half_pixel" && coordinates != "pytorch_half_pixel") {
    return NotLowered("coordinate_transformation_mode '", coordinates, "' (oneDNN's coordinate is half_pixel)");
  }
  if (view.GetInt("antialias", 0) != 0) return NotLowered("antialias");
  if (view.attribute("axes")) return NotLowered("the axes attribute");
  if (view.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return NotLowered("keep_aspect_ratio_policy other than stretch");
  }
  if (view.has_input(2)) return NotLowered("a scales input (its values are not known at creation)");
  const ValueFacts* sizes_facts = view.input_facts(3);
  if (!sizes_facts || !sizes_facts->ints) return NotLowered("sizes not a constant known at creation");
  const std::vector<int64_t>& sizes = *sizes_facts->ints;
  const std::vector<int64_t>* x = view.input_dims(0);
  if (!x) return NotLowered("X's dims are not known before the run");
  if (x->size() < 3 || x->size() > 5) return NotLowered("X of rank ", x->size(), " (oneDNN resamples 1 to 3 spatial dims)");
  if (sizes.size() != x->size() || sizes[0] != (*x)[0] || sizes[1] != (*x)[1]) {
    return NotLowered("sizes that change N or C, or of another rank");
  }
  const std::string nearest = view.GetString("nearest_mode", "round_prefer_floor");
  for (size_t i = 2; i < sizes.size(); ++i) {
    if (sizes[i] <= 0 || (*x)[i] <= 0) return NotLowered("an empty spatial extent");
    if (coordinates == "pytorch_half_pixel" && sizes[i] == 1) {
      return NotLowered("pytorch_half_pixel with an output extent of 1 (ONNX reads input 0, oneDNN the middle)");
    }
    if (mode != "nearest") continue;
    if (nearest != "round_prefer_ceil" && nearest != "round_prefer_floor") {
      return NotLowered("nearest_mode '", nearest, "' (oneDNN rounds)");
    }
    // oneDNN computes the coordinate in float32: a tie is met exactly only
    // when in / out is whole; a coordinate near a tie is rounded the same
    // way in float32 as exactly while in * out < 2^21 (its distance from the
    // tie, at least 1 / (2 out), is well above float32's error on it).
    if ((*x)[i] * sizes[i] >= (int64_t{1} << 21)) return NotLowered("nearest on an axis of in * out >= 2^21");
    if (HasTie((*x)[i], sizes[i])) {
      if (nearest == "round_prefer_floor") {
        return NotLowered("round_prefer_floor with a coordinate halfway between inputs on axis ", i,
                          " (oneDNN rounds it up)");
      }
      if ((*x)[i] % sizes[i] != 0) {
        return NotLowered("a coordinate halfway between inputs on axis ", i,
                          " with in / out not whole (oneDNN's float32 coordinate may miss the tie)");
      }
    }
  }
  const dnnl::algorithm algorithm =
      mode == "nearest" ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear;
  return Prepared(std::make_unique<ResizeNode>(*type, algorithm, sizes), view);
}

}  // namespace

void AddResizeLowerings(Lowering& lowering) { lowering.Add("Resize", LowerResize); }

}  // namespace parity::adapters::onednn
