// Resize (opsets 10, 11, 13, 18, 19) and the older Upsample (1, 7, 9).
//
// Resizing is separable: each resized axis gets a plan that lists, for every
// output coordinate, the input indices and weights that make it (one tap of
// weight 1 for "nearest"). Nearest copies elements (any type); linear and
// cubic apply the plans axis by axis in double and round once at the end.
// Taps beyond the input repeat its edge (or, with exclude_outside, get weight
// zero and the rest renormalised); taps of weight zero are dropped, so an
// exact sample never mixes in 0 * inf. With tf_crop_and_resize an output
// whose coordinate on any axis falls outside [0, in - 1] is
// extrapolation_value exactly.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

enum class Interpolation { kNearest, kLinear, kCubic };
enum class Coordinates { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfCropAndResize };
// kSimple is Resize-10's and Upsample's rule (as ONNX Runtime has it): floor
// when upsampling, ceil when downsampling.
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeOptions {
  Interpolation mode = Interpolation::kNearest;
  Coordinates coordinates = Coordinates::kAsymmetric;
  NearestRounding nearest = NearestRounding::kSimple;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
};

// One resized axis: sizes, the scale used by the coordinate transform, the
// (possibly fractional) target width scale * in, and the region of interest.
struct AxisResize {
  int64_t in = 0;
  int64_t out = 0;
  double scale = 1.0;
  double width = 0.0;
  double roi_start = 0.0;
  double roi_end = 1.0;
};

struct AxisPlan {
  std::vector<int64_t> begin;  // taps of output y: [begin[y], begin[y + 1])
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> extrapolated;
  bool identity = true;  // every output takes exactly input y with weight 1
};

double OriginalCoordinate(const AxisResize& a, Coordinates mode, int64_t y_int) {
  const double y = static_cast<double>(y_int);
  const double in = static_cast<double>(a.in);
  switch (mode) {
    case Coordinates::kHalfPixel: return (y + 0.5) / a.scale - 0.5;
    case Coordinates::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / a.width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (y + 0.5) / a.scale - 0.5;
    }
    case Coordinates::kPytorchHalfPixel: return a.width > 1 ? (y + 0.5) / a.scale - 0.5 : 0.0;
    case Coordinates::kAlignCorners: return a.width == 1 ? 0.0 : y * (in - 1) / (a.width - 1);
    case Coordinates::kAsymmetric: return y / a.scale;
    case Coordinates::kTfCropAndResize: {
      const double span = (a.roi_end - a.roi_start) * (in - 1);
      const double start = a.roi_start * (in - 1);
      return a.width == 1 ? start + span / 2 : start + y * span / (a.width - 1);
    }
  }
  return 0.0;
}

// floor/ceil of a coordinate as an index, kept far from int64 overflow.
int64_t ToIndex(double v) {
  if (std::isnan(v)) return 0;
  return static_cast<int64_t>(std::clamp(v, -1e15, 1e15));
}

int64_t NearestIndex(double x, NearestRounding rounding, double scale) {
  const double f = std::floor(x);
  const double frac = x - f;
  switch (rounding) {
    case NearestRounding::kRoundPreferFloor: return ToIndex(frac <= 0.5 ? f : f + 1);
    case NearestRounding::kRoundPreferCeil: return ToIndex(frac < 0.5 ? f : f + 1);
    case NearestRounding::kFloor: return ToIndex(f);
    case NearestRounding::kCeil: return ToIndex(std::ceil(x));
    case NearestRounding::kSimple: return ToIndex(scale < 1 ? std::ceil(x) : std::trunc(x));
  }
  return 0;
}

// The Keys cubic kernel with parameter a, and the triangle kernel.
double CubicKernel(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0.0;
}
double LinearKernel(double d) { return std::max(0.0, 1 - std::fabs(d)); }

StatusOr<AxisPlan> PlanAxis(const KernelContext& ctx, const AxisResize& a, const ResizeOptions& opt) {
  AxisPlan plan;
  plan.begin.push_back(0);
  plan.extrapolated.assign(static_cast<size_t>(a.out), false);
  plan.identity = a.in == a.out;
  // Antialiasing stretches the kernel by 1 / scale when downsampling.
  const double stretch = opt.antialias && a.scale < 1 ? a.scale : 1.0;
  const double support = opt.mode == Interpolation::kCubic ? 2.0 : 1.0;
  const int64_t first_tap = ToIndex(std::floor(-support / stretch)) + 1;
  const int64_t taps = 2 - 2 * first_tap;
  if (opt.mode != Interpolation::kNearest &&
      static_cast<double>(taps) * static_cast<double>(a.out) > static_cast<double>(int64_t{1} << 28)) {
    return ctx.Error("antialiasing filter of ", taps, " taps is too large");
  }
  for (int64_t y = 0; y < a.out; ++y) {
    const double x = OriginalCoordinate(a, opt.coordinates, y);
    if (opt.coordinates == Coordinates::kTfCropAndResize && (x < 0 || x > static_cast<double>(a.in - 1))) {
      plan.extrapolated[static_cast<size_t>(y)] = true;
      plan.identity = false;
      plan.begin.push_back(static_cast<int64_t>(plan.index.size()));
      continue;
    }
    if (opt.mode == Interpolation::kNearest) {
      const int64_t i = std::clamp<int64_t>(NearestIndex(x, opt.nearest, a.scale), 0, a.in - 1);
      plan.index.push_back(i);
      plan.weight.push_back(1.0);
      plan.identity = plan.identity && i == y;
    } else {
      // Taps at base + first_tap ... with ratio in (0, 1]: at an exact
      // sample the base is the pixel on its left (as the ONNX reference).
      double base = std::floor(x);
      double ratio = x - base;
      if (ratio == 0) {
        base -= 1;
        ratio = 1;
      }
      const size_t row = plan.index.size();
      double sum = 0;
      for (int64_t t = first_tap; t < first_tap + taps; ++t) {
        const double d = stretch * (static_cast<double>(t) - ratio);
        double w = opt.mode == Interpolation::kCubic ? CubicKernel(d, opt.cubic_a) : LinearKernel(d);
        const int64_t p = ToIndex(base) + t;
        if (opt.exclude_outside && (p < 0 || p >= a.in)) w = 0;
        sum += w;
        plan.index.push_back(std::clamp<int64_t>(p, 0, a.in - 1));
        plan.weight.push_back(w);
      }
      if ((opt.antialias || opt.exclude_outside) && sum != 0) {
        for (size_t k = row; k < plan.weight.size(); ++k) plan.weight[k] /= sum;
      }
      // Drop zero weights (compacting the row in place).
      size_t kept = row;
      for (size_t k = row; k < plan.weight.size(); ++k) {
        if (plan.weight[k] == 0) continue;
        plan.index[kept] = plan.index[k];
        plan.weight[kept] = plan.weight[k];
        ++kept;
      }
      plan.index.resize(kept);
      plan.weight.resize(kept);
      plan.identity = plan.identity && kept == row + 1 && plan.index[row] == y && plan.weight[row] == 1.0;
    }
    plan.begin.push_back(static_cast<int64_t>(plan.index.size()));
  }
  return plan;
}

// Element value rounded once to the output type; integers round half to
// even and saturate (as the ONNX reference's saturate_cast does).
void StoreRounded(Tensor& out, int64_t i, double v) {
  const DataType t = out.dtype();
  if (IsInteger(t)) {
    if (std::isnan(v)) v = 0;
    v = std::nearbyint(v);
    const double lo = static_cast<double>(IntegerMin(t));
    const double hi = static_cast<double>(IntegerMax(t));
    if (v <= lo) return out.SetInt64(i, IntegerMin(t));
    if (v >= hi) return out.SetUint64(i, IntegerMax(t));
    if (t == DataType::kUint64) return out.SetUint64(i, static_cast<uint64_t>(v));
    return out.SetInt64(i, static_cast<int64_t>(v));
  }
  out.SetDouble(i, v);
}

StatusOr<Tensor> ApplyResize(const KernelContext& ctx, const Tensor& x, const std::vector<AxisResize>& axes,
                             const ResizeOptions& opt) {
  const int64_t rank = x.rank();
  std::vector<AxisPlan> plans;
  Shape out_shape;
  for (const AxisResize& a : axes) {
    if (a.out < 0 || a.out > (int64_t{1} << 40)) return ctx.Error("output size ", a.out, " is invalid");
    if (a.in == 0 && a.out > 0) return ctx.Error("cannot resize an empty axis to ", a.out);
    PARITY_ASSIGN_OR_RETURN(AxisPlan p, PlanAxis(ctx, a, opt));
    plans.push_back(std::move(p));
    out_shape.push_back(a.out);
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, x.dtype(), out_shape));
  if (out.size() == 0) return out;
  const bool numeric = IsFloatingPoint(x.dtype()) || IsInteger(x.dtype());
  bool any_extrapolated = false;
  for (const AxisPlan& p : plans) any_extrapolated |= std::find(p.extrapolated.begin(), p.extrapolated.end(), true) != p.extrapolated.end();
  if (any_extrapolated && !numeric) return ctx.Error("extrapolation needs a numeric type, got ", x.Description());

  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  if (opt.mode == Interpolation::kNearest) {
    const std::vector<int64_t> strides = Strides(x.shape());
    ElementCopier copy(x, out);
    for (int64_t dst = 0; dst < out.size(); ++dst) {
      int64_t src = 0;
      bool outside = false;
      for (size_t a = 0; a < plans.size(); ++a) {
        const AxisPlan& p = plans[a];
        const size_t y = static_cast<size_t>(index[a]);
        if (p.extrapolated[y]) {
          outside = true;
          break;
        }
        src += p.index[static_cast<size_t>(p.begin[y])] * strides[a];
      }
      if (outside) StoreRounded(out, dst, opt.extrapolation_value);
      else copy(src, dst);
      NextIndex(index, out_shape);
    }
    return out;
  }
  if (!numeric) return ctx.Error("linear and cubic modes need a real numeric type, got ", x.Description());
  std::vector<double> values = x.ToDoubles();
  Shape shape = x.shape();
  for (int64_t axis = 0; axis < rank; ++axis) {
    const AxisPlan& p = plans[static_cast<size_t>(axis)];
    if (p.identity) continue;
    const int64_t in = shape[static_cast<size_t>(axis)];
    const int64_t n = axes[static_cast<size_t>(axis)].out;
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= shape[static_cast<size_t>(a)];
    for (int64_t a = axis + 1; a < rank; ++a) inner *= shape[static_cast<size_t>(a)];
    std::vector<double> next(static_cast<size_t>(outer * n * inner), 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t y = 0; y < n; ++y) {
        double* dst = &next[static_cast<size_t>((o * n + y) * inner)];
        for (int64_t k = p.begin[static_cast<size_t>(y)]; k < p.begin[static_cast<size_t>(y) + 1]; ++k) {
          const double w = p.weight[static_cast<size_t>(k)];
          const double* src = &values[static_cast<size_t>((o * in + p.index[static_cast<size_t>(k)]) * inner)];
          for (int64_t i = 0; i < inner; ++i) dst[i] += w * src[i];
        }
      }
    }
    values = std::move(next);
    shape[static_cast<size_t>(axis)] = n;
  }
  for (int64_t dst = 0; dst < out.size(); ++dst) {
    bool outside = false;
    for (size_t a = 0; a < plans.size() && any_extrapolated; ++a) {
      outside = outside || plans[a].extrapolated[static_cast<size_t>(index[a])];
    }
    StoreRounded(out, dst, outside ? opt.extrapolation_value : values[static_cast<size_t>(dst)]);
    if (any_extrapolated) NextIndex(index, out_shape);
  }
  return out;
}

// Reads a 1-D float tensor input (scales, roi) as doubles; empty when absent.
StatusOr<std::vector<double>> ReadFloats(const KernelContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return std::vector<double>{};
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (!IsFloatingPoint(t->dtype())) return ctx.Error("input '", what, "' must be floating point, got ", t->Description());
  return t->ToDoubles();
}

// Output sizes and scales from `scales`: out = floor(in * scale).
Status FromScales(const KernelContext& ctx, const std::vector<double>& scales, const std::vector<int64_t>& axes,
                  std::vector<AxisResize>& plan) {
  if (scales.size() != axes.size()) return ctx.Error("scales has ", scales.size(), " values for ", axes.size(), " axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    AxisResize& a = plan[static_cast<size_t>(axes[i])];
    const double s = scales[i];
    if (!(s > 0) || !std::isfinite(s)) return ctx.Error("scale ", s, " must be positive and finite");
    a.scale = s;
    a.width = s * static_cast<double>(a.in);
    if (a.width > 1e12) return ctx.Error("scale ", s, " makes the output too large");
    a.out = static_cast<int64_t>(std::floor(a.width));
  }
  return Status::Ok();
}

StatusOr<ResizeOptions> ReadResizeOptions(const KernelContext& ctx) {
  ResizeOptions opt;
  const std::string mode = ctx.GetString("mode", "nearest");
  if (mode == "nearest") opt.mode = Interpolation::kNearest;
  else if (mode == "linear") opt.mode = Interpolation::kLinear;
  else if (mode == "cubic" && ctx.opset() >= 11) opt.mode = Interpolation::kCubic;
  else return ctx.Error("mode '", mode, "' is not supported at opset ", ctx.opset());
  if (ctx.opset() < 11) return opt;  // Resize-10: asymmetric coordinates, "simple" nearest
  const std::string coords = ctx.GetString("coordinate_transformation_mode", "half_pixel");
  if (coords == "half_pixel") opt.coordinates = Coordinates::kHalfPixel;
  else if (coords == "half_pixel_symmetric" && ctx.opset() >= 19) opt.coordinates = Coordinates::kHalfPixelSymmetric;
  else if (coords == "pytorch_half_pixel") opt.coordinates = Coordinates::kPytorchHalfPixel;
  else if (coords == "align_corners") opt.coordinates = Coordinates::kAlignCorners;
  else if (coords == "asymmetric") opt.coordinates = Coordinates::kAsymmetric;
  else if (coords == "tf_crop_and_resize") opt.coordinates = Coordinates::kTfCropAndResize;
  else return ctx.Error("coordinate_transformation_mode '", coords, "' is not supported at opset ", ctx.opset());
  const std::string nearest = ctx.GetString("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor") opt.nearest = NearestRounding::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil") opt.nearest = NearestRounding::kRoundPreferCeil;
  else if (nearest == "floor") opt.nearest = NearestRounding::kFloor;
  else if (nearest == "ceil") opt.nearest = NearestRounding::kCeil;
  else return ctx.Error("nearest_mode '", nearest, "' is not supported");
  opt.cubic_a = ctx.GetFloat("cubic_coeff_a", -0.75f);
  opt.exclude_outside = ctx.GetInt("exclude_outside", 0) != 0;
  opt.extrapolation_value = ctx.GetFloat("extrapolation_value", 0.0f);
  opt.antialias = ctx.opset() >= 18 && ctx.GetInt("antialias", 0) != 0;
  return opt;
}

}  // namespace

KernelResult ResizeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  const int64_t rank = x->rank();
  PARITY_ASSIGN_OR_RETURN(const ResizeOptions opt, ReadResizeOptions(ctx));
  std::vector<AxisResize> plan(static_cast<size_t>(rank));
  for (int64_t a = 0; a < rank; ++a) {
    plan[static_cast<size_t>(a)].in = plan[static_cast<size_t>(a)].out = x->dim(a);
    plan[static_cast<size_t>(a)].width = static_cast<double>(x->dim(a));
  }
  if (ctx.opset() < 11) {
    // Resize-10: (X, scales), like Upsample-9.
    PARITY_ASSIGN_OR_RETURN(std::vector<double> scales, ReadFloats(ctx, 1, "scales"));
    std::vector<int64_t> all(static_cast<size_t>(rank));
    for (int64_t a = 0; a < rank; ++a) all[static_cast<size_t>(a)] = a;
    PARITY_RETURN_IF_ERROR(FromScales(ctx, scales, all, plan));
    return Single(ApplyResize(ctx, *x, plan, opt));
  }
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.has_attribute("axes")) {
    PARITY_ASSIGN_OR_RETURN(axes, NormalizeAxes(ctx, ctx.GetInts("axes"), rank));
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<double> roi, ReadFloats(ctx, 1, "roi"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> scales, ReadFloats(ctx, 2, "scales"));
  std::vector<int64_t> sizes;
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(sizes, ReadIntegerInput(ctx, 3, "sizes"));
  }
  // An empty tensor counts as absent (opset 11 required 'scales' even with sizes).
  if (scales.empty() == sizes.empty()) return ctx.Error("exactly one of 'scales' and 'sizes' must be given");
  if (opt.coordinates == Coordinates::kTfCropAndResize) {
    if (roi.size() != 2 * axes.size()) {
      return ctx.Error("tf_crop_and_resize needs roi of ", 2 * axes.size(), " values, got ", roi.size());
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      plan[static_cast<size_t>(axes[i])].roi_start = roi[i];
      plan[static_cast<size_t>(axes[i])].roi_end = roi[axes.size() + i];
    }
  }
  if (!scales.empty()) {
    // keep_aspect_ratio_policy applies to sizes only.
    PARITY_RETURN_IF_ERROR(FromScales(ctx, scales, axes, plan));
    return Single(ApplyResize(ctx, *x, plan, opt));
  }
  if (sizes.size() != axes.size()) return ctx.Error("sizes has ", sizes.size(), " values for ", axes.size(), " axes");
  const std::string policy = ctx.opset() >= 18 ? ctx.GetString("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return ctx.Error("keep_aspect_ratio_policy '", policy, "' must be stretch, not_larger or not_smaller");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sizes[i] < 0) return ctx.Error("size ", sizes[i], " is negative");
    if (plan[static_cast<size_t>(axes[i])].in == 0) return ctx.Error("cannot resize an empty axis");
  }
  if (policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) {
      AxisResize& a = plan[static_cast<size_t>(axes[i])];
      a.out = sizes[i];
      a.width = static_cast<double>(sizes[i]);
      a.scale = a.width / static_cast<double>(a.in);
    }
  } else {
    // One scale for all axes: the smallest (not_larger) or largest
    // (not_smaller) ratio; sizes round half up.
    double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = static_cast<double>(sizes[i]) / static_cast<double>(plan[static_cast<size_t>(axes[i])].in);
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (int64_t d : axes) {
      AxisResize& a = plan[static_cast<size_t>(d)];
      a.scale = scale;
      a.width = scale * static_cast<double>(a.in);
      if (!(a.width <= 1e12)) return ctx.Error("sizes make the output too large");
      a.out = static_cast<int64_t>(std::floor(a.width + 0.5));
    }
  }
  for (int64_t d : axes) {
    if (plan[static_cast<size_t>(d)].scale <= 0) return ctx.Error("resizing axis ", d, " to size 0 is not supported");
  }
  return Single(ApplyResize(ctx, *x, plan, opt));
}

KernelResult UpsampleKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  const int64_t rank = x->rank();
  ResizeOptions opt;  // asymmetric coordinates, "simple" nearest
  const std::string mode = ctx.GetString("mode", "nearest");
  if (mode == "nearest") opt.mode = Interpolation::kNearest;
  else if (mode == "linear" || (mode == "bilinear" && ctx.opset() < 7)) opt.mode = Interpolation::kLinear;
  else return ctx.Error("mode '", mode, "' is not supported at opset ", ctx.opset());
  std::vector<double> scales;
  if (ctx.opset() < 7) {
    // Upsample-1: a 4-D NCHW input and height_scale / width_scale.
    if (rank != 4) return ctx.Error("input must be 4-D, got ", x->Description());
    if (!ctx.has_attribute("height_scale") || !ctx.has_attribute("width_scale")) {
      return ctx.Error("attributes 'height_scale' and 'width_scale' are required");
    }
    scales = {1.0, 1.0, ctx.GetFloat("height_scale", 1.0f), ctx.GetFloat("width_scale", 1.0f)};
  } else if (ctx.opset() < 9) {
    if (!ctx.has_attribute("scales")) return ctx.Error("attribute 'scales' is required");
    for (float s : ctx.GetFloats("scales")) scales.push_back(s);
  } else {
    PARITY_ASSIGN_OR_RETURN(scales, ReadFloats(ctx, 1, "scales"));
  }
  std::vector<AxisResize> plan(static_cast<size_t>(rank));
  std::vector<int64_t> all;
  for (int64_t a = 0; a < rank; ++a) {
    plan[static_cast<size_t>(a)].in = x->dim(a);
    all.push_back(a);
  }
  for (double s : scales) {
    if (s < 1) return ctx.Error("Upsample scales must be >= 1, got ", s);
  }
  PARITY_RETURN_IF_ERROR(FromScales(ctx, scales, all, plan));
  return Single(ApplyResize(ctx, *x, plan, opt));
}

}  // namespace parity::ops::tensor
