// AveragePool (1, 7, 10, 11, 19, 22), MaxPool (1, 8, 10, 11, 12, 22) and
// LpPool (1, 2, 11, 18, 22): windows slid over the spatial axes (window.h).
//
// Output position o along an axis reads input positions
// o * stride - pad_begin + j * dilation; positions outside the input are
// padding. Padding never enters a max or a p-norm; an average divides by the
// number of real elements, or with count_include_pad by the number of
// positions inside the padded input [-pad_begin, size + pad_end) (positions
// past that, which only ceil_mode creates, are never counted).
// NaN: a NaN in a window makes its max NaN (as ONNX Max does), and the index
// is that of the first NaN.
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

namespace {

enum class PoolKind { kAverage, kMax, kLp };

struct PoolResult {
  std::vector<double> values;
  std::vector<int64_t> indices;  // MaxPool only: flat input index of each maximum
  Shape shape;
};

// The p of LpPool / GlobalLpPool: a float attribute in version 1, an int later.
double LpExponent(const KernelContext& ctx) {
  const onnx::AttributeProto* a = ctx.attribute("p");
  if (a == nullptr) return 2.0;
  if (a->has_f() && !a->has_i()) return a->f();
  return static_cast<double>(a->i());
}

StatusOr<PoolResult> RunPool(const KernelContext& ctx, const Tensor& x, PoolKind kind) {
  PARITY_RETURN_IF_ERROR(RequireImage(ctx, x, "X"));
  const std::vector<int64_t> input(x.shape().begin() + 2, x.shape().end());
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelShape(ctx, {}));
  const bool ceil_mode = ctx.GetInt("ceil_mode", 0) != 0;
  PARITY_ASSIGN_OR_RETURN(Window win, ResolveWindow(ctx, input, kernel, ceil_mode));
  const bool include_pad = ctx.GetInt("count_include_pad", 0) != 0;
  const int64_t storage_order = ctx.GetInt("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) return ctx.Error("storage_order must be 0 or 1, got ", storage_order);
  const double p = LpExponent(ctx);
  if (kind == PoolKind::kLp && !(p > 0)) return ctx.Error("p must be positive, got ", p);

  const size_t rank = win.rank();
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_size = Product(input);
  const int64_t out_size = Product(win.output);
  const int64_t kernel_size = Product(kernel);
  // Row-major strides, and column-major ones for storage_order = 1 indices.
  std::vector<int64_t> row(rank, 1), column(rank, 1);
  for (size_t i = rank; i-- > 1;) row[i - 1] = row[i] * input[i];
  for (size_t i = 1; i < rank; ++i) column[i] = column[i - 1] * input[i - 1];

  PoolResult r;
  r.shape = {x.dim(0), x.dim(1)};
  r.shape.insert(r.shape.end(), win.output.begin(), win.output.end());
  PARITY_ASSIGN_OR_RETURN(int64_t count, ElementCount(r.shape));
  r.values.assign(static_cast<size_t>(count), 0.0);
  if (kind == PoolKind::kMax) r.indices.assign(static_cast<size_t>(count), 0);
  const std::vector<double> xv = x.ToDoubles();
  std::vector<int64_t> o(rank, 0), k(rank, 0);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const double* data = xv.data() + plane * in_size;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, win.output)) {
      double acc = kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      int64_t best = -1;
      int64_t real = 0;
      int64_t padded = 0;
      std::fill(k.begin(), k.end(), 0);
      for (int64_t kk = 0; kk < kernel_size; ++kk, NextIndex(k, kernel)) {
        bool inside = true;
        bool in_padding = true;
        int64_t offset = 0;
        int64_t column_offset = 0;
        for (size_t a = 0; a < rank; ++a) {
          const int64_t pos = o[a] * win.strides[a] - win.pad_begin[a] + k[a] * win.dilations[a];
          if (pos < -win.pad_begin[a] || pos >= input[a] + win.pad_end[a]) in_padding = false;
          if (pos < 0 || pos >= input[a]) {
            inside = false;
          } else {
            offset += pos * row[a];
            column_offset += pos * column[a];
          }
        }
        if (in_padding) ++padded;
        if (!inside) continue;
        ++real;
        const double v = data[offset];
        switch (kind) {
          case PoolKind::kAverage: acc += v; break;
          case PoolKind::kLp: acc += std::pow(std::fabs(v), p); break;
          case PoolKind::kMax:
            if (best < 0 || v > acc || (std::isnan(v) && !std::isnan(acc))) {
              acc = v;
              best = storage_order == 0 ? offset : column_offset;
            }
            break;
        }
      }
      const size_t out = static_cast<size_t>(plane * out_size + oi);
      switch (kind) {
        case PoolKind::kAverage: {
          const int64_t divisor = include_pad ? padded : real;
          r.values[out] = divisor == 0 ? std::numeric_limits<double>::quiet_NaN() : acc / static_cast<double>(divisor);
          break;
        }
        case PoolKind::kLp: r.values[out] = std::pow(acc, 1.0 / p); break;
        case PoolKind::kMax:
          r.values[out] = acc;
          r.indices[out] = best < 0 ? -1 : plane * in_size + best;
          break;
      }
    }
  }
  return r;
}

Status CheckFloat(const KernelContext& ctx, const Tensor& x) {
  if (!IsFloatingPoint(x.dtype())) return ctx.Error("X must be a floating-point tensor, got ", x.Description());
  return Status::Ok();
}

// AveragePool and LpPool: a float input, one output of its type.
KernelResult FloatPool(const KernelContext& ctx, PoolKind kind) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_RETURN_IF_ERROR(CheckFloat(ctx, *x));
  PARITY_ASSIGN_OR_RETURN(PoolResult r, RunPool(ctx, *x, kind));
  PARITY_ASSIGN_OR_RETURN(Value v, MakeResult(ctx, x->dtype(), r.shape, r.values));
  return std::vector<Value>{v};
}

}  // namespace

KernelResult AveragePool(const KernelContext& ctx) { return FloatPool(ctx, PoolKind::kAverage); }

KernelResult LpPool(const KernelContext& ctx) { return FloatPool(ctx, PoolKind::kLp); }

// A window with no real element (pads at least a kernel wide) has no maximum:
// its value is the lowest of the type (-inf for floats) and its index -1.
KernelResult MaxPool(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  const DataType t = x->dtype();
  if (!IsFloatingPoint(t) && t != DataType::kInt8 && t != DataType::kUint8) {
    return ctx.Error("X must be a floating-point, int8 or uint8 tensor, got ", x->Description());
  }
  PARITY_ASSIGN_OR_RETURN(PoolResult r, RunPool(ctx, *x, PoolKind::kMax));
  if (IsInteger(t)) {
    for (size_t i = 0; i < r.values.size(); ++i) {
      if (r.indices[i] < 0) r.values[i] = static_cast<double>(IntegerMin(t));
    }
  }
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value y, MakeResult(ctx, t, r.shape, r.values));
  outputs.push_back(std::move(y));
  if (ctx.output_requested(1)) {
    PARITY_ASSIGN_OR_RETURN(Tensor indices, Allocate(ctx, DataType::kInt64, r.shape));
    for (size_t i = 0; i < r.indices.size(); ++i) indices.SetInt64(static_cast<int64_t>(i), r.indices[i]);
    outputs.push_back(Value::FromTensor(std::move(indices)));
  }
  return outputs;
}

}  // namespace parity::ops::nn
