// Tests of the sequence and optional operators.
#include <gtest/gtest.h>

#include "reference/ops/node_runner.h"
#include "reference/ops/controlflow/test_support.h"

namespace parity::ops::controlflow {
namespace {

using testing::Bool;
using testing::Doubles;
using testing::Floats;
using testing::Int64Tensor;
using testing::MakeGraph;
using testing::TestRegistry;

NodeRunner Runner(const std::string& op, int64_t opset = 18) {
  NodeRunner r(op);
  r.Opset(opset).Registry(&TestRegistry());
  return r;
}

Value Seq(std::vector<Tensor> tensors) {
  std::vector<Value> values;
  for (auto& t : tensors) values.push_back(Value::FromTensor(t));
  return Value::FromSequence(std::move(values), DataType::kFloat);
}

std::vector<double> FirstOf(const Value& seq, size_t i) { return Doubles(seq.sequence()[i]); }

TEST(SequenceConstruct, KeepsTheOrderAndRejectsMixedTypes) {
  auto out = Runner("SequenceConstruct").Input(Floats({1}, {1})).Input(Floats({2}, {2, 3})).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].sequence().size(), 2u);
  EXPECT_EQ(FirstOf((*out)[0], 1), std::vector<double>({2, 3}));
  EXPECT_FALSE(Runner("SequenceConstruct").Input(Floats({1}, {1})).Input(Int64Tensor({1}, {2})).Run().ok());
}

TEST(SequenceEmpty, CarriesItsDtype) {
  auto out = Runner("SequenceEmpty").Attr("dtype", int64_t{7}).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)[0].sequence().empty());
  EXPECT_EQ((*out)[0].sequence_element_type(), DataType::kInt64);
}

TEST(SequenceInsert, InsertsAtTheEndOrAtANegativePosition) {
  Value seq = Seq({Floats({}, {1}), Floats({}, {2})});
  auto back = Runner("SequenceInsert").Input(seq).Input(Floats({}, {9})).Run();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FirstOf((*back)[0], 2), std::vector<double>({9}));
  auto front = Runner("SequenceInsert").Input(seq).Input(Floats({}, {9})).Input(Int64Tensor({}, {-2})).Run();
  ASSERT_TRUE(front.ok()) << front.status().ToString();
  EXPECT_EQ(FirstOf((*front)[0], 0), std::vector<double>({9}));
  EXPECT_FALSE(Runner("SequenceInsert").Input(seq).Input(Floats({}, {9})).Input(Int64Tensor({}, {3})).Run().ok());
  EXPECT_FALSE(Runner("SequenceInsert").Input(seq).Input(Int64Tensor({}, {9})).Run().ok());
}

TEST(SequenceErase, ErasesTheLastByDefault) {
  Value seq = Seq({Floats({}, {1}), Floats({}, {2}), Floats({}, {3})});
  auto out = Runner("SequenceErase").Input(seq).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].sequence().size(), 2u);
  EXPECT_EQ(FirstOf((*out)[0], 1), std::vector<double>({2}));
  auto first = Runner("SequenceErase").Input(seq).Input(Int64Tensor({}, {-3})).Run();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(FirstOf((*first)[0], 0), std::vector<double>({2}));
  EXPECT_FALSE(Runner("SequenceErase").Input(seq).Input(Int64Tensor({}, {3})).Run().ok());
}

TEST(SequenceAtAndLength, IndexFromBothEnds) {
  Value seq = Seq({Floats({}, {1}), Floats({}, {2}), Floats({}, {3})});
  auto at = Runner("SequenceAt").Input(seq).Input(Int64Tensor({}, {-1})).RunOne();
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at->ToDoubles(), std::vector<double>({3}));
  EXPECT_FALSE(Runner("SequenceAt").Input(seq).Input(Int64Tensor({}, {-4})).Run().ok());
  auto len = Runner("SequenceLength").Input(seq).RunOne();
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(len->dtype(), DataType::kInt64);
  EXPECT_EQ(len->rank(), 0);
  EXPECT_EQ(len->GetInt64(0), 3);
}

TEST(SplitToSequence, ScalarSplitLeavesAShorterLastPiece) {
  auto out = Runner("SplitToSequence", 11).Input(Floats({5}, {1, 2, 3, 4, 5})).Input(Int64Tensor({}, {2})).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].sequence().size(), 3u);
  EXPECT_EQ(FirstOf((*out)[0], 2), std::vector<double>({5}));
}

TEST(SplitToSequence, ListSplitAndKeepdims) {
  Tensor x = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  auto listed = Runner("SplitToSequence", 11).Input(x).Input(Int64Tensor({2}, {1, 2})).Attr("axis", int64_t{1}).Run();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ((*listed)[0].sequence()[1].tensor().shape(), Shape({2, 2}));
  EXPECT_EQ(FirstOf((*listed)[0], 1), std::vector<double>({2, 3, 5, 6}));
  auto dropped = Runner("SplitToSequence", 11).Input(x).Attr("axis", int64_t{1}).Attr("keepdims", int64_t{0}).Run();
  ASSERT_TRUE(dropped.ok());
  ASSERT_EQ((*dropped)[0].sequence().size(), 3u);
  EXPECT_EQ((*dropped)[0].sequence()[0].tensor().shape(), Shape({2}));
  EXPECT_FALSE(Runner("SplitToSequence", 11).Input(x).Input(Int64Tensor({2}, {1, 1})).Attr("axis", int64_t{1}).Run().ok());
}

TEST(ConcatFromSequence, ConcatenatesOrStacks) {
  Value seq = Seq({Floats({2}, {1, 2}), Floats({2}, {3, 4})});
  auto cat = Runner("ConcatFromSequence").Input(seq).Attr("axis", int64_t{0}).RunOne();
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  EXPECT_EQ(cat->shape(), Shape({4}));
  auto stacked = Runner("ConcatFromSequence").Input(seq).Attr("axis", int64_t{-1}).Attr("new_axis", int64_t{1}).RunOne();
  ASSERT_TRUE(stacked.ok()) << stacked.status().ToString();
  EXPECT_EQ(stacked->shape(), Shape({2, 2}));
  EXPECT_EQ(stacked->ToDoubles(), std::vector<double>({1, 3, 2, 4}));
  EXPECT_FALSE(Runner("ConcatFromSequence").Input(seq).Run().ok());  // axis is required
}

TEST(SequenceMap, MapsSequencesAndPassesTensorsWhole) {
  onnx::GraphProto body =
      MakeGraph({{"a"}, {"b"}}, {{"c", DataType::kFloat, {}, false}}, {{"Add", {"a", "b"}, {"c"}}});
  Value seq = Seq({Floats({2}, {1, 2}), Floats({1}, {3})});
  auto out = Runner("SequenceMap", 17).Input(seq).Input(Floats({}, {10})).Attr("body", body).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].sequence().size(), 2u);
  EXPECT_EQ(FirstOf((*out)[0], 0), std::vector<double>({11, 12}));
  EXPECT_EQ(FirstOf((*out)[0], 1), std::vector<double>({13}));
  Value shorter = Seq({Floats({1}, {1})});
  EXPECT_FALSE(Runner("SequenceMap", 17).Input(seq).Input(shorter).Attr("body", body).Run().ok());
}

TEST(Optional, WrapsAndUnwraps) {
  auto wrapped = Runner("Optional", 15).Input(Floats({1}, {4})).Run();
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  ASSERT_TRUE((*wrapped)[0].is_optional());
  auto has = Runner("OptionalHasElement", 15).Input((*wrapped)[0]).RunOne();
  ASSERT_TRUE(has.ok()) << has.status().ToString();
  EXPECT_EQ(has->GetInt64(0), 1);
  auto got = Runner("OptionalGetElement", 15).Input((*wrapped)[0]).RunOne();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->ToDoubles(), std::vector<double>({4}));
}

TEST(Optional, EmptyOptionalsAndVersion18Inputs) {
  auto none_has = Runner("OptionalHasElement", 18).Input(Value::NoneOptional()).RunOne();
  ASSERT_TRUE(none_has.ok());
  EXPECT_EQ(none_has->GetInt64(0), 0);
  auto absent = Runner("OptionalHasElement", 18).AbsentInput().RunOne();
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ(absent->GetInt64(0), 0);
  auto tensor_has = Runner("OptionalHasElement", 18).Input(Floats({1}, {1})).RunOne();
  ASSERT_TRUE(tensor_has.ok());
  EXPECT_EQ(tensor_has->GetInt64(0), 1);
  EXPECT_FALSE(Runner("OptionalHasElement", 15).Input(Floats({1}, {1})).Run().ok());
  EXPECT_FALSE(Runner("OptionalGetElement", 18).Input(Value::NoneOptional()).Run().ok());
  auto passthrough = Runner("OptionalGetElement", 18).Input(Floats({1}, {5})).RunOne();
  ASSERT_TRUE(passthrough.ok());
  EXPECT_EQ(passthrough->ToDoubles(), std::vector<double>({5}));
  EXPECT_TRUE(Runner("OptionalHasElement", 18).Input(Bool(false)).Run().ok());
}

}  // namespace
}  // namespace parity::ops::controlflow
