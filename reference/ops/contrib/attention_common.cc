// Shared pieces of the contrib attention kernels.
#include "reference/ops/contrib/attention_common.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops/common.h"

namespace parity::ops::contrib {

StatusOr<CausalAttentionAttributes> ReadCausalAttentionAttributes(const KernelContext& ctx, int64_t head_size) {
  CausalAttentionAttributes a;
  const bool scale_given = ctx.has_attribute("scale");
  a.scale = scale_given ? ctx.GetFloat("scale", 0.0f) : 1.0 / std::sqrt(static_cast<double>(head_size));
  if (scale_given && a.scale == 0.0) {
    return ctx.Error("scale 0 is not defined here (ONNX Runtime reads it as the default 1/sqrt(head_size))");
  }
  a.softcap = ctx.GetFloat("softcap", 0.0f);
  if (a.softcap < 0.0) return ctx.Error("softcap must be 0 (none) or positive, got ", a.softcap);
  a.window = ctx.GetInt("local_window_size", -1);
  if (a.window == 0 || a.window < -1) {
    return ctx.Error("local_window_size must be -1 (none) or positive (the keys kept, the query's own included), got ",
                     a.window);
  }
  return a;
}

void SoftmaxInPlace(std::vector<double>& scores, int64_t first, int64_t last) {
  double max_score = -std::numeric_limits<double>::infinity();
  for (int64_t j = first; j <= last; ++j) max_score = std::max(max_score, scores[j]);
  double sum = 0.0;
  for (int64_t j = first; j <= last; ++j) {
    scores[j] = std::exp(scores[j] - max_score);
    sum += scores[j];
  }
  for (int64_t j = first; j <= last; ++j) scores[j] /= sum;
}

StatusOr<std::vector<Value>> AttentionOutputs(const KernelContext& ctx, DataType dtype, Shape y_shape,
                                              const std::vector<double>& y, Shape k_shape,
                                              const std::vector<double>& k, Shape v_shape,
                                              const std::vector<double>& v) {
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value y_value, MakeResult(ctx, dtype, std::move(y_shape), y));
  outputs.push_back(std::move(y_value));
  if (ctx.output_count() > 1) {
    PARITY_ASSIGN_OR_RETURN(Value k_value, MakeResult(ctx, dtype, std::move(k_shape), k));
    outputs.push_back(std::move(k_value));
  }
  if (ctx.output_count() > 2) {
    PARITY_ASSIGN_OR_RETURN(Value v_value, MakeResult(ctx, dtype, std::move(v_shape), v));
    outputs.push_back(std::move(v_value));
  }
  return outputs;
}

}  // namespace parity::ops::contrib
