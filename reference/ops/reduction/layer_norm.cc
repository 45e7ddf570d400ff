// Normalisations over contiguous blocks or chosen axes: LayerNormalization
// (17), RMSNormalization (23), GroupNormalization (18: scale and bias per
// group; 21: per channel), InstanceNormalization, MeanVarianceNormalization
// and LpNormalization. Statistics are computed in double whatever
// stash_type says (stash_type only picks the type of LayerNormalization's
// Mean and InvStdDev outputs); the variance is the population variance.
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

struct BlockStats {
  std::vector<double> mean;
  std::vector<double> inv_std;  // 1 / sqrt(var + epsilon)
};

// Mean and inverse standard deviation of each of `blocks` contiguous runs of
// `block` values. With `rms`, the mean is taken as 0 (root mean square).
BlockStats ComputeBlockStats(const std::vector<double>& x, int64_t blocks, int64_t block, double epsilon, bool rms,
                             const Summation& summation) {
  BlockStats s;
  s.mean.assign(static_cast<size_t>(blocks), 0.0);
  s.inv_std.assign(static_cast<size_t>(blocks), 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    const double* v = x.data() + b * block;
    double mean = 0.0;
    if (!rms) {
      for (int64_t i = 0; i < block; ++i) mean = summation.Add(mean, v[i]);
      mean /= static_cast<double>(block);
    }
    double var = 0.0;
    for (int64_t i = 0; i < block; ++i) var = summation.Add(var, (v[i] - mean) * (v[i] - mean));
    var /= static_cast<double>(block);
    s.mean[b] = mean;
    s.inv_std[b] = 1.0 / std::sqrt(var + epsilon);
  }
  return s;
}

// Checks that `param` broadcasts unidirectionally to `shape`.
Status CheckBroadcastTo(const KernelContext& ctx, const Tensor& param, const Shape& shape, const char* what) {
  PARITY_ASSIGN_OR_RETURN(Shape b, BroadcastShapes(ctx, {param.shape(), shape}));
  if (b != shape) return ctx.Error(what, " ", param.Description(), " does not broadcast to ", ShapeToString(shape));
  return Status::Ok();
}

// LayerNormalization and RMSNormalization: normalise over axes [axis, rank).
StatusOr<std::vector<Value>> NormalizeTrailing(const KernelContext& ctx, bool rms) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input X"));
  PARITY_RETURN_IF_ERROR(CheckBroadcastTo(ctx, *scale, x->shape(), "Scale"));
  const Tensor* bias = nullptr;
  if (!rms && ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(bias, ctx.RequireTensor(2));
    PARITY_RETURN_IF_ERROR(CheckBroadcastTo(ctx, *bias, x->shape(), "B"));
  }
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -1), x->rank()));
  const double epsilon = ctx.GetFloat("epsilon", 1e-5f);
  const int64_t stash = ctx.GetInt("stash_type", 1);
  if (stash < 0 || stash > kMaxDataType || !IsFloatingPoint(static_cast<DataType>(stash))) {
    return ctx.Error("stash_type ", stash, " is not a floating-point type");
  }
  const int64_t blocks = Product(x->shape(), 0, static_cast<size_t>(axis));
  const int64_t block = Product(x->shape(), static_cast<size_t>(axis), x->shape().size());
  const std::vector<double> in = x->ToDoubles();
  const BlockStats stats = ComputeBlockStats(in, blocks, block, epsilon, rms, Summation(ctx, x->dtype()));
  const BroadcastIndexer scale_at(scale->shape(), x->shape());
  const BroadcastIndexer bias_at(bias ? bias->shape() : Shape{}, x->shape());
  std::vector<double> y(in.size());
  for (int64_t i = 0; i < x->size(); ++i) {
    const int64_t b = i / block;
    y[i] = (in[i] - stats.mean[b]) * stats.inv_std[b] * scale->GetDouble(scale_at(i));
    if (bias) y[i] += bias->GetDouble(bias_at(i));
  }
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value y_value, MakeResult(ctx, x->dtype(), x->shape(), y));
  outputs.push_back(std::move(y_value));
  if (!rms && ctx.output_count() > 1) {
    Shape stat_shape(x->shape());
    for (size_t d = static_cast<size_t>(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
    const DataType stat_type = static_cast<DataType>(stash);
    PARITY_ASSIGN_OR_RETURN(Value mean, MakeResult(ctx, stat_type, stat_shape, stats.mean));
    PARITY_ASSIGN_OR_RETURN(Value inv_std, MakeResult(ctx, stat_type, stat_shape, stats.inv_std));
    outputs.push_back(std::move(mean));
    if (ctx.output_count() > 2) outputs.push_back(std::move(inv_std));
  }
  return outputs;
}

// Reads a 1-D parameter of `count` elements as doubles.
StatusOr<std::vector<double>> ReadParam(const KernelContext& ctx, size_t index, int64_t count, const char* what) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(index));
  if (t->rank() != 1 || t->dim(0) != count) {
    return ctx.Error(what, " must have shape [", count, "], got ", t->Description());
  }
  return t->ToDoubles();
}

}  // namespace

StatusOr<std::vector<Value>> LayerNormalizationKernel(const KernelContext& ctx) { return NormalizeTrailing(ctx, false); }
StatusOr<std::vector<Value>> RMSNormalizationKernel(const KernelContext& ctx) { return NormalizeTrailing(ctx, true); }

// Group normalisation; instance normalisation is the case of one channel per group.
StatusOr<std::vector<Value>> GroupNormalizationKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input X"));
  if (x->rank() < 2) return ctx.Error("input X must have rank >= 2, got ", x->Description());
  if (!ctx.has_attribute("num_groups")) return ctx.Error("attribute 'num_groups' is required");
  const int64_t groups = ctx.GetInt("num_groups", 1);
  const int64_t channels = x->dim(1);
  if (groups <= 0 || channels % groups != 0) {
    return ctx.Error("num_groups ", groups, " must be positive and divide the channel count ", channels);
  }
  const bool per_group_params = ctx.opset() < 21;
  const int64_t param_count = per_group_params ? groups : channels;
  PARITY_ASSIGN_OR_RETURN(std::vector<double> scale, ReadParam(ctx, 1, param_count, "scale"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> bias, ReadParam(ctx, 2, param_count, "bias"));
  const double epsilon = ctx.GetFloat("epsilon", 1e-5f);
  const int64_t spatial = Product(x->shape(), 2, x->shape().size());
  const int64_t per_group = channels / groups;
  const std::vector<double> in = x->ToDoubles();
  const BlockStats stats = ComputeBlockStats(in, x->dim(0) * groups, per_group * spatial, epsilon, false,
                                               Summation(ctx, x->dtype()));
  std::vector<double> y(in.size());
  for (int64_t i = 0; i < x->size(); ++i) {
    const int64_t c = (i / spatial) % channels;
    const int64_t b = i / (per_group * spatial);  // (n, group) block
    const int64_t p = per_group_params ? c / per_group : c;
    y[i] = (in[i] - stats.mean[b]) * stats.inv_std[b] * scale[p] + bias[p];
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), x->shape(), y));
  return std::vector<Value>{std::move(out)};
}

StatusOr<std::vector<Value>> InstanceNormalizationKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input"));
  if (x->rank() < 2) return ctx.Error("input must have rank >= 2, got ", x->Description());
  const int64_t channels = x->dim(1);
  PARITY_ASSIGN_OR_RETURN(std::vector<double> scale, ReadParam(ctx, 1, channels, "scale"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> bias, ReadParam(ctx, 2, channels, "B"));
  const double epsilon = ctx.GetFloat("epsilon", 1e-5f);
  const int64_t spatial = Product(x->shape(), 2, x->shape().size());
  const std::vector<double> in = x->ToDoubles();
  const BlockStats stats = ComputeBlockStats(in, x->dim(0) * channels, spatial, epsilon, false,
                                               Summation(ctx, x->dtype()));
  std::vector<double> y(in.size());
  for (int64_t i = 0; i < x->size(); ++i) {
    const int64_t b = i / spatial;
    const int64_t c = b % channels;
    y[i] = (in[i] - stats.mean[b]) * stats.inv_std[b] * scale[c] + bias[c];
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), x->shape(), y));
  return std::vector<Value>{std::move(out)};
}

// Y = (X - mean) / (sqrt(var) + 1e-9) over `axes` (default [0, 2, 3]), the
// function body of the spec with the variance taken as mean((X - mean)^2).
StatusOr<std::vector<Value>> MeanVarianceNormalizationKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input"));
  std::vector<int64_t> axes = ctx.has_attribute("axes") ? ctx.GetInts("axes") : std::vector<int64_t>{0, 2, 3};
  const int64_t rank = x->rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a, rank));
    reduced[axis] = true;
  }
  Shape kept(x->shape());
  int64_t group = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      group *= kept[d];
      kept[d] = 1;
    }
  }
  const std::vector<int64_t> kept_strides = Strides(kept);
  const std::vector<double> in = x->ToDoubles();
  std::vector<int64_t> group_of(in.size());
  for (int64_t i = 0; i < x->size(); ++i) {
    int64_t rest = i;
    int64_t g = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t coord = rest % x->dim(d);
      rest /= x->dim(d);
      if (!reduced[d]) g += coord * kept_strides[d];
    }
    group_of[i] = g;
  }
  const int64_t groups = Product(kept, 0, kept.size());
  std::vector<double> mean(static_cast<size_t>(groups), 0.0);
  std::vector<double> var(static_cast<size_t>(groups), 0.0);
  for (size_t i = 0; i < in.size(); ++i) mean[group_of[i]] += in[i];
  for (double& m : mean) m /= static_cast<double>(group);
  for (size_t i = 0; i < in.size(); ++i) {
    const double d = in[i] - mean[group_of[i]];
    var[group_of[i]] += d * d;
  }
  std::vector<double> y(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t g = group_of[i];
    y[i] = (in[i] - mean[g]) / (std::sqrt(var[g] / static_cast<double>(group)) + 1e-9);
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), x->shape(), y));
  return std::vector<Value>{std::move(out)};
}

// x / ||x||_p along `axis` (p = 1 or 2); 0 where the norm is 0, as the
// reference implementation of ONNX does.
StatusOr<std::vector<Value>> LpNormalizationKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input"));
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -1), x->rank()));
  const int64_t p = ctx.GetInt("p", 2);
  if (p != 1 && p != 2) return ctx.Error("p must be 1 or 2, got ", p);
  const AxisSplit s = SplitAtAxis(x->shape(), axis);
  const std::vector<double> in = x->ToDoubles();
  std::vector<double> y(in.size(), 0.0);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double norm = 0.0;
      for (int64_t k = 0; k < s.dim; ++k) {
        const double v = in[s.At(o, k, i)];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < s.dim; ++k) {
        y[s.At(o, k, i)] = norm == 0.0 ? 0.0 : in[s.At(o, k, i)] / norm;
      }
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), x->shape(), y));
  return std::vector<Value>{std::move(out)};
}

}  // namespace parity::ops
