// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Input (N, C, d1, ..., dk), target (N, d1, ..., dk) of class indices. Each
// position loses -input[n, target, d...] * weight[target]; a position whose
// target equals ignore_index loses 0 and weighs 0. reduction "none" keeps
// the target's shape, "sum" adds, "mean" divides the sum by the total weight
// (by the count of positions not ignored when there are no weights).
// SoftmaxCrossEntropyLoss applies it to LogSoftmax(scores) along axis 1 and
// can return that log-probability as its second output.
#include <cmath>
#include <optional>
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

// `input` holds N * C * D values laid out (N, C, D); `target` N * D indices.
StatusOr<Value> NllLoss(const KernelContext& ctx, DataType dtype, const std::vector<double>& input,
                        const Shape& input_shape, const Tensor& target) {
  const int64_t n_count = input_shape[0];
  const int64_t classes = input_shape[1];
  const int64_t inner = Product(input_shape, 2, input_shape.size());
  const Shape expected_target = [&] {
    Shape s{n_count};
    s.insert(s.end(), input_shape.begin() + 2, input_shape.end());
    return s;
  }();
  if (!IsInteger(target.dtype()) || target.shape() != expected_target) {
    return ctx.Error("target must be an integer tensor of shape ", ShapeToString(expected_target), ", got ",
                     target.Description());
  }
  std::optional<std::vector<double>> weight;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(2));
    if (w->rank() != 1 || w->dim(0) != classes) {
      return ctx.Error("weight must have shape [", classes, "], got ", w->Description());
    }
    weight = w->ToDoubles();
  }
  const bool has_ignore = ctx.has_attribute("ignore_index");
  const int64_t ignore_index = ctx.GetInt("ignore_index", 0);
  const std::string reduction = ctx.GetString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return ctx.Error("reduction must be none, sum or mean, got '", reduction, "'");
  }
  std::vector<double> loss(static_cast<size_t>(target.size()), 0.0);
  double loss_sum = 0.0;
  double weight_sum = 0.0;
  const Summation summation(ctx, dtype);
  for (int64_t n = 0; n < n_count; ++n) {
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t pos = n * inner + d;
      const int64_t t = target.GetInt64(pos);
      if (has_ignore && t == ignore_index) continue;
      if (t < 0 || t >= classes) return ctx.Error("target value ", t, " is out of range [0, ", classes, ")");
      const double w = weight ? (*weight)[t] : 1.0;
      loss[pos] = -input[(n * classes + t) * inner + d] * w;
      loss_sum = summation.Add(loss_sum, loss[pos]);
      weight_sum = summation.Add(weight_sum, w);
    }
  }
  if (reduction == "none") return MakeResult(ctx, dtype, target.shape(), loss);
  const double total = reduction == "sum" ? loss_sum : loss_sum / weight_sum;
  return MakeResult(ctx, dtype, {}, {total});
}

Status CheckScores(const KernelContext& ctx, const Tensor& x) {
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, x, "input"));
  if (x.rank() < 2) return ctx.Error("input must have shape (N, C, ...), got ", x.Description());
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<Value>> NegativeLogLikelihoodLossKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* target, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(CheckScores(ctx, *x));
  PARITY_ASSIGN_OR_RETURN(Value loss, NllLoss(ctx, x->dtype(), x->ToDoubles(), x->shape(), *target));
  return std::vector<Value>{std::move(loss)};
}

StatusOr<std::vector<Value>> SoftmaxCrossEntropyLossKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* labels, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(CheckScores(ctx, *x));
  const AxisSplit s = SplitAtAxis(x->shape(), 1);
  const std::vector<double> in = x->ToDoubles();
  std::vector<double> log_prob(in.size());
  const Summation summation(ctx, x->dtype());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double m = -INFINITY;
      for (int64_t k = 0; k < s.dim; ++k) m = std::max(m, in[s.At(o, k, i)]);
      double sum = 0.0;
      for (int64_t k = 0; k < s.dim; ++k) sum = summation.Add(sum, summation.Term(std::exp(in[s.At(o, k, i)] - m)));
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < s.dim; ++k) log_prob[s.At(o, k, i)] = in[s.At(o, k, i)] - m - log_sum;
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value loss, NllLoss(ctx, x->dtype(), log_prob, x->shape(), *labels));
  std::vector<Value> outputs{std::move(loss)};
  if (ctx.output_count() > 1) {
    PARITY_ASSIGN_OR_RETURN(Value lp, MakeResult(ctx, x->dtype(), x->shape(), log_prob));
    outputs.push_back(std::move(lp));
  }
  return outputs;
}

}  // namespace parity::ops
