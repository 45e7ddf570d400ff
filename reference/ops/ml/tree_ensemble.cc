// ai.onnx.ml TreeEnsemble-5 (Operators-ml.md): each row of X [N, F] walks
// every tree from its root (tree_roots) through interior nodes (nodes_*),
// taking the true branch when `x[feature] <mode> split` holds or when x is
// NaN and nodes_missing_value_tracks_true is set, until a branch marked as a
// leaf (nodes_trueleafs / nodes_falseleafs) names a leaf_* entry. The leaves
// reached add (SUM), average over the trees (AVERAGE), or take the MIN/MAX of
// their weights into their target column of Y [N, n_targets]; post_transform
// is then applied per row.
//
// Choices where the spec is silent (each follows ONNX's Python reference
// unless noted):
// - BRANCH_MEMBER sets are consecutive runs of membership_values ended by
//   NaN, in the order the member nodes appear; every number is a member,
//   0.0 included (the Python reference stops a set at 0.0, a bug).
// - A MIN/MAX target that no tree reached holds the largest/lowest finite
//   value of X's type.
// - A root with both branches on one leaf is that leaf (the spec's encoding
//   of a one-leaf tree); the Python reference reads leaf_*[root] instead.
// - post_transform, which the Python reference ignores, follows the other
//   ai.onnx.ml tree operators: SOFTMAX over the row, LOGISTIC 1/(1+e^-x),
//   SOFTMAX_ZERO a softmax over the non-zero entries (zeros stay 0),
//   PROBIT sqrt(2) * erfinv(2x - 1), all exact in double.
// - n_targets, when absent, is 1 + the largest leaf target id.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "reference/ops/common.h"
#include "reference/ops/ml/ml.h"

namespace parity::ops::ml {
namespace {

enum Mode : int64_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };
enum Aggregate : int64_t { kAverage = 0, kSum = 1, kMin = 2, kMax = 3 };
enum PostTransform : int64_t { kNone = 0, kSoftmax = 1, kLogistic = 2, kSoftmaxZero = 3, kProbit = 4 };

struct TreeNodes {
  std::vector<int64_t> modes, features, true_ids, false_ids, true_leafs, false_leafs, missing_true;
  std::vector<double> splits;
  std::vector<std::vector<double>> members;  // per node; empty unless the node is BRANCH_MEMBER
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
};

// erfinv(y): Winitzki's closed-form approximation (about 2e-3 relative) as
// the start of Newton's method on erf, or on erfc where |y| > 0.5 so that
// 1 - |y| (exact there) keeps the tail's precision.
double InverseErf(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 0.0) return y;
  const double a = std::fabs(y);
  if (a == 1.0) return std::copysign(std::numeric_limits<double>::infinity(), y);
  constexpr double kWinitzki = 0.147;
  const double log_term = std::log((1.0 - a) * (1.0 + a));
  const double t = 2.0 / (std::numbers::pi * kWinitzki) + log_term / 2.0;
  double x = std::sqrt(std::sqrt(t * t - log_term / kWinitzki) - t);
  const double slope = 2.0 / std::sqrt(std::numbers::pi);  // d/dx erf(x) = slope * exp(-x^2)
  for (int i = 0; i < 50; ++i) {
    const double residual = a > 0.5 ? (1.0 - a) - std::erfc(x) : std::erf(x) - a;
    const double step = residual / (slope * std::exp(-x * x));
    if (!std::isfinite(step)) break;
    x -= step;
    if (std::fabs(step) <= 4.0 * std::numeric_limits<double>::epsilon() * x) break;
  }
  return std::copysign(x, y);
}

bool Compare(int64_t mode, double x, double split, const std::vector<double>& members) {
  switch (mode) {
    case kLeq: return x <= split;
    case kLt: return x < split;
    case kGte: return x >= split;
    case kGt: return x > split;
    case kEq: return x == split;
    case kNeq: return x != split;
    default: return std::find(members.begin(), members.end(), x) != members.end();
  }
}

StatusOr<std::vector<double>> TensorAttr(const KernelContext& ctx, const char* name) {
  PARITY_ASSIGN_OR_RETURN(Tensor t, ctx.GetTensor(name));
  if (t.dtype() == DataType::kString) return ctx.Error("attribute ", name, " must be numeric, got ", t.Description());
  return t.ToDoubles();
}

// Reads and checks the attributes describing the trees (indices in range,
// features below `features`).
StatusOr<TreeNodes> ReadNodes(const KernelContext& ctx, int64_t features) {
  for (const char* name : {"nodes_splits", "nodes_featureids", "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids",
                           "nodes_trueleafs", "nodes_falseleafs", "leaf_targetids", "leaf_weights", "tree_roots"}) {
    if (!ctx.has_attribute(name)) return ctx.Error("the attribute ", name, " is required");
  }
  TreeNodes n;
  PARITY_ASSIGN_OR_RETURN(n.splits, TensorAttr(ctx, "nodes_splits"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> modes, TensorAttr(ctx, "nodes_modes"));
  PARITY_ASSIGN_OR_RETURN(n.leaf_weights, TensorAttr(ctx, "leaf_weights"));
  n.features = ctx.GetInts("nodes_featureids");
  n.true_ids = ctx.GetInts("nodes_truenodeids");
  n.false_ids = ctx.GetInts("nodes_falsenodeids");
  n.true_leafs = ctx.GetInts("nodes_trueleafs");
  n.false_leafs = ctx.GetInts("nodes_falseleafs");
  n.leaf_targets = ctx.GetInts("leaf_targetids");
  const size_t count = n.features.size();
  n.missing_true = ctx.has_attribute("nodes_missing_value_tracks_true") ? ctx.GetInts("nodes_missing_value_tracks_true")
                                                                       : std::vector<int64_t>(count, 0);
  if (modes.size() != count || n.splits.size() != count || n.true_ids.size() != count || n.false_ids.size() != count ||
      n.true_leafs.size() != count || n.false_leafs.size() != count || n.missing_true.size() != count) {
    return ctx.Error("the nodes_* attributes must all have ", count, " entries (as nodes_featureids)");
  }
  if (n.leaf_weights.size() != n.leaf_targets.size()) {
    return ctx.Error("leaf_weights has ", n.leaf_weights.size(), " entries, leaf_targetids ", n.leaf_targets.size());
  }
  std::vector<double> membership;
  if (ctx.has_attribute("membership_values")) {
    PARITY_ASSIGN_OR_RETURN(membership, TensorAttr(ctx, "membership_values"));
  }
  size_t next_member = 0;
  n.members.resize(count);
  const auto leaf_count = static_cast<int64_t>(n.leaf_targets.size());
  for (size_t i = 0; i < count; ++i) {
    if (!(modes[i] >= 0.0 && modes[i] <= 6.0 && modes[i] == std::floor(modes[i]))) return ctx.Error("nodes_modes[", i, "] = ", modes[i], " is not 0..6");
    n.modes.push_back(static_cast<int64_t>(modes[i]));
    if (n.features[i] < 0 || n.features[i] >= features) {
      return ctx.Error("nodes_featureids[", i, "] = ", n.features[i], " is outside X's ", features, " features");
    }
    for (const bool side : {true, false}) {
      const int64_t id = side ? n.true_ids[i] : n.false_ids[i];
      const bool to_leaf = (side ? n.true_leafs[i] : n.false_leafs[i]) != 0;
      const int64_t limit = to_leaf ? leaf_count : static_cast<int64_t>(count);
      if (id < 0 || id >= limit) {
        return ctx.Error("node ", i, "'s ", side ? "true" : "false", " branch ", id, " is outside the ", limit,
                         to_leaf ? " leaves" : " nodes");
      }
    }
    if (n.modes[i] == kMember) {
      for (;;) {
        if (next_member >= membership.size()) {
          return ctx.Error("membership_values ends before the set of node ", i, " (each set ends with NaN)");
        }
        const double v = membership[next_member++];
        if (std::isnan(v)) break;
        n.members[i].push_back(v);
      }
    }
  }
  if (next_member != membership.size()) {
    return ctx.Error("membership_values has ", membership.size() - next_member, " values after the last member node's set");
  }
  return n;
}

// The leaf that row `x` reaches from node `root`; every index was checked.
StatusOr<int64_t> WalkTree(const KernelContext& ctx, const TreeNodes& n, int64_t root, const Tensor& x, int64_t row_offset) {
  int64_t node = root;
  // A well-formed tree visits each node at most once; more steps mean a cycle.
  for (size_t steps = 0; steps <= n.modes.size(); ++steps) {
    const auto i = static_cast<size_t>(node);
    const double value = x.GetDouble(row_offset + n.features[i]);
    const bool go_true = Compare(n.modes[i], value, n.splits[i], n.members[i]) || (n.missing_true[i] != 0 && std::isnan(value));
    const int64_t next = go_true ? n.true_ids[i] : n.false_ids[i];
    if ((go_true ? n.true_leafs[i] : n.false_leafs[i]) != 0) return next;
    node = next;
  }
  return ctx.Error("the tree rooted at node ", root, " has a cycle");
}

void ApplyPostTransform(int64_t transform, double* row, int64_t width) {
  if (transform == kLogistic) {
    for (int64_t j = 0; j < width; ++j) row[j] = 1.0 / (1.0 + std::exp(-row[j]));
  } else if (transform == kProbit) {
    for (int64_t j = 0; j < width; ++j) row[j] = std::sqrt(2.0) * InverseErf(2.0 * row[j] - 1.0);
  } else if (transform == kSoftmax || transform == kSoftmaxZero) {
    const bool skip_zeros = transform == kSoftmaxZero;
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < width; ++j) {
      if (!(skip_zeros && row[j] == 0.0)) top = std::max(top, row[j]);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < width; ++j) {
      row[j] = skip_zeros && row[j] == 0.0 ? 0.0 : std::exp(row[j] - top);
      sum += row[j];
    }
    if (sum != 0.0) {
      for (int64_t j = 0; j < width; ++j) row[j] /= sum;
    }
  }
}

}  // namespace

StatusOr<std::vector<Value>> TreeEnsemble(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  const DataType type = x->dtype();
  if ((type != DataType::kFloat && type != DataType::kDouble && type != DataType::kFloat16) || x->rank() != 2) {
    return ctx.Error("X ", x->Description(), " must be a rank-2 float, double or float16 tensor [N, F]");
  }
  const int64_t rows = x->dim(0), features = x->dim(1);
  PARITY_ASSIGN_OR_RETURN(TreeNodes nodes, ReadNodes(ctx, features));
  const int64_t aggregate = ctx.GetInt("aggregate_function", kSum);
  const int64_t transform = ctx.GetInt("post_transform", kNone);
  if (aggregate < kAverage || aggregate > kMax) return ctx.Error("aggregate_function ", aggregate, " is not 0..3");
  if (transform < kNone || transform > kProbit) return ctx.Error("post_transform ", transform, " is not 0..4");
  int64_t targets = 0;  // 1 + the largest leaf target id
  for (int64_t t : nodes.leaf_targets) {
    if (t < 0 || t == std::numeric_limits<int64_t>::max()) return ctx.Error("leaf target id ", t, " is out of range");
    targets = std::max(targets, t + 1);
  }
  if (ctx.has_attribute("n_targets")) {
    const int64_t declared = ctx.GetInt("n_targets", 0);
    if (declared < targets) return ctx.Error("n_targets ", declared, " is not above the largest leaf target id ", targets - 1);
    targets = declared;
  }
  const std::vector<int64_t> roots = ctx.GetInts("tree_roots");
  for (int64_t root : roots) {
    if (root < 0 || root >= static_cast<int64_t>(nodes.modes.size())) {
      return ctx.Error("tree root ", root, " is outside the ", nodes.modes.size(), " nodes");
    }
  }

  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, type, {rows, targets}));
  if (y.size() == 0) return Single(std::move(y));
  // The starting value of MIN/MAX, kept where no leaf reaches a target.
  const double type_max = type == DataType::kFloat16 ? 65504.0
                          : type == DataType::kFloat ? static_cast<double>(std::numeric_limits<float>::max())
                                                     : std::numeric_limits<double>::max();
  const double start = aggregate == kMin ? type_max : aggregate == kMax ? -type_max : 0.0;
  std::vector<double> row(static_cast<size_t>(targets));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(row.begin(), row.end(), start);
    for (int64_t root : roots) {
      PARITY_ASSIGN_OR_RETURN(int64_t leaf, WalkTree(ctx, nodes, root, *x, r * features));
      double& slot = row[static_cast<size_t>(nodes.leaf_targets[static_cast<size_t>(leaf)])];
      const double weight = nodes.leaf_weights[static_cast<size_t>(leaf)];
      if (aggregate == kMin) slot = std::min(slot, weight);
      else if (aggregate == kMax) slot = std::max(slot, weight);
      else slot += weight;
    }
    if (aggregate == kAverage && !roots.empty()) {
      for (double& v : row) v /= static_cast<double>(roots.size());
    }
    ApplyPostTransform(transform, row.data(), targets);
    for (int64_t j = 0; j < targets; ++j) y.SetDouble(r * targets + j, row[static_cast<size_t>(j)]);
  }
  return Single(std::move(y));
}

}  // namespace parity::ops::ml
