// CausalConvWithState-27 (Operators.md): a causal depthwise 1-D convolution
// with a carried state. With P = past_state (or zeros) of length k - 1 and
// X the input [B, C, L], the padded sequence is concat(P, X) along the last
// axis and
//   output[b, c, l] = bias[c] + sum_{i<k} weight[c, 0, i] * padded[b, c, l + i]
// optionally followed by SiLU (= Swish): y * sigmoid(y), applied to the
// unrounded sum. present_state is the last k - 1 positions of the padded
// sequence (so it reaches into past_state, or zeros, when L < k - 1).
#include <cmath>
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/rnn/rnn.h"

namespace parity::ops::rnn {

StatusOr<std::vector<Value>> CausalConvWithState(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* weight, ctx.RequireTensor(1));
  const Tensor* bias = nullptr;
  const Tensor* past = nullptr;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(bias, ctx.RequireTensor(2));
  }
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(past, ctx.RequireTensor(3));
  }

  const std::string activation = ctx.GetString("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return ctx.Error("activation '", activation, "' is not one of none, silu, swish");
  }
  const DataType type = input->dtype();
  if ((type != DataType::kFloat && type != DataType::kFloat16 && type != DataType::kBfloat16) || input->rank() != 3) {
    return ctx.Error("input ", input->Description(), " must be a rank-3 float, float16 or bfloat16 tensor");
  }
  const int64_t batch = input->dim(0), channels = input->dim(1), length = input->dim(2);
  if (weight->dtype() != type || weight->rank() != 3 || weight->dim(0) != channels || weight->dim(1) != 1 ||
      weight->dim(2) < 1) {
    return ctx.Error("weight ", weight->Description(), " must have the input's type and shape [", channels,
                     ", 1, k] with k >= 1");
  }
  const int64_t k = weight->dim(2);
  const Shape state_shape{batch, channels, k - 1};
  if (bias && (bias->dtype() != type || bias->shape() != Shape{channels})) {
    return ctx.Error("bias ", bias->Description(), " must have the input's type and shape [", channels, "]");
  }
  if (past && (past->dtype() != type || past->shape() != state_shape)) {
    return ctx.Error("past_state ", past->Description(), " must have the input's type and shape ",
                     ShapeToString(state_shape));
  }
  const bool silu = activation != "none";

  PARITY_ASSIGN_OR_RETURN(Tensor output, Allocate(ctx, type, input->shape()));
  PARITY_ASSIGN_OR_RETURN(Tensor present, Allocate(ctx, type, state_shape));
  std::vector<double> padded(static_cast<size_t>(length + k - 1));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t row = b * channels + c;
      for (int64_t j = 0; j < k - 1; ++j) padded[static_cast<size_t>(j)] = past ? past->GetDouble(row * (k - 1) + j) : 0.0;
      for (int64_t l = 0; l < length; ++l) padded[static_cast<size_t>(k - 1 + l)] = input->GetDouble(row * length + l);
      const double offset = bias ? bias->GetDouble(c) : 0.0;
      for (int64_t l = 0; l < length; ++l) {
        double y = offset;
        for (int64_t i = 0; i < k; ++i) y += weight->GetDouble(c * k + i) * padded[static_cast<size_t>(l + i)];
        if (silu) y = y / (1.0 + std::exp(-y));
        output.SetDouble(row * length + l, y);
      }
      // The values are copies of input or past_state elements of the same type: exact.
      for (int64_t j = 0; j < k - 1; ++j) present.SetDouble(row * (k - 1) + j, padded[static_cast<size_t>(length + j)]);
    }
  }
  std::vector<Value> results;
  results.push_back(Value::FromTensor(std::move(output)));
  results.push_back(Value::FromTensor(std::move(present)));
  return results;
}

}  // namespace parity::ops::rnn
