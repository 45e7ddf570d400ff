// LinearAttention-27 (Operators.md): a recurrent linear-attention layer over
// packed [B, T, H*D] inputs with a state S of shape [B, H_kv, d_k, d_v], run
// token by token (the spec's "equivalent to running the recurrent update
// sequentially"; chunk_size is a tuning hint without effect on the result):
//   linear:      S = S + k ⊗ v
//   gated:       S = exp(g) * S + k ⊗ v
//   delta:       S = S + β * k ⊗ (v - Sᵀk)
//   gated_delta: S = exp(g) * S + β * k ⊗ (v - exp(g) * Sᵀk)
//   o = scale * qᵀ S, query head h reading KV head h / (H_q / H_kv).
// The decay g is per head [B, T, H_kv] or per key feature [B, T, H_kv*d_k];
// β is per head [B, T, H_kv] or shared [B, T, 1]. Like ONNX's reference, a
// decay given to a non-gated rule (or β to a non-delta rule) is an error.
// The state is kept in double; present_state takes past_state's type, or the
// query's when past_state is absent (as ONNX's Python reference does).
#include <cmath>
#include <cstdint>
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/attention/attention.h"

namespace parity::ops::attention {
namespace {

bool IsLinearAttentionType(DataType type) {
  return type == DataType::kFloat || type == DataType::kFloat16 || type == DataType::kBfloat16;
}

// Sizes of one LinearAttention call.
struct Dims {
  int64_t batch = 0, steps = 0, q_heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
};

// Index into a packed [B, T, heads * width] tensor.
int64_t Packed(const Dims& d, int64_t heads, int64_t width, int64_t b, int64_t t, int64_t h, int64_t i) {
  return ((b * d.steps + t) * heads + h) * width + i;
}

// Checks a rank-3 input's type and leading [B, T] dimensions.
Status CheckPacked(const KernelContext& ctx, const Tensor& x, const char* name, const Tensor& query) {
  if (x.dtype() != query.dtype()) {
    return ctx.Error(name, " ", x.Description(), " must have the query's type ", query.Description());
  }
  if (x.rank() != 3 || x.dim(0) != query.dim(0) || x.dim(1) != query.dim(1)) {
    return ctx.Error(name, " ", x.Description(), " must be rank 3 with the query's batch and length ",
                     query.Description());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<Value>> LinearAttention(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* query, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* key, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* value, ctx.RequireTensor(2));
  const Tensor* past = nullptr;
  const Tensor* decay = nullptr;
  const Tensor* beta = nullptr;
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(past, ctx.RequireTensor(3));
  }
  if (ctx.has_input(4)) {
    PARITY_ASSIGN_OR_RETURN(decay, ctx.RequireTensor(4));
  }
  if (ctx.has_input(5)) {
    PARITY_ASSIGN_OR_RETURN(beta, ctx.RequireTensor(5));
  }

  const std::string rule = ctx.GetString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    return ctx.Error("update_rule '", rule, "' is not one of linear, gated, delta, gated_delta");
  }
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (gated != (decay != nullptr)) {
    return ctx.Error("update_rule '", rule, "' ", gated ? "needs" : "takes no", " decay input");
  }
  if (delta != (beta != nullptr)) {
    return ctx.Error("update_rule '", rule, "' ", delta ? "needs" : "takes no", " beta input");
  }

  if (!ctx.has_attribute("q_num_heads") || !ctx.has_attribute("kv_num_heads")) {
    return ctx.Error("the attributes q_num_heads and kv_num_heads are required");
  }
  Dims d;
  d.q_heads = ctx.GetInt("q_num_heads", 0);
  d.kv_heads = ctx.GetInt("kv_num_heads", 0);
  if (d.q_heads <= 0 || d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0) {
    return ctx.Error("q_num_heads ", d.q_heads, " must be a positive multiple of kv_num_heads ", d.kv_heads);
  }
  if (!IsLinearAttentionType(query->dtype()) || query->rank() != 3) {
    return ctx.Error("query ", query->Description(), " must be a rank-3 float, float16 or bfloat16 tensor");
  }
  PARITY_RETURN_IF_ERROR(CheckPacked(ctx, *key, "key", *query));
  PARITY_RETURN_IF_ERROR(CheckPacked(ctx, *value, "value", *query));
  d.batch = query->dim(0);
  d.steps = query->dim(1);
  if (query->dim(2) % d.q_heads != 0) {
    return ctx.Error("query's last dimension ", query->dim(2), " is not a multiple of q_num_heads ", d.q_heads);
  }
  d.d_k = query->dim(2) / d.q_heads;
  if (d.d_k == 0) return ctx.Error("query ", query->Description(), " gives a head size d_k of 0");
  if (key->dim(2) != d.kv_heads * d.d_k) {
    return ctx.Error("key ", key->Description(), " must have last dimension kv_num_heads * d_k = ", d.kv_heads * d.d_k);
  }
  if (value->dim(2) % d.kv_heads != 0) {
    return ctx.Error("value's last dimension ", value->dim(2), " is not a multiple of kv_num_heads ", d.kv_heads);
  }
  d.d_v = value->dim(2) / d.kv_heads;
  if (d.d_v > 0 && d.q_heads > INT64_MAX / d.d_v) return ctx.Error("q_num_heads * d_v overflows");

  // Width of the decay per KV head: 1 (per head) or d_k (per key feature).
  int64_t decay_width = 0;
  if (decay) {
    PARITY_RETURN_IF_ERROR(CheckPacked(ctx, *decay, "decay", *query));
    if (decay->dim(2) == d.kv_heads) {
      decay_width = 1;
    } else if (decay->dim(2) == d.kv_heads * d.d_k) {
      decay_width = d.d_k;
    } else {
      return ctx.Error("decay ", decay->Description(), " must have last dimension kv_num_heads (", d.kv_heads,
                       ") or kv_num_heads * d_k (", d.kv_heads * d.d_k, ")");
    }
  }
  bool beta_shared = false;
  if (beta) {
    PARITY_RETURN_IF_ERROR(CheckPacked(ctx, *beta, "beta", *query));
    if (beta->dim(2) != d.kv_heads && beta->dim(2) != 1) {
      return ctx.Error("beta ", beta->Description(), " must have last dimension kv_num_heads (", d.kv_heads, ") or 1");
    }
    beta_shared = beta->dim(2) == 1 && d.kv_heads != 1;
  }
  const Shape state_shape{d.batch, d.kv_heads, d.d_k, d.d_v};
  std::vector<double> state(static_cast<size_t>(d.batch * d.kv_heads * d.d_k * d.d_v), 0.0);
  if (past) {
    if (!IsLinearAttentionType(past->dtype()) || past->shape() != state_shape) {
      return ctx.Error("past_state ", past->Description(), " must be a float, float16 or bfloat16 tensor of shape ",
                       ShapeToString(state_shape));
    }
    state = past->ToDoubles();
  }

  const float scale_attr = ctx.GetFloat("scale", 0.0f);
  const double scale = scale_attr == 0.0f ? 1.0 / std::sqrt(static_cast<double>(d.d_k)) : scale_attr;
  const int64_t group = d.q_heads / d.kv_heads;
  // Allocate checks the size before anything is written (H_q * d_v can exceed every input).
  PARITY_ASSIGN_OR_RETURN(Tensor output, Allocate(ctx, query->dtype(), {d.batch, d.steps, d.q_heads * d.d_v}));
  std::vector<double> write(static_cast<size_t>(d.d_v));
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.kv_heads; ++h) {
      double* s = state.data() + (b * d.kv_heads + h) * d.d_k * d.d_v;  // S[d_k][d_v]
      for (int64_t t = 0; t < d.steps; ++t) {
        if (gated) {
          for (int64_t i = 0; i < d.d_k; ++i) {
            const double g = std::exp(decay->GetDouble(Packed(d, d.kv_heads, decay_width, b, t, h, decay_width == 1 ? 0 : i)));
            for (int64_t m = 0; m < d.d_v; ++m) s[i * d.d_v + m] *= g;
          }
        }
        for (int64_t m = 0; m < d.d_v; ++m) write[static_cast<size_t>(m)] = value->GetDouble(Packed(d, d.kv_heads, d.d_v, b, t, h, m));
        if (delta) {
          const double rate = beta_shared ? beta->GetDouble(Packed(d, 1, 1, b, t, 0, 0))
                                          : beta->GetDouble(Packed(d, d.kv_heads, 1, b, t, h, 0));
          for (int64_t m = 0; m < d.d_v; ++m) {
            double retrieved = 0.0;  // (Sᵀk)[m], with the already-decayed S
            for (int64_t i = 0; i < d.d_k; ++i) retrieved += s[i * d.d_v + m] * key->GetDouble(Packed(d, d.kv_heads, d.d_k, b, t, h, i));
            write[static_cast<size_t>(m)] = rate * (write[static_cast<size_t>(m)] - retrieved);
          }
        }
        for (int64_t i = 0; i < d.d_k; ++i) {
          const double k = key->GetDouble(Packed(d, d.kv_heads, d.d_k, b, t, h, i));
          for (int64_t m = 0; m < d.d_v; ++m) s[i * d.d_v + m] += k * write[static_cast<size_t>(m)];
        }
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          for (int64_t m = 0; m < d.d_v; ++m) {
            double sum = 0.0;
            for (int64_t i = 0; i < d.d_k; ++i) sum += query->GetDouble(Packed(d, d.q_heads, d.d_k, b, t, qh, i)) * s[i * d.d_v + m];
            output.SetDouble(Packed(d, d.q_heads, d.d_v, b, t, qh, m), scale * sum);
          }
        }
      }
    }
  }
  std::vector<Value> results;
  results.push_back(Value::FromTensor(std::move(output)));
  PARITY_ASSIGN_OR_RETURN(Value present, MakeResult(ctx, past ? past->dtype() : query->dtype(), state_shape, state));
  results.push_back(std::move(present));
  return results;
}

}  // namespace parity::ops::attention
