// Kernels that take a window of a tensor, possibly beyond its edges: Slice,
// Pad and CenterCropPad. Each builds, per axis, the input coordinate of
// every output coordinate (or -1 for "outside: use the fill value").
#include <algorithm>
#include <limits>
#include <optional>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

using AxisMaps = std::vector<std::vector<int64_t>>;

// out[i] = input[maps[0][i0], maps[1][i1], ...], or fill (element
// `fill_index` of `fill`; zero / "" when fill is null) where a map gives -1.
StatusOr<Tensor> TakeWindow(const KernelContext& ctx, const Tensor& input, const AxisMaps& maps, const Tensor* fill,
                            int64_t fill_index) {
  Shape shape;
  for (const auto& m : maps) shape.push_back(static_cast<int64_t>(m.size()));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, input.dtype(), shape));
  if (out.size() == 0) return out;
  const std::vector<int64_t> strides = Strides(input.shape());
  ElementCopier copy(input, out);
  std::optional<ElementCopier> copy_fill;
  if (fill) copy_fill.emplace(*fill, out);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t dst = 0; dst < out.size(); ++dst) {
    int64_t src = 0;
    bool inside = true;
    for (size_t a = 0; a < shape.size(); ++a) {
      const int64_t c = maps[a][static_cast<size_t>(index[a])];
      if (c < 0) {
        inside = false;
        break;
      }
      src += c * strides[a];
    }
    if (inside) {
      copy(src, dst);
    } else if (copy_fill) {
      (*copy_fill)(fill_index, dst);
    }
    NextIndex(index, shape);
  }
  return out;
}

std::vector<int64_t> IdentityMap(int64_t dim) {
  std::vector<int64_t> m(static_cast<size_t>(dim));
  for (int64_t i = 0; i < dim; ++i) m[static_cast<size_t>(i)] = i;
  return m;
}

// One axis of Slice (numpy rules): negative starts/ends count from the back,
// then both clamp to the valid range for the step's direction.
std::vector<int64_t> SliceMap(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;  // never overflows: start < 0 < dim
  if (end < 0) end += dim;
  std::vector<int64_t> m;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    for (int64_t i = start; i < end; i += step) {
      m.push_back(i);
      if (step > end - i) break;  // the next step would pass end (and could overflow)
    }
  } else {
    start = std::clamp<int64_t>(start, -1, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    for (int64_t i = start; i > end; i += step) {
      m.push_back(i);
      if (step < end - i) break;
    }
  }
  return m;
}

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// One axis of Pad. Negative pads crop first; the positive ones then extend
// the cropped span [lo, lo + len) of the input by the mode's rule.
StatusOr<std::vector<int64_t>> PadMap(const KernelContext& ctx, int64_t dim, int64_t begin, int64_t end,
                                      PadMode mode) {
  constexpr int64_t kLimit = int64_t{1} << 40;  // keeps every sum below far from overflow
  if (begin < -kLimit || begin > kLimit || end < -kLimit || end > kLimit) return ctx.Error("pads are too large");
  const int64_t lo = begin < 0 ? -begin : 0;
  const int64_t len = dim - lo - (end < 0 ? -end : 0);
  const int64_t before = begin > 0 ? begin : 0;
  const int64_t after = end > 0 ? end : 0;
  if (len < 0 || (len == 0 && (before > 0 || after > 0) && mode != PadMode::kConstant)) {
    return ctx.Error("pads (", begin, ", ", end, ") are invalid for an axis of size ", dim);
  }
  std::vector<int64_t> m;
  for (int64_t o = 0; o < before + len + after; ++o) {
    int64_t c = o - before;  // coordinate within the cropped span
    if (c < 0 || c >= len) {
      switch (mode) {
        case PadMode::kConstant: c = -1; break;
        case PadMode::kEdge: c = c < 0 ? 0 : len - 1; break;
        case PadMode::kWrap: c = ((c % len) + len) % len; break;
        case PadMode::kReflect: {
          // Mirror about the edge elements without repeating them (numpy "reflect").
          if (len == 1) {
            c = 0;
          } else {
            const int64_t period = 2 * (len - 1);
            c = ((c % period) + period) % period;
            if (c >= len) c = period - c;
          }
          break;
        }
      }
    }
    m.push_back(c < 0 ? -1 : lo + c);
  }
  return m;
}

}  // namespace

KernelResult SliceKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  const int64_t rank = data->rank();
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_axes = false;
  if (ctx.opset() < 10) {
    // Opset 1: starts, ends and axes are attributes; steps are all 1.
    if (!ctx.has_attribute("starts") || !ctx.has_attribute("ends")) {
      return ctx.Error("attributes 'starts' and 'ends' are required");
    }
    starts = ctx.GetInts("starts");
    ends = ctx.GetInts("ends");
    have_axes = ctx.has_attribute("axes");
    axes = ctx.GetInts("axes");
  } else {
    PARITY_ASSIGN_OR_RETURN(starts, ReadIntegerInput(ctx, 1, "starts"));
    PARITY_ASSIGN_OR_RETURN(ends, ReadIntegerInput(ctx, 2, "ends"));
    if (ctx.has_input(3)) {
      have_axes = true;
      PARITY_ASSIGN_OR_RETURN(axes, ReadIntegerInput(ctx, 3, "axes"));
    }
    if (ctx.has_input(4)) {
      PARITY_ASSIGN_OR_RETURN(steps, ReadIntegerInput(ctx, 4, "steps"));
    }
  }
  if (starts.size() != ends.size()) return ctx.Error("starts and ends differ in length");
  if (!have_axes) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return ctx.Error("starts, ends, axes and steps must have the same length");
  }
  PARITY_ASSIGN_OR_RETURN(axes, NormalizeAxes(ctx, axes, rank));
  AxisMaps maps;
  for (int64_t a = 0; a < rank; ++a) maps.push_back(IdentityMap(data->dim(a)));
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] == 0) return ctx.Error("step on axis ", axes[i], " is zero");
    maps[static_cast<size_t>(axes[i])] = SliceMap(data->dim(axes[i]), starts[i], ends[i], steps[i]);
  }
  return Single(TakeWindow(ctx, *data, maps, nullptr, 0));
}

KernelResult PadKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  const int64_t rank = data->rank();
  const std::string mode_name = ctx.GetString("mode", "constant");
  PadMode mode;
  if (mode_name == "constant") mode = PadMode::kConstant;
  else if (mode_name == "reflect") mode = PadMode::kReflect;
  else if (mode_name == "edge") mode = PadMode::kEdge;
  else if (mode_name == "wrap" && ctx.opset() >= 19) mode = PadMode::kWrap;
  else return ctx.Error("mode '", mode_name, "' is not supported at opset ", ctx.opset());

  std::vector<int64_t> pads, axes;
  std::optional<Tensor> fill;  // the constant, as an element of the data's type
  if (ctx.opset() < 11) {
    // Opset 1 names the attribute 'paddings', opset 2 'pads'; 'value' is a float.
    const char* name = ctx.opset() < 2 ? "paddings" : "pads";
    if (!ctx.has_attribute(name)) return ctx.Error("attribute '", name, "' is required");
    pads = ctx.GetInts(name);
    PARITY_ASSIGN_OR_RETURN(Tensor f, Allocate(ctx, data->dtype(), {}));
    f.SetDouble(0, ctx.GetFloat("value", 0.0f));
    fill = std::move(f);
  } else {
    PARITY_ASSIGN_OR_RETURN(pads, ReadIntegerInput(ctx, 1, "pads"));
    if (ctx.has_input(2)) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* c, ctx.RequireTensor(2));
      if (c->dtype() != data->dtype() || c->size() != 1) {
        return ctx.Error("constant_value must be one element of ", DataTypeName(data->dtype()), ", got ",
                         c->Description());
      }
      fill = *c;
    }
    if (ctx.opset() >= 18 && ctx.has_input(3)) {
      PARITY_ASSIGN_OR_RETURN(axes, ReadIntegerInput(ctx, 3, "axes"));
    }
  }
  const bool all_axes = axes.empty() && !(ctx.opset() >= 18 && ctx.has_input(3));
  if (all_axes) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  PARITY_ASSIGN_OR_RETURN(axes, NormalizeAxes(ctx, axes, rank));
  const size_t n = axes.size();
  if (pads.size() != 2 * n) return ctx.Error("pads has ", pads.size(), " values for ", n, " axes (needs ", 2 * n, ")");
  AxisMaps maps;
  for (int64_t a = 0; a < rank; ++a) maps.push_back(IdentityMap(data->dim(a)));
  for (size_t i = 0; i < n; ++i) {
    PARITY_ASSIGN_OR_RETURN(maps[static_cast<size_t>(axes[i])],
                            PadMap(ctx, data->dim(axes[i]), pads[i], pads[n + i], mode));
  }
  return Single(TakeWindow(ctx, *data, maps, fill ? &*fill : nullptr, 0));
}

KernelResult CenterCropPadKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIntegerInput(ctx, 1, "shape"));
  const int64_t rank = data->rank();
  std::vector<int64_t> axes = ctx.GetInts("axes");
  if (!ctx.has_attribute("axes")) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  PARITY_ASSIGN_OR_RETURN(axes, NormalizeAxes(ctx, axes, rank));
  if (shape.size() != axes.size()) return ctx.Error("shape has ", shape.size(), " values for ", axes.size(), " axes");
  AxisMaps maps;
  for (int64_t a = 0; a < rank; ++a) maps.push_back(IdentityMap(data->dim(a)));
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t dim = data->dim(axes[i]);
    const int64_t target = shape[i];
    if (target < 0 || target > (int64_t{1} << 40)) return ctx.Error("target size ", target, " is invalid");
    // Crop takes the centre window; pad centres the input; an odd excess
    // goes to the end in both cases.
    std::vector<int64_t> m(static_cast<size_t>(target), -1);
    if (target <= dim) {
      const int64_t offset = (dim - target) / 2;
      for (int64_t o = 0; o < target; ++o) m[static_cast<size_t>(o)] = o + offset;
    } else {
      const int64_t offset = (target - dim) / 2;
      for (int64_t c = 0; c < dim; ++c) m[static_cast<size_t>(c + offset)] = c;
    }
    maps[static_cast<size_t>(axes[i])] = std::move(m);
  }
  return Single(TakeWindow(ctx, *data, maps, nullptr, 0));
}

}  // namespace parity::ops::tensor
