// Kernels that join, cut or repeat tensors along axes: Concat, Split, Tile.
#include <limits>

#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::ops::tensor {
namespace {

// Copies a block of `input` ([outer, width, inner] viewed around one axis)
// into `out` at axis offset `offset`; `out_width` is out's extent on that axis.
void CopyAlongAxis(const Tensor& input, int64_t in_begin, int64_t width, int64_t in_width, Tensor& out,
                   int64_t out_offset, int64_t out_width, int64_t outer, int64_t inner) {
  ElementCopier copy(input, out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < width; ++j) {
      const int64_t src = (o * in_width + in_begin + j) * inner;
      const int64_t dst = (o * out_width + out_offset + j) * inner;
      for (int64_t i = 0; i < inner; ++i) copy(src + i, dst + i);
    }
  }
}

int64_t Product(const Shape& shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t a = begin; a < end; ++a) p *= shape[static_cast<size_t>(a)];
  return p;
}

}  // namespace

KernelResult ConcatKernel(const KernelContext& ctx) {
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
    inputs.push_back(t);
  }
  if (inputs.empty()) return ctx.Error("needs at least one input");
  const Tensor& first = *inputs[0];
  if (first.rank() == 0) return ctx.Error("cannot concatenate scalars");
  // Opset 1 defaulted the axis to 1; from opset 4 it is required.
  if (ctx.opset() >= 4 && !ctx.has_attribute("axis")) return ctx.Error("attribute 'axis' is required");
  PARITY_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 1), first.rank()));
  Shape out_shape = first.shape();
  out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (t.dtype() != first.dtype() || t.rank() != first.rank()) {
      return ctx.Error("input ", i, " (", t.Description(), ") does not match input 0 (", first.Description(), ")");
    }
    for (int64_t a = 0; a < t.rank(); ++a) {
      if (a != axis && t.dim(a) != first.dim(a)) {
        return ctx.Error("input ", i, " (", t.Description(), ") differs from input 0 (", first.Description(),
                         ") on axis ", a);
      }
    }
    out_shape[static_cast<size_t>(axis)] += t.dim(axis);
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, first.dtype(), out_shape));
  const int64_t outer = Product(out_shape, 0, axis);
  const int64_t inner = Product(out_shape, axis + 1, first.rank());
  int64_t offset = 0;
  for (const Tensor* t : inputs) {
    const int64_t width = t->dim(axis);
    CopyAlongAxis(*t, 0, width, width, out, offset, out_shape[static_cast<size_t>(axis)], outer, inner);
    offset += width;
  }
  return Single(std::move(out));
}

KernelResult SplitKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  if (input->rank() == 0) return ctx.Error("cannot split a scalar");
  PARITY_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), input->rank()));
  const int64_t dim = input->dim(axis);
  const int64_t outputs = static_cast<int64_t>(ctx.output_count());
  // Where the split lengths come from changed across versions: opset 1 took
  // an optional input or an attribute, 2 and 11 the attribute, 13 the input,
  // and 18 the input or num_outputs (the last chunk smaller when uneven).
  std::vector<int64_t> split;
  bool have_split = false;
  if (ctx.opset() < 13 && ctx.has_attribute("split")) {
    split = ctx.GetInts("split");
    have_split = true;
  }
  if ((ctx.opset() == 1 || ctx.opset() >= 13) && ctx.has_input(1)) {
    PARITY_ASSIGN_OR_RETURN(split, ReadIntegerInput(ctx, 1, "split"));
    have_split = true;
  }
  if (ctx.opset() >= 18 && ctx.has_attribute("num_outputs")) {
    if (have_split) return ctx.Error("input 'split' and attribute 'num_outputs' are both given");
    const int64_t n = ctx.GetInt("num_outputs", 0);
    if (n < 1) return ctx.Error("num_outputs ", n, " must be at least 1");
    if (n != outputs) return ctx.Error("num_outputs ", n, " differs from the node's ", outputs, " outputs");
    const int64_t chunk = dim / n + (dim % n != 0);
    const int64_t last = dim - chunk * (n - 1);
    if (last < 0) return ctx.Error("cannot split ", dim, " elements into ", n, " chunks of ", chunk);
    split.assign(static_cast<size_t>(n - 1), chunk);
    split.push_back(last);
    have_split = true;
  }
  if (!have_split) {
    if (outputs < 1 || dim % outputs != 0) {
      return ctx.Error("axis of size ", dim, " cannot be split evenly into ", outputs, " outputs");
    }
    split.assign(static_cast<size_t>(outputs), dim / outputs);
  }
  if (static_cast<int64_t>(split.size()) != outputs) {
    return ctx.Error("split has ", split.size(), " lengths for ", outputs, " outputs");
  }
  int64_t total = 0;
  for (int64_t s : split) {
    if (s < 0 || s > dim) return ctx.Error("split length ", s, " is invalid for an axis of size ", dim);
    total += s;
  }
  if (total != dim) return ctx.Error("split lengths sum to ", total, ", not the axis size ", dim);
  const int64_t outer = Product(input->shape(), 0, axis);
  const int64_t inner = Product(input->shape(), axis + 1, input->rank());
  std::vector<Value> results;
  int64_t begin = 0;
  for (int64_t s : split) {
    Shape shape = input->shape();
    shape[static_cast<size_t>(axis)] = s;
    PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, input->dtype(), shape));
    CopyAlongAxis(*input, begin, s, dim, out, 0, s, outer, inner);
    begin += s;
    results.push_back(Value::FromTensor(std::move(out)));
  }
  return results;
}

KernelResult TileKernel(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  const int64_t rank = input->rank();
  std::vector<int64_t> repeats(static_cast<size_t>(rank), 1);
  if (ctx.opset() < 6) {
    // Opset 1: inputs (input, tiles, axis), both scalars: repeat one axis.
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> tiles, ReadIntegerInput(ctx, 1, "tiles"));
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ReadIntegerInput(ctx, 2, "axis"));
    if (tiles.size() != 1 || axis.size() != 1) return ctx.Error("'tiles' and 'axis' must be scalars");
    PARITY_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(ctx, axis[0], rank));
    repeats[static_cast<size_t>(a)] = tiles[0];
  } else {
    PARITY_ASSIGN_OR_RETURN(repeats, ReadIntegerInput(ctx, 1, "repeats"));
    if (static_cast<int64_t>(repeats.size()) != rank) {
      return ctx.Error("repeats has ", repeats.size(), " entries for a rank-", rank, " input");
    }
  }
  Shape shape = input->shape();
  for (size_t a = 0; a < shape.size(); ++a) {
    if (repeats[a] < 0) return ctx.Error("repeat count ", repeats[a], " is negative");
    if (repeats[a] != 0 && shape[a] > std::numeric_limits<int64_t>::max() / repeats[a]) {
      return ctx.Error("tiled shape overflows");
    }
    shape[a] *= repeats[a];
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, input->dtype(), shape));
  if (out.size() == 0) return Single(std::move(out));
  const std::vector<int64_t> in_strides = Strides(input->shape());
  ElementCopier copy(*input, out);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t dst = 0; dst < out.size(); ++dst) {
    int64_t src = 0;
    for (size_t a = 0; a < index.size(); ++a) src += (index[a] % input->shape()[a]) * in_strides[a];
    copy(src, dst);
    NextIndex(index, shape);
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::tensor
