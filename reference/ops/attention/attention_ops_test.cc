// Tests of the attention family's kernels (Attention, RotaryEmbedding and TensorScatter): small cases whose results
// follow from the definitions by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::attention {
namespace {

using testing_util::Floats;
using testing_util::ExpectNear;

TEST(Registration, TheReferenceRegistryHasTheAttentionKernels) {
  for (const char* op : {"Attention", "RotaryEmbedding", "TensorScatter", "SwiGLU"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("", op)) << op;
  }
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
  auto masked = NodeRunner("Attention").Opset(23).Input(q).Input(k).Input(v).Input(testing_util::MakeBools({1}, {1})).RunOne();
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
                 .Input(testing_util::MakeBools({1, 2}, {0, 0}))
                 .Outputs(4)
                 .Attr("qk_matmul_output_mode", int64_t{3})
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0].tensor().ToDoubles(), {0});
  ExpectNear((*out)[3].tensor().ToDoubles(), {0, 0});
}

TEST(Attention, ANaNInTheMaskOfAnOtherwiseMaskedRowIsNoFullMask) {
  // The body's ReduceMax of the bias is NaN, not -inf: the softmax carries
  // the NaN rather than giving the zeros of a fully masked row.
  Tensor q = Floats({1, 1, 1, 1}, {1});
  Tensor k = Floats({1, 1, 2, 1}, {1, 1});
  Tensor v = Floats({1, 1, 2, 1}, {2, 4});
  const double inf = std::numeric_limits<double>::infinity();
  auto y = NodeRunner("Attention")
               .Opset(23)
               .Input(q)
               .Input(k)
               .Input(v)
               .Input(Floats({1, 2}, {std::numeric_limits<double>::quiet_NaN(), -inf}))
               .RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(std::isnan(y->ToDoubles()[0]));
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

}  // namespace
}  // namespace parity::ops::attention
