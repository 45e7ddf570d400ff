// BatchNormalization and LRN: operators over the channel axis 1.
//
// BatchNormalization runs in inference mode (the given mean and variance) or
// training mode (the batch's own mean and population variance, and running
// statistics updated with `momentum`). Training mode is chosen by
// `training_mode` from opset 14, by asking for more than one output in
// opsets 7-13, and by is_test = 0 before 7 (the attribute's default).
// Before opset 9, spatial = 0 gives one statistic per activation
// (parameters of shape X.shape[1:]) instead of per channel.
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {

StatusOr<std::vector<Value>> BatchNormalizationKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input X"));
  if (x->rank() < 2) return ctx.Error("input X must have rank >= 2, got ", x->Description());
  const int64_t opset = ctx.opset();
  bool training = false;
  if (opset >= 14) training = ctx.GetInt("training_mode", 0) != 0;
  else if (opset >= 7) training = ctx.output_count() > 1;
  else training = ctx.GetInt("is_test", 0) == 0;
  const bool spatial = opset >= 9 || ctx.GetInt("spatial", 1) != 0;
  const double epsilon = ctx.GetFloat("epsilon", 1e-5f);
  const double momentum = ctx.GetFloat("momentum", 0.9f);

  const int64_t channels = x->dim(1);
  const int64_t spatial_size = Product(x->shape(), 2, x->shape().size());
  // Parameters are indexed per channel, or per activation when !spatial.
  const int64_t param_count = spatial ? channels : channels * spatial_size;
  const Shape param_shape = spatial ? Shape{channels} : Shape(x->shape().begin() + 1, x->shape().end());
  std::vector<std::vector<double>> params;
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t p = 0; p < 4; ++p) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(p + 1));
    if (t->size() != param_count || (spatial && t->rank() != 1)) {
      return ctx.Error(names[p], " must have shape ", ShapeToString(param_shape), ", got ", t->Description());
    }
    params.push_back(t->ToDoubles());
  }
  const std::vector<double>& scale = params[0];
  const std::vector<double>& bias = params[1];
  std::vector<double> mean = params[2];
  std::vector<double> var = params[3];
  const std::vector<double> in = x->ToDoubles();
  auto param_of = [&](int64_t i) {
    return spatial ? (i / spatial_size) % channels : i % (channels * spatial_size);
  };
  std::vector<double> batch_mean(static_cast<size_t>(param_count), 0.0);
  std::vector<double> batch_var(static_cast<size_t>(param_count), 0.0);
  if (training) {
    const double per_param = static_cast<double>(x->size()) / static_cast<double>(param_count);
    for (size_t i = 0; i < in.size(); ++i) batch_mean[param_of(i)] += in[i];
    for (double& m : batch_mean) m /= per_param;
    for (size_t i = 0; i < in.size(); ++i) {
      const double d = in[i] - batch_mean[param_of(i)];
      batch_var[param_of(i)] += d * d;
    }
    for (double& v : batch_var) v /= per_param;
  }
  const std::vector<double>& use_mean = training ? batch_mean : mean;
  const std::vector<double>& use_var = training ? batch_var : var;
  std::vector<double> y(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t p = param_of(i);
    y[i] = scale[p] * (in[i] - use_mean[p]) / std::sqrt(use_var[p] + epsilon) + bias[p];
  }
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value y_value, MakeResult(ctx, x->dtype(), x->shape(), y));
  outputs.push_back(std::move(y_value));
  if (!training || ctx.output_count() == 1) return outputs;
  std::vector<double> running_mean(mean.size());
  std::vector<double> running_var(var.size());
  for (size_t p = 0; p < mean.size(); ++p) {
    running_mean[p] = mean[p] * momentum + batch_mean[p] * (1.0 - momentum);
    running_var[p] = var[p] * momentum + batch_var[p] * (1.0 - momentum);
  }
  const DataType stat_type = ctx.tensor(3).dtype();
  const std::vector<double>* extra[] = {&running_mean, &running_var, &batch_mean, &batch_var};
  const size_t extra_count = opset >= 14 ? 2 : 4;
  for (size_t k = 0; k < extra_count && outputs.size() < ctx.output_count(); ++k) {
    PARITY_ASSIGN_OR_RETURN(Value v, MakeResult(ctx, stat_type, param_shape, *extra[k]));
    outputs.push_back(std::move(v));
  }
  return outputs;
}

// Local response normalisation across channels:
// y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta,
// the window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
StatusOr<std::vector<Value>> LRNKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input X"));
  if (x->rank() < 2) return ctx.Error("input X must have rank >= 2, got ", x->Description());
  if (!ctx.has_attribute("size")) return ctx.Error("attribute 'size' is required");
  const int64_t size = ctx.GetInt("size", 1);
  if (size <= 0) return ctx.Error("size must be positive, got ", size);
  const double alpha = ctx.GetFloat("alpha", 1e-4f);
  const double beta = ctx.GetFloat("beta", 0.75f);
  const double bias = ctx.GetFloat("bias", 1.0f);
  const AxisSplit s = SplitAtAxis(x->shape(), 1);
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;
  const std::vector<double> in = x->ToDoubles();
  std::vector<double> y(in.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.dim; ++c) {
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min<int64_t>(s.dim - 1, c + after);
      for (int64_t i = 0; i < s.inner; ++i) {
        double square_sum = 0.0;
        for (int64_t k = lo; k <= hi; ++k) square_sum += in[s.At(o, k, i)] * in[s.At(o, k, i)];
        const int64_t idx = s.At(o, c, i);
        y[idx] = in[idx] / std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
      }
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), x->shape(), y));
  return std::vector<Value>{std::move(out)};
}

}  // namespace parity::ops
