// Tests of the sequence-model family's kernels: small cases whose results
// follow from the definitions by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/eval/node_runner.h"

namespace parity::ops::sequence {
namespace {

Tensor Floats(Shape shape, const std::vector<double>& values) {
  return Tensor::FromDoubles(DataType::kFloat, std::move(shape), values).value();
}
Tensor Strings(Shape shape, const std::vector<std::string>& values) {
  Tensor t = Tensor::Create(DataType::kString, std::move(shape)).value();
  t.mutable_strings() = values;
  return t;
}
Tensor BoolTensor(Shape shape, const std::vector<int64_t>& values) {
  Tensor t = Tensor::Create(DataType::kBool, std::move(shape)).value();
  for (size_t i = 0; i < values.size(); ++i) t.SetInt64(static_cast<int64_t>(i), values[i]);
  return t;
}
void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(Registration, TheReferenceRegistryHasTheSequenceKernels) {
  for (const char* op : {"Attention", "RotaryEmbedding", "LSTM", "DFT", "StringSplit"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("", op)) << op;
  }
  EXPECT_TRUE(ReferenceRegistry().Knows("ai.onnx.ml", "LabelEncoder"));
}

TEST(Attention, EqualScoresAverageTheValues) {
  // One head, Q = 0: every key scores 0, so Y is the mean of V's rows.
  Tensor q = Floats({1, 1, 1, 2}, {0, 0});
  Tensor k = Floats({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor v = Floats({1, 1, 3, 1}, {3, 6, 9});
  auto y = NodeRunner("Attention").Opset(23).Input(q).Input(k).Input(v).RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectNear(y->ToDoubles(), {6});
}

TEST(Attention, BoolMaskAndCausalMaskExcludeKeys) {
  Tensor q = Floats({1, 1, 2, 1}, {0, 0});
  Tensor k = Floats({1, 1, 2, 1}, {0, 0});
  Tensor v = Floats({1, 1, 2, 1}, {2, 4});
  auto causal = NodeRunner("Attention").Opset(23).Input(q).Input(k).Input(v).Attr("is_causal", int64_t{1}).RunOne();
  ASSERT_TRUE(causal.ok()) << causal.status().ToString();
  ExpectNear(causal->ToDoubles(), {2, 3});  // query 0 sees key 0 only
  // A mask shorter than the key length is padded with false.
  auto masked = NodeRunner("Attention").Opset(23).Input(q).Input(k).Input(v).Input(BoolTensor({1}, {1})).RunOne();
  ASSERT_TRUE(masked.ok()) << masked.status().ToString();
  ExpectNear(masked->ToDoubles(), {2, 2});
}

TEST(Attention, AFullyMaskedRowIsZero) {
  Tensor q = Floats({1, 1, 1, 1}, {1});
  Tensor k = Floats({1, 1, 2, 1}, {1, 1});
  Tensor v = Floats({1, 1, 2, 1}, {2, 4});
  auto out = NodeRunner("Attention")
                 .Opset(23)
                 .Input(q)
                 .Input(k)
                 .Input(v)
                 .Input(BoolTensor({1, 2}, {0, 0}))
                 .Outputs(4)
                 .Attr("qk_matmul_output_mode", int64_t{3})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {0});
  ExpectNear((*out)[3].tensor().ToDoubles(), {0, 0});
}

TEST(Attention, SoftcapPrecedesTheMaskAndMode0IsTheRawProduct) {
  Tensor q = Floats({1, 1, 1, 1}, {2});
  Tensor k = Floats({1, 1, 2, 1}, {1, 3});
  Tensor v = Floats({1, 1, 2, 1}, {0, 1});
  auto out = NodeRunner("Attention")
                 .Opset(23)
                 .Input(q)
                 .Input(k)
                 .Input(v)
                 .Input(Floats({1, 2}, {0, -INFINITY}))
                 .Outputs(4)
                 .Attr("scale", 1.0f)
                 .Attr("softcap", 1.0f)
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {0});  // the -inf key keeps zero weight
  ExpectNear((*out)[3].tensor().ToDoubles(), {2, 6});
}

TEST(Attention, GroupedQueryHeadsShareKeyValueHeads) {
  // Two query heads over one kv head, 3-D layout; past keys are prepended.
  Tensor q = Floats({1, 1, 2}, {0, 0});
  Tensor k = Floats({1, 1, 1}, {0});
  Tensor v = Floats({1, 1, 1}, {5});
  Tensor past_k = Floats({1, 1, 1, 1}, {0});
  Tensor past_v = Floats({1, 1, 1, 1}, {1});
  auto out = NodeRunner("Attention")
                 .Opset(23)
                 .Input(q)
                 .Input(k)
                 .Input(v)
                 .AbsentInput()
                 .Input(past_k)
                 .Input(past_v)
                 .Outputs(3)
                 .Attr("q_num_heads", int64_t{2})
                 .Attr("kv_num_heads", int64_t{1})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {3, 3});
  EXPECT_EQ((*out)[2].tensor().shape(), Shape({1, 1, 2, 1}));
}

TEST(RotaryEmbedding, RotatesHalvesOrInterleavedPairs) {
  // One position with angle 90 degrees: (x1, x2) -> (-x2, x1).
  Tensor x = Floats({1, 1, 1, 4}, {1, 2, 3, 4});
  Tensor cos = Floats({1, 2}, {0, 1});
  Tensor sin = Floats({1, 2}, {1, 0});
  Tensor pos = Tensor::FromInt64s({1, 1}, {0});
  auto halves = NodeRunner("RotaryEmbedding").Opset(23).Input(x).Input(cos).Input(sin).Input(pos).RunOne();
  ASSERT_TRUE(halves.ok()) << halves.status().ToString();
  ExpectNear(halves->ToDoubles(), {-3, 2, 1, 4});
  auto pairs =
      NodeRunner("RotaryEmbedding").Opset(23).Input(x).Input(cos).Input(sin).Input(pos).Attr("interleaved", int64_t{1}).RunOne();
  ASSERT_TRUE(pairs.ok());
  ExpectNear(pairs->ToDoubles(), {-2, 1, 3, 4});
}

TEST(TensorScatter, WritesLinearlyAndWrapsCircularly) {
  Tensor cache = Floats({1, 3, 1}, {0, 0, 0});
  Tensor update = Floats({1, 2, 1}, {7, 8});
  Tensor at = Tensor::FromInt64s({1}, {2});
  auto circular = NodeRunner("TensorScatter").Opset(24).Input(cache).Input(update).Input(at).Attr("mode", std::string("circular")).RunOne();
  ASSERT_TRUE(circular.ok()) << circular.status().ToString();
  ExpectNear(circular->ToDoubles(), {8, 0, 7});
  EXPECT_FALSE(NodeRunner("TensorScatter").Opset(24).Input(cache).Input(update).Input(at).Run().ok());
}

TEST(Rnn, OneStepWithIdentityWeights) {
  // h1 = tanh(x W^T + h0 R^T + Wb + Rb) with W = 1, R = 0, no bias.
  Tensor x = Floats({1, 1, 1}, {0.5});
  Tensor w = Floats({1, 1, 1}, {1});
  Tensor r = Floats({1, 1, 1}, {0});
  auto y = NodeRunner("RNN").Opset(22).Input(x).Input(w).Input(r).Attr("hidden_size", int64_t{1}).RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectNear(y->ToDoubles(), {std::tanh(0.5)});
}

TEST(Gru, SequenceLensStopEachBatchAndZeroTheRest) {
  Tensor x = Floats({2, 1, 1}, {1, 1});
  Tensor w = Floats({1, 3, 1}, {0, 0, 1});  // z = r = sigmoid(0) = 0.5
  Tensor r = Floats({1, 3, 1}, {0, 0, 0});
  auto out = NodeRunner("GRU")
                 .Opset(22)
                 .Input(x)
                 .Input(w)
                 .Input(r)
                 .AbsentInput()
                 .Input(Tensor::FromInt64s({1}, {1}))
                 .Outputs(2)
                 .Attr("hidden_size", int64_t{1})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double h1 = 0.5 * std::tanh(1.0);
  ExpectNear((*out)[0].tensor().ToDoubles(), {h1, 0});
  ExpectNear((*out)[1].tensor().ToDoubles(), {h1});
}

TEST(Lstm, InputForgetCouplingAndCellOutput) {
  Tensor x = Floats({1, 1, 1}, {0});
  Tensor w = Floats({1, 4, 1}, {0, 0, 0, 0});
  Tensor r = Floats({1, 4, 1}, {0, 0, 0, 0});
  Tensor h0 = Floats({1, 1, 1}, {0});
  Tensor c0 = Floats({1, 1, 1}, {2});
  auto out = NodeRunner("LSTM")
                 .Opset(22)
                 .Input(x)
                 .Input(w)
                 .Input(r)
                 .AbsentInput()
                 .AbsentInput()
                 .Input(h0)
                 .Input(c0)
                 .Outputs(3)
                 .Attr("hidden_size", int64_t{1})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // i = f = o = 0.5, candidate = tanh(0) = 0: c = 0.5 * 2 = 1, h = 0.5 tanh(1).
  ExpectNear((*out)[2].tensor().ToDoubles(), {1});
  ExpectNear((*out)[1].tensor().ToDoubles(), {0.5 * std::tanh(1.0)});
}

TEST(Dft, ForwardOnesidedAndInverse) {
  Tensor x = Floats({1, 4, 1}, {1, 0, 0, 0});  // an impulse: flat spectrum
  auto f = NodeRunner("DFT").Opset(20).Input(x).Attr("onesided", int64_t{1}).RunOne();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->shape(), Shape({1, 3, 2}));
  ExpectNear(f->ToDoubles(), {1, 0, 1, 0, 1, 0});
  Tensor spectrum = Floats({1, 3, 2}, {1, 0, 1, 0, 1, 0});
  auto inv = NodeRunner("DFT").Opset(20).Input(spectrum).Attr("onesided", int64_t{1}).Attr("inverse", int64_t{1}).RunOne();
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->shape(), Shape({1, 4, 1}));
  ExpectNear(inv->ToDoubles(), {1, 0, 0, 0});
  EXPECT_FALSE(NodeRunner("DFT").Opset(17).Input(x).Attr("axis", int64_t{2}).Run().ok());
}

TEST(Windows, PeriodicAndSymmetricHann) {
  Tensor size = Tensor::FromInt64s({}, {4});
  auto periodic = NodeRunner("HannWindow").Opset(17).Input(size).RunOne();
  ASSERT_TRUE(periodic.ok()) << periodic.status().ToString();
  ExpectNear(periodic->ToDoubles(), {0, 0.5, 1, 0.5});
  auto symmetric = NodeRunner("HannWindow").Opset(17).Input(size).Attr("periodic", int64_t{0}).RunOne();
  ASSERT_TRUE(symmetric.ok());
  ExpectNear(symmetric->ToDoubles(), {0, 0.75, 0.75, 0});
}

TEST(Strings, SplitLikePythonAndConcatBroadcasts) {
  auto split = NodeRunner("StringSplit").Opset(20).Input(Strings({2}, {" a  b ", "c"})).Outputs(2).Run();
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ((*split)[0].tensor().strings(), std::vector<std::string>({"a", "b", "c", ""}));
  EXPECT_EQ((*split)[1].tensor().ToInt64s(), std::vector<int64_t>({2, 1}));
  auto by_comma = NodeRunner("StringSplit")
                      .Opset(20)
                      .Input(Strings({1}, {"a,,b,c"}))
                      .Outputs(2)
                      .Attr("delimiter", std::string(","))
                      .Attr("maxsplit", int64_t{2})
                      .Run();
  ASSERT_TRUE(by_comma.ok());
  EXPECT_EQ((*by_comma)[0].tensor().strings(), std::vector<std::string>({"a", "", "b,c"}));
  auto cat = NodeRunner("StringConcat").Opset(20).Input(Strings({2}, {"a", "b"})).Input(Strings({}, {"!"})).RunOne();
  ASSERT_TRUE(cat.ok());
  EXPECT_EQ(cat->strings(), std::vector<std::string>({"a!", "b!"}));
}

TEST(Strings, RegexFullMatchNeedsTheWholeString) {
  auto out = NodeRunner("RegexFullMatch")
                 .Opset(20)
                 .Input(Strings({2}, {"abc", "abcd"}))
                 .Attr("pattern", std::string("a.c"))
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->ToInt64s(), std::vector<int64_t>({1, 0}));
  EXPECT_FALSE(NodeRunner("RegexFullMatch").Opset(20).Input(Strings({1}, {"a"})).Attr("pattern", std::string("(")).Run().ok());
}

TEST(Ml, LabelEncoderUsesTheDefaultForUnknownKeys) {
  auto out = NodeRunner("LabelEncoder", "ai.onnx.ml")
                 .Opset(2)
                 .Input(Tensor::FromInt64s({3}, {1, 2, 9}))
                 .Attr("keys_int64s", std::vector<int64_t>{1, 2})
                 .Attr("values_floats", std::vector<float>{0.5f, 1.5f})
                 .Attr("default_float", 7.0f)
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear(out->ToDoubles(), {0.5, 1.5, 7});
}

}  // namespace
}  // namespace parity::ops::sequence
