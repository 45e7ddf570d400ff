// Tests of ai.onnx.ml TreeEnsemble-5: small trees walked by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/ops/node_runner.h"

namespace parity::ops::ml {
namespace {

Tensor Values(DataType type, const std::vector<double>& values) {
  return Tensor::FromDoubles(type, {static_cast<int64_t>(values.size())}, values).value();
}
void ExpectVeryNear(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-9) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// The attributes of a TreeEnsemble, one entry per interior node or leaf.
struct Forest {
  std::vector<double> modes, splits;
  std::vector<int64_t> features, true_ids, true_leafs, false_ids, false_leafs;
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
  std::vector<int64_t> roots;

  int64_t AddNode(int64_t mode, int64_t feature, double split, int64_t true_id, bool true_leaf, int64_t false_id,
                  bool false_leaf) {
    modes.push_back(static_cast<double>(mode));
    features.push_back(feature);
    splits.push_back(split);
    true_ids.push_back(true_id);
    true_leafs.push_back(true_leaf ? 1 : 0);
    false_ids.push_back(false_id);
    false_leafs.push_back(false_leaf ? 1 : 0);
    return static_cast<int64_t>(modes.size()) - 1;
  }
  int64_t AddLeaf(int64_t target, double weight) {
    leaf_targets.push_back(target);
    leaf_weights.push_back(weight);
    return static_cast<int64_t>(leaf_targets.size()) - 1;
  }
  // A one-leaf tree: a root whose two branches reach the same new leaf.
  void AddConstantTree(int64_t target, double weight) {
    const int64_t leaf = AddLeaf(target, weight);
    roots.push_back(AddNode(0, 0, 0.0, leaf, true, leaf, true));
  }

  NodeRunner Runner(const Tensor& x) const {
    NodeRunner runner("TreeEnsemble", "ai.onnx.ml");
    runner.Opset(5)
        .Input(x)
        .Attr("nodes_modes", Values(DataType::kUint8, modes))
        .Attr("nodes_splits", Values(DataType::kDouble, splits))
        .Attr("nodes_featureids", features)
        .Attr("nodes_truenodeids", true_ids)
        .Attr("nodes_trueleafs", true_leafs)
        .Attr("nodes_falsenodeids", false_ids)
        .Attr("nodes_falseleafs", false_leafs)
        .Attr("leaf_targetids", leaf_targets)
        .Attr("leaf_weights", Values(DataType::kDouble, leaf_weights))
        .Attr("tree_roots", roots);
    return runner;
  }
};

Tensor Rows(Shape shape, const std::vector<double>& values, DataType type = DataType::kFloat) {
  return Tensor::FromDoubles(type, std::move(shape), values).value();
}

TEST(TreeEnsemble, RowsFollowTheirBranchesToLeaves) {
  // x0 <= 3.14 ? (x0 <= 1.2 ? leaf 0 : leaf 2) : (x0 <= 4.2 ? leaf 1 : leaf 3)
  Forest f;
  f.AddLeaf(0, 5.23), f.AddLeaf(1, 12.12), f.AddLeaf(0, -12.23), f.AddLeaf(1, 7.21);
  f.roots = {f.AddNode(0, 0, 3.14, 1, false, 2, false)};
  f.AddNode(0, 0, 1.2, 0, true, 2, true);
  f.AddNode(0, 0, 4.2, 1, true, 3, true);
  auto y = f.Runner(Rows({4, 2}, {1.2, 3.4, 2.0, 0, 4.14, 1.77, 9, 0}, DataType::kDouble))
               .Attr("n_targets", int64_t{2})
               .RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->dtype(), DataType::kDouble);
  ExpectVeryNear(y->ToDoubles(), {5.23, 0, -12.23, 0, 0, 12.12, 0, 7.21});
}

TEST(TreeEnsemble, MembershipSetsEndAtNaNAndMayHoldZero) {
  Forest f;
  const int64_t in = f.AddLeaf(0, 1), out = f.AddLeaf(1, 1);
  f.roots = {f.AddNode(6, 0, 0.0, in, true, out, true)};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto y = f.Runner(Rows({3, 1}, {0, 2, 3}))
               .Attr("membership_values", Values(DataType::kFloat, {0, 2, nan}))
               .RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectVeryNear(y->ToDoubles(), {1, 0, 1, 0, 0, 1});
  // A set without its closing NaN is malformed.
  EXPECT_FALSE(f.Runner(Rows({1, 1}, {0})).Attr("membership_values", Values(DataType::kFloat, {0, 2})).Run().ok());
}

TEST(TreeEnsemble, MissingValuesFollowTheirFlag) {
  Forest f;
  const int64_t yes = f.AddLeaf(0, 1), no = f.AddLeaf(1, 1);
  f.roots = {f.AddNode(1, 0, 1.0, yes, true, no, true)};  // x < 1
  const Tensor x = Rows({2, 1}, {std::numeric_limits<double>::quiet_NaN(), 0});
  auto by_default = f.Runner(x).RunOne();
  ASSERT_TRUE(by_default.ok()) << by_default.status().ToString();
  ExpectVeryNear(by_default->ToDoubles(), {0, 1, 1, 0});  // NaN < 1 is false
  auto tracked = f.Runner(x).Attr("nodes_missing_value_tracks_true", std::vector<int64_t>{1}).RunOne();
  ASSERT_TRUE(tracked.ok()) << tracked.status().ToString();
  ExpectVeryNear(tracked->ToDoubles(), {1, 0, 1, 0});
}

TEST(TreeEnsemble, AggregateFunctionsCombineTrees) {
  Forest f;
  f.AddConstantTree(0, 2);
  f.AddConstantTree(0, 6);
  const Tensor x = Rows({1, 1}, {0});
  const double big = std::numeric_limits<float>::max();
  const std::vector<std::pair<int64_t, std::vector<double>>> cases = {
      {1, {8, 0}}, {0, {4, 0}}, {2, {2, big}}, {3, {6, -big}}};
  for (const auto& [function, want] : cases) {
    auto y = f.Runner(x).Attr("n_targets", int64_t{2}).Attr("aggregate_function", function).RunOne();
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(y->ToDoubles(), want) << "aggregate_function " << function;
  }
}

TEST(TreeEnsemble, AOneLeafTreeIsTheLeafItsRootNames) {
  Forest f;
  f.AddLeaf(0, 100);
  const int64_t leaf = f.AddLeaf(0, 7);
  f.roots = {f.AddNode(0, 0, 0.0, leaf, true, leaf, true)};
  auto y = f.Runner(Rows({1, 1}, {5})).RunOne();
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectVeryNear(y->ToDoubles(), {7});
}

TEST(TreeEnsemble, PostTransformsApplyPerRow) {
  auto run = [](const std::vector<double>& row, int64_t transform) {
    Forest f;
    for (size_t j = 0; j < row.size(); ++j) f.AddConstantTree(static_cast<int64_t>(j), row[j]);
    auto y = f.Runner(Rows({1, 1}, {0}, DataType::kDouble)).Attr("post_transform", transform).RunOne();
    EXPECT_TRUE(y.ok()) << y.status().ToString();
    return y.ok() ? y->ToDoubles() : std::vector<double>{};
  };
  ExpectVeryNear(run({0, std::log(3.0)}, 1), {0.25, 0.75});
  ExpectVeryNear(run({0, 2}, 2), {0.5, 1 / (1 + std::exp(-2.0))});
  ExpectVeryNear(run({0, 1, 1}, 3), {0, 0.5, 0.5});
  ExpectVeryNear(run({0, 0}, 3), {0, 0});
  // probit(p) = sqrt(2) erfinv(2p - 1): Phi(1) = 0.8413447460685429.
  ExpectVeryNear(run({0.5, 0.8413447460685429, 0.02275013194817921}, 4), {0, 1, -2}, 1e-12);
}

TEST(TreeEnsemble, RejectsMalformedForests) {
  const Tensor x = Rows({1, 1}, {0});
  Forest cycle;
  cycle.AddLeaf(0, 1);
  cycle.roots = {cycle.AddNode(0, 0, 1.0, 1, false, 0, true)};
  cycle.AddNode(0, 0, 1.0, 0, false, 0, true);
  EXPECT_FALSE(cycle.Runner(x).Run().ok());

  Forest f;
  f.AddConstantTree(0, 1);
  EXPECT_TRUE(f.Runner(x).Run().ok());
  EXPECT_FALSE(f.Runner(Rows({1}, {0})).Run().ok());  // X must be [N, F]
  Forest far_feature = f;
  far_feature.features = {1};
  EXPECT_FALSE(far_feature.Runner(x).Run().ok());
  Forest short_list = f;
  short_list.false_ids.push_back(0);
  EXPECT_FALSE(short_list.Runner(x).Run().ok());
  Forest bad_leaf = f;
  bad_leaf.true_ids = {3};
  EXPECT_FALSE(bad_leaf.Runner(x).Run().ok());
  EXPECT_FALSE(f.Runner(x).Attr("n_targets", int64_t{0}).Run().ok());
  EXPECT_FALSE(f.Runner(x).Attr("post_transform", int64_t{7}).Run().ok());
  EXPECT_FALSE(f.Runner(Tensor::FromInt64s({1, 1}, {0})).Run().ok());
}

}  // namespace
}  // namespace parity::ops::ml
