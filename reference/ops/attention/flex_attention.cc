// FlexAttention (ai.onnx.preview, version 1): scaled dot-product attention on
// rank-4 Q, K, V with grouped-query heads and two optional graph-valued hooks,
// score_mod on the scores before the softmax and prob_mod on the probabilities
// after it (spec/functions/flex_attention.md).
//
// Everything is computed in double and Y is rounded once to Q's type. The one
// exception is the hand-over to a hook: its graph takes and returns a tensor of
// the softmax precision type, so the scores (or probabilities) are rounded to
// that type before the hook runs, and the hook's result is read back exactly.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/attention/attention.h"

namespace parity::ops::attention {
namespace {

// The element type a hook sees: softmax_precision when given, else double for
// double inputs and float for every narrower float type.
StatusOr<DataType> SoftmaxType(const KernelContext& ctx, DataType input) {
  // The double result keeps every narrower precision in float64 (KernelContext::widened).
  if (ctx.widened()) return DataType::kDouble;
  if (!ctx.has_attribute("softmax_precision")) return input == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  const int64_t p = ctx.GetInt("softmax_precision", 1);
  const DataType t = static_cast<DataType>(p);
  if (t != DataType::kFloat && t != DataType::kFloat16 && t != DataType::kBfloat16 && t != DataType::kDouble) {
    return ctx.Error("softmax_precision ", p, " is not 1 (float), 10 (float16), 16 (bfloat16) or 11 (double)");
  }
  return t;
}

// Runs hook `name` (score_mod or prob_mod) on `values` of `shape`: the values
// are rounded to `type`, passed as the graph's one input, and the graph's one
// output must be a tensor of the same type and shape. Returns its values.
StatusOr<std::vector<double>> RunHook(const KernelContext& ctx, const char* name, const onnx::GraphProto& graph,
                                      DataType type, const Shape& shape, const std::vector<double>& values) {
  if (graph.input_size() != 1 || graph.output_size() != 1) {
    return ctx.Error(name, " must have 1 input and 1 output, has ", graph.input_size(), " and ", graph.output_size());
  }
  const onnx::TypeProto& declared = graph.input(0).type();
  if (declared.has_tensor_type() && declared.tensor_type().elem_type() != 0 &&
      declared.tensor_type().elem_type() != static_cast<int32_t>(type) && !ctx.widened()) {
    return ctx.Error(name, " input '", graph.input(0).name(), "' is declared ",
                     DataTypeName(static_cast<DataType>(declared.tensor_type().elem_type())),
                     " but the softmax precision is ", DataTypeName(type));
  }
  PARITY_ASSIGN_OR_RETURN(Tensor in, Tensor::FromDoubles(type, shape, values));
  StatusOr<std::vector<Value>> out = ctx.RunSubgraph(graph, {Value::FromTensor(std::move(in))});
  if (!out.ok()) return ctx.Error(name, " failed: ", out.status().message());
  if (out->size() != 1 || !(*out)[0].is_tensor()) return ctx.Error(name, " must return one tensor");
  const Tensor& result = (*out)[0].tensor();
  if (result.dtype() != type || result.shape() != shape) {
    return ctx.Error(name, " must return ", DataTypeName(type), ShapeToString(shape), ", returned ",
                     result.Description());
  }
  return result.ToDoubles();
}

// Softmax over each row of `row` elements in place, as the Softmax operator
// computes it: the row maximum (NaN if any element is NaN) is subtracted, so a
// row that is -inf everywhere becomes NaN.
void SoftmaxRows(std::vector<double>& x, int64_t row) {
  if (row == 0) return;
  for (size_t start = 0; start < x.size(); start += static_cast<size_t>(row)) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < row; ++j) {
      const double v = x[start + static_cast<size_t>(j)];
      if (std::isnan(v) || std::isnan(m)) {
        m = std::numeric_limits<double>::quiet_NaN();
      } else {
        m = std::max(m, v);
      }
    }
    double sum = 0.0;
    for (int64_t j = 0; j < row; ++j) sum += std::exp(x[start + static_cast<size_t>(j)] - m);
    for (int64_t j = 0; j < row; ++j) {
      double& v = x[start + static_cast<size_t>(j)];
      v = std::exp(v - m) / sum;
    }
  }
}

}  // namespace

StatusOr<std::vector<Value>> FlexAttention(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* q, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* k, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* v, ctx.RequireTensor(2));
  for (const Tensor* t : {q, k, v}) {
    const DataType d = t->dtype();
    if (d != DataType::kFloat && d != DataType::kFloat16 && d != DataType::kBfloat16 && d != DataType::kDouble) {
      return ctx.Error("Q, K and V must be float, float16, bfloat16 or double, got ", t->Description());
    }
    if (t->rank() != 4) return ctx.Error("Q, K and V must be rank 4, got ", t->Description());
  }
  if (k->dtype() != q->dtype() || v->dtype() != q->dtype()) {
    return ctx.Error("Q, K and V must have one element type: ", q->Description(), ", ", k->Description(), ", ",
                     v->Description());
  }
  const int64_t batch = q->dim(0), q_heads = q->dim(1), q_len = q->dim(2), head_size = q->dim(3);
  const int64_t kv_heads = k->dim(1), kv_len = k->dim(2), v_size = v->dim(3);
  if (k->dim(0) != batch || v->dim(0) != batch || k->dim(3) != head_size || v->dim(1) != kv_heads ||
      v->dim(2) != kv_len) {
    return ctx.Error("shapes disagree: Q ", q->Description(), ", K ", k->Description(), ", V ", v->Description(),
                     " (want Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev])");
  }
  if (kv_heads <= 0 || q_heads % kv_heads != 0) {
    return ctx.Error("q_num_heads ", q_heads, " is not a multiple of kv_num_heads ", kv_heads);
  }
  if (!ctx.has_attribute("scale") && head_size == 0) {
    return ctx.Error("head_size is 0, so the default scale 1/sqrt(head_size) is undefined; give scale");
  }
  const double scale = ctx.has_attribute("scale") ? static_cast<double>(ctx.GetFloat("scale", 1.0f))
                                                  : 1.0 / std::sqrt(static_cast<double>(head_size));
  PARITY_ASSIGN_OR_RETURN(const DataType softmax_type, SoftmaxType(ctx, q->dtype()));
  const onnx::GraphProto* score_mod = ctx.GetGraph("score_mod");
  const onnx::GraphProto* prob_mod = ctx.GetGraph("prob_mod");
  if ((ctx.has_attribute("score_mod") && !score_mod) || (ctx.has_attribute("prob_mod") && !prob_mod)) {
    return ctx.Error("score_mod and prob_mod must be graph attributes");
  }

  const int64_t group = q_heads / kv_heads;
  const std::vector<double> qd = q->ToDoubles(), kd = k->ToDoubles(), vd = v->ToDoubles();
  const Shape score_shape = {batch, q_heads, q_len, kv_len};
  std::vector<double> scores(static_cast<size_t>(batch * q_heads * q_len * kv_len));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t kv = h / group;  // query head h reads key/value head floor(h / group)
      for (int64_t i = 0; i < q_len; ++i)
        for (int64_t j = 0; j < kv_len; ++j) {
          const size_t qi = static_cast<size_t>(((b * q_heads + h) * q_len + i) * head_size);
          const size_t ki = static_cast<size_t>(((b * kv_heads + kv) * kv_len + j) * head_size);
          double dot = 0.0;
          for (int64_t d = 0; d < head_size; ++d) dot += qd[qi + static_cast<size_t>(d)] * kd[ki + static_cast<size_t>(d)];
          scores[static_cast<size_t>(((b * q_heads + h) * q_len + i) * kv_len + j)] = dot * scale;
        }
    }

  if (score_mod) {
    PARITY_ASSIGN_OR_RETURN(scores, RunHook(ctx, "score_mod", *score_mod, softmax_type, score_shape, scores));
  }
  SoftmaxRows(scores, kv_len);
  std::vector<double>& probs = scores;
  if (prob_mod) {
    PARITY_ASSIGN_OR_RETURN(probs, RunHook(ctx, "prob_mod", *prob_mod, softmax_type, score_shape, probs));
  }

  std::vector<double> y(static_cast<size_t>(batch * q_heads * q_len * v_size), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t kv = h / group;
      for (int64_t i = 0; i < q_len; ++i)
        for (int64_t d = 0; d < v_size; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < kv_len; ++j) {
            acc += probs[static_cast<size_t>(((b * q_heads + h) * q_len + i) * kv_len + j)] *
                   vd[static_cast<size_t>(((b * kv_heads + kv) * kv_len + j) * v_size + d)];
          }
          y[static_cast<size_t>(((b * q_heads + h) * q_len + i) * v_size + d)] = acc;
        }
    }
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, q->dtype(), {batch, q_heads, q_len, v_size}, y));
  return std::vector<Value>{std::move(out)};
}

}  // namespace parity::ops::attention
