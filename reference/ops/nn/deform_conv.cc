// DeformConv (19, 22): convolution whose kernel taps are displaced by learned
// offsets and scaled by an optional mask (arXiv 1703.06211, 1811.11168).
//   y[n, m, o] = B[m] + sum_{c, k} W[m, c, k] * mask[n, g(c), k, o]
//                * X[n, c](o * stride - pad_begin + k * dilation + offset[n, g(c), k, :, o])
// where X is sampled N-linearly with zeros outside the input, g(c) is the
// offset group of channel c, and offset's channel axis is laid out as
// (offset_group, kernel positions row-major, spatial axis).
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

namespace {

// X[plane] at real position `pos`, interpolated N-linearly; corners outside are 0.
double SampleLinear(const std::vector<double>& x, int64_t plane_offset, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides, const std::vector<double>& pos) {
  const size_t r = dims.size();
  for (size_t a = 0; a < r; ++a) {
    // Beyond one pixel outside, every corner misses (also keeps floor() in int64 range).
    if (!(pos[a] > -1.0 && pos[a] < static_cast<double>(dims[a]))) return std::isnan(pos[a]) ? pos[a] : 0.0;
  }
  double acc = 0.0;
  for (uint64_t corner = 0; corner < (uint64_t{1} << r); ++corner) {
    double weight = 1.0;
    int64_t offset = 0;
    bool inside = true;
    for (size_t a = 0; a < r; ++a) {
      const double base = std::floor(pos[a]);
      const double t = pos[a] - base;
      const bool high = (corner >> a) & 1;
      const int64_t i = static_cast<int64_t>(base) + (high ? 1 : 0);
      weight *= high ? t : 1.0 - t;
      if (i < 0 || i >= dims[a]) {
        inside = false;
        break;
      }
      offset += i * strides[a];
    }
    if (inside && weight != 0.0) acc += weight * x[static_cast<size_t>(plane_offset + offset)];
  }
  return acc;
}

}  // namespace

KernelResult DeformConv(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* offset, ctx.RequireTensor(2));
  PARITY_RETURN_IF_ERROR(RequireImage(ctx, *x, "X"));
  if (!IsFloatingPoint(x->dtype())) return ctx.Error("X must be floating point, got ", x->Description());
  if (w->rank() != x->rank() || offset->rank() != x->rank()) {
    return ctx.Error("W and offset must have X's rank ", x->rank(), ", got ", w->Description(), " and ",
                     offset->Description());
  }
  const int64_t group = ctx.GetInt("group", 1);
  const int64_t offset_group = ctx.GetInt("offset_group", 1);
  const int64_t batch = x->dim(0), channels = x->dim(1), out_channels = w->dim(0);
  if (group <= 0 || offset_group <= 0 || channels != w->dim(1) * group || out_channels % group != 0 ||
      channels % offset_group != 0) {
    return ctx.Error("X ", ShapeToString(x->shape()), ", W ", ShapeToString(w->shape()), ", group ", group,
                     " and offset_group ", offset_group, " do not agree");
  }
  const std::vector<int64_t> input(x->shape().begin() + 2, x->shape().end());
  const std::vector<int64_t> weight(w->shape().begin() + 2, w->shape().end());
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelShape(ctx, weight));
  PARITY_ASSIGN_OR_RETURN(Window win, ResolveWindow(ctx, input, kernel));
  const size_t r = win.rank();
  const int64_t kernel_size = Product(kernel);
  const int64_t out_size = Product(win.output);
  Shape expected_offset = {batch, offset_group * kernel_size * static_cast<int64_t>(r)};
  expected_offset.insert(expected_offset.end(), win.output.begin(), win.output.end());
  if (offset->shape() != expected_offset) {
    return ctx.Error("offset has shape ", ShapeToString(offset->shape()), ", expected ", ShapeToString(expected_offset));
  }
  const Tensor* bias = ctx.has_input(3) ? &ctx.tensor(3) : nullptr;
  const Tensor* mask = ctx.has_input(4) ? &ctx.tensor(4) : nullptr;
  if (bias && (bias->rank() != 1 || bias->dim(0) != out_channels)) {
    return ctx.Error("B has shape ", ShapeToString(bias->shape()), ", expected [", out_channels, "]");
  }
  if (mask) {
    Shape expected_mask = {batch, offset_group * kernel_size};
    expected_mask.insert(expected_mask.end(), win.output.begin(), win.output.end());
    if (mask->shape() != expected_mask) {
      return ctx.Error("mask has shape ", ShapeToString(mask->shape()), ", expected ", ShapeToString(expected_mask));
    }
  }

  const std::vector<double> xv = x->ToDoubles();
  const std::vector<double> wv = w->ToDoubles();
  const std::vector<double> ov = offset->ToDoubles();
  const std::vector<double> mv = mask ? mask->ToDoubles() : std::vector<double>();
  std::vector<int64_t> in_strides(r, 1);
  for (size_t i = r; i-- > 1;) in_strides[i - 1] = in_strides[i] * input[i];
  const int64_t in_size = Product(input);
  const int64_t in_per_group = channels / group;
  const int64_t out_per_group = out_channels / group;
  const int64_t channels_per_offset_group = channels / offset_group;

  // Sample every (n, c, k, o) once: columns[n][c][k][o].
  std::vector<double> columns(static_cast<size_t>(batch * channels * kernel_size * out_size));
  std::vector<int64_t> o(r), k(r);
  std::vector<double> pos(r);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t g = c / channels_per_offset_group;
      std::fill(k.begin(), k.end(), 0);
      for (int64_t kk = 0; kk < kernel_size; ++kk, NextIndex(k, kernel)) {
        std::fill(o.begin(), o.end(), 0);
        for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, win.output)) {
          for (size_t a = 0; a < r; ++a) {
            const int64_t channel = (g * kernel_size + kk) * static_cast<int64_t>(r) + static_cast<int64_t>(a);
            const double shift = ov[static_cast<size_t>((n * offset->dim(1) + channel) * out_size + oi)];
            pos[a] = static_cast<double>(o[a] * win.strides[a] - win.pad_begin[a] + k[a] * win.dilations[a]) + shift;
          }
          double v = SampleLinear(xv, (n * channels + c) * in_size, input, in_strides, pos);
          if (mask) v *= mv[static_cast<size_t>((n * mask->dim(1) + g * kernel_size + kk) * out_size + oi)];
          columns[static_cast<size_t>(((n * channels + c) * kernel_size + kk) * out_size + oi)] = v;
        }
      }
    }
  }
  Shape y_shape = {batch, out_channels};
  y_shape.insert(y_shape.end(), win.output.begin(), win.output.end());
  std::vector<double> y(static_cast<size_t>(batch * out_channels * out_size), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t g = m / out_per_group;
      double* out = y.data() + (n * out_channels + m) * out_size;
      const double b = bias ? bias->GetDouble(m) : 0.0;
      for (int64_t oi = 0; oi < out_size; ++oi) out[oi] = b;
      for (int64_t c = 0; c < in_per_group; ++c) {
        const int64_t ic = g * in_per_group + c;
        for (int64_t kk = 0; kk < kernel_size; ++kk) {
          const double wk = wv[static_cast<size_t>((m * in_per_group + c) * kernel_size + kk)];
          const double* col = columns.data() + ((n * channels + ic) * kernel_size + kk) * out_size;
          for (int64_t oi = 0; oi < out_size; ++oi) out[oi] += wk * col[oi];
        }
      }
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value v, MakeResult(ctx, x->dtype(), y_shape, y));
  return std::vector<Value>{v};
}

}  // namespace parity::ops::nn
