// Tests of Attention's two paths (attention_paths.h): the blocked path
// against a plain double implementation of the operator's text written here,
// within an error bound derived from each row's sums; the same bits for
// every thread count; and the special values (NaN, infinities, fully masked
// rows, overflow) that must give the exact path's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "reference/core/parallel.h"
#include "reference/eval/registry.h"
#include "reference/ops/attention/attention_paths.h"
#include "reference/ops/node_runner.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::attention {
namespace {

using testing_util::RunError;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kUnit = 0x1p-53;  // the unit roundoff of double

enum class MaskKind { kNone, kBool, kFloat };

// One Attention problem; every input is drawn from `seed`.
struct Case {
  std::string name;
  DataType dtype = DataType::kDouble;
  int64_t batch = 1, q_heads = 2, kv_heads = 2, q_len = 5, kv_len = 5, past_len = 0, head_size = 8, v_size = 8;
  bool three_d = false, causal = false;
  int64_t left_window = -1, right_window = -1;
  float softcap = 0.0f;
  std::optional<float> scale = std::nullopt;
  MaskKind mask = MaskKind::kNone;
  Shape mask_shape = {};        // right-aligned to [batch, q_heads, q_len, total]
  bool nonpad = false;          // nonpad_kv_seqlen, drawn in [0, kv_len]
  uint32_t seed = 1;
  int64_t total() const { return past_len + kv_len; }
};

struct Inputs {
  Tensor q, k, v, mask, past_k, past_v, nonpad;
};

Tensor Random(DataType dtype, Shape shape, std::mt19937& gen) {
  StatusOr<Tensor> t = Tensor::Create(dtype, std::move(shape));
  std::normal_distribution<double> normal;
  for (int64_t i = 0; i < t->size(); ++i) t->SetDouble(i, normal(gen));
  return std::move(t).value();
}

Shape Layout(const Case& c, int64_t heads, int64_t seq, int64_t size) {
  return c.three_d ? Shape{c.batch, seq, heads * size} : Shape{c.batch, heads, seq, size};
}

Inputs MakeInputs(const Case& c) {
  std::mt19937 gen(c.seed);
  Inputs in;
  in.q = Random(c.dtype, Layout(c, c.q_heads, c.q_len, c.head_size), gen);
  in.k = Random(c.dtype, Layout(c, c.kv_heads, c.kv_len, c.head_size), gen);
  in.v = Random(c.dtype, Layout(c, c.kv_heads, c.kv_len, c.v_size), gen);
  if (c.past_len > 0) {
    in.past_k = Random(c.dtype, {c.batch, c.kv_heads, c.past_len, c.head_size}, gen);
    in.past_v = Random(c.dtype, {c.batch, c.kv_heads, c.past_len, c.v_size}, gen);
  }
  std::uniform_real_distribution<double> uniform;
  if (c.mask == MaskKind::kBool) {
    in.mask = Tensor::Create(DataType::kBool, c.mask_shape).value();
    for (int64_t i = 0; i < in.mask.size(); ++i) in.mask.SetInt64(i, uniform(gen) < 0.8 ? 1 : 0);
  } else if (c.mask == MaskKind::kFloat) {
    in.mask = Random(c.dtype, c.mask_shape, gen);
    for (int64_t i = 0; i < in.mask.size(); ++i) {
      if (uniform(gen) < 0.15) in.mask.SetDouble(i, -kInf);
    }
  }
  if (c.nonpad) {
    std::vector<int64_t> lens;
    for (int64_t b = 0; b < c.batch; ++b) lens.push_back(std::uniform_int_distribution<int64_t>(0, c.kv_len)(gen));
    in.nonpad = Tensor::FromInt64s({c.batch}, lens);
  }
  return in;
}

NodeRunner Runner(const Case& c, const Inputs& in, const OpRegistry* registry) {
  NodeRunner r("Attention");
  r.Opset(c.nonpad || c.left_window >= 0 || c.right_window >= 0 ? 25 : 23).Input(in.q).Input(in.k).Input(in.v);
  if (c.mask != MaskKind::kNone) {
    r.Input(in.mask);
  } else {
    r.AbsentInput();
  }
  if (c.past_len > 0) {
    r.Input(in.past_k).Input(in.past_v);
  } else {
    r.AbsentInput().AbsentInput();
  }
  if (c.nonpad) r.Input(in.nonpad);
  if (c.three_d) r.Attr("q_num_heads", c.q_heads).Attr("kv_num_heads", c.kv_heads);
  if (c.causal) r.Attr("is_causal", int64_t{1});
  if (c.left_window >= 0) r.Attr("left_window_size", c.left_window);
  if (c.right_window >= 0) r.Attr("right_window_size", c.right_window);
  if (c.softcap != 0.0f) r.Attr("softcap", c.softcap);
  if (c.scale) r.Attr("scale", *c.scale);
  if (registry) r.Registry(registry);
  return r;
}

// A registry whose Attention takes `path`.
const OpRegistry* RegistryFor(AttentionPath path) {
  static OpRegistry registries[3];
  static std::once_flag once;
  std::call_once(once, [] {
    for (AttentionPath p : {AttentionPath::kAuto, AttentionPath::kExact, AttentionPath::kBlocked}) {
      registries[static_cast<int>(p)].Register("Attention", 23,
                                               [p](const KernelContext& ctx) { return RunAttention(ctx, p); });
    }
  });
  return &registries[static_cast<int>(path)];
}

// Y by the operator's text in double, and for each element a bound on the
// difference between two double evaluations in different orders (this one
// and a kernel's), from the row's sums:
//   a score differs by at most delta_j = 2u((dk + 2) A_j + 4 |c_j| + 4 |z_j - max|),
//   A_j = sum_d |q_d k_jd| |scale| (the dot product and the scaling), c_j the
//   capped score (tanh), z_j the biased one (the bias and the exponent's
//   argument); the weights then differ relatively by at most
//   e^(2 max delta) - 1, and the exponentials, the online rescaling and the
//   sums of the softmax and of P V by 4u (total + dk + 4 max|z| + 16);
//   |dY_d| <= (both) * sum_j p_j |v_jd|.
// A fully masked row is exactly zero (bound 0).
struct Expected {
  std::vector<double> y, bound;  // in Y's layout
};

Expected Plain(const Case& c, const Inputs& in) {
  const int64_t total = c.total(), dk = c.head_size, dv = c.v_size, group = c.q_heads / c.kv_heads;
  const std::vector<double> q = in.q.ToDoubles(), k = in.k.ToDoubles(), v = in.v.ToDoubles();
  const std::vector<double> pk = c.past_len ? in.past_k.ToDoubles() : std::vector<double>();
  const std::vector<double> pv = c.past_len ? in.past_v.ToDoubles() : std::vector<double>();
  const std::vector<double> mask = c.mask != MaskKind::kNone ? in.mask.ToDoubles() : std::vector<double>();
  const std::vector<int64_t> nonpad = c.nonpad ? in.nonpad.ToInt64s() : std::vector<int64_t>();
  auto at = [&](const std::vector<double>& x, int64_t heads, int64_t seq, int64_t size, int64_t b, int64_t h,
                int64_t s, int64_t d) {
    return c.three_d ? x[((b * seq + s) * heads + h) * size + d] : x[((b * heads + h) * seq + s) * size + d];
  };
  auto key = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < c.past_len ? pk[((b * c.kv_heads + h) * c.past_len + j) * dk + d]
                          : at(k, c.kv_heads, c.kv_len, dk, b, h, j - c.past_len, d);
  };
  auto value = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < c.past_len ? pv[((b * c.kv_heads + h) * c.past_len + j) * dv + d]
                          : at(v, c.kv_heads, c.kv_len, dv, b, h, j - c.past_len, d);
  };
  Shape md(4, 1);  // the mask's dims, right-aligned
  for (size_t i = 0; i < c.mask_shape.size(); ++i) md[4 - c.mask_shape.size() + i] = c.mask_shape[i];
  auto mask_bias = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    if (c.mask == MaskKind::kNone) return 0.0;
    if (j >= md[3]) return -kInf;
    const int64_t row = ((md[0] == 1 ? 0 : b) * md[1] + (md[1] == 1 ? 0 : h)) * md[2] + (md[2] == 1 ? 0 : i);
    const double x = mask[row * md[3] + j];
    return c.mask == MaskKind::kBool ? (x != 0 ? 0.0 : -kInf) : x;
  };
  const double scale = c.scale ? *c.scale : 1.0 / std::sqrt(static_cast<double>(dk));
  Expected e;
  e.y.assign(static_cast<size_t>(c.batch * c.q_heads * c.q_len * dv), 0.0);
  e.bound.assign(e.y.size(), 0.0);
  std::vector<double> z(static_cast<size_t>(total)), delta(static_cast<size_t>(total));
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t h = 0; h < c.q_heads; ++h) {
      for (int64_t i = 0; i < c.q_len; ++i) {
        const int64_t pos = i + (c.nonpad ? nonpad[b] - c.q_len : c.past_len);
        bool any = false;
        double top = -kInf, largest = 0.0;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0.0, sum_abs = 0.0;
          for (int64_t d = 0; d < dk; ++d) {
            const double t = at(q, c.q_heads, c.q_len, dk, b, h, i, d) * key(b, h / group, j, d);
            dot += t;
            sum_abs += std::fabs(t);
          }
          const double s = dot * scale;
          const double capped = c.softcap != 0.0f ? c.softcap * std::tanh(s / c.softcap) : s;
          const bool masked = (c.causal && j > pos) || (c.left_window >= 0 && pos - j > c.left_window) ||
                              (c.right_window >= 0 && j - pos > c.right_window) || (c.nonpad && j >= nonpad[b]);
          const double bias = mask_bias(b, h, i, j) + (masked ? -kInf : 0.0);
          z[j] = capped + bias;
          delta[j] = 2 * kUnit * ((dk + 2) * sum_abs * std::fabs(scale) + 4 * std::fabs(capped));
          if (bias != -kInf) {
            any = true;
            top = std::max(top, z[j]);
            largest = std::max(largest, std::fabs(z[j]));
          }
        }
        if (!any) continue;  // fully masked: zeros, exactly
        double sum = 0.0, max_delta = 0.0;
        for (int64_t j = 0; j < total; ++j) {
          if (z[j] == -kInf) continue;
          sum += std::exp(z[j] - top);
          max_delta = std::max(max_delta, delta[j] + 8 * kUnit * std::fabs(z[j] - top));
        }
        const double relative = std::expm1(2 * max_delta) + 4 * kUnit * (total + dk + 4 * largest + 16);
        for (int64_t d = 0; d < dv; ++d) {
          double y = 0.0, weighted_abs = 0.0;
          for (int64_t j = 0; j < total; ++j) {
            if (z[j] == -kInf) continue;
            const double p = std::exp(z[j] - top) / sum;
            y += p * value(b, h / group, j, d);
            weighted_abs += p * std::fabs(value(b, h / group, j, d));
          }
          const int64_t index = c.three_d ? ((b * c.q_len + i) * c.q_heads + h) * dv + d
                                          : ((b * c.q_heads + h) * c.q_len + i) * dv + d;
          e.y[index] = y;
          e.bound[index] = relative * weighted_abs;
        }
      }
    }
  }
  return e;
}

// Half a unit in the last place of `x` in `dtype` (rounding to the output).
double HalfUlp(DataType dtype, double x) {
  const int digits = dtype == DataType::kFloat ? 24 : dtype == DataType::kFloat16 ? 11 : 53;
  const int min_exp = dtype == DataType::kFloat ? -126 : dtype == DataType::kFloat16 ? -14 : -1022;
  const int e = x == 0.0 ? min_exp : std::max(std::ilogb(x), min_exp);
  return std::ldexp(0.5, e - digits + 1);
}

void ExpectWithinBound(const Case& c, const Inputs& in, AttentionPath path) {
  SCOPED_TRACE(c.name);
  StatusOr<Tensor> got = Runner(c, in, RegistryFor(path)).RunOne();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const Expected want = Plain(c, in);
  const std::vector<double> y = got->ToDoubles();
  ASSERT_EQ(y.size(), want.y.size());
  int failures = 0;
  for (size_t i = 0; i < y.size() && failures < 5; ++i) {
    const double allowed = want.bound[i] + HalfUlp(c.dtype, std::fabs(want.y[i]) + want.bound[i]);
    if (!(std::fabs(y[i] - want.y[i]) <= allowed)) {
      ++failures;
      ADD_FAILURE() << "element " << i << ": got " << y[i] << ", want " << want.y[i] << " +- " << allowed;
    }
  }
}

// Sizes on both sides of the block edges (kQueryBlock, kKeyBlock), so that
// partial blocks, skipped leading and trailing key blocks and diagonal
// blocks all occur.
std::vector<Case> RandomCases() {
  constexpr int64_t kQ = kQueryBlock, kK = kKeyBlock;
  std::vector<Case> cases;
  auto add = [&](Case c) {
    c.seed = static_cast<uint32_t>(cases.size() + 11);
    cases.push_back(std::move(c));
  };
  add({.name = "plain 4-D"});
  add({.name = "grouped query heads, 3-D", .q_heads = 6, .kv_heads = 2, .q_len = 9, .kv_len = 7, .three_d = true});
  add({.name = "causal with past, across block edges", .batch = 2, .q_heads = 4, .kv_heads = 2, .q_len = kQ + 1,
       .kv_len = kQ + 1, .past_len = kK - 1, .head_size = 16, .v_size = 12, .causal = true});
  add({.name = "causal, 3-D, one query block, three key blocks", .q_heads = 2, .kv_heads = 1, .q_len = kQ - 1,
       .kv_len = kQ - 1, .past_len = 2 * kK + 2 - kQ, .head_size = 8, .v_size = 8, .three_d = true,
       .causal = true});
  add({.name = "bool mask broadcast over batch and heads, padded", .batch = 2, .q_len = 70, .kv_len = kK + 2,
       .mask = MaskKind::kBool, .mask_shape = {70, kK - 20}});
  add({.name = "float mask per batch and head, with -inf", .batch = 2, .q_heads = 4, .kv_heads = 2, .q_len = 7,
       .kv_len = kK + 12, .mask = MaskKind::kFloat, .mask_shape = {2, 4, 7, kK + 12}});
  add({.name = "float mask one row broadcast, padded, causal", .q_len = 66, .kv_len = 66, .past_len = 3,
       .causal = true, .mask = MaskKind::kFloat, .mask_shape = {1, 1, 1, 60}});
  add({.name = "sliding window: leading key blocks left out", .q_heads = 1, .kv_heads = 1, .q_len = 2 * kQ + 10,
       .kv_len = 2 * kQ + 10, .causal = true, .left_window = 37});
  add({.name = "left and right window: trailing key blocks left out", .q_len = 100, .kv_len = kK + 50,
       .past_len = 10, .left_window = 50, .right_window = 20});
  add({.name = "soft cap and scale", .q_len = 33, .kv_len = 150, .softcap = 2.5f, .scale = 0.9f});
  add({.name = "nonpad_kv_seqlen, causal", .batch = 3, .q_len = 20, .kv_len = kK + 20, .causal = true,
       .nonpad = true});
  add({.name = "nonpad_kv_seqlen with a bool mask", .batch = 2, .q_len = 3, .kv_len = 200, .mask = MaskKind::kBool,
       .mask_shape = {2, 1, 3, 200}, .nonpad = true});
  add({.name = "decode: one query over a long cache, grouped", .q_heads = 8, .kv_heads = 2, .q_len = 1, .kv_len = 1,
       .past_len = 2 * kK + 100, .head_size = 32, .v_size = 16, .causal = true});
  add({.name = "head size 1 and value size 3", .q_len = 64, .kv_len = 129, .head_size = 1, .v_size = 3});
  add({.name = "float32", .dtype = DataType::kFloat, .q_len = 100, .kv_len = 100, .past_len = 30, .head_size = 64,
       .v_size = 64, .causal = true});
  add({.name = "float16, 3-D, masked", .dtype = DataType::kFloat16, .q_heads = 4, .kv_heads = 4, .q_len = 70,
       .kv_len = 70, .three_d = true, .mask = MaskKind::kFloat, .mask_shape = {70, 70}});
  return cases;
}

TEST(AttentionBlocks, BlockedPathStaysWithinTheBoundOfThePlainDoubleResult) {
  for (const Case& c : RandomCases()) ExpectWithinBound(c, MakeInputs(c), AttentionPath::kBlocked);
}

TEST(AttentionBlocks, ExactPathStaysWithinTheSameBound) {
  for (const Case& c : RandomCases()) ExpectWithinBound(c, MakeInputs(c), AttentionPath::kExact);
}

TEST(AttentionBlocks, NonpadLengthsOutsideTheKeysAreClampedAlike) {
  // A negative length masks every key; one past the end masks none, and its
  // causal offset lets every query see every key.
  Case c{.name = "nonpad_kv_seqlen -3 and total + 50", .batch = 2, .q_len = 40, .kv_len = kKeyBlock + 5,
         .causal = true, .nonpad = true};
  Inputs in = MakeInputs(c);
  in.nonpad = Tensor::FromInt64s({2}, {-3, c.total() + 50});
  ExpectWithinBound(c, in, AttentionPath::kBlocked);
  ExpectWithinBound(c, in, AttentionPath::kExact);
}

TEST(AttentionBlocks, EmptySequencesGiveEmptyOrZeroOutputs) {
  for (const auto& [q_len, kv_len] : {std::pair<int64_t, int64_t>{0, 5}, {5, 0}}) {
    Case c{.name = "q_len " + std::to_string(q_len) + ", kv_len " + std::to_string(kv_len), .q_len = q_len,
           .kv_len = kv_len};
    const Inputs in = MakeInputs(c);
    for (AttentionPath path : {AttentionPath::kBlocked, AttentionPath::kExact}) {
      StatusOr<Tensor> y = Runner(c, in, RegistryFor(path)).RunOne();
      ASSERT_TRUE(y.ok()) << c.name << ": " << y.status().ToString();
      EXPECT_EQ(y->shape(), Shape({1, 2, q_len, 8})) << c.name;
      for (double x : y->ToDoubles()) EXPECT_EQ(x, 0.0) << c.name;  // no key: a fully masked row
    }
  }
}

std::string Bytes(const Tensor& t) { return std::string(reinterpret_cast<const char*>(t.raw_bytes()), t.byte_size()); }

TEST(AttentionBlocks, EveryThreadCountGivesTheSameBits) {
  for (const Case& c : RandomCases()) {
    SCOPED_TRACE(c.name);
    const Inputs in = MakeInputs(c);
    std::string first;
    for (int threads : {1, 2, 3}) {
      SetThreadCount(threads);
      StatusOr<Tensor> y = Runner(c, in, nullptr).RunOne();
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      if (threads == 1) first = Bytes(*y);
      EXPECT_EQ(Bytes(*y), first) << threads << " threads";
    }
  }
  SetThreadCount(0);
}

// For a float64, 4-D case of batch 1 whose special value is in head 0: the
// default path gives the exact path's bits for head 0 (other heads may take
// the blocked path), and the blocked path refuses the node.
void ExpectExactBitsInHead0(const Case& c, const Inputs& in) {
  SCOPED_TRACE(c.name);
  ASSERT_TRUE(c.dtype == DataType::kDouble && !c.three_d && c.batch == 1);
  StatusOr<Tensor> exact = Runner(c, in, RegistryFor(AttentionPath::kExact)).RunOne();
  StatusOr<Tensor> chosen = Runner(c, in, nullptr).RunOne();
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  const size_t head_bytes = static_cast<size_t>(c.q_len * c.v_size) * sizeof(double);
  EXPECT_EQ(Bytes(*chosen).substr(0, head_bytes), Bytes(*exact).substr(0, head_bytes));
  const std::string refusal = RunError(Runner(c, in, RegistryFor(AttentionPath::kBlocked)));
  EXPECT_NE(refusal.find("does not fit head 0 of batch 0"), std::string::npos) << refusal;
}

TEST(AttentionBlocks, ANanInAMaskedKeyReachesEveryRowAsInTheExactPath) {
  // Key 69 is masked for queries 0..68, but its NaN score plus -inf is NaN,
  // which the softmax spreads over the row: the blocked path must not skip it.
  Case c{.name = "NaN key under the causal mask", .q_len = 70, .kv_len = 70, .causal = true};
  Inputs in = MakeInputs(c);
  in.k.SetDouble(((0 * c.kv_heads + 0) * c.kv_len + 69) * c.head_size + 3, std::nan(""));
  ExpectExactBitsInHead0(c, in);
  const std::vector<double> y = Runner(c, in, nullptr).RunOne()->ToDoubles();
  EXPECT_TRUE(std::isnan(y[0]));                     // head 0, query 0
  EXPECT_FALSE(std::isnan(y[c.q_len * c.v_size]));  // head 1 has no NaN
}

TEST(AttentionBlocks, AnInfiniteValueUnderAZeroWeightGivesNan) {
  // 0 x inf is NaN in P V, even for the masked key 5 and a fully masked row.
  Case c{.name = "inf in V", .q_len = 4, .kv_len = 8, .mask = MaskKind::kBool, .mask_shape = {4, 8}};
  Inputs in = MakeInputs(c);
  for (int64_t j = 0; j < 8; ++j) {
    in.mask.SetInt64(j, 0);            // query 0 sees nothing
    in.mask.SetInt64(8 + j, j != 5);   // the others never see key 5
    in.mask.SetInt64(16 + j, j != 5);
    in.mask.SetInt64(24 + j, j != 5);
  }
  in.v.SetDouble(5 * c.v_size + 0, kInf);
  ExpectExactBitsInHead0(c, in);
  const std::vector<double> y = Runner(c, in, nullptr).RunOne()->ToDoubles();
  EXPECT_TRUE(std::isnan(y[0]));           // query 0, dimension 0
  EXPECT_TRUE(std::isnan(y[c.v_size]));    // query 1, dimension 0
  EXPECT_FALSE(std::isnan(y[c.v_size + 1]));
}

TEST(AttentionBlocks, FullyMaskedRowsAreZeroInBothPaths) {
  Case c{.name = "fully masked rows", .batch = 2, .q_len = 70, .kv_len = 130, .causal = true,
         .mask = MaskKind::kFloat, .mask_shape = {2, 1, 70, 130}, .nonpad = true};
  Inputs in = MakeInputs(c);
  in.nonpad = Tensor::FromInt64s({2}, {0, 40});  // batch 0: no key; batch 1: queries 0..29 see none
  for (int64_t j = 0; j < 130; ++j) in.mask.SetDouble((1 * 70 + 50) * 130 + j, -kInf);  // batch 1, query 50
  in.mask.SetDouble((1 * 70 + 45) * 130 + 0, 0.0);  // batch 1, query 45 sees key 0
  StatusOr<Tensor> exact = Runner(c, in, RegistryFor(AttentionPath::kExact)).RunOne();
  StatusOr<Tensor> blocked = Runner(c, in, RegistryFor(AttentionPath::kBlocked)).RunOne();
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  ASSERT_TRUE(blocked.ok()) << blocked.status().ToString();
  auto row_bytes = [&](const Tensor& y, int64_t b, int64_t h, int64_t i) {
    const int64_t width = c.v_size * static_cast<int64_t>(sizeof(double));
    return Bytes(y).substr(((b * c.q_heads + h) * c.q_len + i) * width, width);
  };
  const std::string zeros(c.v_size * sizeof(double), '\0');  // +0.0, not -0.0
  for (int64_t h = 0; h < c.q_heads; ++h) {
    for (int64_t i = 0; i < c.q_len; ++i) {
      EXPECT_EQ(row_bytes(*blocked, 0, h, i), zeros);
      EXPECT_EQ(row_bytes(*exact, 0, h, i), zeros);
    }
    for (int64_t i : {0, 29, 50}) {
      EXPECT_EQ(row_bytes(*blocked, 1, h, i), zeros) << i;
      EXPECT_EQ(row_bytes(*exact, 1, h, i), zeros) << i;
    }
    EXPECT_NE(row_bytes(*blocked, 1, h, 45), zeros);
  }
}

TEST(AttentionBlocks, MasksWithNanOrPlusInfinityTakeTheExactPath) {
  for (double bad : {std::nan(""), kInf}) {
    Case c{.name = "mask holding " + std::to_string(bad), .q_len = 9, .kv_len = 9, .causal = true,
           .mask = MaskKind::kFloat, .mask_shape = {9, 9}};
    Inputs in = MakeInputs(c);
    in.mask.SetDouble(8, bad);  // query 0, key 8: also causally masked (inf - inf = NaN)
    ExpectExactBitsInHead0(c, in);
  }
}

TEST(AttentionBlocks, ValuesThatCouldOverflowTakeTheExactPath) {
  Case c{.name = "scores near the double range", .q_len = 6, .kv_len = 6, .head_size = 4, .v_size = 4};
  Inputs in = MakeInputs(c);
  in.q.SetDouble(0, 1e200);
  in.k.SetDouble(0, 1e200);
  ExpectExactBitsInHead0(c, in);
  Case big_v = c;
  big_v.name = "values near the double range";
  Inputs in_v = MakeInputs(big_v);
  in_v.v.SetDouble(0, 1e307);
  ExpectExactBitsInHead0(big_v, in_v);
  Case inf_scale = c;
  inf_scale.name = "infinite scale";
  inf_scale.scale = std::numeric_limits<float>::infinity();
  ExpectExactBitsInHead0(inf_scale, MakeInputs(inf_scale));
}

TEST(AttentionBlocks, FiniteCasesFitTheBlockedPath) {
  // The rule of BlockedPathFits admits the common case: every random case above.
  for (const Case& c : RandomCases()) {
    SCOPED_TRACE(c.name);
    const Inputs in = MakeInputs(c);
    StatusOr<Tensor> blocked = Runner(c, in, RegistryFor(AttentionPath::kBlocked)).RunOne();
    EXPECT_TRUE(blocked.ok()) << blocked.status().ToString();
  }
}

TEST(AttentionBlocks, PresentKeyAndValueArePastThenCurrentBitForBit) {
  for (bool three_d : {false, true}) {
    Case c{.name = three_d ? "3-D" : "4-D", .dtype = DataType::kFloat, .batch = 2, .q_heads = 4, .kv_heads = 2,
           .q_len = 3, .kv_len = 3, .past_len = 5, .head_size = 4, .v_size = 6, .three_d = three_d};
    SCOPED_TRACE(c.name);
    Inputs in = MakeInputs(c);
    in.past_k.mutable_data<float>()[7] = std::numeric_limits<float>::signaling_NaN();  // kept as it is
    StatusOr<std::vector<Value>> out = Runner(c, in, nullptr).Outputs(3).Run();
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    for (int which : {1, 2}) {
      const Tensor& present = (*out)[which].tensor();
      const int64_t size = which == 1 ? c.head_size : c.v_size;
      const Tensor& past = which == 1 ? in.past_k : in.past_v;
      const Tensor& current = which == 1 ? in.k : in.v;
      ASSERT_EQ(present.shape(), Shape({c.batch, c.kv_heads, c.total(), size}));
      const float* got = present.data<float>();
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t h = 0; h < c.kv_heads; ++h)
          for (int64_t s = 0; s < c.total(); ++s)
            for (int64_t d = 0; d < size; ++d) {
              const int64_t cs = s - c.past_len;
              const float want = s < c.past_len ? past.data<float>()[((b * c.kv_heads + h) * c.past_len + s) * size + d]
                                 : three_d ? current.data<float>()[((b * c.kv_len + cs) * c.kv_heads + h) * size + d]
                                           : current.data<float>()[((b * c.kv_heads + h) * c.kv_len + cs) * size + d];
              const float have = got[((b * c.kv_heads + h) * c.total() + s) * size + d];
              EXPECT_EQ(std::memcmp(&want, &have, sizeof(float)), 0) << b << " " << h << " " << s << " " << d;
            }
    }
  }
}

}  // namespace
}  // namespace parity::ops::attention
