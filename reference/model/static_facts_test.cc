// Tests of the static facts: types and dims carried through the per-operator
// rules, the FLOPs of a node at those dims, and unknowns that stay unknown.
#include "reference/model/static_facts.h"

#include <gtest/gtest.h>

#include "reference/model/text_syntax.h"

namespace parity {
namespace {

using Dims = std::vector<int64_t>;

onnx::GraphProto Graph(std::string_view text) {
  StatusOr<onnx::GraphProto> graph = ParseGraphText(text);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(graph).value() : onnx::GraphProto();
}

// The dims of `name`, or {-2} when the facts have no rank for it (so that a
// mismatch prints something readable).
Dims DimsOf(const StaticFacts& facts, std::string_view name) {
  const ValueFacts* f = facts.Find(name);
  return f && f->dims ? *f->dims : Dims{-2};
}

// NodeFlops of the graph's node `index`, -1 when unknown.
double Flops(const onnx::GraphProto& graph, const StaticFacts& facts, int index) {
  return NodeFlops(graph.node(index), facts).value_or(-1);
}

TEST(StaticFactsMatMul, BatchedTimesMatrixBroadcastsTheBatch) {
  const onnx::GraphProto g = Graph("g (float[2, 3, 4] a, float[4, 5] b) => (y) { y = MatMul (a, b) }");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(facts.TypeOf("y"), DataType::kFloat);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{2, 3, 5}));
  // A multiply-add per (batch, row, column, k): 2 x 2·3·5 x 4.
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (2 * 3 * 5) * 4);
}

TEST(StaticFactsMatMul, BothBatchedBroadcastEachOther) {
  const onnx::GraphProto g = Graph("g (float16[3, 1, 2, 8] a, float16[4, 8, 6] b) => (y) { y = MatMul (a, b) }");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(facts.TypeOf("y"), DataType::kFloat16);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{3, 4, 2, 6}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (3 * 4 * 2 * 6) * 8);
}

TEST(StaticFactsGemm, TransposedOperandsGiveTheProductShape) {
  const onnx::GraphProto g =
      Graph("g (float[7, 3] a, float[5, 7] b, float[5] c) => (y) { y = Gemm <transA = 1, transB = 1> (a, b, c) }");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{3, 5}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (3 * 5) * 7);
}

TEST(StaticFactsConv, PadsAndStridesGiveTheOutputAndFlops) {
  const onnx::GraphProto g = Graph(R"(g (float[1, 3, 8, 8] x, float[4, 3, 3, 3] w) => (y) {
      y = Conv <pads = [1, 1, 1, 1], strides = [2, 2]> (x, w) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(facts.TypeOf("y"), DataType::kFloat);
  // (8 + 2 - 3) / 2 + 1 = 4 per spatial dim.
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{1, 4, 4, 4}));
  // Each output element: C x kH x kW multiply-adds.
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (1 * 4 * 4 * 4) * (3 * 3 * 3));
}

TEST(StaticFactsConv, GroupsCountOnlyTheirOwnChannels) {
  const onnx::GraphProto g = Graph(R"(g (float[2, 4, 5, 5] x, float[4, 2, 3, 3] w) => (y) {
      y = Conv <group = 2, auto_pad = "SAME_UPPER"> (x, w) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{2, 4, 5, 5}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (2 * 4 * 5 * 5) * (2 * 3 * 3));
}

TEST(StaticFactsAttention, FourDimensionalInputsTakeVsHeadSize) {
  const onnx::GraphProto g = Graph(R"(g (float[1, 2, 5, 8] q, float[1, 2, 7, 8] k, float[1, 2, 7, 6] v) => (y) {
      y = Attention (q, k, v) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(facts.TypeOf("y"), DataType::kFloat);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{1, 2, 5, 6}));
  // Q K^T: 2 x |Q| x keys; P V: 2 x |Y| x keys.
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * 7 * (1 * 2 * 5 * 8 + 1 * 2 * 5 * 6));
}

TEST(StaticFactsAttention, ThreeDimensionalInputsUseTheHeadCounts) {
  const onnx::GraphProto g = Graph(R"(g (float[2, 5, 32] q, float[2, 9, 16] k, float[2, 9, 8] v) => (y) {
      y = Attention <q_num_heads = 4, kv_num_heads = 2> (q, k, v) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  // V's head size is 8 / 2 = 4; Y has 4 query heads of it.
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{2, 5, 16}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * 9 * (2 * 5 * 32 + 2 * 5 * 16));
}

TEST(StaticFactsAttention, PastKeysCountAmongTheKeys) {
  const onnx::GraphProto g = Graph(R"(g (float[1, 2, 1, 8] q, float[1, 2, 1, 8] k, float[1, 2, 1, 8] v,
                                       float[1, 2, 6, 8] pk, float[1, 2, 6, 8] pv) => (y) {
      y = Attention (q, k, v, , pk, pv) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{1, 2, 1, 8}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (6 + 1) * (16 + 16));
}

TEST(StaticFactsBroadcast, RanksAlignOnTheRight) {
  const onnx::GraphProto g = Graph("g (float[3, 1, 5] a, float[4, 1] b) => (y, z) { y = Add (a, b) z = Less (a, b) }");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{3, 4, 5}));
  EXPECT_EQ(facts.TypeOf("y"), DataType::kFloat);
  EXPECT_EQ(facts.TypeOf("z"), DataType::kBool);
  EXPECT_EQ(Flops(g, facts, 0), 3.0 * 4 * 5);
}

TEST(StaticFactsBroadcast, AnUnknownDimAgainstOneStaysUnknown) {
  const onnx::GraphProto g = Graph("g (float[N, 1] a, float[1, 5] b) => (y) { y = Mul (a, b) }");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{kUnknownDim, 5}));
  EXPECT_FALSE(NodeFlops(g.node(0), facts).has_value());
  // Against a known dim other than 1 it is that dim.
  const onnx::GraphProto h = Graph("g (float[N, 1] a, float[3, 5] b) => (y) { y = Mul (a, b) }");
  EXPECT_EQ(DimsOf(StaticFacts::Infer(h), "y"), (Dims{3, 5}));
}

TEST(StaticFactsReshape, ConstantShapeWithZeroAndMinusOne) {
  const onnx::GraphProto g = Graph(R"(g (float[2, 3, 4] x) => (y, z) <int64[2] shape = {0, -1}> {
      y = Reshape (x, shape)
      s = Constant <value_ints = [-1, 2, 3]> ()
      z = Reshape (x, s) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{2, 12}));
  EXPECT_EQ(DimsOf(facts, "z"), (Dims{4, 2, 3}));
  EXPECT_EQ(facts.TypeOf("z"), DataType::kFloat);
  // Data movement: no arithmetic.
  EXPECT_EQ(Flops(g, facts, 0), 0.0);
}

TEST(StaticFactsConstants, SmallFloatContentsAreKept) {
  // A Resize's scales, as an initializer and as Constants; a graph input has none.
  const onnx::GraphProto g = Graph(R"(g (float[2] in) => (a, b) <float[4] scales = {1.0, 1.0, 2.0, 0.5}> {
      a = Constant <value_floats = [1.5, 3.0]> ()
      b = Constant <value_float = 0.25> () })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(facts.Find("scales")->floats, (std::vector<double>{1.0, 1.0, 2.0, 0.5}));
  EXPECT_EQ(facts.Find("a")->floats, (std::vector<double>{1.5, 3.0}));
  EXPECT_EQ(facts.Find("b")->floats, (std::vector<double>{0.25}));
  EXPECT_FALSE(facts.Find("in")->floats.has_value());
  EXPECT_FALSE(facts.Find("scales")->ints.has_value());
}

TEST(StaticFactsReshape, ShapeFromARunTimeValueIsUnknown) {
  const onnx::GraphProto g = Graph("g (float[2, 3, 4] x, int64[2] shape) => (y) { y = Reshape (x, shape) r = Relu (y) }");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{-2}));
  EXPECT_FALSE(NodeFlops(g.node(1), facts).has_value());
}

TEST(StaticFactsReshape, ShapeComputedFromShapeGatherAndConcatIsFollowed) {
  // The shape arithmetic of an exported or expanded graph: [x.shape[0], -1].
  const onnx::GraphProto g = Graph(R"(g (float[2, 3, 4] x) => (y, z, c, r, n) <int64 zero = {0}, int64[1] minus = {-1},
                                                                      int64[1] axes = {0}, int64 one = {1}> {
      s = Shape (x)
      b = Gather (s, zero)
      bu = Unsqueeze (b, axes)
      shape = Concat <axis = 0> (bu, minus)
      y = Reshape (x, shape)
      tail = Shape <start = 1> (x)
      prod = Mul (tail, one)
      z = Reshape (x, tail)
      c = ConstantOfShape (tail)
      last = Gather (s, minus)
      r = Range (zero, last, one)
      n = Size (x) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "s"), (Dims{3}));
  EXPECT_EQ(facts.Find("shape")->ints, (Dims{2, -1}));
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{2, 12}));
  EXPECT_EQ(facts.Find("tail")->ints, (Dims{3, 4}));
  EXPECT_EQ(facts.Find("prod")->ints, (Dims{3, 4}));
  EXPECT_EQ(DimsOf(facts, "z"), (Dims{3, 4}));
  EXPECT_EQ(DimsOf(facts, "c"), (Dims{3, 4}));
  EXPECT_EQ(facts.TypeOf("c"), DataType::kFloat);
  EXPECT_EQ(DimsOf(facts, "r"), (Dims{4}));
  EXPECT_EQ(facts.Find("r")->ints, (Dims{0, 1, 2, 3}));
  EXPECT_EQ(facts.Find("n")->ints, (Dims{24}));
  // Shape arithmetic is no floating-point work; Range counts one per element.
  EXPECT_EQ(Flops(g, facts, 0), 0.0);
  EXPECT_EQ(Flops(g, facts, 10), 4.0);
}

TEST(StaticFactsReshape, ShapeArithmeticOnUnknownDimsStaysUnknown) {
  const onnx::GraphProto g = Graph(R"(g (float[N, 4] x) => (y) <int64 zero = {0}, int64[1] two = {2}> {
      s = Shape (x)
      h = Div (s, two)
      y = Reshape (x, h) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "s"), (Dims{2}));  // the rank is known, the contents not
  EXPECT_FALSE(facts.Find("s")->ints.has_value());
  EXPECT_FALSE(facts.Find("h")->ints.has_value());
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{-2}));
}

TEST(StaticFactsReduce, ReductionsCountTheirInputAndKeepOrDropTheAxes) {
  const onnx::GraphProto g = Graph(R"(g (float[2, 3, 4] x) => (a, m) <int64[1] axes = {1}> {
      a = ArgMax <axis = -1, keepdims = 0> (x)
      m = ReduceMean (x, axes) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(facts.TypeOf("a"), DataType::kInt64);
  EXPECT_EQ(DimsOf(facts, "a"), (Dims{2, 3}));
  EXPECT_EQ(DimsOf(facts, "m"), (Dims{2, 1, 4}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * 3 * 4);
  EXPECT_EQ(Flops(g, facts, 1), 2.0 * 3 * 4);
}

TEST(StaticFactsUnknown, AnOperatorWithoutARuleGivesNothingDownstream) {
  const onnx::GraphProto g = Graph(R"(g (float[4, 4] x) => (y) {
      t = NoSuchOp (x)
      y = Relu (t) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_FALSE(facts.TypeOf("t").has_value());
  EXPECT_EQ(DimsOf(facts, "t"), (Dims{-2}));
  EXPECT_FALSE(NodeFlops(g.node(0), facts).has_value());
  EXPECT_FALSE(NodeFlops(g.node(1), facts).has_value());
}

TEST(StaticFactsUnknown, NoRuleNoCount) {
  // Declared dims do not make a count: each of these does work no rule sees.
  const onnx::GraphProto g = Graph(R"(g (bool c, float[2, 3] a, float[3, 4] b) => (float[2, 4] y, float[2, 4] z,
                                                                              float[2, 3] w) {
      y = Einsum <equation = "ij,jk->ik"> (a, b)
      z = If (c) <then_branch = t () => (float[2, 4] o) { o = MatMul (a, b) },
                  else_branch = e () => (float[2, 4] o) { o = MatMul (a, b) }>
      w = com.vendor.FastRelu (a) })");
  ASSERT_EQ(g.node_size(), 3);
  EXPECT_EQ(g.node(2).domain(), "com.vendor");
  const StaticFacts facts = StaticFacts::Infer(g);
  for (int i = 0; i < g.node_size(); ++i) {
    EXPECT_FALSE(NodeFlops(g.node(i), facts).has_value()) << g.node(i).op_type();
  }
}

TEST(StaticFactsUnknown, KnownDimsFillSymbolicDeclarations) {
  const onnx::GraphProto g = Graph("g (float[N, K] a, float[K, 3] b) => (y) { y = MatMul (a, b) }");
  EXPECT_FALSE(NodeFlops(g.node(0), StaticFacts::Infer(g)).has_value());
  const StaticFacts facts = StaticFacts::Infer(g, {{"a", {5, 2}}, {"b", {2, 3}}});
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{5, 3}));
  EXPECT_EQ(Flops(g, facts, 0), 2.0 * (5 * 3) * 2);
}

TEST(StaticFactsUnknown, DeclaredDimsWinOverRules) {
  const onnx::GraphProto g = Graph("g (float[2, 3] a) => (float[2, 3] y) { y = Relu (a) }");
  EXPECT_EQ(DimsOf(StaticFacts::Infer(g), "y"), (Dims{2, 3}));
}

TEST(StaticFactsDataMovement, SplitGivesEveryOutput) {
  const onnx::GraphProto g = Graph(R"(g (float[2, 10] x) => (a, b, c, d, e) <int64[2] sizes = {4, 6}> {
      a, b = Split <axis = 1> (x, sizes)
      c, d, e = Split <axis = -1, num_outputs = 3> (x) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "a"), (Dims{2, 4}));
  EXPECT_EQ(DimsOf(facts, "b"), (Dims{2, 6}));
  EXPECT_EQ(facts.TypeOf("b"), DataType::kFloat);
  // ceil(10 / 3) = 4 per part, the last one smaller.
  EXPECT_EQ(DimsOf(facts, "c"), (Dims{2, 4}));
  EXPECT_EQ(DimsOf(facts, "e"), (Dims{2, 2}));
}

TEST(StaticFactsDataMovement, GatherSliceSqueezeUnsqueezeExpandFlatten) {
  const onnx::GraphProto g = Graph(R"(g (float[5, 6, 7] x, int64[2, 3] idx) => (a, b, c, d, e, f, h)
      <int64[2] starts = {1, -3}, int64[2] ends = {100, 0}, int64[2] axes = {0, 2}, int64[2] steps = {2, -1},
       int64[1] zero = {0}, int64[1] one = {1}, int64[2] unsq = {0, -1}, int64[3] shape = {4, 1, 1}, int64[2, 2] nd> {
      a = Gather <axis = 1> (x, idx)
      b = Slice (x, starts, ends, axes, steps)
      c = Squeeze (b1, zero)
      b1 = Slice (x, zero, one)
      d = Unsqueeze (x, unsq)
      e = Expand (c, shape)
      f = Flatten <axis = 2> (x)
      h = GatherND (x, nd) })");
  const StaticFacts facts = StaticFacts::Infer(g);
  EXPECT_EQ(DimsOf(facts, "a"), (Dims{5, 2, 3, 7}));
  // Axis 0: 1, 3 (the end clamps to 5); axis 2 backwards from 4 to 1 (end 0 exclusive): 4, 3, 2, 1.
  EXPECT_EQ(DimsOf(facts, "b"), (Dims{2, 6, 4}));
  EXPECT_EQ(DimsOf(facts, "b1"), (Dims{1, 6, 7}));
  EXPECT_EQ(DimsOf(facts, "c"), (Dims{6, 7}));
  EXPECT_EQ(DimsOf(facts, "d"), (Dims{1, 5, 6, 7, 1}));
  EXPECT_EQ(DimsOf(facts, "e"), (Dims{4, 6, 7}));
  EXPECT_EQ(DimsOf(facts, "f"), (Dims{30, 7}));
  EXPECT_EQ(DimsOf(facts, "h"), (Dims{2, 7}));
  for (int i = 0; i < g.node_size(); ++i) EXPECT_EQ(Flops(g, facts, i), 0.0) << g.node(i).op_type();
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

TEST(StaticFactsInitializers, AnInitializerThatIsAlsoAnInputIsNoFact) {
  // `axes` may be fed another value at the run: its contents are not known.
  const onnx::GraphProto g = Graph(R"(
    g (float[2, 3] x, int64[1] axes) => (y)
    <int64[1] axes = {1}, int64[1] fixed = {0}> {
      y = ReduceSum (x, axes)
    })");
  const StaticFacts facts = StaticFacts::Infer(g);
  ASSERT_NE(facts.Find("axes"), nullptr);
  EXPECT_FALSE(facts.Find("axes")->ints.has_value());
  EXPECT_EQ(DimsOf(facts, "axes"), (Dims{1}));  // from the input's declaration
  ASSERT_NE(facts.Find("fixed"), nullptr);
  EXPECT_EQ(facts.Find("fixed")->ints, (std::optional<Dims>(Dims{0})));
  EXPECT_EQ(DimsOf(facts, "y"), (Dims{-2}));  // which axes reduce is not known
}

}  // namespace
}  // namespace parity
