// MatMul (numpy matmul: batch broadcasting, 1-D operands promoted and the
// added dimension removed) and Gemm (Y = alpha * A' B' + beta * C, C
// broadcast to (M, N), optional from opset 11). Float products go through
// GemmDouble (reference/ops/gemm.h): in double, rounded once per output
// element. In the conventional arithmetic they sum in float32 at every step,
// k in order (GemmInOrder, as ops::Summation does); integers wrap, never
// through floating point.
#include "reference/ops/common.h"
#include "reference/ops/gemm.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

// One integer (M x K) by (K x N) product, wrapping: a(m, k) and b(k, n)
// give flat indices.
template <typename IndexA, typename IndexB>
void MultiplyIntegers(const Tensor& a, const Tensor& b, IndexA ia, IndexB ib, int64_t m_count, int64_t n_count,
                      int64_t k_count, std::vector<uint64_t>* out, int64_t out_offset) {
  for (int64_t m = 0; m < m_count; ++m) {
    for (int64_t n = 0; n < n_count; ++n) {
      uint64_t sum = 0;
      for (int64_t k = 0; k < k_count; ++k) sum = WrapAdd(sum, WrapMul(a.GetUint64(ia(m, k)), b.GetUint64(ib(k, n))));
      (*out)[out_offset + m * n_count + n] = sum;
    }
  }
}

Status RequireMatmulType(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  PARITY_RETURN_IF_ERROR(RequireNumeric(ctx, a, "input A"));
  if (a.dtype() != b.dtype()) {
    return ctx.Error("inputs A and B must have the same type, got ", a.Description(), " and ", b.Description());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<Value>> MatMulKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireMatmulType(ctx, *a, *b));
  if (a->rank() == 0 || b->rank() == 0) {
    return ctx.Error("MatMul operands must have rank >= 1, got ", a->Description(), " and ", b->Description());
  }
  Shape as = a->shape();
  Shape bs = b->shape();
  const bool a_vector = as.size() == 1;
  const bool b_vector = bs.size() == 1;
  if (a_vector) as.insert(as.begin(), 1);
  if (b_vector) bs.push_back(1);
  const int64_t m_count = as[as.size() - 2];
  const int64_t k_count = as.back();
  const int64_t n_count = bs.back();
  if (bs[bs.size() - 2] != k_count) {
    return ctx.Error("inner dimensions differ: A is ", a->Description(), ", B is ", b->Description());
  }
  const Shape a_batch(as.begin(), as.end() - 2);
  const Shape b_batch(bs.begin(), bs.end() - 2);
  PARITY_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(ctx, {a_batch, b_batch}));
  Shape out_shape = batch;
  if (!a_vector) out_shape.push_back(m_count);
  if (!b_vector) out_shape.push_back(n_count);
  const int64_t batch_count = Product(batch, 0, batch.size());
  const BroadcastIndexer a_index(a_batch, batch);
  const BroadcastIndexer b_index(b_batch, batch);
  const bool is_float = IsFloatingPoint(a->dtype());
  const int64_t out_count = batch_count * m_count * n_count;
  if (is_float && !ctx.float32_sums()) {
    bool a_finite = false, b_finite = false;
    const DoubleBuffer ad = ReadAllDoubles(*a, &a_finite);
    const DoubleBuffer bd = ReadAllDoubles(*b, &b_finite);
    // Not zeroed: every element is written by its tile.
    const DoubleBuffer product = AllocateDoubles(out_count);
    GemmDoubleBatched(batch_count, m_count, n_count, k_count, [&](int64_t bi) {
      return GemmOperands{MatrixView{ad.get() + a_index(bi) * m_count * k_count, k_count, false, a_finite},
                          MatrixView{bd.get() + b_index(bi) * k_count * n_count, n_count, false, b_finite},
                          product.get() + bi * m_count * n_count, n_count};
    });
    PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, a->dtype(), out_shape));
    WriteAllDoubles(product.get(), &out);
    return Single(std::move(out));
  }
  if (is_float) {
    // The conventional arithmetic: every partial sum of float32 and
    // narrower data rounds to float32, k in order (ops::Summation).
    const DoubleBuffer ad = ReadAllDoubles(*a);
    const DoubleBuffer bd = ReadAllDoubles(*b);
    const DoubleBuffer product = AllocateDoubles(out_count);
    const bool float32_steps = IsFloat32OrHalf(a->dtype());
    for (int64_t bi = 0; bi < batch_count; ++bi) {
      GemmInOrder(m_count, n_count, k_count, MatrixView{ad.get() + a_index(bi) * m_count * k_count, k_count, false},
                  MatrixView{bd.get() + b_index(bi) * k_count * n_count, n_count, false},
                  product.get() + bi * m_count * n_count, n_count, float32_steps);
    }
    PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, a->dtype(), out_shape));
    WriteAllDoubles(product.get(), &out);
    return Single(std::move(out));
  }
  std::vector<uint64_t> iout(out_count);
  for (int64_t bi = 0; bi < batch_count; ++bi) {
    const int64_t a_base = a_index(bi) * m_count * k_count;
    const int64_t b_base = b_index(bi) * k_count * n_count;
    MultiplyIntegers(
        *a, *b, [&](int64_t m, int64_t k) { return a_base + m * k_count + k; },
        [&](int64_t k, int64_t n) { return b_base + k * n_count + n; }, m_count, n_count, k_count, &iout,
        bi * m_count * n_count);
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, a->dtype(), out_shape));
  for (int64_t i = 0; i < out_count; ++i) out.SetUint64(i, iout[i]);
  return Single(std::move(out));
}

StatusOr<std::vector<Value>> GemmKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireMatmulType(ctx, *a, *b));
  if (a->rank() != 2 || b->rank() != 2) {
    return ctx.Error("Gemm operands must be 2-D, got ", a->Description(), " and ", b->Description());
  }
  const bool trans_a = ctx.GetInt("transA", 0) != 0;
  const bool trans_b = ctx.GetInt("transB", 0) != 0;
  const double alpha = ctx.GetFloat("alpha", 1.0f);
  const double beta = ctx.GetFloat("beta", 1.0f);
  const int64_t m_count = trans_a ? a->dim(1) : a->dim(0);
  const int64_t k_count = trans_a ? a->dim(0) : a->dim(1);
  const int64_t kb = trans_b ? b->dim(1) : b->dim(0);
  const int64_t n_count = trans_b ? b->dim(0) : b->dim(1);
  if (kb != k_count) {
    return ctx.Error("inner dimensions differ: A' has K=", k_count, ", B' has K=", kb);
  }
  const Shape out_shape{m_count, n_count};
  const Tensor* c = nullptr;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(c, ctx.RequireTensor(2));
    if (c->dtype() != a->dtype()) return ctx.Error("input C must have the type of A, got ", c->Description());
    PARITY_ASSIGN_OR_RETURN(Shape bc, BroadcastShapes(ctx, {c->shape(), out_shape}));
    if (bc != out_shape || c->rank() > 2) {
      return ctx.Error("input C ", c->Description(), " cannot be broadcast to ", ShapeToString(out_shape));
    }
  } else if (ctx.opset() < 11) {
    return ctx.Error("input C is required before opset 11");
  }
  const bool is_float = IsFloatingPoint(a->dtype());
  const int64_t out_count = m_count * n_count;
  std::vector<double> fout(is_float ? out_count : 0);
  std::vector<uint64_t> iout(is_float ? 0 : out_count);
  const int64_t a_cols = a->dim(1);
  const int64_t b_cols = b->dim(1);
  if (is_float) {
    bool a_finite = false, b_finite = false;
    const DoubleBuffer ad = ReadAllDoubles(*a, &a_finite);
    const DoubleBuffer bd = ReadAllDoubles(*b, &b_finite);
    const MatrixView av{ad.get(), a_cols, trans_a, a_finite}, bv{bd.get(), b_cols, trans_b, b_finite};
    if (ctx.float32_sums()) {
      GemmInOrder(m_count, n_count, k_count, av, bv, fout.data(), n_count, IsFloat32OrHalf(a->dtype()));
    } else {
      GemmDouble(m_count, n_count, k_count, av, bv, fout.data(), n_count);
    }
  } else {
    MultiplyIntegers(
        *a, *b, [&](int64_t m, int64_t k) { return trans_a ? k * a_cols + m : m * a_cols + k; },
        [&](int64_t k, int64_t n) { return trans_b ? n * b_cols + k : k * b_cols + n; }, m_count, n_count,
        k_count, &iout, 0);
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, a->dtype(), out_shape));
  const BroadcastIndexer c_index(c ? c->shape() : Shape{}, out_shape);
  // Integers stay exact when alpha = beta = 1; otherwise the float scaling
  // makes the result a double, truncated like numpy's astype.
  const bool exact_int = !is_float && alpha == 1.0 && beta == 1.0;
  for (int64_t i = 0; i < out_count; ++i) {
    if (exact_int) {
      out.SetUint64(i, c ? WrapAdd(iout[i], c->GetUint64(c_index(i))) : iout[i]);
      continue;
    }
    const double product = is_float ? fout[i] : IntToDouble(a->dtype(), iout[i]);
    double y = alpha * product;
    if (c) y += beta * c->GetDouble(c_index(i));
    out.SetDouble(i, y);
  }
  return Single(std::move(out));
}

}  // namespace parity::ops
