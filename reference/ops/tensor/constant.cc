// Kernels that make values from attributes or from nothing but a shape:
// Identity, Constant, ConstantOfShape, EyeLike and Range.
#include <cmath>
#include <limits>

#include "reference/model/tensor_io.h"
#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// Densifies Constant's sparse_value (SparseTensorProto, IR "Sparse tensors"):
// `indices` is int64, either [NNZ] linear indices into the dense shape or
// [NNZ, rank] coordinates; unlisted elements are zero.
StatusOr<Tensor> DensifySparse(const KernelContext& ctx, const onnx::SparseTensorProto& sparse) {
  const Shape dims(sparse.dims().begin(), sparse.dims().end());
  StatusOr<Tensor> values = TensorFromProto(sparse.values());
  if (!values.ok()) return values.status().WithContext(ctx.NodeLabel() + ": sparse_value.values");
  StatusOr<Tensor> indices = TensorFromProto(sparse.indices());
  if (!indices.ok()) return indices.status().WithContext(ctx.NodeLabel() + ": sparse_value.indices");
  const Tensor& v = *values;
  const Tensor& idx = *indices;
  if (v.rank() != 1) return ctx.Error("sparse_value.values must be 1-D, got ", v.Description());
  if (!IsInteger(idx.dtype())) return ctx.Error("sparse_value.indices must be integers, got ", idx.Description());
  const int64_t nnz = v.dim(0);
  const int64_t rank = static_cast<int64_t>(dims.size());
  PARITY_ASSIGN_OR_RETURN(Tensor dense, Allocate(ctx, v.dtype(), dims));
  const bool linear = idx.rank() == 1;
  if (!(linear && idx.dim(0) == nnz) && !(idx.rank() == 2 && idx.dim(0) == nnz && idx.dim(1) == rank)) {
    return ctx.Error("sparse_value.indices has shape ", ShapeToString(idx.shape()), " for ", nnz,
                     " values of a rank-", rank, " tensor");
  }
  const std::vector<int64_t> strides = Strides(dims);
  ElementCopier copy(v, dense);
  for (int64_t n = 0; n < nnz; ++n) {
    int64_t flat = 0;
    if (linear) {
      flat = idx.GetInt64(n);
      if (flat < 0 || flat >= dense.size()) return ctx.Error("sparse_value index ", flat, " is out of range");
    } else {
      for (int64_t a = 0; a < rank; ++a) {
        const int64_t i = idx.GetInt64(n * rank + a);
        if (i < 0 || i >= dims[static_cast<size_t>(a)]) {
          return ctx.Error("sparse_value index ", i, " is out of range for axis ", a);
        }
        flat += i * strides[static_cast<size_t>(a)];
      }
    }
    copy(n, flat);
  }
  return dense;
}

}  // namespace

KernelResult IdentityKernel(const KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input 0 is required but absent");
  return std::vector<Value>{ctx.input(0)};
}

KernelResult ConstantKernel(const KernelContext& ctx) {
  // Exactly one of these attributes holds the value (opset 12 added the
  // value_* forms; opset 11 added sparse_value).
  static constexpr const char* kForms[] = {"value",      "sparse_value",  "value_float",  "value_floats",
                                           "value_int",  "value_ints",    "value_string", "value_strings"};
  const onnx::AttributeProto* found = nullptr;
  for (const char* name : kForms) {
    if (const auto* a = ctx.attribute(name)) {
      if (found) return ctx.Error("attributes '", found->name(), "' and '", name, "' are both set; exactly one may be");
      found = a;
    }
  }
  if (!found) return ctx.Error("no value attribute (value, sparse_value or value_*) is set");
  const std::string& form = found->name();
  if (form == "value") return Single(ctx.GetTensor("value"));
  if (form == "sparse_value") {
    if (!found->has_sparse_tensor()) return ctx.Error("attribute 'sparse_value' holds no sparse tensor");
    return Single(DensifySparse(ctx, found->sparse_tensor()));
  }
  if (form == "value_float") {
    if (!found->has_f()) return ctx.Error("attribute 'value_float' holds no float");
    return Single(Tensor::Scalar(DataType::kFloat, found->f()));
  }
  if (form == "value_floats") {
    const std::vector<float> floats = ctx.GetFloats(form);
    std::vector<double> values(floats.begin(), floats.end());
    const int64_t n = static_cast<int64_t>(values.size());
    return Single(Tensor::FromDoubles(DataType::kFloat, {n}, values));
  }
  if (form == "value_int") {
    if (!found->has_i()) return ctx.Error("attribute 'value_int' holds no integer");
    return Single(Int64Scalar(found->i()));
  }
  if (form == "value_ints") {
    const std::vector<int64_t> ints = ctx.GetInts(form);
    return Single(Tensor::FromInt64s({static_cast<int64_t>(ints.size())}, ints));
  }
  std::vector<std::string> strings;
  Shape shape;
  if (form == "value_string") {
    if (!found->has_s()) return ctx.Error("attribute 'value_string' holds no string");
    strings = {found->s()};
  } else {
    strings = ctx.GetStrings(form);
    shape = {static_cast<int64_t>(strings.size())};
  }
  PARITY_ASSIGN_OR_RETURN(Tensor t, Allocate(ctx, DataType::kString, shape));
  t.mutable_strings() = std::move(strings);
  return Single(std::move(t));
}

KernelResult ConstantOfShapeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* shape_input, ctx.RequireTensor(0));
  if (shape_input->dtype() != DataType::kInt64 || shape_input->rank() != 1) {
    return ctx.Error("input 'input' must be a 1-D int64 tensor, got ", shape_input->Description());
  }
  const Shape shape = shape_input->ToInt64s();
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error("shape ", ShapeToString(shape), " has a negative dimension");
  }
  Tensor value = Tensor::Scalar(DataType::kFloat, 0.0);  // the default: float32 zero
  if (ctx.has_attribute("value")) {
    PARITY_ASSIGN_OR_RETURN(value, ctx.GetTensor("value"));
    if (value.size() != 1) return ctx.Error("attribute 'value' must hold one element, got ", value.Description());
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, value.dtype(), shape));
  FillWith(out, value, 0);
  return Single(std::move(out));
}

KernelResult EyeLikeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  if (input->rank() != 2) return ctx.Error("input must be 2-D, got ", input->Description());
  DataType dtype = input->dtype();
  if (ctx.has_attribute("dtype")) {
    const int64_t d = ctx.GetInt("dtype", 0);
    if (d > kMaxDataType || d < 0 || !IsKnownDataType(static_cast<int32_t>(d))) {
      return ctx.Error("attribute 'dtype' = ", d, " is not a tensor element type");
    }
    dtype = static_cast<DataType>(d);
  }
  if (dtype == DataType::kString) return ctx.Error("EyeLike cannot make a string tensor");
  const int64_t k = ctx.GetInt("k", 0);
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, input->shape()));
  const int64_t rows = input->dim(0);
  const int64_t cols = input->dim(1);
  // Ones at column r + k; a k beyond the matrix (any int64) leaves it zero.
  if (k < cols && k > -rows) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r + k;
      if (c >= 0 && c < cols) out.SetDouble(r * cols + c, 1.0);
    }
  }
  return Single(std::move(out));
}

KernelResult RangeKernel(const KernelContext& ctx) {
  const Tensor* args[3];
  for (size_t i = 0; i < 3; ++i) {
    PARITY_ASSIGN_OR_RETURN(args[i], ctx.RequireTensor(i));
    if (args[i]->size() != 1) return ctx.Error("input ", i, " must be a scalar, got ", args[i]->Description());
    if (args[i]->dtype() != args[0]->dtype()) return ctx.Error("inputs must share one type");
  }
  const DataType dtype = args[0]->dtype();
  if (IsInteger(dtype)) {
    // Exact integer arithmetic: the span is measured in uint64 so that
    // limit - start never overflows.
    const int64_t start = args[0]->GetInt64(0);
    const int64_t limit = args[1]->GetInt64(0);
    const int64_t delta = args[2]->GetInt64(0);
    if (delta == 0) return ctx.Error("delta must not be zero");
    uint64_t count = 0;
    if (delta > 0 && limit > start) {
      const uint64_t span = static_cast<uint64_t>(limit) - static_cast<uint64_t>(start);
      const uint64_t step = static_cast<uint64_t>(delta);
      count = span / step + (span % step != 0);
    } else if (delta < 0 && limit < start) {
      const uint64_t span = static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
      const uint64_t step = uint64_t{0} - static_cast<uint64_t>(delta);
      count = span / step + (span % step != 0);
    }
    PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, {static_cast<int64_t>(count)}));
    for (uint64_t i = 0; i < count; ++i) {
      out.SetInt64(static_cast<int64_t>(i),
                   static_cast<int64_t>(static_cast<uint64_t>(start) + i * static_cast<uint64_t>(delta)));
    }
    return Single(std::move(out));
  }
  if (!IsFloatingPoint(dtype)) return ctx.Error("unsupported type ", DataTypeName(dtype));
  // Floats: count and values in double, each value rounded once (the ground
  // truth; Range 27's stash_type only bounds the precision of an implementation).
  const double start = args[0]->GetDouble(0);
  const double limit = args[1]->GetDouble(0);
  const double delta = args[2]->GetDouble(0);
  if (delta == 0 || !std::isfinite(delta) || !std::isfinite(start) || std::isnan(limit)) {
    return ctx.Error("start, limit and delta must be finite and delta non-zero (got ", start, ", ", limit, ", ",
                     delta, ")");
  }
  const double steps = std::ceil((limit - start) / delta);
  if (!(steps < 9.0e15)) return ctx.Error("range of ", steps, " elements is too large");
  const int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, {count}));
  for (int64_t i = 0; i < count; ++i) out.SetDouble(i, start + static_cast<double>(i) * delta);
  return Single(std::move(out));
}

}  // namespace parity::ops::tensor
