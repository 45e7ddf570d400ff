// MatMulInteger (10) and QLinearMatMul (10, 21): numpy.matmul of zero-point
// shifted quantised matrices, with exact accumulation. Zero points and scales
// are per tensor, per row of A ([M] for 2-D A, else broadcastable with a
// last dimension of 1) or per column of B ([N], or a second-to-last
// dimension of 1).
#include <cmath>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/quant.h"

namespace parity::ops::nn {

namespace {

// numpy.matmul shapes: 1-D operands are promoted (and the added axis dropped
// from the result); batch dimensions broadcast.
struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  Shape a_batch, b_batch, batch;  // batch dims of A, B and the result
  Shape output;
};

StatusOr<MatMulShape> ResolveMatMul(const KernelContext& ctx, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return ctx.Error("matmul operands must have rank >= 1");
  MatMulShape s;
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  s.m = a2[a2.size() - 2];
  s.k = a2.back();
  s.n = b2.back();
  if (b2[b2.size() - 2] != s.k) {
    return ctx.Error("matmul shapes ", ShapeToString(a), " and ", ShapeToString(b), " do not agree on K");
  }
  s.a_batch.assign(a2.begin(), a2.end() - 2);
  s.b_batch.assign(b2.begin(), b2.end() - 2);
  PARITY_ASSIGN_OR_RETURN(s.batch, BroadcastShapes(ctx, {s.a_batch, s.b_batch}));
  s.output = s.batch;
  if (a.size() > 1) s.output.push_back(s.m);
  if (b.size() > 1) s.output.push_back(s.n);
  return s;
}

// A per-element view of a zero point or scale broadcast against its operand
// `target` (1-D values of a per-row parameter of a 2-D A are read as [M, 1]).
// `constant_axis` (counted from the end, 0 for none) is the K axis, along
// which the parameter must not vary.
StatusOr<std::vector<double>> Expand(const KernelContext& ctx, const Tensor* param, const Shape& target, bool row_vector,
                                     size_t constant_axis, const char* name) {
  PARITY_ASSIGN_OR_RETURN(int64_t count, ElementCount(target));
  if (param == nullptr) return std::vector<double>(static_cast<size_t>(count), 0.0);
  Shape shape = param->shape();
  if (row_vector && shape.size() == 1 && target.size() >= 2 && param->size() != 1) shape.push_back(1);
  if (constant_axis > 0 && shape.size() >= constant_axis && shape[shape.size() - constant_axis] != 1 &&
      param->size() != 1) {
    return ctx.Error(name, " of shape ", ShapeToString(param->shape()), " varies along the K axis of ",
                     ShapeToString(target));
  }
  PARITY_ASSIGN_OR_RETURN(Shape joint, BroadcastShapes(ctx, {shape, target}));
  if (joint != target) {
    return ctx.Error(name, " of shape ", ShapeToString(param->shape()), " does not broadcast to ", ShapeToString(target));
  }
  BroadcastIndexer index(shape, target);
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = param->GetDouble(index(i));
  return out;
}

// Y[batch, i, j] = sum_k (A - zA)[.., i, k] * (B - zB)[.., k, j], exact in double
// (8-bit and float8 products and their sums are exact well within 2^53), and
// a callback that sees (flat output index, A's row and B's column counted
// without K: flat indices into KFree(A) and KFree(B), sum). Without K, a
// per-row or per-column parameter is read even when K is 0.
template <typename F>
Status MatMulShifted(const KernelContext& ctx, const MatMulShape& s, const std::vector<double>& a,
                     const std::vector<double>& b, F&& emit) {
  const BroadcastIndexer a_index(s.a_batch, s.batch);
  const BroadcastIndexer b_index(s.b_batch, s.batch);
  PARITY_ASSIGN_OR_RETURN(int64_t batches, ElementCount(s.batch));
  int64_t out = 0;
  for (int64_t bt = 0; bt < batches; ++bt) {
    const int64_t a_base = a_index(bt) * s.m * s.k;
    const int64_t b_base = b_index(bt) * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j, ++out) {
        double acc = 0.0;
        for (int64_t kk = 0; kk < s.k; ++kk) {
          acc += a[static_cast<size_t>(a_base + i * s.k + kk)] * b[static_cast<size_t>(b_base + kk * s.n + j)];
        }
        emit(out, a_index(bt) * s.m + i, b_index(bt) * s.n + j, acc);
      }
    }
  }
  return Status::Ok();
}

// An operand's shape with its K dim 1 (A's last, B's second-to-last; a
// rank-1 operand is K alone): the shape its scales are read along.
Shape KFree(Shape operand, bool is_a) {
  const size_t k_axis = is_a || operand.size() == 1 ? operand.size() - 1 : operand.size() - 2;
  operand[k_axis] = 1;
  return operand;
}

bool IsEightBit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }
bool IsFloat8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

// t - zero as doubles, with zero broadcast as Expand does.
StatusOr<std::vector<double>> Shift(const KernelContext& ctx, const Tensor& t, const Tensor* zero, bool row_vector,
                                    size_t constant_axis, const char* name) {
  if (zero != nullptr && zero->dtype() != t.dtype()) {
    return ctx.Error(name, " has type ", DataTypeName(zero->dtype()), ", its operand ", DataTypeName(t.dtype()));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<double> z, Expand(ctx, zero, t.shape(), row_vector, constant_axis, name));
  std::vector<double> v = t.ToDoubles();
  for (size_t i = 0; i < v.size(); ++i) v[i] -= z[i];
  return v;
}

const Tensor* Optional(const KernelContext& ctx, size_t i) { return ctx.has_input(i) ? &ctx.tensor(i) : nullptr; }

}  // namespace

KernelResult MatMulInteger(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  if (!IsEightBit(a->dtype()) || !IsEightBit(b->dtype())) {
    return ctx.Error("A and B must be int8 or uint8, got ", a->Description(), " and ", b->Description());
  }
  PARITY_ASSIGN_OR_RETURN(MatMulShape s, ResolveMatMul(ctx, a->shape(), b->shape()));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> av, Shift(ctx, *a, Optional(ctx, 2), true, 1, "a_zero_point"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> bv, Shift(ctx, *b, Optional(ctx, 3), false, 2, "b_zero_point"));
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, DataType::kInt32, s.output));
  // Products of 8-bit values fit int32; a sum beyond it wraps, as "accumulation may overflow in 32 bits" allows.
  PARITY_RETURN_IF_ERROR(MatMulShifted(ctx, s, av, bv, [&](int64_t out, int64_t, int64_t, double acc) {
    y.SetInt64(out, static_cast<int64_t>(acc));
  }));
  return Single(std::move(y));
}

// y = saturate(round(sum * a_scale * b_scale / y_scale) + y_zero_point),
// rounding half to even before the zero point is added (QuantizeLinear's formula).
KernelResult QLinearMatMul(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* a_scale, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(3));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b_scale, ctx.RequireTensor(4));
  PARITY_ASSIGN_OR_RETURN(const Tensor* y_scale, ctx.RequireTensor(6));
  const Tensor* y_zero = Optional(ctx, 7);
  for (const Tensor* t : {a, b}) {
    if (!IsEightBit(t->dtype()) && !IsFloat8(t->dtype())) {
      return ctx.Error("a and b must be int8, uint8 or float8, got ", t->Description());
    }
  }
  const DataType out_type = y_zero ? y_zero->dtype() : a->dtype();
  if (!IsEightBit(out_type) && !IsFloat8(out_type)) return ctx.Error("y_zero_point must be 8-bit");
  PARITY_ASSIGN_OR_RETURN(MatMulShape s, ResolveMatMul(ctx, a->shape(), b->shape()));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> av, Shift(ctx, *a, Optional(ctx, 2), true, 1, "a_zero_point"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> bv, Shift(ctx, *b, Optional(ctx, 5), false, 2, "b_zero_point"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> as, Expand(ctx, a_scale, KFree(a->shape(), true), true, 1, "a_scale"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> bs, Expand(ctx, b_scale, KFree(b->shape(), false), false, 2, "b_scale"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> ys, Expand(ctx, y_scale, s.output, true, 0, "y_scale"));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> yz, Expand(ctx, y_zero, s.output, true, 0, "y_zero_point"));
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, out_type, s.output));
  const bool integer = IsInteger(out_type);
  PARITY_RETURN_IF_ERROR(MatMulShifted(ctx, s, av, bv, [&](int64_t out, int64_t a_row, int64_t b_col, double acc) {
    const size_t o = static_cast<size_t>(out);
    const double real = acc * as[static_cast<size_t>(a_row)] * bs[static_cast<size_t>(b_col)] / ys[o];
    if (integer) {
      const double rounded = std::isnan(real) ? 0.0 : std::nearbyint(real);
      y.SetInt64(out, RoundAndSaturate(rounded + yz[o], out_type));
    } else {
      y.SetDouble(out, real + yz[o], /*saturate=*/true);
    }
  }));
  return Single(std::move(y));
}

}  // namespace parity::ops::nn
