// Tests of SimplifiedLayerNormalization, SkipLayerNormalization and
// SkipSimplifiedLayerNormalization (org.onnxparity.contrib, version 1).
#include <cmath>

#include <gtest/gtest.h>

#include "reference/ops/test_builders.h"
#include "reference/ops/contrib/contrib.h"

namespace parity::ops::contrib {
namespace {

using testing_util::Floats;
using testing_util::Make;

// Expects `t` to have `dtype`, `shape` and values within `tol` of `expected` (NaN matches NaN).
void ExpectTensor(const Tensor& t, DataType dtype, const Shape& shape, const std::vector<double>& expected,
                  double tol = 1e-6) {
  EXPECT_EQ(t.dtype(), dtype) << t.Description();
  EXPECT_EQ(t.shape(), shape) << t.Description();
  ASSERT_EQ(t.size(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(t.GetDouble(i))) << "element " << i << " is " << t.GetDouble(i);
    } else {
      EXPECT_NEAR(t.GetDouble(i), expected[i], tol) << "element " << i;
    }
  }
}

std::vector<Value> RunOk(const NodeRunner& runner) {
  StatusOr<std::vector<Value>> out = runner.Run();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<Value>{};
}

TEST(SimplifiedLayerNormTest, RootMeanSquareAndInverseOutput) {
  std::vector<Value> out = RunOk(NodeRunner("SimplifiedLayerNormalization", kDomain)
                                     .Outputs(2)
                                     .Input(Floats({1, 2}, {3, 4}))
                                     .Input(Floats({2}, {1, 2}))
                                     .Attr("epsilon", 0.0f));
  ASSERT_EQ(out.size(), 2u);
  const double rms = std::sqrt(12.5);
  ExpectTensor(out[0].tensor(), DataType::kFloat, {1, 2}, {3 / rms, 8 / rms});
  ExpectTensor(out[1].tensor(), DataType::kFloat, {1, 1}, {1 / rms});
}

TEST(SimplifiedLayerNormTest, AxisZeroAndFloat64Statistics) {
  // axis 0: one statistic over all four values; stash_type 11 types it float64.
  std::vector<Value> out = RunOk(NodeRunner("SimplifiedLayerNormalization", kDomain)
                                     .Outputs(2)
                                     .Input(Floats({2, 2}, {1, 1, 1, 1}))
                                     .Input(Floats({2, 2}, {1, 2, 3, 4}))
                                     .Attr("axis", int64_t{0})
                                     .Attr("stash_type", int64_t{11})
                                     .Attr("epsilon", 3.0f));
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0].tensor(), DataType::kFloat, {2, 2}, {0.5, 1, 1.5, 2});
  ExpectTensor(out[1].tensor(), DataType::kDouble, {1, 1}, {0.5});
}

TEST(SimplifiedLayerNormTest, OutputTakesTheTypeOfScale) {
  // float16 X with a float32 scale: Y is float32, as ONNX Runtime types it (V).
  Tensor y = *NodeRunner("SimplifiedLayerNormalization", kDomain)
                  .Input(Make(DataType::kFloat16, {1, 2}, {3, 4}))
                  .Input(Floats({2}, {1, 1}))
                  .Attr("epsilon", 0.0f)
                  .RunOne();
  const double rms = std::sqrt(12.5);
  ExpectTensor(y, DataType::kFloat, {1, 2}, {3 / rms, 4 / rms});
}

TEST(SimplifiedLayerNormTest, RejectsBadAttributesAndShapes) {
  auto base = [] {
    return NodeRunner("SimplifiedLayerNormalization", kDomain).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6}));
  };
  EXPECT_FALSE(base().Input(Floats({2}, {1, 1})).Run().ok()) << "scale [2] does not broadcast to [2, 3]";
  EXPECT_FALSE(base().Input(Floats({3}, {1, 1, 1})).Attr("axis", int64_t{2}).Run().ok());
  EXPECT_FALSE(base().Input(Floats({3}, {1, 1, 1})).Attr("stash_type", int64_t{7}).Run().ok());
}

// input [1, 2, 2] + skip [2, 2] + bias [0, 2]: rows [2, 6] and [1, 5], mean
// 4 and 3, variance 4 (inverse standard deviation 0.5), normalised [-1, 1].
TEST(SkipLayerNormTest, SumNormaliseAndEveryOutput) {
  std::vector<Value> out = RunOk(NodeRunner("SkipLayerNormalization", kDomain)
                                     .Outputs(4)
                                     .Input(Floats({1, 2, 2}, {1, 3, 0, 4}))
                                     .Input(Floats({2, 2}, {1, 1, 1, -1}))
                                     .Input(Floats({2}, {1, 2}))
                                     .Input(Floats({2}, {0, 1}))
                                     .Input(Floats({2}, {0, 2}))
                                     .Attr("epsilon", 0.0f));
  ASSERT_EQ(out.size(), 4u);
  ExpectTensor(out[0].tensor(), DataType::kFloat, {1, 2, 2}, {-1, 3, -1, 3});
  ExpectTensor(out[1].tensor(), DataType::kFloat, {1, 2, 1}, {4, 3});
  ExpectTensor(out[2].tensor(), DataType::kFloat, {1, 2, 1}, {0.5, 0.5});
  ExpectTensor(out[3].tensor(), DataType::kFloat, {1, 2, 2}, {2, 6, 1, 5});
}

TEST(SkipLayerNormTest, SkipBroadcastShapesAgree) {
  // skip [S, H], [1, S, H] and [B, S, H] holding the same rows give one result.
  const std::vector<double> x = {0.5, -1, 2, 0.25, 3, -2, 1, 1, -0.5, 0, 4, 2};  // [2, 2, 3]
  const std::vector<double> row = {1, 0, -1, 2, 0.5, -0.5};                      // [2, 3]
  std::vector<double> tiled = row;
  tiled.insert(tiled.end(), row.begin(), row.end());
  std::vector<Tensor> results;
  for (const Tensor& skip : {Floats({2, 3}, row), Floats({1, 2, 3}, row), Floats({2, 2, 3}, tiled)}) {
    StatusOr<Tensor> y = NodeRunner("SkipLayerNormalization", kDomain)
                             .Input(Floats({2, 2, 3}, x))
                             .Input(skip)
                             .Input(Floats({3}, {1, 2, 3}))
                             .RunOne();
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    results.push_back(*y);
  }
  for (int64_t i = 0; i < results[0].size(); ++i) {
    EXPECT_EQ(results[0].GetDouble(i), results[1].GetDouble(i)) << i;
    EXPECT_EQ(results[0].GetDouble(i), results[2].GetDouble(i)) << i;
  }
}

TEST(SkipLayerNormTest, DefaultEpsilonKeepsAConstantRowFinite) {
  // A row of equal values has variance 0: 0 * 1/sqrt(1e-12) = 0 with the
  // default epsilon, 0 * inf = NaN with epsilon 0.
  auto run = [](bool zero_epsilon) {
    NodeRunner r("SkipLayerNormalization", kDomain);
    r.Input(Floats({1, 2}, {1, 1})).Input(Floats({1, 2}, {1, 1})).Input(Floats({2}, {1, 1}));
    if (zero_epsilon) r.Attr("epsilon", 0.0f);
    return r.RunOne();
  };
  StatusOr<Tensor> finite = run(false);
  StatusOr<Tensor> nan = run(true);
  ASSERT_TRUE(finite.ok() && nan.ok());
  ExpectTensor(*finite, DataType::kFloat, {1, 2}, {0, 0});
  ExpectTensor(*nan, DataType::kFloat, {1, 2}, {NAN, NAN});
}

TEST(SkipLayerNormTest, Float16StatisticsAreFloat32AndSumIsNotRoundedFirst) {
  // 2048 + 1 is not a float16 (spacing 2 there): the sum output rounds it to
  // 2048 (ties to even), but the normalisation uses the exact 2049.
  std::vector<Value> out = RunOk(NodeRunner("SkipLayerNormalization", kDomain)
                                     .Outputs(4)
                                     .Input(Make(DataType::kFloat16, {1, 2}, {2048, 0}))
                                     .Input(Make(DataType::kFloat16, {1, 2}, {1, 1}))
                                     .Input(Make(DataType::kFloat16, {2}, {1, 1}))
                                     .Attr("epsilon", 0.0f));
  ASSERT_EQ(out.size(), 4u);
  ExpectTensor(out[0].tensor(), DataType::kFloat16, {1, 2}, {1, -1});
  ExpectTensor(out[1].tensor(), DataType::kFloat, {1, 1}, {1025});
  ExpectTensor(out[2].tensor(), DataType::kFloat, {1, 1}, {1.0 / 1024}, 1e-9);
  ExpectTensor(out[3].tensor(), DataType::kFloat16, {1, 2}, {2048, 1});
}

TEST(SkipLayerNormTest, RejectsBadInputs) {
  auto base = [] { return NodeRunner("SkipLayerNormalization", kDomain).Input(Floats({2, 3}, {1, 2, 3, 4, 5, 6})); };
  EXPECT_FALSE(base().Input(Floats({3, 3}, std::vector<double>(9, 1))).Input(Floats({3}, {1, 1, 1})).Run().ok())
      << "skip [3, 3] does not broadcast to [2, 3]";
  EXPECT_FALSE(base().Input(Floats({3}, {1, 1, 1})).Input(Floats({1, 3}, {1, 1, 1})).Run().ok())
      << "gamma must be 1-D";
  EXPECT_FALSE(base().Input(Floats({3}, {1, 1, 1})).Input(Floats({3}, {1, 1, 1})).Input(Floats({2}, {0, 0})).Run().ok())
      << "beta [2] is not [H]";
  EXPECT_FALSE(base().Input(Make(DataType::kFloat16, {3}, {1, 1, 1})).Input(Floats({3}, {1, 1, 1})).Run().ok())
      << "skip of another type";
  EXPECT_FALSE(NodeRunner("SkipLayerNormalization", kDomain)
                   .Input(Make(DataType::kDouble, {1, 2}, {1, 2}))
                   .Input(Make(DataType::kDouble, {1, 2}, {1, 2}))
                   .Input(Make(DataType::kDouble, {2}, {1, 2}))
                   .Run()
                   .ok())
      << "float64 is not a type of T";
  EXPECT_FALSE(base().Input(Floats({3}, {1, 1, 1})).Run().ok()) << "gamma is required";
}

// Bias is input 3 of the simplified operator (there is no beta): sum
// [1, 2] + [1, 1] + [1, 1] = [3, 4], mean square 12.5.
TEST(SkipSimplifiedLayerNormTest, BiasIsTheFourthInputAndMeanIsZero) {
  std::vector<Value> out = RunOk(NodeRunner("SkipSimplifiedLayerNormalization", kDomain)
                                     .Outputs(4)
                                     .Input(Floats({1, 2}, {1, 2}))
                                     .Input(Floats({1, 2}, {1, 1}))
                                     .Input(Floats({2}, {1, 2}))
                                     .Input(Floats({2}, {1, 1}))
                                     .Attr("epsilon", 0.0f));
  ASSERT_EQ(out.size(), 4u);
  const double rms = std::sqrt(12.5);
  ExpectTensor(out[0].tensor(), DataType::kFloat, {1, 2}, {3 / rms, 8 / rms});
  ExpectTensor(out[1].tensor(), DataType::kFloat, {1, 1}, {0});
  ExpectTensor(out[2].tensor(), DataType::kFloat, {1, 1}, {1 / rms});
  ExpectTensor(out[3].tensor(), DataType::kFloat, {1, 2}, {3, 4});
}

TEST(SkipSimplifiedLayerNormTest, RejectsAFifthInput) {
  // A fifth input would be SkipLayerNormalization's bias; here it is no input at all.
  StatusOr<std::vector<Value>> out = NodeRunner("SkipSimplifiedLayerNormalization", kDomain)
                                         .Input(Floats({1, 2}, {1, 2}))
                                         .Input(Floats({1, 2}, {1, 1}))
                                         .Input(Floats({2}, {1, 2}))
                                         .Input(Floats({2}, {1, 1}))
                                         .Input(Floats({2}, {1, 1}))
                                         .Run();
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace parity::ops::contrib
