// Tests of Identity, Constant, ConstantOfShape, EyeLike and Range.
#include <limits>

#include "reference/eval/evaluator.h"
#include "reference/ops/tensor/tensor_test_util.h"
#include "reference/ops/reference_registry.h"

namespace parity::ops::tensor {
namespace {

using namespace testing;  // NOLINT

TEST(IdentityTest, PassesTensorsSequencesAndOptionals) {
  Tensor t = RunOk(NodeRunner("Identity").Input(Floats({2}, {1.5, -2})));
  ExpectDoubles(t, {2}, {1.5, -2});

  Value seq = Value::FromSequence({Value::FromTensor(Ints({1}, {7}))}, DataType::kInt64);
  auto out = NodeRunner("Identity").Opset(16).Input(seq).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)[0].is_sequence());
  EXPECT_EQ((*out)[0].sequence()[0].tensor().GetInt64(0), 7);

  out = NodeRunner("Identity").Opset(16).Input(Value::SomeOptional(Value::FromTensor(Ints({}, {3})))).Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)[0].is_optional() && (*out)[0].has_element());
}

TEST(ConstantTest, ValueFormsHaveTheirTypesAndShapes) {
  const std::vector<float> floats = {1.0f, 2.5f};
  ExpectDoubles(RunOk(NodeRunner("Constant").Attr("value_floats", floats)), {2}, {1.0, 2.5});
  Tensor i = RunOk(NodeRunner("Constant").Attr("value_int", int64_t{-4}));
  EXPECT_EQ(i.dtype(), DataType::kInt64);
  ExpectInts(i, {}, {-4});
  Tensor f = RunOk(NodeRunner("Constant").Attr("value_float", 0.5f));
  EXPECT_EQ(f.dtype(), DataType::kFloat);
  EXPECT_EQ(f.rank(), 0);
  Tensor s = RunOk(NodeRunner("Constant").Attr("value_string", std::string("hi")));
  ASSERT_EQ(s.dtype(), DataType::kString);
  EXPECT_EQ(s.strings()[0], "hi");
  ExpectInts(RunOk(NodeRunner("Constant").Attr("value", Ints({2, 1}, {5, 6}))), {2, 1}, {5, 6});
}

TEST(ConstantTest, RefusesTwoValueAttributesOrNone) {
  ExpectError(NodeRunner("Constant").Attr("value_int", int64_t{1}).Attr("value_float", 1.0f), "both set");
  ExpectError(NodeRunner("Constant"), "no value attribute");
}

TEST(ConstantTest, DensifiesSparseValue) {
  onnx::ModelProto model = NodeRunner("Constant").Model();
  auto* attr = model.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("sparse_value");
  attr->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  auto* sparse = attr->mutable_sparse_tensor();
  sparse->add_dims(2);
  sparse->add_dims(3);
  TensorToProto(Floats({2}, {7, 8}), sparse->mutable_values());
  TensorToProto(Int64s({1, 5}), sparse->mutable_indices());  // linear indices
  LoadedModel loaded;
  loaded.proto = std::make_shared<onnx::ModelProto>(model);
  auto evaluator = Evaluator::Create(std::move(loaded), WithReferenceKernels());
  ASSERT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  auto out = (*evaluator)->Run({});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectDoubles((*out)[0].tensor(), {2, 3}, {0, 7, 0, 0, 0, 8});
}

TEST(ConstantOfShapeTest, DefaultsToFloatZeroAndTakesValueType) {
  Tensor z = RunOk(NodeRunner("ConstantOfShape").Input(Int64s({2, 3})));
  EXPECT_EQ(z.dtype(), DataType::kFloat);
  ExpectDoubles(z, {2, 3}, std::vector<double>(6, 0.0));
  Tensor v = RunOk(NodeRunner("ConstantOfShape").Input(Int64s({2})).Attr("value", Ints({1}, {9})));
  EXPECT_EQ(v.dtype(), DataType::kInt64);
  ExpectInts(v, {2}, {9, 9});
  Tensor scalar = RunOk(NodeRunner("ConstantOfShape").Input(Int64s({})));
  EXPECT_EQ(scalar.rank(), 0);
  ExpectError(NodeRunner("ConstantOfShape").Input(Int64s({-1})), "negative");
}

TEST(EyeLikeTest, PlacesOnesOnShiftedDiagonal) {
  Tensor e = RunOk(NodeRunner("EyeLike").Input(Floats({3, 4}, std::vector<double>(12, 5))).Attr("k", int64_t{1}));
  ExpectDoubles(e, {3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  Tensor neg = RunOk(NodeRunner("EyeLike").Input(Ints({3, 2}, {0, 0, 0, 0, 0, 0})).Attr("k", int64_t{-1}));
  ExpectInts(neg, {3, 2}, {0, 0, 1, 0, 0, 1});
  Tensor typed = RunOk(NodeRunner("EyeLike").Input(Ints({2, 2}, {0, 0, 0, 0})).Attr("dtype", int64_t{11}));
  EXPECT_EQ(typed.dtype(), DataType::kDouble);
  // A k far outside the matrix (any int64) leaves it zero.
  Tensor far = RunOk(NodeRunner("EyeLike").Input(Ints({2, 2}, {0, 0, 0, 0}))
                         .Attr("k", std::numeric_limits<int64_t>::min()));
  ExpectInts(far, {2, 2}, {0, 0, 0, 0});
}

TEST(RangeTest, IntegerAndFloatRanges) {
  ExpectInts(RunOk(NodeRunner("Range").Input(Ints({}, {10})).Input(Ints({}, {4})).Input(Ints({}, {-3}))), {2},
             {10, 7});
  Tensor f = RunOk(NodeRunner("Range").Input(Floats({}, {1})).Input(Floats({}, {2})).Input(Floats({}, {0.25})));
  ExpectDoubles(f, {4}, {1, 1.25, 1.5, 1.75});
  Tensor empty = RunOk(NodeRunner("Range").Input(Floats({}, {3})).Input(Floats({}, {1})).Input(Floats({}, {1})));
  EXPECT_EQ(empty.shape(), Shape{0});
  ExpectError(NodeRunner("Range").Input(Ints({}, {0})).Input(Ints({}, {4})).Input(Ints({}, {0})), "zero");
}

TEST(RangeTest, IntegerSpanBeyondInt64DoesNotOverflow) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  Tensor r = RunOk(NodeRunner("Range").Input(Ints({}, {lo})).Input(Ints({}, {hi})).Input(Ints({}, {hi})));
  ExpectInts(r, {3}, {lo, -1, hi - 1});
}

}  // namespace
}  // namespace parity::ops::tensor
