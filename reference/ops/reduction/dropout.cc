// Dropout. In inference (the only mode before opset 12 except is_test = 0
// before 7, and training_mode false or ratio 0 from 12) the output is the
// input and the mask is all true (all ones of the input type in opsets 7-9).
//
// In training mode the mask keeps an element when a uniform draw in [0, 1)
// is >= ratio and the output is x / (1 - ratio) there, 0 elsewhere. The
// spec leaves the random draws to the implementation; the reference makes
// them reproducible by drawing like numpy's legacy RandomState(seed).uniform
// (MT19937 seeded with init_genrand, 53-bit doubles), which is also how
// ONNX's own reference and node tests draw. An absent seed counts as 0.
#include <array>
#include <cstdint>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

// The 32-bit Mersenne Twister (Matsumoto & Nishimura, MT19937).
class MersenneTwister {
 public:
  explicit MersenneTwister(uint32_t seed) {
    state_[0] = seed;
    for (uint32_t i = 1; i < kN; ++i) {
      state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
    }
    index_ = kN;
  }

  uint32_t Next() {
    if (index_ >= kN) Twist();
    uint32_t y = state_[index_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
  }

  // A double in [0, 1) from 53 random bits, as numpy's random_sample.
  double NextDouble() {
    const uint32_t a = Next() >> 5;
    const uint32_t b = Next() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

 private:
  static constexpr uint32_t kN = 624;
  static constexpr uint32_t kM = 397;

  void Twist() {
    for (uint32_t i = 0; i < kN; ++i) {
      const uint32_t y = (state_[i] & 0x80000000u) | (state_[(i + 1) % kN] & 0x7fffffffu);
      state_[i] = state_[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }

  std::array<uint32_t, kN> state_{};
  uint32_t index_ = 0;
};

}  // namespace

StatusOr<std::vector<Value>> DropoutKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(RequireFloat(ctx, *x, "input data"));
  const int64_t opset = ctx.opset();
  double ratio = ctx.GetFloat("ratio", 0.5f);
  bool training = opset < 7 && ctx.GetInt("is_test", 0) == 0;
  if (opset >= 12) {
    ratio = 0.5;
    if (ctx.has_input(1)) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* r, ctx.RequireTensor(1));
      PARITY_ASSIGN_OR_RETURN(ratio, ScalarDouble(ctx, *r, "ratio"));
    }
    if (ctx.has_input(2)) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(2));
      if (t->size() != 1 || t->dtype() != DataType::kBool) {
        return ctx.Error("training_mode must be a one-element bool tensor, got ", t->Description());
      }
      training = t->GetInt64(0) != 0;
    }
  }
  if (training && !(ratio >= 0.0 && ratio < 1.0)) return ctx.Error("ratio must be in [0, 1), got ", ratio);
  const DataType mask_type = opset >= 10 ? DataType::kBool : x->dtype();
  PARITY_ASSIGN_OR_RETURN(Tensor mask, Allocate(ctx, mask_type, x->shape()));
  std::vector<Value> outputs;
  if (!training || ratio == 0.0) {
    outputs.push_back(Value::FromTensor(*x));
    for (int64_t i = 0; i < mask.size(); ++i) mask.SetInt64(i, 1);
  } else {
    MersenneTwister rng(static_cast<uint32_t>(static_cast<uint64_t>(ctx.GetInt("seed", 0)) & 0xffffffffu));
    const double scale = 1.0 / (1.0 - ratio);
    PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, x->dtype(), x->shape()));
    for (int64_t i = 0; i < x->size(); ++i) {
      const bool keep = rng.NextDouble() >= ratio;
      mask.SetInt64(i, keep ? 1 : 0);
      // The spec's formula data * mask * scale (so -x and inf keep their IEEE products).
      y.SetDouble(i, x->GetDouble(i) * (keep ? 1.0 : 0.0) * scale);
    }
    outputs.push_back(Value::FromTensor(std::move(y)));
  }
  if (ctx.output_count() > 1) outputs.push_back(Value::FromTensor(std::move(mask)));
  return outputs;
}

}  // namespace parity::ops
