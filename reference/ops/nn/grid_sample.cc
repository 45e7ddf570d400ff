// GridSample (16, 20, 22) and AffineGrid (20).
//
// GridSample maps each normalised grid coordinate to the input's pixel
// space (align_corners chooses corner centres or corner edges as +-1), applies
// the padding mode to the coordinate, then interpolates from taps along each
// axis (1 for nearest, rounding half to even; 2 for linear; 4 for cubic with
// Keys' a = -0.75), each tap index again passed through the padding mode.
// The N-D result is the tensor product of the per-axis taps.
// Choices where the spec is silent: a non-finite coordinate gives NaN (0 for
// non-float outputs); integer outputs round half to even and saturate.
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/quant.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

namespace {

enum class Interp { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] by folding at the borders repeatedly.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

struct Tap {
  int64_t index;  // -1: outside (zeros padding)
  double weight;
};

void CubicWeights(double t, double w[4]) {
  constexpr double a = -0.75;
  const double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

struct AxisSampler {
  int64_t size;
  double lo, hi;  // the borders: pixel centres or pixel edges
  Padding padding;

  // A tap index after the padding mode (an integer position, possibly outside).
  int64_t Resolve(int64_t i) const {
    if (i >= 0 && i < size) return i;
    switch (padding) {
      case Padding::kZeros: return -1;
      case Padding::kBorder: return i < 0 ? 0 : size - 1;
      case Padding::kReflection: {
        const int64_t r = static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi));
        return std::clamp<int64_t>(r, 0, size - 1);
      }
    }
    return -1;
  }

  // Taps for pixel-space coordinate x (finite).
  void Taps(double x, Interp interp, std::vector<Tap>& taps) const {
    taps.clear();
    // Nearest rounds before the padding mode applies (as ONNX's reference does).
    if (interp == Interp::kNearest) x = std::nearbyint(x);
    if (x < lo || x > hi) {
      if (padding == Padding::kBorder) x = std::clamp(x, 0.0, static_cast<double>(size - 1));
      if (padding == Padding::kReflection) x = Reflect(x, lo, hi);
    }
    // Far outside (zeros padding) every tap misses; keep the integer conversion in range.
    x = std::clamp(x, -8.0, static_cast<double>(size) + 8.0);
    if (interp == Interp::kNearest) {
      taps.push_back({Resolve(static_cast<int64_t>(x)), 1.0});
      return;
    }
    const double base = std::floor(x);
    const int64_t i0 = static_cast<int64_t>(base);
    const double t = x - base;
    if (interp == Interp::kLinear) {
      taps.push_back({Resolve(i0), 1.0 - t});
      taps.push_back({Resolve(i0 + 1), t});
      return;
    }
    double w[4];
    CubicWeights(t, w);
    for (int j = 0; j < 4; ++j) taps.push_back({Resolve(i0 - 1 + j), w[j]});
  }
};

// Copies one element between tensors of the same dtype (any type, strings too).
void CopyElement(const Tensor& src, int64_t si, Tensor& dst, int64_t di) {
  if (src.dtype() == DataType::kString) {
    dst.mutable_strings()[static_cast<size_t>(di)] = src.strings()[static_cast<size_t>(si)];
    return;
  }
  const size_t width = StorageSize(src.dtype());
  std::memcpy(dst.mutable_raw_bytes() + static_cast<size_t>(di) * width,
              src.raw_bytes() + static_cast<size_t>(si) * width, width);
}

}  // namespace

KernelResult GridSample(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* grid, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireImage(ctx, *x, "X"));
  const int64_t r = x->rank() - 2;
  if (ctx.opset() < 20 && r != 2) return ctx.Error("GridSample before opset 20 takes 4-D X, got ", x->Description());
  if (!IsFloatingPoint(grid->dtype())) return ctx.Error("grid must be floating point, got ", grid->Description());
  if (grid->rank() != r + 2 || grid->dim(0) != x->dim(0) || grid->dim(r + 1) != r) {
    return ctx.Error("grid has shape ", ShapeToString(grid->shape()), ", expected [", x->dim(0), ", ...", r,
                     " output dims..., ", r, "]");
  }
  const std::string mode = ctx.GetString("mode", ctx.opset() < 20 ? "bilinear" : "linear");
  Interp interp;
  if (mode == "nearest") {
    interp = Interp::kNearest;
  } else if (mode == (ctx.opset() < 20 ? "bilinear" : "linear")) {
    interp = Interp::kLinear;
  } else if (mode == (ctx.opset() < 20 ? "bicubic" : "cubic")) {
    interp = Interp::kCubic;
  } else {
    return ctx.Error("unknown mode '", mode, "' at opset ", ctx.opset());
  }
  const std::string padding_name = ctx.GetString("padding_mode", "zeros");
  Padding padding;
  if (padding_name == "zeros") {
    padding = Padding::kZeros;
  } else if (padding_name == "border") {
    padding = Padding::kBorder;
  } else if (padding_name == "reflection") {
    padding = Padding::kReflection;
  } else {
    return ctx.Error("unknown padding_mode '", padding_name, "'");
  }
  const bool align = ctx.GetInt("align_corners", 0) != 0;
  const DataType t = x->dtype();
  if (interp != Interp::kNearest && (t == DataType::kString || IsComplex(t))) {
    return ctx.Error("mode ", mode, " cannot interpolate ", DataTypeName(t));
  }

  std::vector<AxisSampler> axes;
  const std::vector<int64_t> in_dims(x->shape().begin() + 2, x->shape().end());
  for (int64_t a = 0; a < r; ++a) {
    const int64_t size = in_dims[static_cast<size_t>(a)];
    const double lo = align ? 0.0 : -0.5;
    const double hi = align ? static_cast<double>(size - 1) : static_cast<double>(size) - 0.5;
    axes.push_back({size, lo, hi, padding});
  }
  std::vector<int64_t> in_strides(static_cast<size_t>(r), 1);
  for (int64_t a = r - 1; a > 0; --a) in_strides[static_cast<size_t>(a - 1)] = in_strides[static_cast<size_t>(a)] * in_dims[static_cast<size_t>(a)];
  const int64_t batch = x->dim(0), channels = x->dim(1);
  const int64_t in_size = Product(in_dims);
  const int64_t points = grid->size() / std::max<int64_t>(batch * r, 1);
  Shape y_shape = {batch, channels};
  y_shape.insert(y_shape.end(), grid->shape().begin() + 1, grid->shape().end() - 1);
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, t, y_shape));
  const bool float_out = IsFloatingPoint(t);

  std::vector<std::vector<Tap>> taps(static_cast<size_t>(r));
  std::vector<size_t> pick(static_cast<size_t>(r));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      bool finite = true;
      for (int64_t a = 0; a < r; ++a) {
        // grid's last axis lists coordinates innermost first: (x -> W, y -> H, ...).
        const double g = grid->GetDouble((n * points + p) * r + (r - 1 - a));
        if (!std::isfinite(g)) {
          finite = false;
          break;
        }
        const double size = static_cast<double>(axes[static_cast<size_t>(a)].size);
        const double pixel = align ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
        axes[static_cast<size_t>(a)].Taps(pixel, interp, taps[static_cast<size_t>(a)]);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t out = (n * channels + c) * points + p;
        const int64_t plane = (n * channels + c) * in_size;
        if (!finite) {
          if (float_out) y.SetDouble(out, std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        if (interp == Interp::kNearest) {
          int64_t offset = 0;
          bool inside = true;
          for (int64_t a = 0; a < r; ++a) {
            const int64_t idx = taps[static_cast<size_t>(a)][0].index;
            inside = inside && idx >= 0;
            offset += idx * in_strides[static_cast<size_t>(a)];
          }
          if (inside) CopyElement(*x, plane + offset, y, out);
          continue;
        }
        double acc = 0.0;
        std::fill(pick.begin(), pick.end(), 0);
        while (true) {
          double weight = 1.0;
          int64_t offset = 0;
          bool inside = true;
          for (size_t a = 0; a < pick.size(); ++a) {
            const Tap& tap = taps[a][pick[a]];
            weight *= tap.weight;
            inside = inside && tap.index >= 0;
            offset += tap.index * in_strides[a];
          }
          if (inside) acc += weight * x->GetDouble(plane + offset);
          size_t a = pick.size();
          while (a > 0 && ++pick[a - 1] == taps[a - 1].size()) pick[--a] = 0;
          if (a == 0) break;
        }
        if (float_out) {
          y.SetDouble(out, acc);
        } else if (t == DataType::kBool) {
          y.SetInt64(out, acc != 0 ? 1 : 0);
        } else {
          y.SetInt64(out, RoundAndSaturate(acc, t));
        }
      }
    }
  }
  return Single(std::move(y));
}

// grid[n, ..., :] = theta[n] @ (x, y[, z], 1) over positions evenly spaced in
// [-1, 1]: with align_corners, -1 + 2 i / (L - 1) (just -1 when L = 1), else
// -1 + (2 i + 1) / L.
KernelResult AffineGrid(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* theta, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* size_tensor, ctx.RequireTensor(1));
  if (!IsFloatingPoint(theta->dtype())) return ctx.Error("theta must be floating point, got ", theta->Description());
  const std::vector<int64_t> size = size_tensor->ToInt64s();
  if (size.size() != 4 && size.size() != 5) return ctx.Error("size must have 4 or 5 values, got ", size.size());
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  if (theta->rank() != 3 || theta->dim(0) != size[0] || theta->dim(1) != r || theta->dim(2) != r + 1) {
    return ctx.Error("theta has shape ", ShapeToString(theta->shape()), ", expected [", size[0], ", ", r, ", ", r + 1, "]");
  }
  const bool align = ctx.GetInt("align_corners", 0) != 0;
  const std::vector<int64_t> dims(size.begin() + 2, size.end());  // D, H, W (spatial, outermost first)
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("size has a negative dimension: ", ShapeToString(size));
  }
  Shape out_shape = {size[0]};
  out_shape.insert(out_shape.end(), dims.begin(), dims.end());
  out_shape.push_back(r);
  PARITY_ASSIGN_OR_RETURN(Tensor grid, Allocate(ctx, theta->dtype(), out_shape));
  auto position = [&](int64_t i, int64_t length) {
    if (align) return length <= 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(length - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(length);
  };
  const int64_t points = Product(dims);
  std::vector<int64_t> idx(dims.size(), 0);
  std::vector<double> homogeneous(static_cast<size_t>(r + 1), 1.0);
  for (int64_t n = 0; n < size[0]; ++n) {
    std::fill(idx.begin(), idx.end(), 0);
    for (int64_t p = 0; p < points; ++p, NextIndex(idx, dims)) {
      // (x, y, z): x runs along the innermost axis.
      for (int64_t a = 0; a < r; ++a) {
        const size_t axis = static_cast<size_t>(r - 1 - a);
        homogeneous[static_cast<size_t>(a)] = position(idx[axis], dims[axis]);
      }
      for (int64_t row = 0; row < r; ++row) {
        double acc = 0.0;
        for (int64_t col = 0; col <= r; ++col) {
          acc += theta->GetDouble((n * r + row) * (r + 1) + col) * homogeneous[static_cast<size_t>(col)];
        }
        grid.SetDouble((n * points + p) * r + row, acc);
      }
    }
  }
  return Single(std::move(grid));
}

}  // namespace parity::ops::nn
