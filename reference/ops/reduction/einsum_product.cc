// Einsum of two operands as a batched matrix product: A and B rearranged in
// double to [batch, m, k] and [batch, k, n], multiplied by GemmDoubleBatched,
// the product rearranged to the output's label order and rounded once.
#include "reference/ops/reduction/einsum_product.h"

#include <algorithm>

#include "reference/ops/common.h"
#include "reference/ops/gemm.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

bool Has(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

bool HasRepeat(const std::vector<int>& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (std::count(labels.begin(), labels.end(), labels[i]) > 1) return true;
  }
  return false;
}

// Whether `strides` are the row-major strides of `sizes` (size-1
// dimensions, never stepped, may have any stride).
bool IsRowMajor(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t j = sizes.size(); j-- > 0;) {
    if (sizes[j] != 1 && strides[j] != expected) return false;
    expected *= sizes[j];
  }
  return true;
}

// A row-major array whose dimension j has size sizes[j]; element (i_0, ...)
// is read from source at the sum of i_j * strides[j] (0 repeats a value).
std::vector<double> Arrange(std::vector<double> source, const std::vector<int64_t>& sizes,
                            const std::vector<int64_t>& strides) {
  const int64_t total = Product(sizes, 0, sizes.size());
  if (IsRowMajor(sizes, strides) && static_cast<int64_t>(source.size()) == total) return source;  // already so
  std::vector<double> out(static_cast<size_t>(total));
  if (total == 0) return out;
  if (sizes.empty()) {
    out[0] = source[0];
    return out;
  }
  // The last dimension is copied in a loop of its own; the others advance
  // an odometer.
  const size_t outer_rank = sizes.size() - 1;
  const int64_t inner = sizes.back(), inner_stride = strides.back();
  std::vector<int64_t> counter(outer_rank, 0);
  int64_t offset = 0;
  for (int64_t row = 0; row < total / inner; ++row) {
    double* dst = out.data() + row * inner;
    for (int64_t i = 0; i < inner; ++i) dst[i] = source[static_cast<size_t>(offset + i * inner_stride)];
    for (size_t j = outer_rank; j-- > 0;) {
      offset += strides[j];
      if (++counter[j] < sizes[j]) break;
      offset -= strides[j] * sizes[j];
      counter[j] = 0;
    }
  }
  return out;
}

// The stride of `label` in an array of `shape` with dimension labels
// `labels`: 0 where the label is absent or its dimension has size 1.
int64_t LabelStride(const std::vector<int>& labels, const Shape& shape, int label) {
  const std::vector<int64_t> strides = Strides(shape);
  for (size_t d = 0; d < labels.size(); ++d) {
    if (labels[d] == label) return shape[d] == 1 ? 0 : strides[d];
  }
  return 0;
}

// Operand `t` (dimension labels `labels`) as a row-major [batch..., rows...,
// cols...] array. Batch dimensions keep the operand's own size (1 where it
// broadcasts: the caller maps batch indices); rows and cols take the
// label's full extent, a size-1 dimension repeated along it.
std::vector<double> ArrangeOperand(const Tensor& t, const std::vector<int>& labels, const std::vector<int>& batch,
                                   const std::vector<int>& rows, const std::vector<int>& cols,
                                   const std::map<int, int64_t>& extent, Shape* batch_shape) {
  std::vector<int64_t> sizes, strides;
  for (int label : batch) {
    const auto d = std::find(labels.begin(), labels.end(), label) - labels.begin();
    sizes.push_back(t.dim(d));
    batch_shape->push_back(t.dim(d));
    strides.push_back(LabelStride(labels, t.shape(), label));
  }
  for (const std::vector<int>* group : {&rows, &cols}) {
    for (int label : *group) {
      sizes.push_back(extent.at(label));
      strides.push_back(LabelStride(labels, t.shape(), label));
    }
  }
  return Arrange(t.ToDoubles(), sizes, strides);
}

int64_t Extent(const std::vector<int>& labels, const std::map<int, int64_t>& extent) {
  int64_t size = 1;
  for (int label : labels) size *= extent.at(label);
  return size;
}

}  // namespace

std::optional<EinsumProductPlan> PlanEinsumProduct(const std::vector<int>& a, const std::vector<int>& b,
                                                   const std::vector<int>& out) {
  if (HasRepeat(a) || HasRepeat(b)) return std::nullopt;
  EinsumProductPlan plan;
  // Batch, m and n in output order, so that "bij,bjk->bik" needs no
  // rearranging of the product.
  for (int label : out) {
    const bool in_a = Has(a, label), in_b = Has(b, label);
    if (in_a && in_b) plan.batch.push_back(label);
    else if (in_a) plan.m.push_back(label);
    else if (in_b) plan.n.push_back(label);
    else return std::nullopt;  // the caller has refused such an output already
  }
  for (int label : a) {
    if (Has(out, label)) continue;
    if (!Has(b, label)) return std::nullopt;  // summed inside A alone
    plan.k.push_back(label);
  }
  for (int label : b) {
    if (!Has(out, label) && !Has(a, label)) return std::nullopt;  // summed inside B alone
  }
  return plan;
}

StatusOr<Value> RunEinsumProduct(const KernelContext& ctx, const EinsumProductPlan& plan, const Tensor& a,
                                 const std::vector<int>& a_labels, const Tensor& b, const std::vector<int>& b_labels,
                                 const std::vector<int>& out, const std::map<int, int64_t>& extent) {
  const int64_t m = Extent(plan.m, extent), n = Extent(plan.n, extent), k = Extent(plan.k, extent);
  Shape batch_shape, a_batch, b_batch;
  for (int label : plan.batch) batch_shape.push_back(extent.at(label));
  const std::vector<double> ad = ArrangeOperand(a, a_labels, plan.batch, plan.m, plan.k, extent, &a_batch);
  const std::vector<double> bd = ArrangeOperand(b, b_labels, plan.batch, plan.k, plan.n, extent, &b_batch);
  const int64_t batch_count = Product(batch_shape, 0, batch_shape.size());
  const BroadcastIndexer a_index(a_batch, batch_shape);
  const BroadcastIndexer b_index(b_batch, batch_shape);
  std::vector<double> product(static_cast<size_t>(batch_count * m * n));
  GemmDoubleBatched(batch_count, m, n, k, [&](int64_t bi) {
    return GemmOperands{MatrixView{ad.data() + a_index(bi) * m * k, k, false},
                        MatrixView{bd.data() + b_index(bi) * k * n, n, false}, product.data() + bi * m * n, n};
  });
  // The product's labels are batch, m, n; the output's are `out`.
  std::vector<int> product_labels = plan.batch;
  product_labels.insert(product_labels.end(), plan.m.begin(), plan.m.end());
  product_labels.insert(product_labels.end(), plan.n.begin(), plan.n.end());
  Shape product_shape, out_shape;
  for (int label : product_labels) product_shape.push_back(extent.at(label));
  std::vector<int64_t> strides;
  for (int label : out) {
    out_shape.push_back(extent.at(label));
    strides.push_back(LabelStride(product_labels, product_shape, label));
  }
  return MakeResult(ctx, a.dtype(), out_shape, Arrange(std::move(product), out_shape, strides));
}

}  // namespace parity::ops
