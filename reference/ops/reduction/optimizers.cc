// The preview-training optimisers (domain ai.onnx.preview.training, v1):
// Momentum, Adagrad and Adam. Inputs are R (learning rate), T (update
// count), then n tensors to optimise, their n gradients and n (Adam: 2n)
// accumulated states; outputs are the n new tensors then the new states,
// in the same order. Each element is updated in double and rounded once.
#include <cmath>
#include <functional>
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

// One element's update: reads x, g and the states in `s`, writes the new x
// to *x_new and the new states back into `s`.
using ElementUpdate = std::function<void(double r, int64_t t, double x, double g, double* s, double* x_new)>;

StatusOr<std::vector<Value>> RunOptimizer(const KernelContext& ctx, int state_count, const ElementUpdate& update) {
  const int64_t groups = 2 + state_count;  // X, G and the states
  const int64_t rest = static_cast<int64_t>(ctx.input_count()) - 2;
  if (rest <= 0 || rest % groups != 0) {
    return ctx.Error("expected R, T and ", groups, " inputs per optimised tensor, got ", ctx.input_count(), " inputs");
  }
  const int64_t n = rest / groups;
  PARITY_ASSIGN_OR_RETURN(const Tensor* r_tensor, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* t_tensor, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(double r, ScalarDouble(ctx, *r_tensor, "learning rate R"));
  PARITY_ASSIGN_OR_RETURN(int64_t t, ScalarInt(ctx, *t_tensor, "update count T"));
  std::vector<Value> new_x(static_cast<size_t>(n));
  std::vector<Value> new_states(static_cast<size_t>(n * state_count));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<const Tensor*> in;  // x, g, states
    for (int64_t k = 0; k < groups; ++k) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* v, ctx.RequireTensor(static_cast<size_t>(2 + k * n + i)));
      PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *v, "optimiser input"));
      if (!in.empty() && v->shape() != in[0]->shape()) {
        return ctx.Error("inputs of tensor ", i, " differ in shape: ", v->Description());
      }
      in.push_back(v);
    }
    const Tensor& x = *in[0];
    std::vector<Tensor> outs;
    for (int64_t k = 0; k <= state_count; ++k) {
      PARITY_ASSIGN_OR_RETURN(Tensor o, Allocate(ctx, in[k == 0 ? 0 : 1 + k]->dtype(), x.shape()));
      outs.push_back(std::move(o));
    }
    std::vector<double> states(static_cast<size_t>(state_count));
    for (int64_t e = 0; e < x.size(); ++e) {
      for (int k = 0; k < state_count; ++k) states[k] = in[2 + k]->GetDouble(e);
      double x_new = 0.0;
      update(r, t, x.GetDouble(e), in[1]->GetDouble(e), states.data(), &x_new);
      outs[0].SetDouble(e, x_new);
      for (int k = 0; k < state_count; ++k) outs[1 + k].SetDouble(e, states[k]);
    }
    new_x[i] = Value::FromTensor(std::move(outs[0]));
    for (int k = 0; k < state_count; ++k) new_states[k * n + i] = Value::FromTensor(std::move(outs[1 + k]));
  }
  std::vector<Value> outputs = std::move(new_x);
  outputs.insert(outputs.end(), new_states.begin(), new_states.end());
  return outputs;
}

}  // namespace

// V_new = alpha * V + beta' * G_reg with beta' = beta, or 1 on the first
// update (T = 0); standard: X_new = X - R * V_new; nesterov:
// X_new = X - R * (G_reg + alpha * V_new); G_reg = norm_coefficient * X + G.
StatusOr<std::vector<Value>> MomentumKernel(const KernelContext& ctx) {
  for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
    if (!ctx.has_attribute(name)) return ctx.Error("attribute '", name, "' is required");
  }
  const double alpha = ctx.GetFloat("alpha", 0.0f);
  const double beta = ctx.GetFloat("beta", 0.0f);
  const double norm = ctx.GetFloat("norm_coefficient", 0.0f);
  const std::string mode = ctx.GetString("mode");
  if (mode != "standard" && mode != "nesterov") return ctx.Error("mode must be standard or nesterov, got '", mode, "'");
  const bool nesterov = mode == "nesterov";
  return RunOptimizer(ctx, 1, [&](double r, int64_t t, double x, double g, double* s, double* x_new) {
    const double g_reg = norm * x + g;
    const double beta_adjusted = t > 0 ? beta : 1.0;
    s[0] = alpha * s[0] + beta_adjusted * g_reg;
    *x_new = nesterov ? x - r * (g_reg + alpha * s[0]) : x - r * s[0];
  });
}

// r = R / (1 + T * decay_factor); G_reg = norm_coefficient * X + G;
// H_new = H + G_reg^2; X_new = X - r * G_reg / (sqrt(H_new) + epsilon).
StatusOr<std::vector<Value>> AdagradKernel(const KernelContext& ctx) {
  const double decay = ctx.GetFloat("decay_factor", 0.0f);
  const double epsilon = ctx.GetFloat("epsilon", 1e-6f);
  const double norm = ctx.GetFloat("norm_coefficient", 0.0f);
  return RunOptimizer(ctx, 1, [&](double r, int64_t t, double x, double g, double* s, double* x_new) {
    const double rate = r / (1.0 + static_cast<double>(t) * decay);
    const double g_reg = norm * x + g;
    s[0] += g_reg * g_reg;
    *x_new = x - rate * g_reg / (std::sqrt(s[0]) + epsilon);
  });
}

// G_reg = norm_coefficient * X + G; V_new = alpha V + (1 - alpha) G_reg;
// H_new = beta H + (1 - beta) G_reg^2; R' = R sqrt(1 - beta^T) / (1 - alpha^T)
// when T > 0, else R; X_new = (1 - norm_coefficient_post) *
// (X - R' V_new / (sqrt(H_new) + epsilon)).
StatusOr<std::vector<Value>> AdamKernel(const KernelContext& ctx) {
  const double alpha = ctx.GetFloat("alpha", 0.9f);
  const double beta = ctx.GetFloat("beta", 0.999f);
  const double epsilon = ctx.GetFloat("epsilon", 1e-6f);
  const double norm = ctx.GetFloat("norm_coefficient", 0.0f);
  const double norm_post = ctx.GetFloat("norm_coefficient_post", 0.0f);
  return RunOptimizer(ctx, 2, [&](double r, int64_t t, double x, double g, double* s, double* x_new) {
    const double g_reg = norm * x + g;
    s[0] = alpha * s[0] + (1.0 - alpha) * g_reg;
    s[1] = beta * s[1] + (1.0 - beta) * g_reg * g_reg;
    const double td = static_cast<double>(t);
    const double rate = t > 0 ? r * std::sqrt(1.0 - std::pow(beta, td)) / (1.0 - std::pow(alpha, td)) : r;
    *x_new = (1.0 - norm_post) * (x - rate * s[0] / (std::sqrt(s[1]) + epsilon));
  });
}

}  // namespace parity::ops
