// GlobalAveragePool (1, 22), GlobalMaxPool (1, 22), GlobalLpPool (1, 2, 22):
// one value per (N, C) plane over all spatial axes; and MaxUnpool (9, 11, 22),
// which scatters values back to the flat positions MaxPool's Indices name.
#include <cmath>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/window.h"

namespace parity::ops::nn {

namespace {

enum class GlobalKind { kAverage, kMax, kLp };

KernelResult GlobalPool(const KernelContext& ctx, GlobalKind kind) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (x->rank() < 2) return ctx.Error("X must have rank >= 2 (N, C, spatial...), got ", x->Description());
  if (!IsFloatingPoint(x->dtype())) return ctx.Error("X must be a floating-point tensor, got ", x->Description());
  double p = 2.0;
  if (const onnx::AttributeProto* a = ctx.attribute("p")) {
    p = (a->has_f() && !a->has_i()) ? a->f() : static_cast<double>(a->i());
  }
  if (kind == GlobalKind::kLp && !(p > 0)) return ctx.Error("p must be positive, got ", p);
  const int64_t planes = x->dim(0) * x->dim(1);
  const int64_t plane_size = planes == 0 ? 0 : x->size() / planes;
  Shape shape = x->shape();
  for (size_t i = 2; i < shape.size(); ++i) shape[i] = 1;
  std::vector<double> y(static_cast<size_t>(planes), 0.0);
  const std::vector<double> xv = x->ToDoubles();
  for (int64_t c = 0; c < planes; ++c) {
    const double* data = xv.data() + c * plane_size;
    double acc = kind == GlobalKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < plane_size; ++i) {
      switch (kind) {
        case GlobalKind::kAverage: acc += data[i]; break;
        case GlobalKind::kLp: acc += std::pow(std::fabs(data[i]), p); break;
        case GlobalKind::kMax:
          if (data[i] > acc || std::isnan(data[i])) acc = std::isnan(acc) ? acc : data[i];
          break;
      }
    }
    switch (kind) {
      case GlobalKind::kAverage: y[static_cast<size_t>(c)] = acc / static_cast<double>(plane_size); break;
      case GlobalKind::kLp: y[static_cast<size_t>(c)] = std::pow(acc, 1.0 / p); break;
      case GlobalKind::kMax: y[static_cast<size_t>(c)] = acc; break;
    }
  }
  PARITY_ASSIGN_OR_RETURN(Value v, MakeResult(ctx, x->dtype(), shape, y));
  return std::vector<Value>{v};
}

}  // namespace

KernelResult GlobalAveragePool(const KernelContext& ctx) { return GlobalPool(ctx, GlobalKind::kAverage); }
KernelResult GlobalMaxPool(const KernelContext& ctx) { return GlobalPool(ctx, GlobalKind::kMax); }
KernelResult GlobalLpPool(const KernelContext& ctx) { return GlobalPool(ctx, GlobalKind::kLp); }

// The indices address the flat layout of the inferred shape,
// (in - 1) * stride - pad_begin - pad_end + kernel per spatial axis; Y is zero
// except at those positions, which take X's values. With the output_shape
// input, Y has that shape and each position keeps its coordinates in it
// (the inferred block sits at the origin), as ONNX's node tests
// (test_maxunpool_export_with_output_shape) and reference expect; a position
// that does not fit is an error. When two indices coincide the later wins.
KernelResult MaxUnpool(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(1));
  PARITY_RETURN_IF_ERROR(RequireImage(ctx, *x, "X"));
  if (indices->dtype() != DataType::kInt64 || indices->shape() != x->shape()) {
    return ctx.Error("I must be int64 of X's shape ", ShapeToString(x->shape()), ", got ", indices->Description());
  }
  const size_t n = static_cast<size_t>(x->rank() - 2);
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, KernelShape(ctx, {}));
  if (kernel.size() != n) return ctx.Error("kernel_shape has ", kernel.size(), " values, expected ", n);
  std::vector<int64_t> strides = ctx.has_attribute("strides") ? ctx.GetInts("strides") : std::vector<int64_t>(n, 1);
  std::vector<int64_t> pads = ctx.has_attribute("pads") ? ctx.GetInts("pads") : std::vector<int64_t>(2 * n, 0);
  if (strides.size() != n || pads.size() != 2 * n) return ctx.Error("strides or pads have the wrong length");
  Shape shape = {x->dim(0), x->dim(1)};
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] <= 0) return ctx.Error("strides must be positive");
    shape.push_back((x->dim(static_cast<int64_t>(i) + 2) - 1) * strides[i] - pads[i] - pads[n + i] + kernel[i]);
  }
  Shape out_shape = shape;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* output_shape, ctx.RequireTensor(2));
    out_shape = output_shape->ToInt64s();
    if (out_shape.size() != shape.size()) {
      return ctx.Error("output_shape ", ShapeToString(out_shape), " must have rank ", shape.size());
    }
  }
  PARITY_ASSIGN_OR_RETURN(int64_t inferred_count, ElementCount(shape));
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, x->dtype(), out_shape));
  const std::vector<int64_t> out_strides = Strides(out_shape);
  for (int64_t i = 0; i < x->size(); ++i) {
    const int64_t target = indices->GetInt64(i);
    if (target < 0 || target >= inferred_count) {
      return ctx.Error("index ", target, " at position ", i, " is outside the unpooled shape ", ShapeToString(shape));
    }
    int64_t rest = target;
    int64_t offset = 0;
    for (size_t a = shape.size(); a-- > 0;) {
      const int64_t coordinate = rest % shape[a];
      rest /= shape[a];
      if (coordinate >= out_shape[a]) {
        return ctx.Error("index ", target, " at position ", i, " does not fit output_shape ", ShapeToString(out_shape));
      }
      offset += coordinate * out_strides[a];
    }
    y.SetDouble(offset, x->GetDouble(i));
  }
  return Single(std::move(y));
}

}  // namespace parity::ops::nn
