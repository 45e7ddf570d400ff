// Kernels that write updates at given indices: ScatterElements (and the
// deprecated Scatter, its opset 9-10 name) and ScatterND, with the
// reductions none / add / mul (opset 16) and max / min (opset 18).
//
// With a reduction, float outputs accumulate in double and round once at the
// end; integer outputs wrap at 64 bits and then to their width (as numpy's
// in-place ufuncs do); bool takes add as "or" and mul as "and".
#include <algorithm>
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

StatusOr<Reduction> ReadReduction(const KernelContext& ctx) {
  const std::string r = ctx.GetString("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add" && ctx.opset() >= 16) return Reduction::kAdd;
  if (r == "mul" && ctx.opset() >= 16) return Reduction::kMul;
  if (r == "max" && ctx.opset() >= 18) return Reduction::kMax;
  if (r == "min" && ctx.opset() >= 18) return Reduction::kMin;
  return ctx.Error("reduction '", r, "' is not supported at opset ", ctx.opset());
}

// The output being built: data's values, then each update applied in order.
class ScatterTarget {
 public:
  static StatusOr<ScatterTarget> Create(const KernelContext& ctx, const Tensor& data, const Tensor& updates,
                                        Reduction reduction) {
    if (updates.dtype() != data.dtype()) {
      return ctx.Error("updates ", updates.Description(), " must have the type of data ", data.Description());
    }
    ScatterTarget t;
    t.reduction_ = reduction;
    t.updates_ = &updates;
    PARITY_ASSIGN_OR_RETURN(t.out_, CloneTensor(ctx, data));
    if (reduction == Reduction::kNone) return t;
    const DataType d = data.dtype();
    if (IsFloatingPoint(d)) {
      t.kind_ = Kind::kFloat;
      t.floats_ = data.ToDoubles();
    } else if (IsInteger(d) || d == DataType::kBool) {
      t.kind_ = d == DataType::kBool ? Kind::kBool : (IsSignedInteger(d) ? Kind::kSigned : Kind::kUnsigned);
      t.ints_.resize(static_cast<size_t>(data.size()));
      for (int64_t i = 0; i < data.size(); ++i) t.ints_[static_cast<size_t>(i)] = data.GetUint64(i);
    } else {
      return ctx.Error("reduction is not defined for ", DataTypeName(d));
    }
    return t;
  }

  // out[dst] = reduce(out[dst], updates[src]).
  void Apply(int64_t src, int64_t dst) {
    if (reduction_ == Reduction::kNone) {
      ElementCopier(*updates_, out_)(src, dst);
      return;
    }
    const size_t i = static_cast<size_t>(dst);
    if (kind_ == Kind::kFloat) {
      const double u = updates_->GetDouble(src);
      double& v = floats_[i];
      switch (reduction_) {
        case Reduction::kAdd: v += u; break;
        case Reduction::kMul: v *= u; break;
        case Reduction::kMax: v = (std::isnan(v) || std::isnan(u)) ? std::nan("") : std::max(v, u); break;
        case Reduction::kMin: v = (std::isnan(v) || std::isnan(u)) ? std::nan("") : std::min(v, u); break;
        case Reduction::kNone: break;
      }
      return;
    }
    const uint64_t u = updates_->GetUint64(src);
    uint64_t& v = ints_[i];
    const bool less = kind_ == Kind::kSigned ? static_cast<int64_t>(u) < static_cast<int64_t>(v) : u < v;
    switch (reduction_) {
      case Reduction::kAdd: v = kind_ == Kind::kBool ? (v | u) : v + u; break;
      case Reduction::kMul: v = kind_ == Kind::kBool ? (v & u) : v * u; break;
      case Reduction::kMax: v = less ? v : u; break;
      case Reduction::kMin: v = less ? u : v; break;
      case Reduction::kNone: break;
    }
  }

  Tensor Finish() {
    if (kind_ == Kind::kFloat) {
      for (size_t i = 0; i < floats_.size(); ++i) out_.SetDouble(static_cast<int64_t>(i), floats_[i]);
    } else if (kind_ != Kind::kNone) {
      for (size_t i = 0; i < ints_.size(); ++i) out_.SetUint64(static_cast<int64_t>(i), ints_[i]);
    }
    return std::move(out_);
  }

 private:
  enum class Kind { kNone, kFloat, kSigned, kUnsigned, kBool };
  Reduction reduction_ = Reduction::kNone;
  Kind kind_ = Kind::kNone;
  const Tensor* updates_ = nullptr;
  Tensor out_;
  std::vector<double> floats_;
  std::vector<uint64_t> ints_;  // signed values kept as their two's complement bits
};

}  // namespace

KernelResult ScatterElementsKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* updates, ctx.RequireTensor(2));
  if (indices->dtype() != DataType::kInt32 && indices->dtype() != DataType::kInt64) {
    return ctx.Error("indices must be int32 or int64, got ", indices->Description());
  }
  const int64_t rank = data->rank();
  if (rank == 0 || indices->rank() != rank || updates->shape() != indices->shape()) {
    return ctx.Error("data ", data->Description(), ", indices ", indices->Description(), " and updates ",
                     updates->Description(), " must have one rank >= 1, and updates the shape of indices");
  }
  PARITY_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), rank));
  for (int64_t a = 0; a < rank; ++a) {
    if (a != axis && indices->dim(a) > data->dim(a)) {
      return ctx.Error("indices ", indices->Description(), " exceed data ", data->Description(), " on axis ", a);
    }
  }
  PARITY_ASSIGN_OR_RETURN(const Reduction reduction, ReadReduction(ctx));
  PARITY_ASSIGN_OR_RETURN(ScatterTarget target, ScatterTarget::Create(ctx, *data, *updates, reduction));
  const std::vector<int64_t> strides = Strides(data->shape());
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t src = 0; src < indices->size(); ++src) {
    PARITY_ASSIGN_OR_RETURN(const int64_t k, CheckIndex(ctx, indices->GetInt64(src), data->dim(axis)));
    int64_t dst = 0;
    for (int64_t a = 0; a < rank; ++a) dst += (a == axis ? k : index[static_cast<size_t>(a)]) * strides[static_cast<size_t>(a)];
    target.Apply(src, dst);
    NextIndex(index, indices->shape());
  }
  return Single(target.Finish());
}

KernelResult ScatterNDKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* updates, ctx.RequireTensor(2));
  if (indices->dtype() != DataType::kInt64) return ctx.Error("indices must be int64, got ", indices->Description());
  const int64_t r = data->rank();
  const int64_t q = indices->rank();
  if (r < 1 || q < 1) return ctx.Error("data and indices must have rank >= 1");
  const int64_t k = indices->dim(q - 1);
  if (k < 1 || k > r) return ctx.Error("indices' last dimension ", k, " must be in [1, ", r, "]");
  // updates.shape = indices.shape[:-1] + data.shape[k:]
  Shape expected(indices->shape().begin(), indices->shape().end() - 1);
  expected.insert(expected.end(), data->shape().begin() + k, data->shape().end());
  if (updates->shape() != expected) {
    return ctx.Error("updates shape ", ShapeToString(updates->shape()), " must be ", ShapeToString(expected));
  }
  PARITY_ASSIGN_OR_RETURN(const Reduction reduction, ReadReduction(ctx));
  PARITY_ASSIGN_OR_RETURN(ScatterTarget target, ScatterTarget::Create(ctx, *data, *updates, reduction));
  const std::vector<int64_t> strides = Strides(data->shape());
  int64_t slice = 1;
  for (int64_t a = k; a < r; ++a) slice *= data->dim(a);
  const int64_t tuples = k == 0 ? 0 : indices->size() / k;
  int64_t src = 0;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t dst = 0;
    for (int64_t j = 0; j < k; ++j) {
      PARITY_ASSIGN_OR_RETURN(const int64_t i, CheckIndex(ctx, indices->GetInt64(t * k + j), data->dim(j)));
      dst += i * strides[static_cast<size_t>(j)];
    }
    for (int64_t e = 0; e < slice; ++e) target.Apply(src++, dst + e);
  }
  return Single(target.Finish());
}

}  // namespace parity::ops::tensor
