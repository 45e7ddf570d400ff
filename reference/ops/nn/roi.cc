// RoiAlign (10, 16, 22) and MaxRoiPool (1, 22): pooling of regions of
// interest of a 4-D feature map [N, C, H, W].
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"

namespace parity::ops::nn {

namespace {

// One bilinear sample: four corner positions (flat within a plane) and weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

// The sample at (y, x) as RoiAlign defines it (the Caffe2 / ONNX Runtime
// convention): outside [-1, size] (or NaN) it is zero; coordinates are clamped at 0
// and an index at the last row or column repeats it.
Sample BilinearSample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width))) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y);
  int64_t x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.weight[0] = hy * hx;
  s.weight[1] = hy * lx;
  s.weight[2] = ly * hx;
  s.weight[3] = ly * lx;
  return s;
}

}  // namespace

// Each output bin averages (or maxes) a grid of sampling_ratio^2 bilinear
// samples (adaptive ceil(roi size / output size) when sampling_ratio is 0).
// coordinate_transformation_mode "half_pixel" (the default from opset 16)
// shifts ROI corners by -0.5 pixel; "output_half_pixel" (the only mode of
// opset 10) does not, and stretches ROIs to at least 1x1. mode "max" takes the
// largest weighted corner of each sample, as ONNX Runtime and ONNX's reference do.
KernelResult RoiAlign(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* rois, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* batch_indices, ctx.RequireTensor(2));
  if (x->rank() != 4 || !IsFloatingPoint(x->dtype())) return ctx.Error("X must be a 4-D float tensor, got ", x->Description());
  if (rois->rank() != 2 || rois->dim(1) != 4) return ctx.Error("rois must be [num_rois, 4], got ", rois->Description());
  const int64_t num_rois = rois->dim(0);
  if (batch_indices->rank() != 1 || batch_indices->dim(0) != num_rois || !IsInteger(batch_indices->dtype())) {
    return ctx.Error("batch_indices must be integer of shape [", num_rois, "], got ", batch_indices->Description());
  }
  const std::string mode = ctx.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.Error("unknown mode '", mode, "'");
  const std::string transform = ctx.GetString("coordinate_transformation_mode", ctx.opset() < 16 ? "output_half_pixel" : "half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    return ctx.Error("unknown coordinate_transformation_mode '", transform, "'");
  }
  const bool half_pixel = transform == "half_pixel";
  const int64_t out_h = ctx.GetInt("output_height", 1);
  const int64_t out_w = ctx.GetInt("output_width", 1);
  const int64_t sampling_ratio = ctx.GetInt("sampling_ratio", 0);
  const double spatial_scale = ctx.GetFloat("spatial_scale", 1.0f);
  if (out_h <= 0 || out_w <= 0 || sampling_ratio < 0) {
    return ctx.Error("output_height and output_width must be positive, sampling_ratio non-negative");
  }
  const int64_t channels = x->dim(1), height = x->dim(2), width = x->dim(3);
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, x->dtype(), {num_rois, channels, out_h, out_w}));
  const std::vector<double> xv = x->ToDoubles();
  const double shift = half_pixel ? 0.5 : 0.0;
  for (int64_t n = 0; n < num_rois; ++n) {
    const int64_t b = batch_indices->GetInt64(n);
    if (b < 0 || b >= x->dim(0)) return ctx.Error("batch index ", b, " of roi ", n, " is outside [0, ", x->dim(0), ")");
    const double start_w = rois->GetDouble(n * 4 + 0) * spatial_scale - shift;
    const double start_h = rois->GetDouble(n * 4 + 1) * spatial_scale - shift;
    const double end_w = rois->GetDouble(n * 4 + 2) * spatial_scale - shift;
    const double end_h = rois->GetDouble(n * 4 + 3) * spatial_scale - shift;
    double roi_w = end_w - start_w, roi_h = end_h - start_h;
    if (!half_pixel) {
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(out_h);
    const double bin_w = roi_w / static_cast<double>(out_w);
    // A huge or non-finite ROI would ask for an absurd sample grid: refuse it.
    const double grid_h_real = sampling_ratio > 0 ? static_cast<double>(sampling_ratio) : std::ceil(bin_h);
    const double grid_w_real = sampling_ratio > 0 ? static_cast<double>(sampling_ratio) : std::ceil(bin_w);
    if (!(grid_h_real < 1e6) || !(grid_w_real < 1e6)) return ctx.Error("roi ", n, " is too large or not finite");
    const int64_t grid_h = std::max<int64_t>(static_cast<int64_t>(grid_h_real), 0);
    const int64_t grid_w = std::max<int64_t>(static_cast<int64_t>(grid_w_real), 0);
    if (static_cast<double>(grid_h * grid_w) * static_cast<double>(out_h * out_w) > 1e8) {
      return ctx.Error("roi ", n, " needs more than 1e8 samples");
    }
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    std::vector<Sample> samples;
    samples.reserve(static_cast<size_t>(out_h * out_w * grid_h * grid_w));
    for (int64_t ph = 0; ph < out_h; ++ph) {
      for (int64_t pw = 0; pw < out_w; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const double yy = start_h + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix) {
            const double xx = start_w + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
            samples.push_back(BilinearSample(yy, xx, height, width));
          }
        }
      }
    }
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = xv.data() + (b * channels + c) * height * width;
      size_t si = 0;
      for (int64_t bin = 0; bin < out_h * out_w; ++bin) {
        double acc = 0.0;
        bool first = true;
        for (int64_t s = 0; s < grid_h * grid_w; ++s, ++si) {
          const Sample& p = samples[si];
          if (mode == "avg") {
            for (int j = 0; j < 4; ++j) acc += p.weight[j] * plane[p.pos[j]];
          } else {
            double v = p.weight[0] * plane[p.pos[0]];
            for (int j = 1; j < 4; ++j) v = std::max(v, p.weight[j] * plane[p.pos[j]]);
            acc = first ? v : std::max(acc, v);
            first = false;
          }
        }
        y.SetDouble(((n * channels + c) * out_h * out_w) + bin, mode == "avg" ? acc / count : acc);
      }
    }
  }
  return Single(std::move(y));
}

// Caffe's ROI max pooling: rois are [batch, x1, y1, x2, y2]; corners are
// scaled and rounded half away from zero; each of the pooled_shape bins takes
// the max over its pixels, or 0 when empty.
KernelResult MaxRoiPool(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* rois, ctx.RequireTensor(1));
  if (x->rank() != 4 || !IsFloatingPoint(x->dtype())) return ctx.Error("X must be a 4-D float tensor, got ", x->Description());
  if (rois->rank() != 2 || rois->dim(1) != 5) return ctx.Error("rois must be [num_rois, 5], got ", rois->Description());
  const std::vector<int64_t> pooled = ctx.GetInts("pooled_shape");
  if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0) return ctx.Error("pooled_shape must be two positive values");
  const double scale = ctx.GetFloat("spatial_scale", 1.0f);
  const int64_t num_rois = rois->dim(0), channels = x->dim(1), height = x->dim(2), width = x->dim(3);
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, x->dtype(), {num_rois, channels, pooled[0], pooled[1]}));
  const std::vector<double> xv = x->ToDoubles();
  auto corner = [&](int64_t n, int j) -> StatusOr<int64_t> {
    const double v = std::round(rois->GetDouble(n * 5 + j) * scale);
    if (!(std::fabs(v) < 1e15)) return ctx.Error("roi ", n, " has a coordinate out of range");
    return static_cast<int64_t>(v);
  };
  for (int64_t n = 0; n < num_rois; ++n) {
    const double batch_value = rois->GetDouble(n * 5);
    if (!(batch_value >= 0 && batch_value < static_cast<double>(x->dim(0)))) {
      return ctx.Error("roi ", n, " has batch index ", batch_value, " outside [0, ", x->dim(0), ")");
    }
    const int64_t b = static_cast<int64_t>(batch_value);
    PARITY_ASSIGN_OR_RETURN(int64_t start_w, corner(n, 1));
    PARITY_ASSIGN_OR_RETURN(int64_t start_h, corner(n, 2));
    PARITY_ASSIGN_OR_RETURN(int64_t end_w, corner(n, 3));
    PARITY_ASSIGN_OR_RETURN(int64_t end_h, corner(n, 4));
    const double bin_h = static_cast<double>(std::max<int64_t>(end_h - start_h + 1, 1)) / static_cast<double>(pooled[0]);
    const double bin_w = static_cast<double>(std::max<int64_t>(end_w - start_w + 1, 1)) / static_cast<double>(pooled[1]);
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = xv.data() + (b * channels + c) * height * width;
      for (int64_t ph = 0; ph < pooled[0]; ++ph) {
        const int64_t h0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(ph * bin_h)) + start_h, 0, height);
        const int64_t h1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + start_h, 0, height);
        for (int64_t pw = 0; pw < pooled[1]; ++pw) {
          const int64_t w0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(pw * bin_w)) + start_w, 0, width);
          const int64_t w1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + start_w, 0, width);
          double best = 0.0;
          bool empty = true;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) {
              const double v = plane[h * width + w];
              if (empty || v > best) best = v;
              empty = false;
            }
          }
          y.SetDouble(((n * channels + c) * pooled[0] + ph) * pooled[1] + pw, best);
        }
      }
    }
  }
  return Single(std::move(y));
}

}  // namespace parity::ops::nn
