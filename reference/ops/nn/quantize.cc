// QuantizeLinear and DequantizeLinear (10, 13, 19, 21, 23, 24, 25, 28) and
// DynamicQuantizeLinear (11).
//
// Granularity comes from the scale's shape: per tensor (one element), per
// axis (1-D along `axis`), or blocked (the input's shape with `axis` divided
// into ceil(D / block_size) blocks). The division x / scale is carried out in
// the precision the spec names (the `precision` attribute, else the scale's
// type), i.e. rounded once to that type, then rounded half to even to the
// integer and saturated. Dequantisation computes (x - zero) * scale exactly
// and rounds once to the output type.
#include <cmath>

#include "reference/core/float_formats.h"
#include "reference/ops/common.h"
#include "reference/ops/nn/nn.h"
#include "reference/ops/nn/quant.h"

namespace parity::ops::nn {

namespace {

// Maps a flat index of the input to the flat index of its scale / zero point.
struct ParamLayout {
  enum class Kind { kTensor, kAxis, kBlocked } kind = Kind::kTensor;
  int64_t axis_dim = 1;    // D: the input's extent along the axis
  int64_t inner = 1;       // elements after the axis
  int64_t block = 1;       // block_size (blocked)
  int64_t param_dim = 1;   // the scale's extent along the axis (blocked)

  int64_t operator()(int64_t i) const {
    switch (kind) {
      case Kind::kTensor: return 0;
      case Kind::kAxis: return (i / inner) % axis_dim;
      case Kind::kBlocked: {
        const int64_t outer = i / (axis_dim * inner);
        const int64_t a = (i / inner) % axis_dim;
        return (outer * param_dim + a / block) * inner + i % inner;
      }
    }
    return 0;
  }
};

StatusOr<ParamLayout> ResolveLayout(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
  ParamLayout layout;
  if (scale.size() == 1 && (scale.rank() <= 1 || scale.rank() == x.rank())) return layout;
  if (ctx.opset() < 13) return ctx.Error("scale must be a scalar before opset 13, got ", scale.Description());
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 1), x.rank()));
  layout.axis_dim = x.dim(axis);
  for (int64_t d = axis + 1; d < x.rank(); ++d) layout.inner *= x.dim(d);
  const int64_t block = ctx.GetInt("block_size", 0);
  if (block < 0) return ctx.Error("block_size must be non-negative, got ", block);
  if (block == 0) {
    if (scale.rank() != 1 || scale.dim(0) != layout.axis_dim) {
      return ctx.Error("per-axis scale must be 1-D of length ", layout.axis_dim, " (axis ", axis, " of ",
                       ShapeToString(x.shape()), "), got ", ShapeToString(scale.shape()));
    }
    layout.kind = ParamLayout::Kind::kAxis;
    return layout;
  }
  // Blocked: the same shape as x except along the axis, where each scale covers `block` elements.
  bool ok = scale.rank() == x.rank();
  for (int64_t d = 0; ok && d < x.rank(); ++d) {
    if (d != axis && scale.dim(d) != x.dim(d)) ok = false;
  }
  const int64_t s = ok ? scale.dim(axis) : 0;
  if (!ok || s * block < layout.axis_dim || (s - 1) * block >= layout.axis_dim) {
    return ctx.Error("blocked scale of shape ", ShapeToString(scale.shape()), " does not fit input ",
                     ShapeToString(x.shape()), " with axis ", axis, " and block_size ", block);
  }
  layout.kind = ParamLayout::Kind::kBlocked;
  layout.block = block;
  layout.param_dim = s;
  return layout;
}

// `value` rounded to the precision of type t (a float type), or unchanged.
double RoundToPrecision(double value, DataType t) {
  switch (t) {
    case DataType::kFloat: return static_cast<double>(RoundToFloat(value));
    case DataType::kFloat16:
    case DataType::kBfloat16: return DecodeSmallFloat(t, EncodeSmallFloat(t, value));
    default: return value;
  }
}

bool IsQuantizedType(DataType t) {
  switch (t) {
    case DataType::kInt8: case DataType::kUint8: case DataType::kInt16: case DataType::kUint16:
    case DataType::kInt4: case DataType::kUint4: case DataType::kInt2: case DataType::kUint2:
    case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ: case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: case DataType::kFloat4E2M1: case DataType::kFloat6E2M3:
    case DataType::kFloat6E3M2:
      return true;
    default:
      return false;
  }
}

Status CheckZeroPoint(const KernelContext& ctx, const Tensor& zero, const Tensor& scale) {
  if (zero.shape() != scale.shape() && !(zero.size() == 1 && scale.size() == 1)) {
    return ctx.Error("zero point shape ", ShapeToString(zero.shape()), " differs from scale shape ",
                     ShapeToString(scale.shape()));
  }
  return Status::Ok();
}

}  // namespace

KernelResult QuantizeLinear(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
  const Tensor* zero = ctx.has_input(2) ? &ctx.tensor(2) : nullptr;
  if (!IsFloatingPoint(x->dtype()) && x->dtype() != DataType::kInt32) {
    return ctx.Error("x must be a float or int32 tensor, got ", x->Description());
  }
  const int64_t output_dtype = ctx.GetInt("output_dtype", 0);
  DataType out_type = DataType::kUint8;
  if (zero != nullptr) {
    out_type = zero->dtype();
    if (output_dtype != 0 && output_dtype != static_cast<int64_t>(out_type)) {
      return ctx.Error("output_dtype ", output_dtype, " differs from y_zero_point's type ", DataTypeName(out_type));
    }
    PARITY_RETURN_IF_ERROR(CheckZeroPoint(ctx, *zero, *scale));
  } else if (output_dtype != 0) {
    if (!IsKnownDataType(static_cast<int32_t>(output_dtype))) return ctx.Error("unknown output_dtype ", output_dtype);
    out_type = static_cast<DataType>(output_dtype);
  }
  if (!IsQuantizedType(out_type)) return ctx.Error("cannot quantize to ", DataTypeName(out_type));
  const int64_t precision_attr = ctx.GetInt("precision", 0);
  if (precision_attr != 0 && !IsKnownDataType(static_cast<int32_t>(precision_attr))) {
    return ctx.Error("unknown precision ", precision_attr);
  }
  const DataType precision = precision_attr != 0 ? static_cast<DataType>(precision_attr) : scale->dtype();
  const bool saturate = ctx.GetInt("saturate", 1) != 0;
  PARITY_ASSIGN_OR_RETURN(ParamLayout layout, ResolveLayout(ctx, *x, *scale));
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, out_type, x->shape()));
  const bool integer = IsInteger(out_type);
  for (int64_t i = 0; i < x->size(); ++i) {
    const int64_t p = layout(i);
    const double q = RoundToPrecision(x->GetDouble(i) / scale->GetDouble(p), precision);
    if (integer) {
      // round(x / scale) + zero, then saturate: the zero point is added after rounding.
      const double rounded = std::isnan(q) ? 0.0 : std::nearbyint(q);
      const double shifted = rounded + (zero ? static_cast<double>(zero->GetInt64(p)) : 0.0);
      y.SetInt64(i, RoundAndSaturate(shifted, out_type));
    } else {
      y.SetDouble(i, q + (zero ? zero->GetDouble(p) : 0.0), saturate);
    }
  }
  return Single(std::move(y));
}

KernelResult DequantizeLinear(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireTensor(1));
  const Tensor* zero = ctx.has_input(2) ? &ctx.tensor(2) : nullptr;
  if (!IsQuantizedType(x->dtype()) && x->dtype() != DataType::kInt32) {
    return ctx.Error("cannot dequantize ", x->Description());
  }
  if (!IsFloatingPoint(scale->dtype())) return ctx.Error("x_scale must be floating point, got ", scale->Description());
  if (zero != nullptr) {
    if (zero->dtype() != x->dtype()) {
      return ctx.Error("x_zero_point has type ", DataTypeName(zero->dtype()), ", x has ", DataTypeName(x->dtype()));
    }
    PARITY_RETURN_IF_ERROR(CheckZeroPoint(ctx, *zero, *scale));
  }
  DataType out_type = scale->dtype();
  const int64_t output_dtype = ctx.GetInt("output_dtype", 0);
  if (output_dtype != 0) {
    if (!IsKnownDataType(static_cast<int32_t>(output_dtype)) ||
        !IsFloatingPoint(static_cast<DataType>(output_dtype))) {
      return ctx.Error("output_dtype ", output_dtype, " is not a floating-point type");
    }
    out_type = static_cast<DataType>(output_dtype);
  }
  PARITY_ASSIGN_OR_RETURN(ParamLayout layout, ResolveLayout(ctx, *x, *scale));
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, out_type, x->shape()));
  const bool integer = IsInteger(x->dtype());
  for (int64_t i = 0; i < x->size(); ++i) {
    const int64_t p = layout(i);
    double centred;
    if (integer) {
      centred = static_cast<double>(x->GetInt64(i) - (zero ? zero->GetInt64(p) : 0));
    } else {
      centred = x->GetDouble(i) - (zero ? zero->GetDouble(p) : 0.0);
    }
    y.SetDouble(i, centred * scale->GetDouble(p));
  }
  return Single(std::move(y));
}

// y_scale = (max(0, max x) - min(0, min x)) / 255, rounded to float; when that
// range is 0 (all zeros) the scale is 1/255, as ONNX's reference chooses, so
// that x / y_scale stays defined. y_zero_point = saturate(round(0 - min / y_scale)),
// and y quantizes x with them (x / y_scale in float precision, as QuantizeLinear).
KernelResult DynamicQuantizeLinear(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (!IsFloatingPoint(x->dtype())) return ctx.Error("x must be floating point, got ", x->Description());
  const std::vector<double> xv = x->ToDoubles();
  double hi = 0.0;
  double lo = 0.0;
  for (double v : xv) {
    if (std::isnan(v)) continue;
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  const double range = hi == lo ? 1.0 : hi - lo;
  const double scale = RoundToPrecision(range / 255.0, DataType::kFloat);
  const double zero = static_cast<double>(RoundAndSaturate(0.0 - lo / scale, DataType::kUint8));
  PARITY_ASSIGN_OR_RETURN(Tensor y, Allocate(ctx, DataType::kUint8, x->shape()));
  for (int64_t i = 0; i < x->size(); ++i) {
    const double q = RoundToPrecision(xv[static_cast<size_t>(i)] / scale, DataType::kFloat);
    const double rounded = std::isnan(q) ? 0.0 : std::nearbyint(q);
    y.SetInt64(i, RoundAndSaturate(rounded + zero, DataType::kUint8));
  }
  PARITY_ASSIGN_OR_RETURN(Tensor y_scale, Allocate(ctx, x->dtype(), {}));
  y_scale.SetDouble(0, scale);
  PARITY_ASSIGN_OR_RETURN(Tensor y_zero, Allocate(ctx, DataType::kUint8, {}));
  y_zero.SetInt64(0, static_cast<int64_t>(zero));
  return std::vector<Value>{Value::FromTensor(std::move(y)), Value::FromTensor(std::move(y_scale)),
                            Value::FromTensor(std::move(y_zero))};
}

}  // namespace parity::ops::nn
