// Kernels that select or place elements by a condition or position:
// NonZero, Compress, Trilu, OneHot and ReverseSequence.
#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// Truthiness of element i in numpy's sense: non-zero number (NaN counts),
// non-empty string.
bool IsNonZero(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kString) return !t.strings()[static_cast<size_t>(i)].empty();
  if (IsComplex(t.dtype())) return t.GetComplex(i) != std::complex<double>(0.0, 0.0);
  if (IsFloatingPoint(t.dtype())) return t.GetDouble(i) != 0.0;
  return t.GetUint64(i) != 0;
}

}  // namespace

KernelResult NonZeroKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x->size(); ++i) {
    if (IsNonZero(*x, i)) hits.push_back(i);
  }
  const int64_t rank = x->rank();
  const int64_t n = static_cast<int64_t>(hits.size());
  // Output [rank, n]: row a holds the a-th coordinate of each hit. A scalar
  // gives [0, n] (the ONNX reference's choice).
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kInt64, {rank, n}));
  const std::vector<int64_t> strides = Strides(x->shape());
  int64_t* o = out.mutable_data<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    int64_t rest = hits[static_cast<size_t>(j)];
    for (int64_t a = 0; a < rank; ++a) {
      o[a * n + j] = rest / strides[static_cast<size_t>(a)];
      rest %= strides[static_cast<size_t>(a)];
    }
  }
  return Single(std::move(out));
}

KernelResult CompressKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* condition, ctx.RequireTensor(1));
  if (condition->dtype() != DataType::kBool || condition->rank() != 1) {
    return ctx.Error("condition must be a 1-D bool tensor, got ", condition->Description());
  }
  // Without an axis the input is flattened first.
  Tensor data = *input;
  int64_t axis = 0;
  if (ctx.has_attribute("axis")) {
    PARITY_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), input->rank()));
  } else {
    data = input->Reshaped({input->size()});
  }
  const int64_t dim = data.dim(axis);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < condition->size(); ++i) {
    if (condition->GetInt64(i) == 0) continue;
    // A condition longer than the axis may only be false beyond it (numpy).
    if (i >= dim) return ctx.Error("condition selects index ", i, " of an axis of size ", dim);
    kept.push_back(i);
  }
  Shape shape = data.shape();
  shape[static_cast<size_t>(axis)] = static_cast<int64_t>(kept.size());
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, data.dtype(), shape));
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= data.dim(a);
  for (int64_t a = axis + 1; a < data.rank(); ++a) inner *= data.dim(a);
  ElementCopier copy(data, out);
  int64_t dst = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : kept) {
      for (int64_t i = 0; i < inner; ++i) copy((o * dim + k) * inner + i, dst++);
    }
  }
  return Single(std::move(out));
}

KernelResult TriluKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  if (input->rank() < 2) return ctx.Error("input must have rank >= 2, got ", input->Description());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> ks, ReadIntegerInput(ctx, 1, "k"));
    if (ks.size() != 1) return ctx.Error("k must hold one value");
    k = ks[0];
  }
  const bool upper = ctx.GetInt("upper", 1) != 0;
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, input->dtype(), input->shape()));
  const int64_t rows = input->dim(input->rank() - 2);
  const int64_t cols = input->dim(input->rank() - 1);
  ElementCopier copy(*input, out);
  for (int64_t i = 0; i < input->size(); ++i) {
    const int64_t c = i % cols;
    const int64_t r = (i / cols) % rows;
    // Keep j - i >= k (upper) or j - i <= k (lower); j - i is small, k any int64.
    const int64_t diff = c - r;
    if (upper ? diff >= k : diff <= k) copy(i, i);
  }
  return Single(std::move(out));
}

KernelResult OneHotKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* indices, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* depth_input, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* values, ctx.RequireTensor(2));
  if (depth_input->size() != 1 || depth_input->dtype() == DataType::kString) {
    return ctx.Error("depth must be one number, got ", depth_input->Description());
  }
  if (values->size() != 2) return ctx.Error("values must hold [off_value, on_value], got ", values->Description());
  if (indices->dtype() == DataType::kString) return ctx.Error("indices must be numbers");
  // Non-integer depth and indices are truncated toward zero.
  const int64_t depth = depth_input->GetInt64(0);
  if (depth < 1 || depth > (int64_t{1} << 40)) return ctx.Error("depth ", depth, " must be positive");
  const int64_t rank = indices->rank();
  int64_t axis = ctx.GetInt("axis", -1);
  if (axis < -(rank + 1) || axis > rank) return ctx.Error("axis ", axis, " is out of range for output rank ", rank + 1);
  if (axis < 0) axis += rank + 1;
  Shape shape = indices->shape();
  shape.insert(shape.begin() + axis, depth);
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, values->dtype(), shape));
  FillWith(out, *values, 0);
  int64_t inner = 1;
  for (int64_t a = axis; a < rank; ++a) inner *= indices->dim(a);
  ElementCopier copy(*values, out);
  for (int64_t i = 0; i < indices->size(); ++i) {
    int64_t index = indices->GetInt64(i);
    if (index < -depth || index >= depth) continue;  // out of range: all off_value
    if (index < 0) index += depth;
    const int64_t o = i / inner;
    const int64_t in = i % inner;
    copy(1, (o * depth + index) * inner + in);
  }
  return Single(std::move(out));
}

KernelResult ReverseSequenceKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* lens, ctx.RequireTensor(1));
  if (input->rank() < 2) return ctx.Error("input must have rank >= 2, got ", input->Description());
  const int64_t batch_axis = ctx.GetInt("batch_axis", 1);
  const int64_t time_axis = ctx.GetInt("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    return ctx.Error("batch_axis ", batch_axis, " and time_axis ", time_axis, " must be 0 and 1 in some order");
  }
  const int64_t batch = input->dim(batch_axis);
  const int64_t time = input->dim(time_axis);
  if (lens->dtype() != DataType::kInt64 || lens->rank() != 1 || lens->dim(0) != batch) {
    return ctx.Error("sequence_lens must be int64 of shape [", batch, "], got ", lens->Description());
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, CloneTensor(ctx, *input));
  int64_t inner = 1;
  for (int64_t a = 2; a < input->rank(); ++a) inner *= input->dim(a);
  const int64_t batch_stride = (batch_axis == 0 ? time : 1) * inner;
  const int64_t time_stride = (time_axis == 0 ? batch : 1) * inner;
  ElementCopier copy(*input, out);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens->GetInt64(b);
    if (len < 0 || len > time) return ctx.Error("sequence length ", len, " is outside [0, ", time, "]");
    for (int64_t t = 0; t < len; ++t) {
      const int64_t src = b * batch_stride + (len - 1 - t) * time_stride;
      const int64_t dst = b * batch_stride + t * time_stride;
      for (int64_t i = 0; i < inner; ++i) copy(src + i, dst + i);
    }
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::tensor
