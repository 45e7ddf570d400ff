// Kernels that order elements: TopK and Unique. Elements compare exactly in
// their own type (int64 and uint64 without going through double); NaN sorts
// above every number and equals itself; -0.0 equals +0.0.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// -1, 0 or 1 as element a of `t` is below, equal to or above element b.
int CompareElements(const Tensor& t, int64_t a, int64_t b) {
  const DataType d = t.dtype();
  if (d == DataType::kString) {
    const int c = t.strings()[static_cast<size_t>(a)].compare(t.strings()[static_cast<size_t>(b)]);
    return (c > 0) - (c < 0);
  }
  if (d == DataType::kUint64) {
    const uint64_t x = t.GetUint64(a), y = t.GetUint64(b);
    return (x > y) - (x < y);
  }
  if (IsInteger(d) || d == DataType::kBool) {
    const int64_t x = t.GetInt64(a), y = t.GetInt64(b);
    return (x > y) - (x < y);
  }
  const double x = t.GetDouble(a), y = t.GetDouble(b);
  const bool nx = std::isnan(x), ny = std::isnan(y);
  if (nx || ny) return nx - ny;
  return (x > y) - (x < y);
}

}  // namespace

KernelResult TopKKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (x->dtype() == DataType::kString || IsComplex(x->dtype()) || x->rank() == 0) {
    return ctx.Error("input must be a real numeric tensor of rank >= 1, got ", x->Description());
  }
  int64_t k = 0;
  if (ctx.opset() < 10) {
    if (!ctx.has_attribute("k")) return ctx.Error("attribute 'k' is required");
    k = ctx.GetInt("k", 0);
  } else {
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> ks, ReadIntegerInput(ctx, 1, "K"));
    if (ks.size() != 1) return ctx.Error("K must hold one value");
    k = ks[0];
  }
  PARITY_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", -1), x->rank()));
  const int64_t dim = x->dim(axis);
  if (k < 0 || k > dim) return ctx.Error("k = ", k, " is outside [0, ", dim, "] for axis ", axis);
  const bool largest = ctx.opset() < 11 || ctx.GetInt("largest", 1) != 0;
  // sorted = 0 leaves the order to the implementation; we return it sorted.
  Shape shape = x->shape();
  shape[static_cast<size_t>(axis)] = k;
  PARITY_ASSIGN_OR_RETURN(Tensor values, Allocate(ctx, x->dtype(), shape));
  PARITY_ASSIGN_OR_RETURN(Tensor indices, Allocate(ctx, DataType::kInt64, shape));
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= x->dim(a);
  for (int64_t a = axis + 1; a < x->rank(); ++a) inner *= x->dim(a);
  ElementCopier copy(*x, values);
  int64_t* out_indices = indices.mutable_data<int64_t>();
  std::vector<int64_t> order(static_cast<size_t>(dim));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * dim * inner + in;
      std::iota(order.begin(), order.end(), 0);
      // Stable: equal values keep the lower index first.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const int c = CompareElements(*x, base + a * inner, base + b * inner);
        return largest ? c > 0 : c < 0;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dst = o * k * inner + j * inner + in;
        copy(base + order[static_cast<size_t>(j)] * inner, dst);
        out_indices[dst] = order[static_cast<size_t>(j)];
      }
    }
  }
  std::vector<Value> results{Value::FromTensor(std::move(values)), Value::FromTensor(std::move(indices))};
  results.resize(std::min(results.size(), ctx.output_count()));
  return results;
}

KernelResult UniqueKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  if (IsComplex(input->dtype())) return ctx.Error("complex input is not ordered");
  // Without an axis the input is flattened; with one, slices along it are
  // compared lexicographically as [dim, outer, inner] views.
  Tensor x = *input;
  int64_t axis = 0;
  if (ctx.has_attribute("axis")) {
    PARITY_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), input->rank()));
  } else {
    x = input->Reshaped({input->size()});
  }
  const int64_t dim = x.dim(axis);
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= x.dim(a);
  for (int64_t a = axis + 1; a < x.rank(); ++a) inner *= x.dim(a);
  auto compare_slices = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int c = CompareElements(x, (o * dim + a) * inner + i, (o * dim + b) * inner + i);
        if (c != 0) return c;
      }
    }
    return 0;
  };
  // Slices in sorted order (stable, so each run of equals starts with its
  // first occurrence).
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare_slices(a, b) < 0; });
  std::vector<int64_t> first;    // first occurrence of each unique slice, in sorted order
  std::vector<int64_t> counts;
  std::vector<int64_t> group_of(static_cast<size_t>(dim));  // slice -> index in `first`
  for (size_t j = 0; j < order.size(); ++j) {
    if (j == 0 || compare_slices(order[j - 1], order[j]) != 0) {
      first.push_back(order[j]);
      counts.push_back(0);
    }
    ++counts.back();
    group_of[static_cast<size_t>(order[j])] = static_cast<int64_t>(first.size()) - 1;
  }
  const int64_t n = static_cast<int64_t>(first.size());
  std::vector<int64_t> rank_of(static_cast<size_t>(n));  // group -> output position
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (ctx.GetInt("sorted", 1) == 0) {
    // Order of first occurrence instead.
    std::vector<int64_t> by_occurrence(static_cast<size_t>(n));
    std::iota(by_occurrence.begin(), by_occurrence.end(), 0);
    std::sort(by_occurrence.begin(), by_occurrence.end(),
              [&](int64_t a, int64_t b) { return first[static_cast<size_t>(a)] < first[static_cast<size_t>(b)]; });
    for (int64_t p = 0; p < n; ++p) rank_of[static_cast<size_t>(by_occurrence[static_cast<size_t>(p)])] = p;
  }
  std::vector<int64_t> out_first(static_cast<size_t>(n)), out_counts(static_cast<size_t>(n));
  for (int64_t g = 0; g < n; ++g) {
    out_first[static_cast<size_t>(rank_of[static_cast<size_t>(g)])] = first[static_cast<size_t>(g)];
    out_counts[static_cast<size_t>(rank_of[static_cast<size_t>(g)])] = counts[static_cast<size_t>(g)];
  }
  std::vector<int64_t> inverse(static_cast<size_t>(dim));
  for (int64_t s = 0; s < dim; ++s) {
    inverse[static_cast<size_t>(s)] = rank_of[static_cast<size_t>(group_of[static_cast<size_t>(s)])];
  }
  Shape shape = x.shape();
  shape[static_cast<size_t>(axis)] = n;
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, x.dtype(), shape));
  ElementCopier copy(x, y);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        copy((o * dim + out_first[static_cast<size_t>(j)]) * inner + i, (o * n + j) * inner + i);
      }
    }
  }
  std::vector<Value> results{Value::FromTensor(std::move(y)), Value::FromTensor(Tensor::FromInt64s({n}, out_first)),
                             Value::FromTensor(Tensor::FromInt64s({dim}, inverse)),
                             Value::FromTensor(Tensor::FromInt64s({n}, out_counts))};
  results.resize(std::min(results.size(), ctx.output_count()));  // only the outputs the node declares
  return results;
}

}  // namespace parity::ops::tensor
