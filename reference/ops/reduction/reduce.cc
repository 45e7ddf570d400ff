// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare.
//
// Axes come from the `axes` attribute before ReduceSum-13 and the others' 18,
// from the optional second input after. With the input form, an empty axes
// list and noop_with_empty_axes=1 reduces over no axes: each element is its
// own (one-element) group, so ReduceSumSquare gives x*x and ReduceL1 |x|, as
// the operators' function bodies in the spec compute. Empty groups give the
// identity of the reduction (sum 0, prod 1, max -inf or the type's minimum,
// min +inf or the type's maximum, log-sum -inf); a mean of no integers is 0.
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

struct ReducePlan {
  Shape out_shape;                  // with keepdims applied
  std::vector<int64_t> out_of_in;   // output flat index of each input element
  int64_t out_count = 1;
  int64_t group_size = 1;           // elements per output
};

StatusOr<ReducePlan> PlanReduction(const KernelContext& ctx, const Tensor& x, int axes_input_since) {
  const bool axes_from_input = ctx.opset() >= axes_input_since;
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (ctx.has_input(1)) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(1));
      if (!IsInteger(a->dtype()) || a->rank() > 1) {
        return ctx.Error("axes must be a 1-D integer tensor, got ", a->Description());
      }
      axes = a->ToInt64s();
    }
  } else {
    axes = ctx.GetInts("axes");
  }
  const bool noop = axes_from_input && ctx.GetInt("noop_with_empty_axes", 0) != 0;
  const bool keepdims = ctx.GetInt("keepdims", 1) != 0;
  const int64_t rank = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop);
  for (int64_t a : axes) {
    PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a, rank));
    if (reduced[axis]) return ctx.Error("axis ", a, " appears twice in axes");
    reduced[axis] = true;
  }
  ReducePlan plan;
  Shape kept(x.shape());
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) continue;
    plan.group_size *= x.dim(i);
    kept[i] = 1;
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i] || keepdims) plan.out_shape.push_back(kept[i]);
  }
  plan.out_count = Product(kept, 0, kept.size());
  const std::vector<int64_t> kept_strides = Strides(kept);
  plan.out_of_in.resize(static_cast<size_t>(x.size()));
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t rest = i;
    int64_t out = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t coord = rest % x.dim(d);
      rest /= x.dim(d);
      if (!reduced[d]) out += coord * kept_strides[d];
    }
    plan.out_of_in[i] = out;
  }
  return plan;
}

StatusOr<Tensor> ReduceFloat(const KernelContext& ctx, const Tensor& x, const ReducePlan& plan, ReduceOp op) {
  const std::vector<double> in = x.ToDoubles();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double init = 0.0;
  if (op == ReduceOp::kProd) init = 1.0;
  if (op == ReduceOp::kMax || op == ReduceOp::kLogSumExp) init = -inf;
  if (op == ReduceOp::kMin) init = inf;
  std::vector<double> acc(static_cast<size_t>(plan.out_count), init);
  // LogSumExp first finds each group's maximum, then sums exp(x - max).
  std::vector<double> shift;
  if (op == ReduceOp::kLogSumExp) {
    for (size_t i = 0; i < in.size(); ++i) {
      double& m = acc[plan.out_of_in[i]];
      if (std::isnan(in[i]) || in[i] > m) m = in[i];
    }
    shift = acc;
    std::fill(acc.begin(), acc.end(), 0.0);
  }
  const Summation summation(ctx, x.dtype());
  for (size_t i = 0; i < in.size(); ++i) {
    double& a = acc[plan.out_of_in[i]];
    const double v = in[i];
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean:
      case ReduceOp::kLogSum: a = summation.Add(a, v); break;
      case ReduceOp::kL1: a = summation.Add(a, std::fabs(v)); break;
      case ReduceOp::kL2:
      case ReduceOp::kSumSquare: a = summation.Add(a, v * v); break;
      case ReduceOp::kProd: a *= v; break;
      case ReduceOp::kMax:
        if (std::isnan(v) || v > a) a = v;
        break;
      case ReduceOp::kMin:
        if (std::isnan(v) || v < a) a = v;
        break;
      case ReduceOp::kLogSumExp: {
        const double m = shift[plan.out_of_in[i]];
        // An infinite maximum decides the result alone (avoids inf - inf).
        a = summation.Add(a, std::isinf(m) ? (v == m ? 1.0 : 0.0) : summation.Term(std::exp(v - m)));
        break;
      }
    }
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    double& a = acc[o];
    switch (op) {
      case ReduceOp::kMean: a = plan.group_size == 0 ? nan : a / static_cast<double>(plan.group_size); break;
      case ReduceOp::kL2: a = std::sqrt(a); break;
      case ReduceOp::kLogSum: a = std::log(a); break;
      case ReduceOp::kLogSumExp: {
        const double m = shift[o];
        a = std::isnan(m) ? m : (std::isinf(m) ? m : m + std::log(a));
        if (plan.group_size == 0) a = -inf;
        break;
      }
      default: break;
    }
  }
  StatusOr<Tensor> t = Tensor::FromDoubles(x.dtype(), plan.out_shape, acc);
  if (!t.ok()) return t.status().WithContext(ctx.NodeLabel());
  return t;
}

StatusOr<Tensor> ReduceInteger(const KernelContext& ctx, const Tensor& x, const ReducePlan& plan, ReduceOp op) {
  const DataType dt = x.dtype();
  if (dt == DataType::kBool && op != ReduceOp::kMax && op != ReduceOp::kMin) {
    return ctx.Error("bool input is only allowed for ReduceMax and ReduceMin");
  }
  // Operators whose result is not a ring operation compute the exact
  // integer sum first and finish in double, truncating like numpy's astype.
  uint64_t init = 0;
  if (op == ReduceOp::kProd) init = 1;
  if (op == ReduceOp::kMax) {
    init = dt == DataType::kBool ? 0 : static_cast<uint64_t>(IntegerMin(dt));
  }
  if (op == ReduceOp::kMin) init = dt == DataType::kBool ? 1 : IntegerMax(dt);
  std::vector<uint64_t> acc(static_cast<size_t>(plan.out_count), init);
  std::vector<double> max_of_group;
  if (op == ReduceOp::kLogSumExp) {
    max_of_group.assign(acc.size(), -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < x.size(); ++i) {
      double& m = max_of_group[plan.out_of_in[i]];
      m = std::max(m, IntToDouble(dt, x.GetUint64(i)));
    }
  }
  std::vector<double> exp_sum(op == ReduceOp::kLogSumExp ? acc.size() : 0, 0.0);
  for (int64_t i = 0; i < x.size(); ++i) {
    const int64_t o = plan.out_of_in[i];
    uint64_t& a = acc[o];
    const uint64_t v = x.GetUint64(i);
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean:
      case ReduceOp::kLogSum: a = WrapAdd(a, v); break;
      case ReduceOp::kL1: a = WrapAdd(a, IntAbs(dt, v)); break;
      case ReduceOp::kL2:
      case ReduceOp::kSumSquare: a = WrapAdd(a, WrapMul(v, v)); break;
      case ReduceOp::kProd: a = WrapMul(a, v); break;
      case ReduceOp::kMax:
        if (IntLess(dt, a, v)) a = v;
        break;
      case ReduceOp::kMin:
        if (IntLess(dt, v, a)) a = v;
        break;
      case ReduceOp::kLogSumExp: exp_sum[o] += std::exp(IntToDouble(dt, v) - max_of_group[o]); break;
    }
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dt, plan.out_shape));
  const bool is_signed = IsSignedInteger(dt);
  for (int64_t o = 0; o < plan.out_count; ++o) {
    const uint64_t a = acc[o];
    switch (op) {
      case ReduceOp::kMean:
        if (plan.group_size == 0) {
          out.SetUint64(o, 0);
        } else if (is_signed) {
          out.SetInt64(o, static_cast<int64_t>(a) / plan.group_size);
        } else {
          out.SetUint64(o, a / static_cast<uint64_t>(plan.group_size));
        }
        break;
      case ReduceOp::kL2: out.SetDouble(o, std::sqrt(IntToDouble(DataType::kUint64, a))); break;
      case ReduceOp::kLogSum: out.SetDouble(o, std::log(IntToDouble(dt, a)), /*saturate=*/true); break;
      case ReduceOp::kLogSumExp:
        out.SetDouble(o, max_of_group[o] + std::log(exp_sum[o]), /*saturate=*/true);
        break;
      default: out.SetUint64(o, a); break;
    }
  }
  return out;
}

StatusOr<std::vector<Value>> Reduce(const KernelContext& ctx, ReduceOp op, int axes_input_since) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (!(IsFloatingPoint(x->dtype()) || IsExactInteger(x->dtype()))) {
    return ctx.Error("unsupported input type ", x->Description());
  }
  PARITY_ASSIGN_OR_RETURN(ReducePlan plan, PlanReduction(ctx, *x, axes_input_since));
  if (IsFloatingPoint(x->dtype())) return Single(ReduceFloat(ctx, *x, plan, op));
  return Single(ReduceInteger(ctx, *x, plan, op));
}

}  // namespace

StatusOr<std::vector<Value>> ReduceSumKernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kSum, 13); }
StatusOr<std::vector<Value>> ReduceMeanKernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kMean, 18); }
StatusOr<std::vector<Value>> ReduceMaxKernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kMax, 18); }
StatusOr<std::vector<Value>> ReduceMinKernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kMin, 18); }
StatusOr<std::vector<Value>> ReduceProdKernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kProd, 18); }
StatusOr<std::vector<Value>> ReduceL1Kernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kL1, 18); }
StatusOr<std::vector<Value>> ReduceL2Kernel(const KernelContext& ctx) { return Reduce(ctx, ReduceOp::kL2, 18); }
StatusOr<std::vector<Value>> ReduceLogSumKernel(const KernelContext& ctx) {
  return Reduce(ctx, ReduceOp::kLogSum, 18);
}
StatusOr<std::vector<Value>> ReduceLogSumExpKernel(const KernelContext& ctx) {
  return Reduce(ctx, ReduceOp::kLogSumExp, 18);
}
StatusOr<std::vector<Value>> ReduceSumSquareKernel(const KernelContext& ctx) {
  return Reduce(ctx, ReduceOp::kSumSquare, 18);
}

}  // namespace parity::ops
