// Kernels that change or report a shape without reordering data: Shape,
// Size, Reshape, Flatten, Squeeze, Unsqueeze and Expand.
#include <algorithm>
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// Squeeze and Unsqueeze take `axes` as an attribute before opset 13 and as
// an input from 13 on. `present` tells whether any was given.
StatusOr<std::vector<int64_t>> AxesOfSqueeze(const KernelContext& ctx, bool* present) {
  if (ctx.opset() < 13) {
    *present = ctx.has_attribute("axes");
    return ctx.GetInts("axes");
  }
  *present = ctx.has_input(1);
  if (!*present) return std::vector<int64_t>{};
  return ReadIntegerInput(ctx, 1, "axes");
}

}  // namespace

KernelResult ShapeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  const int64_t rank = input->rank();
  // Opset 15: start/end select a slice of the shape; negative values count
  // from the back and both clamp to [0, rank].
  auto clamp = [rank](int64_t v) {
    if (v < 0) v = v < -rank ? 0 : v + rank;
    return std::min(v, rank);
  };
  const int64_t start = clamp(ctx.GetInt("start", 0));
  const int64_t end = ctx.has_attribute("end") ? clamp(ctx.GetInt("end", rank)) : rank;
  std::vector<int64_t> dims;
  for (int64_t a = start; a < end; ++a) dims.push_back(input->dim(a));
  return Single(Tensor::FromInt64s({static_cast<int64_t>(dims.size())}, dims));
}

KernelResult SizeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  return Single(Int64Scalar(input->size()));
}

KernelResult ReshapeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  std::vector<int64_t> requested;
  if (ctx.opset() < 5) {
    if (!ctx.has_attribute("shape")) return ctx.Error("attribute 'shape' is required");
    requested = ctx.GetInts("shape");
  } else {
    PARITY_ASSIGN_OR_RETURN(requested, ReadIntegerInput(ctx, 1, "shape"));
  }
  const bool allowzero = ctx.GetInt("allowzero", 0) != 0;
  Shape shape(requested.size());
  int64_t inferred = -1;
  int64_t known = 1;  // product of the dimensions other than the inferred one
  bool has_zero = false;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == -1) {
      if (inferred >= 0) return ctx.Error("shape ", ShapeToString(requested), " has more than one -1");
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) return ctx.Error("shape ", ShapeToString(requested), " has an invalid dimension ", d);
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        // 0 copies the input's dimension at the same position.
        if (static_cast<int64_t>(i) >= data->rank()) {
          return ctx.Error("shape ", ShapeToString(requested), " copies dimension ", i, " of a rank-", data->rank(),
                           " input");
        }
        d = data->dim(static_cast<int64_t>(i));
      }
    }
    shape[i] = d;
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d) {
      return ctx.Error("shape ", ShapeToString(requested), " is too large");
    }
    known *= d;
  }
  if (allowzero && has_zero && inferred >= 0) {
    return ctx.Error("shape ", ShapeToString(requested), " has both 0 and -1 while allowzero is set");
  }
  if (inferred >= 0) {
    if (known == 0 || data->size() % known != 0) {
      return ctx.Error("cannot reshape ", data->Description(), " to ", ShapeToString(requested));
    }
    shape[static_cast<size_t>(inferred)] = data->size() / known;
  } else if (known != data->size()) {
    return ctx.Error("cannot reshape ", data->Description(), " to ", ShapeToString(requested));
  }
  return Single(data->Reshaped(std::move(shape)));
}

KernelResult FlattenKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  const int64_t rank = input->rank();
  int64_t axis = ctx.GetInt("axis", 1);
  // The axis may equal the rank (everything in the first dimension).
  if (axis < -rank || axis > rank) return ctx.Error("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  const Shape& dims = input->shape();
  StatusOr<int64_t> outer = ElementCount(Shape(dims.begin(), dims.begin() + axis));
  StatusOr<int64_t> inner = ElementCount(Shape(dims.begin() + axis, dims.end()));
  if (!outer.ok() || !inner.ok()) return ctx.Error("flattened shape of ", input->Description(), " overflows");
  return Single(input->Reshaped({*outer, *inner}));
}

KernelResult SqueezeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  bool present = false;
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOfSqueeze(ctx, &present));
  PARITY_ASSIGN_OR_RETURN(axes, NormalizeAxes(ctx, axes, data->rank()));
  std::vector<bool> drop(static_cast<size_t>(data->rank()), false);
  if (!present) {
    for (int64_t a = 0; a < data->rank(); ++a) drop[static_cast<size_t>(a)] = data->dim(a) == 1;
  }
  for (int64_t a : axes) {
    if (data->dim(a) != 1) return ctx.Error("cannot squeeze axis ", a, " of size ", data->dim(a));
    drop[static_cast<size_t>(a)] = true;
  }
  Shape shape;
  for (int64_t a = 0; a < data->rank(); ++a) {
    if (!drop[static_cast<size_t>(a)]) shape.push_back(data->dim(a));
  }
  return Single(data->Reshaped(std::move(shape)));
}

KernelResult UnsqueezeKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
  bool present = false;
  PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOfSqueeze(ctx, &present));
  if (!present) return ctx.Error("'axes' is required");
  // Axes index the output, whose rank counts the new dimensions.
  const int64_t out_rank = data->rank() + static_cast<int64_t>(axes.size());
  PARITY_ASSIGN_OR_RETURN(axes, NormalizeAxes(ctx, axes, out_rank));
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) inserted[static_cast<size_t>(a)] = true;
  Shape shape;
  int64_t next = 0;
  for (int64_t a = 0; a < out_rank; ++a) shape.push_back(inserted[static_cast<size_t>(a)] ? 1 : data->dim(next++));
  return Single(data->Reshaped(std::move(shape)));
}

KernelResult ExpandKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* shape_input, ctx.RequireTensor(1));
  if (shape_input->dtype() != DataType::kInt64 || shape_input->rank() != 1) {
    return ctx.Error("input 'shape' must be a 1-D int64 tensor, got ", shape_input->Description());
  }
  const Shape requested = shape_input->ToInt64s();
  for (int64_t d : requested) {
    if (d < 0) return ctx.Error("shape ", ShapeToString(requested), " has a negative dimension");
  }
  PARITY_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx, {input->shape(), requested}));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, input->dtype(), shape));
  const BroadcastIndexer index(input->shape(), shape);
  ElementCopier copy(*input, out);
  for (int64_t i = 0; i < out.size(); ++i) copy(index(i), i);
  return Single(std::move(out));
}

}  // namespace parity::ops::tensor
