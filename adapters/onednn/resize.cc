// Resize (opsets 10, 11, 13, 18, 19) on oneDNN's resampling primitive,
// float32 and the 16-bit floats this CPU computes, over 1 to 3 spatial axes.
//
// oneDNN has one coordinate rule per algorithm, from the dims alone:
// nearest takes input roundf((y + 0.5) * in / out - 0.5) (half away from
// zero) and linear interpolates at (y + 0.5) * in / out - 0.5, both
// computed in float32 (src/cpu/resampling_utils.hpp; the unshifted linear
// algorithm is not in oneDNN 3.2's API). ONNX's rule depends on the mode, the
// coordinate_transformation_mode, the nearest_mode and the scale (which
// need not be out / in). So the claim computes both, axis by axis, at
// session creation, and claims only when oneDNN takes the same input
// elements as ONNX for every output element (nearest) or the same ones with
// weights within 2^-21 (linear: float32 coordinates against ONNX's exact
// ones). That needs X's dims and the scales or sizes before the run: they
// must be static and constant (an initializer or a Constant).
#include <algorithm>
#include <cmath>
#include <map>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

enum class Coordinates { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric };
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeAttrs {
  bool linear = false;
  Coordinates coordinates = Coordinates::kAsymmetric;
  Nearest nearest = Nearest::kSimple;
  bool antialias = false;
  std::vector<int64_t> axes;  // the axes scales or sizes name
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::string policy = "stretch";
};

// One axis as ONNX resizes it (the spec's "scale" and output width).
struct Axis {
  int64_t in = 0, out = 0;
  double scale = 1, width = 0;
};

double OnnxCoordinate(const Axis& a, Coordinates mode, int64_t y_int) {
  const double y = static_cast<double>(y_int), in = static_cast<double>(a.in);
  switch (mode) {
    case Coordinates::kHalfPixel: return (y + 0.5) / a.scale - 0.5;
    case Coordinates::kHalfPixelSymmetric: {
      const double offset = in / 2 * (1 - static_cast<double>(a.out) / a.width);
      return offset + (y + 0.5) / a.scale - 0.5;
    }
    case Coordinates::kPytorchHalfPixel: return a.width > 1 ? (y + 0.5) / a.scale - 0.5 : 0.0;
    case Coordinates::kAlignCorners: return a.width == 1 ? 0.0 : y * (in - 1) / (a.width - 1);
    case Coordinates::kAsymmetric: return y / a.scale;
  }
  return 0;
}

int64_t OnnxNearest(double x, Nearest rounding, double scale) {
  const double f = std::floor(x), frac = x - f;
  switch (rounding) {
    case Nearest::kRoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? f : f + 1);
    case Nearest::kRoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? f : f + 1);
    case Nearest::kFloor: return static_cast<int64_t>(f);
    case Nearest::kCeil: return static_cast<int64_t>(std::ceil(x));
    case Nearest::kSimple: return static_cast<int64_t>(scale < 1 ? std::ceil(x) : std::trunc(x));
  }
  return 0;
}

// oneDNN's coordinate, in its float32 steps.
float OneDnnCoordinate(int64_t y, int64_t out, int64_t in) {
  return (static_cast<float>(y) + 0.5f) * static_cast<float>(in) / static_cast<float>(out) - 0.5f;
}

// Input index -> weight of one output element.
using Taps = std::map<int64_t, double>;

Taps OnnxLinearTaps(double x, int64_t in) {
  const double base = std::floor(x), ratio = x - base;
  Taps taps;
  const auto clamp = [&](double i) { return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1); };
  taps[clamp(base)] += 1 - ratio;
  taps[clamp(base + 1)] += ratio;
  return taps;
}

Taps OneDnnLinearTaps(float s, int64_t in) {
  const int64_t left = std::max<int64_t>(static_cast<int64_t>(s), 0);
  int64_t ceil = 0;
  if (s >= 0) ceil = static_cast<float>(static_cast<int64_t>(s)) == s ? static_cast<int64_t>(s) : static_cast<int64_t>(s) + 1;
  const int64_t right = std::min<int64_t>(ceil, in - 1);
  const float w1 = std::fabs(s - static_cast<float>(left));
  Taps taps;
  taps[left] += 1.0f - w1;
  taps[right] += w1;
  return taps;
}

// Whether oneDNN's taps are ONNX's: the same indices (a weight of 0 is no
// tap), weights within 2^-21.
bool SameTaps(const Taps& a, const Taps& b) {
  constexpr double kWeightSlack = 1.0 / (1 << 21);
  auto support = [](const Taps& t) {
    std::vector<int64_t> s;
    for (const auto& [i, w] : t) {
      if (std::fabs(w) > kWeightSlack) s.push_back(i);
    }
    return s;
  };
  if (support(a) != support(b)) return false;
  for (const auto& [i, w] : a) {
    const auto it = b.find(i);
    if (std::fabs(w - (it == b.end() ? 0.0 : it->second)) > kWeightSlack) return false;
  }
  return true;
}

struct ResizePlan {
  dnnl::resampling_forward primitive;
  dnnl::memory::desc src, dst;
  std::vector<int64_t> out_dims;
  bool empty = false;
};

class ResizeNode final : public ShapedNode<ResizePlan> {
 public:
  ResizeNode(DataType type, ResizeAttrs attrs) : type_(type), attrs_(std::move(attrs)) {}

 protected:
  StatusOr<ResizePlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    if (x.size() < 3 || x.size() > 5) return InvalidArgument("X of rank ", x.size(), " (oneDNN resamples 1 to 3 spatial axes)");
    PARITY_ASSIGN_OR_RETURN(std::vector<Axis> axes, OnnxAxes(x));
    ResizePlan plan;
    for (const Axis& a : axes) plan.out_dims.push_back(a.out);
    for (size_t d = 0; d < 2; ++d) {
      if (axes[d].scale != 1) return InvalidArgument("resizes axis ", d, " (oneDNN resamples the spatial axes only)");
    }
    int64_t count = 1;
    for (int64_t d : plan.out_dims) count *= d;
    for (int64_t d : x) count *= d;
    plan.empty = count == 0;
    if (plan.empty) return InvalidArgument("an empty input or output");
    for (size_t d = 2; d < axes.size(); ++d) {
      const int64_t y = FirstMismatch(axes[d]);
      if (y < 0) continue;
      return InvalidArgument("oneDNN's ", attrs_.linear ? "linear" : "nearest",
                             " coordinates (half-pixel, from the dims", attrs_.linear ? "" : ", rounded half up",
                             ") take other input elements than this mode's at output ", y, " of axis ", d, " (",
                             axes[d].in, " -> ", axes[d].out, ", scale ", axes[d].scale, ")");
    }
    const dnnl::algorithm algorithm =
        attrs_.linear ? dnnl::algorithm::resampling_linear : dnnl::algorithm::resampling_nearest;
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(x, dt);
    plan.dst = PlainDesc(plan.out_dims, dt);
    plan.primitive = dnnl::resampling_forward(dnnl::resampling_forward::primitive_desc(
        Engine(), dnnl::prop_kind::forward_inference, algorithm, plan.src, plan.dst));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ResizePlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)},
                                      {DNNL_ARG_DST, Wrap(out, plan.dst)}});
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  // ONNX's sizes and scales of every axis (the reference's resize.cc rules).
  StatusOr<std::vector<Axis>> OnnxAxes(const std::vector<int64_t>& x) const {
    std::vector<Axis> axes(x.size());
    for (size_t d = 0; d < x.size(); ++d) axes[d] = {x[d], x[d], 1.0, static_cast<double>(x[d])};
    std::vector<int64_t> named = attrs_.axes;
    if (named.empty()) {
      for (size_t d = 0; d < x.size(); ++d) named.push_back(static_cast<int64_t>(d));
    }
    for (int64_t& a : named) {
      if (a < 0) a += static_cast<int64_t>(x.size());
      if (a < 0 || a >= static_cast<int64_t>(x.size())) return InvalidArgument("axes out of range");
    }
    if (!attrs_.scales.empty()) {
      if (attrs_.scales.size() != named.size()) return InvalidArgument("scales has ", attrs_.scales.size(), " values");
      for (size_t i = 0; i < named.size(); ++i) {
        Axis& a = axes[static_cast<size_t>(named[i])];
        if (!(attrs_.scales[i] > 0) || !std::isfinite(attrs_.scales[i])) return InvalidArgument("a scale not positive");
        a.scale = attrs_.scales[i];
        a.width = a.scale * static_cast<double>(a.in);
        a.out = static_cast<int64_t>(std::floor(a.width));
      }
      return axes;
    }
    if (attrs_.sizes.size() != named.size()) return InvalidArgument("sizes has ", attrs_.sizes.size(), " values");
    if (attrs_.policy == "stretch") {
      for (size_t i = 0; i < named.size(); ++i) {
        Axis& a = axes[static_cast<size_t>(named[i])];
        a.out = attrs_.sizes[i];
        a.width = static_cast<double>(a.out);
        a.scale = a.width / static_cast<double>(a.in);
      }
      return axes;
    }
    double scale = attrs_.policy == "not_larger" ? INFINITY : 0.0;
    for (size_t i = 0; i < named.size(); ++i) {
      const double s = static_cast<double>(attrs_.sizes[i]) / static_cast<double>(axes[static_cast<size_t>(named[i])].in);
      scale = attrs_.policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (int64_t d : named) {
      Axis& a = axes[static_cast<size_t>(d)];
      a.scale = scale;
      a.width = scale * static_cast<double>(a.in);
      a.out = static_cast<int64_t>(std::floor(a.width + 0.5));
    }
    return axes;
  }

  // The first output element whose input elements oneDNN picks otherwise, or -1.
  int64_t FirstMismatch(const Axis& a) const {
    for (int64_t y = 0; y < a.out; ++y) {
      const double x = OnnxCoordinate(a, attrs_.coordinates, y);
      const float s = OneDnnCoordinate(y, a.out, a.in);
      if (attrs_.linear) {
        if (!SameTaps(OnnxLinearTaps(x, a.in), OneDnnLinearTaps(s, a.in))) return y;
      } else {
        const int64_t onnx = std::clamp<int64_t>(OnnxNearest(x, attrs_.nearest, a.scale), 0, a.in - 1);
        if (onnx != static_cast<int64_t>(std::roundf(s))) return y;
      }
    }
    return -1;
  }

  DataType type_;
  ResizeAttrs attrs_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerResize(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  const int64_t opset = view.opset();
  ResizeAttrs attrs;
  const std::string mode = view.GetString("mode", "nearest");
  if (mode == "cubic") return NotLowered("mode cubic (oneDNN resamples nearest and linear only)");
  if (mode != "nearest" && mode != "linear") return NotLowered("mode '", mode, "'");
  attrs.linear = mode == "linear";
  if (opset >= 11) {
    const std::string coords = view.GetString("coordinate_transformation_mode", "half_pixel");
    if (coords == "half_pixel") attrs.coordinates = Coordinates::kHalfPixel;
    else if (coords == "half_pixel_symmetric" && opset >= 19) attrs.coordinates = Coordinates::kHalfPixelSymmetric;
    else if (coords == "pytorch_half_pixel") attrs.coordinates = Coordinates::kPytorchHalfPixel;
    else if (coords == "align_corners") attrs.coordinates = Coordinates::kAlignCorners;
    else if (coords == "asymmetric") attrs.coordinates = Coordinates::kAsymmetric;
    else if (coords == "tf_crop_and_resize") return NotLowered("tf_crop_and_resize (oneDNN has no region of interest)");
    else return NotLowered("coordinate_transformation_mode '", coords, "'");
    const std::string nearest = view.GetString("nearest_mode", "round_prefer_floor");
    if (nearest == "round_prefer_floor") attrs.nearest = Nearest::kRoundPreferFloor;
    else if (nearest == "round_prefer_ceil") attrs.nearest = Nearest::kRoundPreferCeil;
    else if (nearest == "floor") attrs.nearest = Nearest::kFloor;
    else if (nearest == "ceil") attrs.nearest = Nearest::kCeil;
    else return NotLowered("nearest_mode '", nearest, "'");
    attrs.antialias = opset >= 18 && view.GetInt("antialias", 0) != 0;
    if (opset >= 18) {
      attrs.axes = view.GetInts("axes").value_or(std::vector<int64_t>{});
      attrs.policy = view.GetString("keep_aspect_ratio_policy", "stretch");
      if (attrs.policy != "stretch" && attrs.policy != "not_larger" && attrs.policy != "not_smaller") {
        return NotLowered("keep_aspect_ratio_policy '", attrs.policy, "'");
      }
    }
  }
  if (!view.input_dims(0)) return NotLowered("X's dims are not known before the run (the claim compares coordinates at creation)");
  // Scales (input 1 at opset 10, 2 later) or sizes (3): constants. An empty
  // scales tensor stands for none (opset 11 needs one beside sizes).
  const int scales_at = opset < 11 ? 1 : 2;
  if (view.has_input(scales_at)) {
    const ValueFacts* f = view.input_facts(scales_at);
    if (!f || !f->floats) return NotLowered("scales is not a float32 constant known at creation");
    attrs.scales = *f->floats;
  }
  if (opset >= 11 && view.has_input(3)) {
    const ValueFacts* f = view.input_facts(3);
    if (!f || !f->ints) return NotLowered("sizes is not a constant known at creation");
    attrs.sizes = *f->ints;
  }
  if (attrs.scales.empty() == attrs.sizes.empty()) return NotLowered("not exactly one of scales and sizes is given");
  if (!attrs.sizes.empty() && attrs.policy == "stretch") {
    for (int64_t s : attrs.sizes) {
      if (s <= 0) return NotLowered("a size of ", s);
    }
  }
  if (attrs.antialias && attrs.linear) {
    const bool down = std::any_of(attrs.scales.begin(), attrs.scales.end(), [](double s) { return s < 1; }) ||
                      !attrs.sizes.empty();
    if (down) return NotLowered("antialias (oneDNN has no antialiasing filter)");
  }
  return Prepared(std::make_unique<ResizeNode>(*view.input_type(0), std::move(attrs)), view);
}

}  // namespace

void AddResizeLowerings(Lowering& lowering) { lowering.Add("Resize", LowerResize); }

}  // namespace parity::adapters::onednn
