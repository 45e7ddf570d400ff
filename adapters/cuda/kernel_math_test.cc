// What the CUDA kernels compute for each element, checked on the host: the
// functions of kernel_math.h and the views of strided_views.h that
// kernels.cu runs on the GPU, run here element by element in the kernels'
// compute types and roundings, against the reference's kernels. (The launch
// and the memory traffic are checked on a GPU: ci/cuda_gpu.sh.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "adapters/cuda/kernel_math.h"
#include "adapters/cuda/strided_views.h"
#include "reference/core/float_formats.h"
#include "reference/ops/attention/attention_problem.h"
#include "reference/ops/node_runner.h"

namespace parity::adapters::cuda {
namespace {

const DataType kTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16};

// The distance in units in the last place of `type` between two values of
// that type (0 when both are NaN; a large number when one is).
int64_t Ulps(DataType type, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto ordered = [&](double v) -> int64_t {
    int64_t bits = 0;
    int64_t sign_bit = 0;
    if (type == DataType::kFloat) {
      const float f = static_cast<float>(v);
      uint32_t u = 0;
      std::memcpy(&u, &f, sizeof(u));
      bits = u & 0x7fffffff, sign_bit = u >> 31;
    } else {
      const uint32_t u = EncodeSmallFloat(type, v);
      bits = u & 0x7fff, sign_bit = u >> 15;
    }
    return sign_bit ? -bits : bits;
  };
  return std::llabs(ordered(a) - ordered(b));
}

// Each element of the two tensors within `ulps` of the other.
void ExpectClose(const Tensor& got, const Tensor& want, int64_t ulps, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(Ulps(got.dtype(), got.GetDouble(i), want.GetDouble(i)), ulps)
        << what << " element " << i << ": kernel " << got.GetDouble(i) << ", reference " << want.GetDouble(i);
  }
}

Tensor Random(DataType type, Shape shape, double low, double high, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> pick(low, high);
  std::vector<double> values(static_cast<size_t>(*ElementCount(shape)));
  for (double& v : values) v = pick(engine);
  return *Tensor::FromDoubles(type, shape, values);
}

// A kernel's store: float32 data computed in double, the 16-bit types in
// float, each rounded once to the element type (SetDouble rounds once).
template <typename F>
Tensor Emulate(const Tensor& like, const Shape& shape, F value_of) {
  Tensor out = *Tensor::Create(like.dtype(), shape);
  for (int64_t i = 0; i < out.size(); ++i) out.SetDouble(i, value_of(i));
  return out;
}

struct UnaryCase {
  const char* op;
  UnaryOp kernel_op;
  float alpha = 0, beta = 0;
};

TEST(CudaKernelMathTest, UnaryOperatorsMatchTheReference) {
  const UnaryCase cases[] = {
      {"Relu", UnaryOp::kRelu}, {"Sigmoid", UnaryOp::kSigmoid}, {"Tanh", UnaryOp::kTanh},
      {"Exp", UnaryOp::kExp}, {"Log", UnaryOp::kLog}, {"Neg", UnaryOp::kNeg}, {"Abs", UnaryOp::kAbs},
      {"Sqrt", UnaryOp::kSqrt}, {"Reciprocal", UnaryOp::kReciprocal}, {"Erf", UnaryOp::kErf},
      {"Sin", UnaryOp::kSin}, {"Cos", UnaryOp::kCos}, {"Floor", UnaryOp::kFloor}, {"Ceil", UnaryOp::kCeil},
      {"Softplus", UnaryOp::kSoftplus}, {"Gelu", UnaryOp::kGelu}, {"LeakyRelu", UnaryOp::kLeakyRelu, 0.01f},
      {"Elu", UnaryOp::kElu, 1.0f}, {"HardSigmoid", UnaryOp::kHardSigmoid, 0.2f, 0.5f},
  };
  for (DataType type : kTypes) {
    // Random values, then the edges: zeros, infinities, NaN, large magnitudes.
    Tensor x = Random(type, {64}, -6, 6, 7);
    const double edges[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 30.0, -30.0, 1e-3, -1e-3, 0.5};
    for (size_t i = 0; i < std::size(edges); ++i) x.SetDouble(static_cast<int64_t>(i), edges[i]);
    for (const UnaryCase& c : cases) {
      StatusOr<Tensor> want = NodeRunner(c.op).Opset(22).Input(x).RunOne();
      ASSERT_TRUE(want.ok()) << c.op << ": " << want.status().ToString();
      const Tensor got = Emulate(x, x.shape(), [&](int64_t i) {
        return type == DataType::kFloat
                   ? ApplyUnary<double>(c.kernel_op, x.GetDouble(i), c.alpha, c.beta)
                   : static_cast<double>(ApplyUnary<float>(c.kernel_op, static_cast<float>(x.GetDouble(i)), c.alpha,
                                                           c.beta));
      });
      ExpectClose(got, *want, 1, StrCat(c.op, " ", DataTypeName(type)));
    }
  }
}

TEST(CudaKernelMathTest, GeluTanhMatchesTheReference) {
  const Tensor x = Random(DataType::kFloat, {32}, -5, 5, 3);
  StatusOr<Tensor> want = NodeRunner("Gelu").Opset(20).Attr("approximate", std::string("tanh")).Input(x).RunOne();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ExpectClose(Emulate(x, x.shape(), [&](int64_t i) { return ApplyUnary<double>(UnaryOp::kGeluTanh, x.GetDouble(i), 0, 0); }),
              *want, 1, "Gelu tanh");
}

TEST(CudaKernelMathTest, BinaryOperatorsBroadcastAsTheReference) {
  const std::pair<const char*, BinaryOp> ops[] = {{"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub},
                                                  {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
                                                  {"Pow", BinaryOp::kPow}, {"Max", BinaryOp::kMax},
                                                  {"Min", BinaryOp::kMin}};
  const std::pair<Shape, Shape> shapes[] = {{{2, 3, 4}, {3, 1}}, {{4}, {2, 3, 4}}, {{2, 1, 4}, {1, 3, 1}}, {{}, {5}}};
  for (DataType type : kTypes) {
    for (const auto& [a_shape, b_shape] : shapes) {
      Tensor a = Random(type, a_shape, 0.1, 3, 11);
      const Tensor b = Random(type, b_shape, -2, 2, 13);
      if (a.size() > 1) a.SetDouble(1, NAN);  // NaN through Max and Min as through the rest
      for (const auto& [name, op] : ops) {
        StatusOr<Tensor> want = NodeRunner(name).Opset(15).Input(a).Input(b).RunOne();
        ASSERT_TRUE(want.ok()) << name << ": " << want.status().ToString();
        const StridedView av = BroadcastView(a.shape(), want->shape());
        const StridedView bv = BroadcastView(b.shape(), want->shape());
        const Tensor got = Emulate(a, want->shape(), [&](int64_t i) {
          const double x = a.GetDouble(StridedOffset(i, av)), y = b.GetDouble(StridedOffset(i, bv));
          return type == DataType::kFloat ? ApplyBinary<double>(op, x, y)
                                          : static_cast<double>(ApplyBinary<float>(op, static_cast<float>(x),
                                                                                   static_cast<float>(y)));
        });
        ExpectClose(got, *want, 1, StrCat(name, " ", DataTypeName(type), " ", ShapeToString(a_shape), " ",
                                          ShapeToString(b_shape)));
      }
    }
  }
}

TEST(CudaKernelMathTest, TransposeViewReadsAsTheReference) {
  const Tensor x = Random(DataType::kFloat, {2, 3, 4, 5}, -1, 1, 5);
  const std::vector<int64_t> perm = {2, 0, 3, 1};
  StatusOr<Tensor> want = NodeRunner("Transpose").Opset(21).Attr("perm", perm).Input(x).RunOne();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const StridedView view = TransposeView(x.shape(), perm);
  EXPECT_EQ(Shape(view.dims, view.dims + view.rank), want->shape());
  ExpectClose(Emulate(x, want->shape(), [&](int64_t i) { return x.GetDouble(StridedOffset(i, view)); }), *want, 0,
              "Transpose");
}

TEST(CudaKernelMathTest, SoftmaxRowsMatchTheReferenceWithNanAndInfinity) {
  for (DataType type : kTypes) {
    for (bool log_softmax : {false, true}) {
      Tensor x = Random(type, {2, 5, 3}, -4, 4, 17);
      x.SetDouble(0, NAN);           // row (0, 0) along axis 1
      x.SetDouble(3 * 5 + 1, INFINITY);  // row (1, 1)
      StatusOr<Tensor> want =
          NodeRunner(log_softmax ? "LogSoftmax" : "Softmax").Opset(13).Attr("axis", int64_t{1}).Input(x).RunOne();
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      Tensor got = *Tensor::Create(type, x.shape());
      const int64_t length = 5, inner = 3;
      for (int64_t row = 0; row < 2 * inner; ++row) {
        const int64_t base = (row / inner) * length * inner + row % inner;
        auto run = [&](auto zero) {
          using C = decltype(zero);
          SoftmaxRow<C>(
              log_softmax, length, [&](int64_t j) { return static_cast<C>(x.GetDouble(base + j * inner)); },
              [&](int64_t j, C v) { got.SetDouble(base + j * inner, static_cast<double>(v)); });
        };
        if (type == DataType::kFloat) {
          run(0.0);
        } else {
          run(0.0f);
        }
      }
      ExpectClose(got, *want, 1, StrCat(log_softmax ? "LogSoftmax " : "Softmax ", DataTypeName(type)));
    }
  }
}

TEST(CudaKernelMathTest, RmsNormRowsMatchTheReference) {
  struct Case {
    int64_t axis;
    Shape scale;
  };
  for (DataType type : kTypes) {
    for (const Case& c : {Case{-1, {8}}, Case{1, {3, 8}}, Case{1, {1, 8}}}) {
      const Tensor x = Random(type, {2, 3, 8}, -3, 3, 19);
      const Tensor scale = Random(type, c.scale, 0.5, 1.5, 23);
      StatusOr<Tensor> want =
          NodeRunner("RMSNormalization").Opset(23).Attr("axis", c.axis).Input(x).Input(scale).RunOne();
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      const int64_t cols = c.axis == -1 ? 8 : 24;
      const Shape block = c.axis == -1 ? Shape{8} : Shape{3, 8};
      const StridedView scale_view = BroadcastView(c.scale, block);
      Tensor got = *Tensor::Create(type, x.shape());
      for (int64_t row = 0; row < x.size() / cols; ++row) {
        RmsNormRow(
            cols, 1e-5f, [&](int64_t j) { return x.GetDouble(row * cols + j); },
            [&](int64_t j) { return scale.GetDouble(StridedOffset(j, scale_view)); },
            [&](int64_t j, double v) { got.SetDouble(row * cols + j, v); });
      }
      ExpectClose(got, *want, 1, StrCat("RMSNormalization ", DataTypeName(type), " axis ", c.axis));
    }
  }
}

TEST(CudaKernelMathTest, RotaryPairsMatchTheReference) {
  struct Case {
    bool four_d, interleaved;
    int64_t rotary_dim;
    bool positions;
  };
  const Case cases[] = {{true, false, 0, true}, {true, true, 0, true}, {false, false, 4, true},
                        {false, true, 0, false}, {true, false, 6, false}};
  for (DataType type : kTypes) {
    for (const Case& c : cases) {
      RotaryShape r;
      r.batch = 2, r.heads = 3, r.seq = 4, r.head_size = 8;
      r.four_d = c.four_d, r.interleaved = c.interleaved;
      r.rotary_dim = c.rotary_dim == 0 ? r.head_size : c.rotary_dim;
      const int64_t half = r.rotary_dim / 2;
      const Tensor x = Random(type, c.four_d ? Shape{2, 3, 4, 8} : Shape{2, 4, 24}, -2, 2, 29);
      const Shape cache_shape = c.positions ? Shape{10, half} : Shape{2, 4, half};
      const Tensor cosines = Random(type, cache_shape, -1, 1, 31);
      const Tensor sines = Random(type, cache_shape, -1, 1, 37);
      const Tensor positions = Tensor::FromInt64s({2, 4}, {0, 1, 2, 3, 9, 5, 5, 0});
      NodeRunner runner("RotaryEmbedding");
      runner.Opset(23).Attr("interleaved", int64_t{c.interleaved}).Attr("rotary_embedding_dim", c.rotary_dim);
      if (!c.four_d) runner.Attr("num_heads", int64_t{3});
      runner.Input(x).Input(cosines).Input(sines);
      if (c.positions) runner.Input(positions);
      StatusOr<Tensor> want = runner.RunOne();
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      const Tensor got = Emulate(x, x.shape(), [&](int64_t i) {
        RotaryPlace place;
        const int64_t k = RotaryLocate(i, r, &place);
        if (k < 0) return x.GetDouble(i);
        const int64_t row = c.positions ? positions.GetInt64(place.bs) : place.bs;
        const int64_t at = row * half + k;
        const double self = x.GetDouble(i), partner = x.GetDouble(place.partner);
        return type == DataType::kFloat
                   ? Rotate<double>(place.first, self, partner, cosines.GetDouble(at), sines.GetDouble(at))
                   : static_cast<double>(Rotate<float>(place.first, static_cast<float>(self),
                                                       static_cast<float>(partner),
                                                       static_cast<float>(cosines.GetDouble(at)),
                                                       static_cast<float>(sines.GetDouble(at))));
      });
      ExpectClose(got, *want, 1,
                  StrCat("RotaryEmbedding ", DataTypeName(type), c.four_d ? " 4-D" : " 3-D",
                         c.interleaved ? " interleaved" : "", " dim ", r.rotary_dim));
    }
  }
}

// Attention's rows as the own kernel computes them (AttendRow, AllowedKeys,
// the bias of the mask in its own dims, the caches whole), against the
// reference's Attention.
TEST(CudaKernelMathTest, AttentionRowsMatchTheReference) {
  struct Case {
    const char* what;
    bool three_d = false, causal = false, past = false, mask = false, bool_mask = false;
    double softcap = 0;
    int64_t q_len = 3;
  };
  const Case cases[] = {
      {"plain"}, {"causal with a past", false, true, true}, {"3-D, grouped, float mask", true, false, false, true},
      {"bool mask and soft cap", false, false, true, true, true, 5.0}, {"decode step", false, true, true, false, false, 0, 1},
  };
  for (DataType type : kTypes) {
    for (const Case& c : cases) {
      const int64_t batch = 2, q_heads = 4, kv_heads = 2, size = 8, v_size = 8, kv_len = 3;
      const int64_t past_len = c.past ? 5 : 0, total = past_len + kv_len;
      auto layout = [&](int64_t heads, int64_t seq, int64_t width) {
        return c.three_d ? Shape{batch, seq, heads * width} : Shape{batch, heads, seq, width};
      };
      const Tensor q = Random(type, layout(q_heads, c.q_len, size), -1, 1, 41);
      const Tensor k = Random(type, layout(kv_heads, kv_len, size), -1, 1, 43);
      const Tensor v = Random(type, layout(kv_heads, kv_len, v_size), -1, 1, 47);
      const Tensor past_k = Random(type, {batch, kv_heads, past_len, size}, -1, 1, 53);
      const Tensor past_v = Random(type, {batch, kv_heads, past_len, v_size}, -1, 1, 59);
      Tensor mask = c.bool_mask ? *Tensor::Create(DataType::kBool, {c.q_len, total - 1})
                                : Random(type, {1, q_heads, c.q_len, total}, -2, 0, 61);
      if (c.bool_mask) {
        for (int64_t i = 0; i < mask.size(); ++i) mask.SetInt64(i, (i % 3) != 1);
      }
      NodeRunner runner("Attention");
      runner.Opset(23).Attr("is_causal", int64_t{c.causal});
      if (c.softcap != 0) runner.Attr("softcap", static_cast<float>(c.softcap));
      if (c.three_d) runner.Attr("q_num_heads", q_heads).Attr("kv_num_heads", kv_heads);
      runner.Input(q).Input(k).Input(v);
      if (c.mask) {
        runner.Input(mask);
      } else if (c.past) {
        runner.AbsentInput();
      }
      if (c.past) runner.Input(past_k).Input(past_v);
      runner.Outputs(c.past ? 3 : 1);
      StatusOr<std::vector<Value>> want = runner.Run();
      ASSERT_TRUE(want.ok()) << c.what << ": " << want.status().ToString();
      const Tensor& y_want = (*want)[0].tensor();

      // The caches whole, [batch, kv_heads, total, size], as the run makes them.
      auto whole = [&](const Tensor& past, const Tensor& current, int64_t width) {
        std::vector<double> rows(static_cast<size_t>(batch * kv_heads * total * width));
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t h = 0; h < kv_heads; ++h)
            for (int64_t t = 0; t < total; ++t)
              for (int64_t d = 0; d < width; ++d) {
                const int64_t s = t - past_len;
                const double value = t < past_len ? past.GetDouble(((b * kv_heads + h) * past_len + t) * width + d)
                                     : c.three_d ? current.GetDouble((b * kv_len + s) * kv_heads * width + h * width + d)
                                                 : current.GetDouble(((b * kv_heads + h) * kv_len + s) * width + d);
                rows[static_cast<size_t>(((b * kv_heads + h) * total + t) * width + d)] = value;
              }
        return rows;
      };
      const std::vector<double> keys = whole(past_k, k, size), values = whole(past_v, v, v_size);
      int64_t bias_dims[4] = {1, 1, 1, 1};
      if (c.mask) {
        for (int64_t i = 0; i < mask.rank(); ++i) bias_dims[4 - mask.rank() + i] = mask.dim(i);
      }
      Tensor got = *Tensor::Create(type, y_want.shape());
      std::vector<double> acc(static_cast<size_t>(v_size));
      const double scale = 1.0 / std::sqrt(static_cast<double>(size));
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < q_heads; ++h)
          for (int64_t i = 0; i < c.q_len; ++i) {
            AttentionRow r;
            r.total = total, r.head_size = size, r.v_size = v_size, r.scale = scale, r.softcap = c.softcap;
            AllowedKeys(i, past_len, total, c.causal, -1, -1, false, 0, &r.lo, &r.hi);
            const int64_t kv = h / (q_heads / kv_heads);
            auto at = [&](int64_t width, int64_t d) {
              return c.three_d ? (b * c.q_len + i) * q_heads * width + h * width + d
                               : ((b * q_heads + h) * c.q_len + i) * width + d;
            };
            const int64_t bias_row = (((bias_dims[0] == 1 ? 0 : b) * bias_dims[1] + (bias_dims[1] == 1 ? 0 : h)) *
                                          bias_dims[2] + (bias_dims[2] == 1 ? 0 : i)) * bias_dims[3];
            AttendRow(
                r, [&](int64_t d) { return q.GetDouble(at(size, d)); },
                [&](int64_t j, int64_t d) { return keys[static_cast<size_t>(((b * kv_heads + kv) * total + j) * size + d)]; },
                [&](int64_t j, int64_t d) { return values[static_cast<size_t>(((b * kv_heads + kv) * total + j) * v_size + d)]; },
                [&](int64_t j) {
                  if (!c.mask) return 0.0;
                  if (j >= bias_dims[3]) return -HUGE_VAL;
                  return c.bool_mask ? (mask.GetInt64(bias_row + j) != 0 ? 0.0 : -HUGE_VAL) : mask.GetDouble(bias_row + j);
                },
                [&](int64_t d, double value) { got.SetDouble(at(v_size, d), value); }, acc.data());
          }
      ExpectClose(got, y_want, 1, StrCat("Attention ", c.what, " ", DataTypeName(type)));
    }
  }
}

TEST(CudaKernelMathTest, ReductionsMatchTheReference) {
  const std::pair<const char*, ReduceOp> ops[] = {
      {"ReduceSum", ReduceOp::kSum},       {"ReduceMean", ReduceOp::kMean},     {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin},       {"ReduceProd", ReduceOp::kProd},     {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},         {"ReduceLogSum", ReduceOp::kLogSum}, {"ReduceLogSumExp", ReduceOp::kLogSumExp},
      {"ReduceSumSquare", ReduceOp::kSumSquare}};
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    bool keepdims;
  };
  const Case cases[] = {{{2, 3, 4}, {1}, true}, {{2, 3, 4}, {0, 2}, false}, {{2, 3, 4}, {}, true}, {{3, 0, 2}, {1}, true},
                        {{2, 3, 4}, {-1}, false}};
  for (DataType type : kTypes) {
    for (const Case& c : cases) {
      Tensor x = Random(type, c.shape, 0.1, 2, 67);
      if (x.size() > 5) x.SetDouble(5, NAN), x.SetDouble(2, INFINITY);
      for (const auto& [name, op] : ops) {
        NodeRunner runner(name);
        runner.Opset(18).Attr("keepdims", int64_t{c.keepdims}).Input(x);
        if (!c.axes.empty()) runner.Input(Tensor::FromInt64s({static_cast<int64_t>(c.axes.size())}, c.axes));
        StatusOr<Tensor> want = runner.RunOne();
        ASSERT_TRUE(want.ok()) << name << ": " << want.status().ToString();
        std::vector<bool> reduced(c.shape.size(), c.axes.empty());
        for (int64_t a : c.axes) reduced[static_cast<size_t>(a < 0 ? a + x.rank() : a)] = true;
        const ReduceViews views = MakeReduceViews(x.shape(), reduced, c.keepdims);
        ASSERT_EQ(views.out_dims, want->shape()) << name;
        int64_t count = 1;
        for (int i = 0; i < views.group.rank; ++i) count *= views.group.dims[i];
        const Tensor got = Emulate(x, views.out_dims, [&](int64_t o) {
          const int64_t base = StridedOffset(o, views.kept);
          return ReduceGroup(op, count, [&](int64_t j) { return x.GetDouble(base + StridedOffset(j, views.group)); });
        });
        ExpectClose(got, *want, 1, StrCat(name, " ", DataTypeName(type), " ", ShapeToString(c.shape)));
      }
    }
  }
}

TEST(CudaKernelMathTest, SliceViewsTakeTheReferencesElements) {
  const Tensor x = Random(DataType::kFloat, {5, 6, 7}, -1, 1, 71);
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const Case cases[] = {
      {{1, 0}, {4, 6}, {0, 1}, {1, 2}},          {{-1}, {-8}, {2}, {-2}},     {{0, 2, 1}, {100, -1, 7}, {0, 1, 2}, {3, 1, 5}},
      {{10}, {20}, {1}, {1}},                    {{3}, {3}, {0}, {1}},        {{6, -100}, {-100, 100}, {2, 0}, {-3, 4}},
      {{-2}, {-1}, {-1}, {1}},                   {{INT64_MAX}, {INT64_MIN}, {1}, {-INT64_MAX}},
  };
  const std::vector<int64_t> strides = RowMajorStrides(x.shape());
  for (const Case& c : cases) {
    const auto count = static_cast<int64_t>(c.starts.size());
    StatusOr<Tensor> want = NodeRunner("Slice")
                                .Opset(13)
                                .Input(x)
                                .Input(Tensor::FromInt64s({count}, c.starts))
                                .Input(Tensor::FromInt64s({count}, c.ends))
                                .Input(Tensor::FromInt64s({count}, c.axes))
                                .Input(Tensor::FromInt64s({count}, c.steps))
                                .RunOne();
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    StridedView view;
    view.rank = 3;
    for (int d = 0; d < 3; ++d) view.dims[d] = x.dim(d), view.strides[d] = strides[static_cast<size_t>(d)];
    int64_t base = 0;
    for (size_t i = 0; i < c.axes.size(); ++i) {
      const int64_t axis = c.axes[i] < 0 ? c.axes[i] + 3 : c.axes[i];
      const SliceAxis slice = SliceOf(x.dim(axis), c.starts[i], c.ends[i], c.steps[i]);
      view.dims[axis] = slice.count;
      view.strides[axis] = strides[static_cast<size_t>(axis)] * c.steps[i];
      if (slice.count > 0) base += slice.first * strides[static_cast<size_t>(axis)];
    }
    const Shape out_dims(view.dims, view.dims + 3);
    ASSERT_EQ(out_dims, want->shape());
    ExpectClose(Emulate(x, out_dims, [&](int64_t i) { return x.GetDouble(base + StridedOffset(i, view)); }), *want, 0,
                "Slice");
  }
}

TEST(CudaKernelMathTest, ExpandWhereAndCastMatchTheReference) {
  const Tensor x = Random(DataType::kFloat, {3, 1, 4}, -1, 1, 73);
  StatusOr<Tensor> expanded = NodeRunner("Expand").Opset(13).Input(x).Input(Tensor::FromInt64s({4}, {2, 1, 5, 1})).RunOne();
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  const StridedView view = BroadcastView(x.shape(), expanded->shape());
  ExpectClose(Emulate(x, expanded->shape(), [&](int64_t i) { return x.GetDouble(StridedOffset(i, view)); }), *expanded,
              0, "Expand");

  Tensor cond = *Tensor::Create(DataType::kBool, {5, 4});
  for (int64_t i = 0; i < cond.size(); ++i) cond.SetInt64(i, i % 3 == 0);
  const Tensor z = Random(DataType::kFloat, {5, 1}, -1, 1, 79);
  StatusOr<Tensor> chosen = NodeRunner("Where").Opset(16).Input(cond).Input(x).Input(z).RunOne();
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  const Shape out = chosen->shape();
  const StridedView cv = BroadcastView(cond.shape(), out), xv = BroadcastView(x.shape(), out),
                    zv = BroadcastView(z.shape(), out);
  ExpectClose(Emulate(x, out, [&](int64_t i) {
                return cond.GetInt64(StridedOffset(i, cv)) ? x.GetDouble(StridedOffset(i, xv))
                                                           : z.GetDouble(StridedOffset(i, zv));
              }),
              *chosen, 0, "Where");

  // A cast rounds once from the source's value to the target type.
  for (DataType from : kTypes) {
    Tensor source = Random(from, {40}, -70000, 70000, 83);
    source.SetDouble(0, NAN), source.SetDouble(1, INFINITY), source.SetDouble(2, 1e-8);
    for (DataType to : kTypes) {
      StatusOr<Tensor> want = NodeRunner("Cast").Opset(19).Attr("to", static_cast<int64_t>(to)).Input(source).RunOne();
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      Tensor got = *Tensor::Create(to, source.shape());
      for (int64_t i = 0; i < source.size(); ++i) {
        // The kernel widens float32 to double and the 16-bit types to float, then rounds once.
        got.SetDouble(i, from == DataType::kFloat ? source.GetDouble(i)
                                                  : static_cast<double>(static_cast<float>(source.GetDouble(i))));
      }
      ExpectClose(got, *want, 0, StrCat("Cast ", DataTypeName(from), " to ", DataTypeName(to)));
    }
  }
}

// The own Attention kernel's key ranges against the reference's, windows,
// key lengths and int64 extremes included (no overflow, a negative length
// masks everything).
TEST(CudaKernelMathTest, AttentionKeyRangesMatchTheReferenceAtTheExtremes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const int64_t windows[] = {-1, 0, 2, kMax};
  const int64_t limits[] = {5, 0, -3, kMax, kMin};
  for (bool causal : {false, true}) {
    for (int64_t left : windows) {
      for (int64_t right : windows) {
        for (int64_t limit : limits) {
          for (bool external : {false, true}) {
            ops::attention::AttentionProblem p;
            const Tensor past;
            p.q_len = 3, p.total = 7, p.past_len = 4, p.causal = causal, p.left_window = left, p.right_window = right;
            p.nonpad_lens = {limit};
            if (!external) p.past_key = &past;  // a past cache: query 0 sits at past_len
            for (int64_t i = 0; i < p.q_len; ++i) {
              const ops::attention::KeyRange want = p.AllowedKeys(0, i);
              int64_t lo = 0, hi = 0;
              AllowedKeys(i, p.Offset(0), p.total, causal, left, right, true, limit, &lo, &hi);
              EXPECT_EQ(lo, want.lo) << causal << " " << left << " " << right << " " << limit << " row " << i;
              EXPECT_EQ(hi, want.hi) << causal << " " << left << " " << right << " " << limit << " row " << i;
            }
          }
        }
      }
    }
  }
}

TEST(CudaKernelMathTest, BatchNormalizationMatchesTheReference) {
  for (DataType type : kTypes) {
    const Tensor x = Random(type, {2, 3, 4, 5}, -3, 3, 89);
    const Tensor scale = Random(type, {3}, 0.5, 1.5, 97), bias = Random(type, {3}, -1, 1, 101),
                 mean = Random(type, {3}, -0.5, 0.5, 103), var = Random(type, {3}, 0.1, 2, 107);
    StatusOr<Tensor> want = NodeRunner("BatchNormalization")
                                .Opset(15)
                                .Attr("epsilon", 1e-3f)
                                .Input(x)
                                .Input(scale)
                                .Input(bias)
                                .Input(mean)
                                .Input(var)
                                .RunOne();
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    const Tensor got = Emulate(x, x.shape(), [&](int64_t i) {
      const int64_t c = (i / 20) % 3;
      return BatchNormValue(x.GetDouble(i), scale.GetDouble(c), bias.GetDouble(c), mean.GetDouble(c),
                            var.GetDouble(c), static_cast<double>(1e-3f));
    });
    ExpectClose(got, *want, 1, StrCat("BatchNormalization ", DataTypeName(type)));
  }
}

}  // namespace
}  // namespace parity::adapters::cuda
