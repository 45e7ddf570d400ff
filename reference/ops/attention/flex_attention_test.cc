// Tests of FlexAttention (ai.onnx.preview 1): small attentions worked out by
// hand, grouped-query heads, the score_mod/prob_mod hooks and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/ops/test_builders.h"

namespace parity::ops::attention {
namespace {

using testing_util::Doubles;
using testing_util::ExpectNear;
using testing_util::Make;
using testing_util::RunError;
using testing_util::RunOk;

NodeRunner Node() {
  NodeRunner runner("FlexAttention", "ai.onnx.preview");
  runner.Opset(1).Import("", 26);
  return runner;
}

// A hook graph (x) -> y of `type` computing y = op(x, c) with c a scalar
// initializer, or y = op(x) when `op` takes one input (Identity).
onnx::GraphProto Hook(const std::string& op, DataType type, double c = 0.0, bool binary = true) {
  onnx::GraphProto g;
  g.set_name("hook");
  auto declare = [type](onnx::ValueInfoProto* info, const char* name) {
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(type));
  };
  declare(g.add_input(), "x");
  declare(g.add_output(), "y");
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->add_input("x");
  if (binary) {
    n->add_input("c");
    onnx::TensorProto* t = g.add_initializer();
    t->set_name("c");
    t->set_data_type(static_cast<int32_t>(type));
    if (type == DataType::kDouble) {
      t->add_double_data(c);
    } else {
      t->add_float_data(static_cast<float>(c));
    }
  }
  n->add_output("y");
  return g;
}

// The causal mask as a hook: Where(mask, x, -inf) with a [1, 1, L, S] lower-
// triangular bool mask.
onnx::GraphProto CausalHook(int64_t len) {
  onnx::GraphProto g = Hook("Where", DataType::kFloat, -std::numeric_limits<double>::infinity());
  onnx::NodeProto* n = g.mutable_node(0);
  n->clear_input();
  n->add_input("mask");
  n->add_input("x");
  n->add_input("c");
  onnx::TensorProto* mask = g.add_initializer();
  mask->set_name("mask");
  mask->set_data_type(static_cast<int32_t>(DataType::kBool));
  for (int64_t d : {int64_t{1}, int64_t{1}, len, len}) mask->add_dims(d);
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j) mask->add_int32_data(j <= i ? 1 : 0);
  return g;
}

const double kE = std::exp(1.0);

TEST(FlexAttention, TwoKeysWithExplicitScale) {
  // scores = [1*1, 0] * 1; p = [e, 1] / (e + 1); Y = (2e + 4) / (e + 1).
  Tensor y = RunOk(Node()
                       .Attr("scale", 1.0f)
                       .Input(Make(DataType::kFloat, {1, 1, 1, 2}, {1, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 2}, {1, 0, 0, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {2, 4})));
  EXPECT_EQ(y.shape(), Shape({1, 1, 1, 1}));
  ExpectNear(Doubles(y), {(2 * kE + 4) / (kE + 1)});
}

TEST(FlexAttention, DefaultScaleIsOneOverSqrtOfTheHeadSize) {
  // head_size 4, scale 1/2: q.k0 = 2 gives score 1, q.k1 = 0 gives 0.
  Tensor y = RunOk(Node()
                       .Input(Make(DataType::kFloat, {1, 1, 1, 4}, {2, 0, 0, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 4}, {1, 0, 0, 0, 0, 0, 0, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {2, 4})));
  ExpectNear(Doubles(y), {(2 * kE + 4) / (kE + 1)});
}

TEST(FlexAttention, GroupedQueryHeadsShareKeyValueHeadsInOrder) {
  // 4 query heads over 2 key/value heads with one key each: softmax is 1, so
  // head h returns V of head floor(h / 2); Ev = 2 differs from E = 1.
  Tensor y = RunOk(Node()
                       .Input(Make(DataType::kFloat, {1, 4, 1, 1}, {1, 2, 3, 4}))
                       .Input(Make(DataType::kFloat, {1, 2, 1, 1}, {1, 1}))
                       .Input(Make(DataType::kFloat, {1, 2, 1, 2}, {10, 11, 20, 21})));
  EXPECT_EQ(y.shape(), Shape({1, 4, 1, 2}));
  ExpectNear(Doubles(y), {10, 11, 10, 11, 20, 21, 20, 21});
}

TEST(FlexAttention, ScoreModRunsOnTheScaledScores) {
  // score_mod multiplies by 0: every key weighs the same, Y = mean of V = 3.
  // Without it the answer would be (2e + 4) / (e + 1).
  Tensor y = RunOk(Node()
                       .Attr("scale", 1.0f)
                       .Attr("score_mod", Hook("Mul", DataType::kFloat, 0.0))
                       .Input(Make(DataType::kFloat, {1, 1, 1, 2}, {1, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 2}, {1, 0, 0, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {2, 4})));
  ExpectNear(Doubles(y), {3});
}

TEST(FlexAttention, CausalScoreModMasksLaterKeys) {
  // All scores 0: row 0 sees key 0 alone, row 1 averages keys 0 and 1.
  Tensor y = RunOk(Node()
                       .Attr("score_mod", CausalHook(2))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {0, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {0, 0}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {2, 4})));
  ExpectNear(Doubles(y), {2, 3});
}

TEST(FlexAttention, ProbModRunsOnTheProbabilities) {
  // Equal scores give p = [1/2, 1/2]; prob_mod halves them: Y = (2 + 4) / 4.
  Tensor y = RunOk(Node()
                       .Attr("prob_mod", Hook("Mul", DataType::kFloat, 0.5))
                       .Input(Make(DataType::kFloat, {1, 1, 1, 1}, {1}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {1, 1}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {2, 4})));
  ExpectNear(Doubles(y), {1.5});
}

TEST(FlexAttention, FullyMaskedRowIsNaN) {
  // score_mod writes -inf everywhere: the softmax of the row is 0/0.
  Tensor y = RunOk(Node()
                       .Attr("score_mod", Hook("Mul", DataType::kFloat, -std::numeric_limits<double>::infinity()))
                       .Input(Make(DataType::kFloat, {1, 1, 1, 1}, {1}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {1, 1}))
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {2, 4})));
  ASSERT_EQ(y.size(), 1);
  EXPECT_TRUE(std::isnan(Doubles(y)[0]));
}

TEST(FlexAttention, NoKeysGiveZeros) {
  // S = 0: every row of P is empty, so each output element is an empty sum.
  Tensor y = RunOk(Node()
                       .Input(Make(DataType::kFloat, {1, 1, 2, 1}, {1, 2}))
                       .Input(Make(DataType::kFloat, {1, 1, 0, 1}, {}))
                       .Input(Make(DataType::kFloat, {1, 1, 0, 3}, {})));
  EXPECT_EQ(y.shape(), Shape({1, 1, 2, 3}));
  ExpectNear(Doubles(y), {0, 0, 0, 0, 0, 0}, 0.0);
}

TEST(FlexAttention, DoubleInputsAreExactToDouble) {
  Tensor y = RunOk(Node()
                       .Attr("scale", 1.0f)
                       .Input(Make(DataType::kDouble, {1, 1, 1, 2}, {1, 0}))
                       .Input(Make(DataType::kDouble, {1, 1, 2, 2}, {1, 0, 0, 0}))
                       .Input(Make(DataType::kDouble, {1, 1, 2, 1}, {2, 4})));
  EXPECT_EQ(y.dtype(), DataType::kDouble);
  ExpectNear(Doubles(y), {(2 * kE + 4) / (kE + 1)}, 1e-15);
}

TEST(FlexAttention, HooksSeeTheSoftmaxPrecisionType) {
  // float16 inputs: the hook takes float by default, double when asked.
  auto node = [](NodeRunner runner) {
    return runner.Input(Make(DataType::kFloat16, {1, 1, 1, 1}, {1}))
        .Input(Make(DataType::kFloat16, {1, 1, 1, 1}, {1}))
        .Input(Make(DataType::kFloat16, {1, 1, 1, 1}, {5}));
  };
  Tensor y = RunOk(node(Node().Attr("score_mod", Hook("Identity", DataType::kFloat, 0, false))));
  EXPECT_EQ(y.dtype(), DataType::kFloat16);
  ExpectNear(Doubles(y), {5});
  y = RunOk(node(Node().Attr("softmax_precision", int64_t{11}).Attr("prob_mod", Hook("Identity", DataType::kDouble, 0, false))));
  ExpectNear(Doubles(y), {5});
  EXPECT_NE(RunError(node(Node().Attr("score_mod", Hook("Identity", DataType::kDouble, 0, false)))).find("declared float64"),
            std::string::npos);
}

TEST(FlexAttention, RejectsBadInput) {
  const Tensor q = Make(DataType::kFloat, {1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor k = Make(DataType::kFloat, {1, 2, 1, 2}, {1, 2, 3, 4});
  const Tensor v = Make(DataType::kFloat, {1, 2, 1, 1}, {1, 2});
  EXPECT_NE(RunError(Node().Input(q).Input(k).Input(v)).find("not a multiple"), std::string::npos);
  EXPECT_NE(RunError(Node().Input(Make(DataType::kFloat, {1, 1, 2}, {1, 2})).Input(k).Input(v)).find("rank 4"),
            std::string::npos);
  const Tensor q2 = Make(DataType::kFloat, {1, 2, 1, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_NE(RunError(Node().Input(q2).Input(k).Input(v)).find("shapes disagree"), std::string::npos);
  const Tensor q1 = Make(DataType::kFloat, {1, 2, 1, 2}, {1, 2, 3, 4});
  EXPECT_NE(RunError(Node().Attr("softmax_precision", int64_t{7}).Input(q1).Input(k).Input(v)).find("softmax_precision"),
            std::string::npos);
  // A hook whose output changes the shape (ReduceSum keeps dims, S 2 -> 1).
  const Tensor k2 = Make(DataType::kFloat, {1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor v2 = Make(DataType::kFloat, {1, 2, 2, 1}, {1, 2, 3, 4});
  EXPECT_NE(RunError(Node().Attr("score_mod", Hook("ReduceSum", DataType::kFloat, 0, false)).Input(q1).Input(k2).Input(v2))
                .find("score_mod must return float"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::ops::attention
