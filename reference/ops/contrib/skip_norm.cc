// SimplifiedLayerNormalization, SkipLayerNormalization and
// SkipSimplifiedLayerNormalization (org.onnxparity.contrib, version 1): the
// direct kernels of spec/functions/{simplified,skip,skip_simplified}_layer_
// normalization.md. Every value is computed in double from the inputs as
// given (the sum input + skip + bias is never rounded before it is
// normalised) and each output is rounded once to its type.
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

Status RequireFloatTensor(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (!IsFloatingPoint(t.dtype())) return ctx.Error(what, " must be a floating-point tensor, got ", t.Description());
  return Status::Ok();
}

// `param` must broadcast one way to `shape` (the result is `shape` itself).
Status RequireBroadcastTo(const KernelContext& ctx, const Tensor& param, const Shape& shape, const char* what) {
  PARITY_ASSIGN_OR_RETURN(Shape b, BroadcastShapes(ctx, {param.shape(), shape}));
  if (b != shape) return ctx.Error(what, " ", param.Description(), " does not broadcast to ", ShapeToString(shape));
  return Status::Ok();
}

int64_t ProductOf(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// The shape of the statistics: `shape` with the axes from `first` on set to 1.
Shape StatisticsShape(const Shape& shape, size_t first) {
  Shape s(shape);
  for (size_t d = first; d < s.size(); ++d) s[d] = 1;
  return s;
}

// Appends `values` as output `index` when the node asks for an output at
// or after it (outputs are positional, so an unrequested one in the middle
// still takes its place).
Status AppendOutput(const KernelContext& ctx, std::vector<Value>& outputs, size_t index, DataType dtype,
                    const Shape& shape, const std::vector<double>& values) {
  if (ctx.output_count() <= index) return Status::Ok();
  PARITY_ASSIGN_OR_RETURN(Value v, MakeResult(ctx, dtype, shape, values));
  outputs.push_back(std::move(v));
  return Status::Ok();
}

// An optional 1-D parameter of `hidden` elements of the input's type, read
// as doubles; empty when absent.
StatusOr<std::vector<double>> ReadHiddenParam(const KernelContext& ctx, size_t index, DataType dtype, int64_t hidden,
                                              const char* what) {
  if (!ctx.has_input(index)) return std::vector<double>{};
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(index));
  if (t->dtype() != dtype) {
    return ctx.Error(what, " must have the type of input (", DataTypeName(dtype), "), got ", t->Description());
  }
  if (t->rank() != 1 || t->dim(0) != hidden) {
    return ctx.Error(what, " must have shape [", hidden, "] (the last dimension of input), got ", t->Description());
  }
  return t->ToDoubles();
}

// Both Skip operators; `simplified` divides by the root mean square
// instead of subtracting the mean and dividing by the standard deviation.
// Inputs: input, skip, gamma, then beta and bias (SkipLayerNormalization)
// or bias alone (SkipSimplifiedLayerNormalization).
StatusOr<std::vector<Value>> SkipNormalize(const KernelContext& ctx, bool simplified) {
  const size_t max_inputs = simplified ? 4 : 5;
  if (ctx.input_count() > max_inputs) {
    return ctx.Error("takes at most ", max_inputs, " inputs, got ", ctx.input_count());
  }
  if (ctx.output_count() > 4) return ctx.Error("has at most 4 outputs, got ", ctx.output_count());
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* skip, ctx.RequireTensor(1));
  const DataType dtype = input->dtype();
  PARITY_RETURN_IF_ERROR(RequireFloat32OrHalf(ctx, *input, "input"));
  if (input->rank() < 1) return ctx.Error("input must have rank >= 1, got ", input->Description());
  if (skip->dtype() != dtype) {
    return ctx.Error("skip must have the type of input (", DataTypeName(dtype), "), got ", skip->Description());
  }
  PARITY_RETURN_IF_ERROR(RequireBroadcastTo(ctx, *skip, input->shape(), "skip"));
  const int64_t hidden = input->dim(input->rank() - 1);
  if (!ctx.has_input(2)) return ctx.Error("input 'gamma' is required");
  PARITY_ASSIGN_OR_RETURN(std::vector<double> gamma, ReadHiddenParam(ctx, 2, dtype, hidden, "gamma"));
  std::vector<double> beta;
  if (!simplified) {
    PARITY_ASSIGN_OR_RETURN(beta, ReadHiddenParam(ctx, 3, dtype, hidden, "beta"));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<double> bias,
                          ReadHiddenParam(ctx, simplified ? 3 : 4, dtype, hidden, "bias"));
  const double epsilon = ctx.GetFloat("epsilon", 1e-12f);

  const std::vector<double> x = input->ToDoubles();
  const std::vector<double> s = skip->ToDoubles();
  const BroadcastIndexer skip_at(skip->shape(), input->shape());
  // Rows of `hidden` values; with hidden = 0 each row's statistics are 0/0 = NaN.
  const int64_t rows = ProductOf(input->shape(), 0, input->shape().size() - 1);
  std::vector<double> sum(x.size());
  for (int64_t i = 0; i < input->size(); ++i) {
    sum[i] = x[i] + s[skip_at(i)] + (bias.empty() ? 0.0 : bias[i % hidden]);
  }
  std::vector<double> mean(static_cast<size_t>(rows), 0.0);
  std::vector<double> inv_std(static_cast<size_t>(rows), 0.0);
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* v = sum.data() + r * hidden;
    double m = 0.0;
    if (!simplified) {
      for (int64_t h = 0; h < hidden; ++h) m += v[h];
      m /= static_cast<double>(hidden);
    }
    double var = 0.0;  // the mean square about m (about 0 when simplified)
    for (int64_t h = 0; h < hidden; ++h) var += (v[h] - m) * (v[h] - m);
    var /= static_cast<double>(hidden);
    mean[r] = m;
    inv_std[r] = 1.0 / std::sqrt(var + epsilon);
    for (int64_t h = 0; h < hidden; ++h) {
      y[r * hidden + h] = (v[h] - m) * inv_std[r] * gamma[h] + (beta.empty() ? 0.0 : beta[h]);
    }
  }
  const Shape stat_shape = StatisticsShape(input->shape(), input->shape().size() - 1);
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, dtype, input->shape(), y));
  outputs.push_back(std::move(out));
  // mean and inv_std_var are float32 whatever T is (ONNX Runtime's U).
  PARITY_RETURN_IF_ERROR(AppendOutput(ctx, outputs, 1, DataType::kFloat, stat_shape, mean));
  PARITY_RETURN_IF_ERROR(AppendOutput(ctx, outputs, 2, DataType::kFloat, stat_shape, inv_std));
  PARITY_RETURN_IF_ERROR(AppendOutput(ctx, outputs, 3, dtype, input->shape(), sum));
  return outputs;
}

}  // namespace

StatusOr<std::vector<Value>> SimplifiedLayerNormalization(const KernelContext& ctx) {
  if (ctx.input_count() > 2) return ctx.Error("takes 2 inputs, got ", ctx.input_count());
  if (ctx.output_count() > 2) return ctx.Error("has at most 2 outputs, got ", ctx.output_count());
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireFloatTensor(ctx, *x, "X"));
  PARITY_RETURN_IF_ERROR(RequireFloatTensor(ctx, *scale, "scale"));
  PARITY_RETURN_IF_ERROR(RequireBroadcastTo(ctx, *scale, x->shape(), "scale"));
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -1), x->rank()));
  const double epsilon = ctx.GetFloat("epsilon", 1e-5f);
  const int64_t stash = ctx.GetInt("stash_type", 1);
  if (stash <= 0 || stash > kMaxDataType || !IsFloatingPoint(static_cast<DataType>(stash))) {
    return ctx.Error("stash_type ", stash, " is not a floating-point type");
  }
  const size_t first = static_cast<size_t>(axis);
  const int64_t block = ProductOf(x->shape(), first, x->shape().size());
  const int64_t blocks = ProductOf(x->shape(), 0, first);
  const std::vector<double> in = x->ToDoubles();
  const BroadcastIndexer scale_at(scale->shape(), x->shape());
  std::vector<double> inv_rms(static_cast<size_t>(blocks), 0.0);
  std::vector<double> y(in.size());
  for (int64_t b = 0; b < blocks; ++b) {
    double mean_square = 0.0;
    for (int64_t i = b * block; i < (b + 1) * block; ++i) mean_square += in[i] * in[i];
    mean_square /= static_cast<double>(block);
    inv_rms[b] = 1.0 / std::sqrt(mean_square + epsilon);
    for (int64_t i = b * block; i < (b + 1) * block; ++i) y[i] = in[i] * inv_rms[b] * scale->GetDouble(scale_at(i));
  }
  std::vector<Value> outputs;
  // Y has scale's type (ONNX Runtime's V), which may differ from X's.
  PARITY_ASSIGN_OR_RETURN(Value y_value, MakeResult(ctx, scale->dtype(), x->shape(), y));
  outputs.push_back(std::move(y_value));
  PARITY_RETURN_IF_ERROR(AppendOutput(ctx, outputs, 1, static_cast<DataType>(stash),
                                      StatisticsShape(x->shape(), first), inv_rms));
  return outputs;
}

StatusOr<std::vector<Value>> SkipLayerNormalization(const KernelContext& ctx) { return SkipNormalize(ctx, false); }

StatusOr<std::vector<Value>> SkipSimplifiedLayerNormalization(const KernelContext& ctx) {
  return SkipNormalize(ctx, true);
}

}  // namespace parity::ops::contrib
