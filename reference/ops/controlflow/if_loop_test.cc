// Tests of If and Loop.
#include <gtest/gtest.h>

#include "reference/ops/node_runner.h"
#include "reference/ops/controlflow/test_support.h"
#include "reference/ops/reference_registry.h"

namespace parity::ops::controlflow {
namespace {

using testing::Bool;
using testing::Doubles;
using testing::Floats;
using testing::Int64Tensor;
using testing::MakeGraph;
using testing::TestRegistry;

NodeRunner IfLoopRunner(const std::string& op, int64_t opset) {
  NodeRunner r(op);
  r.Opset(opset).Registry(&TestRegistry());
  return r;
}

TEST(If, RunsTheBranchTheConditionSelectsWithOuterScopeValues) {
  // Both branches read graph inputs of the enclosing graph.
  onnx::GraphProto then_branch = MakeGraph({}, {{"t"}}, {{"Identity", {"input_1"}, {"t"}}});
  onnx::GraphProto else_branch = MakeGraph({}, {{"e"}}, {{"Identity", {"input_2"}, {"e"}}});
  for (bool cond : {true, false}) {
    auto out = IfLoopRunner("If", 11)
                   .Input(Bool(cond))
                   .ScopeInput(Value::FromTensor(Floats({2}, {1, 2})))
                   .ScopeInput(Value::FromTensor(Floats({3}, {7, 8, 9})))
                   .Attr("then_branch", then_branch)
                   .Attr("else_branch", else_branch)
                   .RunOne();
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->ToDoubles(), cond ? std::vector<double>({1, 2}) : std::vector<double>({7, 8, 9}));
  }
}

TEST(If, RejectsAConditionWithSeveralElements) {
  onnx::GraphProto branch = MakeGraph({}, {{"t"}}, {{"Identity", {"input_1"}, {"t"}}});
  auto out = IfLoopRunner("If", 11)
                 .Input(Floats({2}, {1, 1}))
                 .ScopeInput(Value::FromTensor(Floats({1}, {0})))
                 .Attr("then_branch", branch)
                 .Attr("else_branch", branch)
                 .Run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("must be a tensor with one element"), std::string::npos) << out.status().message();
}

// body(i, cond, x) -> (cond, x + x, x + x as a scan output)
onnx::GraphProto DoublingBody() {
  return MakeGraph({{"i", DataType::kInt64}, {"c", DataType::kBool}, {"x"}},
                   {{"c_out", DataType::kBool}, {"x_out"}, {"scan", DataType::kFloat, {2}, true}},
                   {{"Identity", {"c"}, {"c_out"}}, {"Add", {"x", "x"}, {"x_out"}}, {"Identity", {"x_out"}, {"scan"}}});
}

TEST(Loop, CarriesValuesAndStacksScanOutputsAlongANewAxis) {
  auto out = IfLoopRunner("Loop", 11)
                 .Input(Int64Tensor({}, {3}))
                 .Input(Bool(true))
                 .Input(Floats({2}, {1, -1}))
                 .Outputs(2)
                 .Attr("body", DoublingBody())
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({8, -8}));
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({3, 2}));
  EXPECT_EQ(Doubles((*out)[1]), std::vector<double>({2, -2, 4, -4, 8, -8}));
}

TEST(Loop, ZeroIterationsGiveTheInitialValuesAndAnEmptyScanOutput) {
  auto out = IfLoopRunner("Loop", 11)
                 .Input(Int64Tensor({}, {0}))
                 .Input(Bool(true))
                 .Input(Floats({2}, {1, -1}))
                 .Outputs(2)
                 .Attr("body", DoublingBody())
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({1, -1}));
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({0, 2}));
  EXPECT_EQ((*out)[1].tensor().dtype(), DataType::kFloat);
}

// body(i, cond, x, limit) -> (i < limit, x + x, limit): a while loop that
// runs until the iteration number reaches `limit`.
onnx::GraphProto CountingBody() {
  return MakeGraph({{"i", DataType::kInt64}, {"c", DataType::kBool}, {"x"}, {"lim"}},
                   {{"c_out", DataType::kBool}, {"x_out"}, {"lim_out"}},
                   {{"Less", {"i", "lim"}, {"c_out"}}, {"Add", {"x", "x"}, {"x_out"}}, {"Identity", {"lim"}, {"lim_out"}}});
}

TEST(Loop, ACondInputStopsTheLoopWhenTheBodySaysSo) {
  // Iterations 0..3 run; the 4th (i = 3) returns false.
  auto out = IfLoopRunner("Loop", 13)
                 .AbsentInput()
                 .Input(Bool(true))
                 .Input(Floats({}, {1}))
                 .Input(Floats({}, {3}))
                 .Outputs(2)
                 .Attr("body", CountingBody())
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({16}));
}

TEST(Loop, TheTripCountBoundsAWhileLoop) {
  auto out = IfLoopRunner("Loop", 13)
                 .Input(Int64Tensor({}, {2}))
                 .Input(Bool(true))
                 .Input(Floats({}, {1}))
                 .Input(Floats({}, {10}))
                 .Outputs(2)
                 .Attr("body", CountingBody())
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({4}));
}

TEST(Loop, AFalseInitialCondRunsNoIteration) {
  auto out = IfLoopRunner("Loop", 13)
                 .Input(Int64Tensor({}, {5}))
                 .Input(Bool(false))
                 .Input(Floats({}, {1}))
                 .Input(Floats({}, {10}))
                 .Outputs(2)
                 .Attr("body", CountingBody())
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({1}));
}

TEST(Loop, WithoutACondInputTheBodyCondIsIgnored) {
  onnx::GraphProto body =
      MakeGraph({{"i", DataType::kInt64}, {"c", DataType::kBool}, {"x"}}, {{"c_out", DataType::kBool}, {"x_out"}},
                {{"Less", {"x", "x"}, {"c_out"}}, {"Add", {"x", "x"}, {"x_out"}}});  // c_out is always false
  auto out = IfLoopRunner("Loop", 16)
                 .Input(Int64Tensor({}, {3}))
                 .AbsentInput()
                 .Input(Floats({}, {1}))
                 .Attr("body", body)
                 .RunOne();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->ToDoubles(), std::vector<double>({8}));
}

TEST(Loop, CarriesSequences) {
  onnx::GraphProto body = MakeGraph(
      {{"i", DataType::kInt64}, {"c", DataType::kBool}, {"s", DataType::kInt64, {}, false, true}},
      {{"c_out", DataType::kBool}, {"s_out", DataType::kInt64, {}, false, true}},
      {{"Identity", {"c"}, {"c_out"}}, {"SequenceInsert", {"s", "i"}, {"s_out"}}});
  Value empty = Value::FromSequence({}, DataType::kInt64);
  auto out = IfLoopRunner("Loop", 13).Input(Int64Tensor({}, {2})).AbsentInput().Input(empty).Attr("body", body).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)[0].is_sequence());
  ASSERT_EQ((*out)[0].sequence().size(), 2u);
  EXPECT_EQ((*out)[0].sequence()[1].tensor().GetInt64(0), 1);
}

TEST(Loop, WrapsACarriedValueInAnOptionalWhenTheBodyDeclaresOne) {
  // The body declares its carried input optional(seq) but outputs a plain
  // seq; from the second iteration on the value is wrapped again.
  onnx::GraphProto body = MakeGraph(
      {{"i", DataType::kInt64}, {"c", DataType::kBool}, {"o", DataType::kInt64, {}, false, true}},
      {{"c_out", DataType::kBool}, {"s_out", DataType::kInt64, {}, false, true}},
      {{"Identity", {"c"}, {"c_out"}}, {"OptionalGetElement", {"o"}, {"s"}}, {"SequenceInsert", {"s", "i"}, {"s_out"}}});
  onnx::TypeProto* declared = body.mutable_input(2)->mutable_type();
  onnx::TypeProto element = *declared;
  declared->Clear();
  *declared->mutable_optional_type()->mutable_elem_type() = element;
  Value initial = Value::SomeOptional(Value::FromSequence({}, DataType::kInt64));
  auto out = IfLoopRunner("Loop", 16).Input(Int64Tensor({}, {3})).AbsentInput().Input(initial).Attr("body", body).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)[0].is_sequence());
  EXPECT_EQ((*out)[0].sequence().size(), 3u);
}

TEST(Loop, NeitherTripCountNorCondIsAnError) {
  auto out = IfLoopRunner("Loop", 11)
                 .AbsentInput()
                 .AbsentInput()
                 .Input(Floats({}, {1}))
                 .Input(Floats({}, {3}))
                 .Attr("body", CountingBody())
                 .Run();
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace parity::ops::controlflow

namespace parity::ops::controlflow {
namespace {

// Every control-flow operator is in the reference's registry.
TEST(Registration, TheReferenceRegistryHasTheControlFlowKernels) {
  for (const char* op : {"If", "Loop", "Scan", "SequenceMap", "SplitToSequence", "OptionalGetElement"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("", op)) << op;
  }
}

}  // namespace
}  // namespace parity::ops::controlflow
