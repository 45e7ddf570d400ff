// The nodes the CUDA adapter runs on its own kernels (kernels.cu):
// element-wise unary and binary operators with broadcasting, the Reduce
// operators, Softmax and LogSoftmax, Transpose, Gather, Slice, Expand,
// Concat, Where, Cast among the three float types, RMSNormalization,
// BatchNormalization (inference), RotaryEmbedding and TensorScatter, in float32, float16 and bfloat16 (the
// data movers copy elements of any fixed width bit for bit, but claim only
// those three types: integer data, a model's shape arithmetic, stays on
// the host). The shape-only operators are views (adapters/device/
// view_node.h).
//
// Each node reads its inputs through the context's residency
// (cuda_context.h), launches its kernel on the context's stream, and
// downloads its output. Checks that need the shapes are made at the run,
// on the host, before any launch, with the reference's own messages where
// it has a shared rule (TensorScatter's plan).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <numeric>

#include "adapters/cuda/kernels.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/cuda/strided_views.h"
#include "adapters/device/view_node.h"
#include "reference/ops/attention/tensor_scatter.h"
#include "reference/ops/common.h"
#include "reference/ops/tensor/tensor_util.h"

namespace parity::adapters::cuda {

StatusOr<CudaContext*> NodeContext(const KernelContext& ctx) {
  StatusOr<CudaContext*> context = CudaContext::Get();
  if (!context.ok()) return context.status().WithContext(graph::DescribeNode(ctx.node()));
  return context;
}

Status BringHostInputs(CudaContext& cuda, const KernelContext& ctx) {
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).is_tensor() && !KernelType(ctx.tensor(i).dtype())) {
      PARITY_RETURN_IF_ERROR(cuda.Bring(ctx.tensor(i)).WithContext(ctx.NodeLabel()));
    }
  }
  return Status::Ok();
}

Status Launched(const KernelContext& ctx, int code, std::string_view what) {
  if (code == 0) return Status::Ok();
  return CudaContext::Error(code, StrCat(graph::DescribeNode(ctx.node()), ": ", what));
}

StatusOr<KType> RequireKernelType(const NodeView& view, int input) {
  const std::optional<DataType> type = view.input_type(input);
  if (!type) return NotLowered("the type of input ", input, " is not known before the run");
  const std::optional<KType> kernel_type = KernelType(*type);
  if (!kernel_type) return NotLowered(DataTypeName(*type), " data (the kernels take float32, float16 and bfloat16)");
  return *kernel_type;
}

namespace {

Status RequireRank(const KernelContext& ctx, size_t rank) {
  if (rank > static_cast<size_t>(kMaxRank)) return ctx.Error("rank ", rank, " is over the kernels' ", kMaxRank);
  return Status::Ok();
}

// A node on the adapter's own kernels: its context, its inputs on the
// device, one output buffer, left there (CudaContext::Made).
class KernelNode : public LoweredNode {
 public:
  // Every input a tensor and the device there, then the node's own run.
  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) final {
    PARITY_RETURN_IF_ERROR(RequireTensors(ctx));
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    PARITY_RETURN_IF_ERROR(BringHostInputs(*cuda, ctx));
    return RunOn(cuda, ctx);
  }

 protected:
  virtual StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) = 0;
  // Input i's device bytes (precondition: a tensor input).
  static StatusOr<const void*> In(CudaContext& cuda, const KernelContext& ctx, size_t i) {
    return cuda.DeviceData(ctx.tensor(i));
  }
  static StatusOr<std::vector<Value>> Out(CudaContext& cuda, const std::shared_ptr<DeviceBuffer>& buffer,
                                          DataType type, const Shape& shape) {
    PARITY_ASSIGN_OR_RETURN(Tensor out, cuda.Made(buffer, type, shape));
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }
  static Status RequireTensors(const KernelContext& ctx) {
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && !ctx.input(i).is_tensor()) return ctx.Error("input ", i, " is not a tensor");
    }
    return Status::Ok();
  }
};

// --- Unary ------------------------------------------------------------------

class UnaryNode final : public KernelNode {
 public:
  UnaryNode(KType type, UnaryOp op, float alpha, float beta) : type_(type), op_(op), alpha_(alpha), beta_(beta) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(
        Launched(ctx, LaunchUnary(type_, op_, in, out->data(), x.size(), alpha_, beta_, cuda->stream()), "unary"));
    return Out(*cuda, out, x.dtype(), x.shape());
  }

 private:
  KType type_;
  UnaryOp op_;
  float alpha_, beta_;
};

LowerFn LowerUnary(UnaryOp op, const char* alpha_name = nullptr, float alpha = 0, const char* beta_name = nullptr,
                   float beta = 0) {
  return [=](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
    UnaryOp chosen = op;
    if (view.node().op_type() == "Gelu") {
      const std::string approximate = view.GetString("approximate", "none");
      if (approximate == "tanh") {
        chosen = UnaryOp::kGeluTanh;
      } else if (approximate != "none") {
        return NotLowered("Gelu approximate='", approximate, "'");
      }
    }
    return std::unique_ptr<LoweredNode>(std::make_unique<UnaryNode>(
        type, chosen, alpha_name ? view.GetFloat(alpha_name, alpha) : alpha,
        beta_name ? view.GetFloat(beta_name, beta) : beta));
  };
}

// --- Binary -----------------------------------------------------------------

class BinaryNode final : public KernelNode {
 public:
  BinaryNode(KType type, BinaryOp op) : type_(type), op_(op) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& a = ctx.tensor(0);
    const Tensor& b = ctx.tensor(1);
    if (a.dtype() != b.dtype()) return ctx.Error("inputs of ", a.Description(), " and ", b.Description());
    PARITY_ASSIGN_OR_RETURN(Shape out_dims, ops::BroadcastShapes(ctx, {a.shape(), b.shape()}));
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, out_dims.size()));
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims));
    PARITY_ASSIGN_OR_RETURN(const void* da, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(const void* db, In(*cuda, ctx, 1));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out,
                            cuda->Allocate(static_cast<size_t>(n) * StorageSize(a.dtype())));
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchBinary(type_, op_, da, BroadcastView(a.shape(), out_dims), db,
                                                 BroadcastView(b.shape(), out_dims), out->data(), n, cuda->stream()),
                                    "binary"));
    return Out(*cuda, out, a.dtype(), out_dims);
  }

 private:
  KType type_;
  BinaryOp op_;
};

// Before `since` the operator broadcasts by attribute (Add and the other
// arithmetic before 7) or not at all (Max and Min before 8).
LowerFn LowerBinary(BinaryOp op, int64_t since) {
  return [op, since](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    if (view.opset() < since) return NotLowered("opset ", view.opset(), " (broadcasting differs before ", since, ")");
    if (view.input_count() != 2) return NotLowered(view.input_count(), " inputs (the kernel takes two)");
    PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
    if (view.input_type(1) != view.input_type(0)) return NotLowered("inputs of two types");
    return std::unique_ptr<LoweredNode>(std::make_unique<BinaryNode>(type, op));
  };
}

// --- Softmax ----------------------------------------------------------------

class SoftmaxNode final : public KernelNode {
 public:
  SoftmaxNode(KType type, bool log_softmax, int64_t axis, bool coerced)
      : type_(type), log_(log_softmax), axis_(axis), coerced_(coerced) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const int64_t rank = x.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    // Opset 13's axis is in [-rank, rank - 1]; the coerced form's in [-rank, rank].
    if (axis < 0 || axis > rank || (!coerced_ && axis == rank) || (!coerced_ && rank == 0)) {
      return ctx.Error("axis ", axis_, " is out of range for rank ", rank);
    }
    int64_t outer = 1, length = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t& part = i < axis ? outer : (i == axis || coerced_ ? length : inner);
      part *= x.dim(i);
    }
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(
        Launched(ctx, LaunchSoftmax(type_, log_, in, out->data(), outer, length, inner, cuda->stream()), "softmax"));
    return Out(*cuda, out, x.dtype(), x.shape());
  }

 private:
  KType type_;
  bool log_;
  int64_t axis_;
  bool coerced_;
};

LowerFn LowerSoftmax(bool log_softmax) {
  return [log_softmax](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
    const bool coerced = view.opset() < 13;
    return std::unique_ptr<LoweredNode>(
        std::make_unique<SoftmaxNode>(type, log_softmax, view.GetInt("axis", coerced ? 1 : -1), coerced));
  };
}

// --- Reductions -------------------------------------------------------------

class ReduceNode final : public KernelNode {
 public:
  ReduceNode(KType type, ReduceOp op, bool axes_from_input) : type_(type), op_(op), axes_from_input_(axes_from_input) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const int64_t rank = x.rank();
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, static_cast<size_t>(rank)));
    // The axes, as the reference reads them (reduce.cc): the attribute, or
    // the optional second input, where noop_with_empty_axes may make an
    // empty list reduce nothing.
    std::vector<int64_t> axes;
    if (!axes_from_input_) {
      axes = ctx.GetInts("axes");
    } else if (ctx.has_input(1)) {
      const Tensor& a = ctx.tensor(1);
      if (!IsInteger(a.dtype()) || a.rank() > 1) return ctx.Error("axes must be a 1-D integer tensor, got ", a.Description());
      axes = a.ToInt64s();
    }
    const bool noop = axes_from_input_ && ctx.GetInt("noop_with_empty_axes", 0) != 0;
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop);
    PARITY_ASSIGN_OR_RETURN(axes, ops::tensor::NormalizeAxes(ctx, axes, rank));
    for (int64_t axis : axes) reduced[static_cast<size_t>(axis)] = true;
    const ReduceViews views = MakeReduceViews(x.shape(), reduced, ctx.GetInt("keepdims", 1) != 0);
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out,
                            cuda->Allocate(static_cast<size_t>(views.out_count) * StorageSize(x.dtype())));
    PARITY_RETURN_IF_ERROR(Launched(
        ctx, LaunchReduce(type_, op_, in, views.kept, views.group, out->data(), views.out_count, cuda->stream()),
        "reduction"));
    return Out(*cuda, out, x.dtype(), views.out_dims);
  }

 private:
  KType type_;
  ReduceOp op_;
  bool axes_from_input_;
};

// `axes_input_since`: the opset from which the axes are an input (13 for
// ReduceSum, 18 for the others).
LowerFn LowerReduce(ReduceOp op, int64_t axes_input_since) {
  return [op, axes_input_since](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
    return std::unique_ptr<LoweredNode>(std::make_unique<ReduceNode>(type, op, view.opset() >= axes_input_since));
  };
}

// --- Transpose --------------------------------------------------------------

class TransposeNode final : public KernelNode {
 public:
  explicit TransposeNode(std::optional<std::vector<int64_t>> perm) : perm_(std::move(perm)) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const size_t rank = x.shape().size();
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, rank));
    std::vector<int64_t> perm(rank);
    if (perm_) {
      perm = *perm_;
    } else {
      for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    }
    std::vector<bool> seen(rank, false);
    if (perm.size() != rank) return ctx.Error("perm of ", perm.size(), " axes for rank ", rank);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
        return ctx.Error("perm is not a permutation of the ", rank, " axes");
      }
      seen[static_cast<size_t>(p)] = true;
    }
    const StridedView view = TransposeView(x.shape(), perm);
    Shape out_dims(view.dims, view.dims + rank);
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchStridedCopy(static_cast<int>(StorageSize(x.dtype())), in, view, out->data(),
                                                      x.size(), cuda->stream()),
                                    "transpose"));
    return Out(*cuda, out, x.dtype(), out_dims);
  }

 private:
  std::optional<std::vector<int64_t>> perm_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerTranspose(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  return std::unique_ptr<LoweredNode>(std::make_unique<TransposeNode>(view.GetInts("perm")));
}

// --- Gather -----------------------------------------------------------------

class GatherNode final : public KernelNode {
 public:
  explicit GatherNode(int64_t axis) : axis_(axis) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const Tensor& indices = ctx.tensor(1);
    if (indices.dtype() != DataType::kInt64 && indices.dtype() != DataType::kInt32) {
      return ctx.Error("indices of ", indices.Description(), " (int32 or int64)");
    }
    const int64_t rank = x.rank();
    if (rank == 0 || axis_ < -rank || axis_ >= rank) return ctx.Error("axis ", axis_, " is out of range for rank ", rank);
    const auto axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    const int64_t axis_dim = x.dim(static_cast<int64_t>(axis));
    // Indices are checked and made non-negative here, on the host, where they are.
    PARITY_ASSIGN_OR_RETURN(Tensor wrapped, Tensor::Create(DataType::kInt64, indices.shape()));
    for (int64_t i = 0; i < indices.size(); ++i) {
      const int64_t k = indices.GetInt64(i);
      if (k < -axis_dim || k >= axis_dim) return ctx.Error("index ", k, " is out of range for axis of ", axis_dim);
      wrapped.mutable_data<int64_t>()[i] = k < 0 ? k + axis_dim : k;
    }
    Shape out_dims(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
    out_dims.insert(out_dims.end(), indices.shape().begin(), indices.shape().end());
    out_dims.insert(out_dims.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape().end());
    const int64_t outer = std::accumulate(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis),
                                          int64_t{1}, std::multiplies<>());
    const int64_t inner = std::accumulate(x.shape().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape().end(),
                                          int64_t{1}, std::multiplies<>());
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims));
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(const void* device_indices, cuda->DeviceData(wrapped));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out,
                            cuda->Allocate(static_cast<size_t>(n) * StorageSize(x.dtype())));
    PARITY_RETURN_IF_ERROR(Launched(
        ctx,
        LaunchGather(static_cast<int>(StorageSize(x.dtype())), in, outer, axis_dim, inner,
                     static_cast<const int64_t*>(device_indices), indices.size(), out->data(), cuda->stream()),
        "gather"));
    return Out(*cuda, out, x.dtype(), out_dims);
  }

 private:
  int64_t axis_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerGather(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  return std::unique_ptr<LoweredNode>(std::make_unique<GatherNode>(view.GetInt("axis", 0)));
}

// --- Slice and Expand ---------------------------------------------------------

// Slice-10 and later: a strided view of the input from the first element
// taken, each axis stepping by its step.
class SliceNode final : public KernelNode {
 public:
  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const int64_t rank = x.rank();
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, static_cast<size_t>(rank)));
    if (!ctx.has_input(1) || !ctx.has_input(2)) return ctx.Error("starts and ends are required");
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ops::tensor::ReadIntegerInput(ctx, 1, "starts"));
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ops::tensor::ReadIntegerInput(ctx, 2, "ends"));
    std::vector<int64_t> axes, steps(starts.size(), 1);
    if (ctx.has_input(3)) {
      PARITY_ASSIGN_OR_RETURN(axes, ops::tensor::ReadIntegerInput(ctx, 3, "axes"));
    } else {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (ctx.has_input(4)) {
      PARITY_ASSIGN_OR_RETURN(steps, ops::tensor::ReadIntegerInput(ctx, 4, "steps"));
    }
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
      return ctx.Error("starts, ends, axes and steps must have the same length");
    }
    const std::vector<int64_t> strides = RowMajorStrides(x.shape());
    StridedView view;
    view.rank = static_cast<int>(rank);
    for (int64_t d = 0; d < rank; ++d) view.dims[d] = x.dim(d), view.strides[d] = strides[static_cast<size_t>(d)];
    PARITY_ASSIGN_OR_RETURN(axes, ops::tensor::NormalizeAxes(ctx, axes, rank));
    int64_t base = 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = axes[i];
      if (steps[i] == 0) return ctx.Error("step on axis ", axis, " is zero");
      const SliceAxis slice = SliceOf(x.dim(axis), starts[i], ends[i], steps[i]);
      view.dims[axis] = slice.count;
      view.strides[axis] = strides[static_cast<size_t>(axis)] * steps[i];
      if (slice.count > 0) base += slice.first * strides[static_cast<size_t>(axis)];
    }
    const Shape out_dims(view.dims, view.dims + rank);
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims));
    return Copy(*cuda, ctx, view, base, out_dims, n);
  }

 protected:
  // The elements of input 0 read along `view` from element `base`.
  static StatusOr<std::vector<Value>> Copy(CudaContext& cuda, const KernelContext& ctx, const StridedView& view,
                                           int64_t base, const Shape& out_dims, int64_t n) {
    const Tensor& x = ctx.tensor(0);
    const auto element = static_cast<int64_t>(StorageSize(x.dtype()));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda.Allocate(static_cast<size_t>(n * element)));
    if (n > 0) {
      PARITY_ASSIGN_OR_RETURN(const void* in, In(cuda, ctx, 0));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      LaunchStridedCopy(static_cast<int>(element),
                                                        static_cast<const char*>(in) + base * element, view,
                                                        out->data(), n, cuda.stream()),
                                      "strided copy"));
    }
    return Out(cuda, out, x.dtype(), out_dims);
  }
};

// Expand: the input broadcast to the shape given (numpy rules, both ways).
class ExpandNode final : public KernelNode {
 public:
  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    PARITY_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ops::tensor::ReadIntegerInput(ctx, 1, "shape"));
    PARITY_ASSIGN_OR_RETURN(Shape out_dims, ops::BroadcastShapes(ctx, {x.shape(), shape}));
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, out_dims.size()));
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims));
    const auto element = static_cast<int64_t>(StorageSize(x.dtype()));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(static_cast<size_t>(n * element)));
    if (n > 0) {
      PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      LaunchStridedCopy(static_cast<int>(element), in, BroadcastView(x.shape(), out_dims),
                                                        out->data(), n, cuda->stream()),
                                      "expand"));
    }
    return Out(*cuda, out, x.dtype(), out_dims);
  }
};

StatusOr<std::unique_ptr<LoweredNode>> LowerSlice(const NodeView& view) {
  if (view.opset() < 10) return NotLowered("opset ", view.opset(), " (starts and ends as attributes)");
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  return std::unique_ptr<LoweredNode>(std::make_unique<SliceNode>());
}

StatusOr<std::unique_ptr<LoweredNode>> LowerExpand(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  return std::unique_ptr<LoweredNode>(std::make_unique<ExpandNode>());
}

// --- Cast and Where -------------------------------------------------------------

class CastNode final : public KernelNode {
 public:
  CastNode(KType from, KType to, DataType to_type) : from_(from), to_(to), to_type_(to_type) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out,
                            cuda->Allocate(static_cast<size_t>(x.size()) * StorageSize(to_type_)));
    PARITY_RETURN_IF_ERROR(Launched(ctx, LaunchCast(from_, to_, in, out->data(), x.size(), cuda->stream()), "cast"));
    return Out(*cuda, out, to_type_, x.shape());
  }

 private:
  KType from_, to_;
  DataType to_type_;
};

// Cast between float32, float16 and bfloat16 (rounding to nearest even;
// saturate, from opset 19, concerns only the 8-bit floats).
StatusOr<std::unique_ptr<LoweredNode>> LowerCast(const NodeView& view) {
  PARITY_ASSIGN_OR_RETURN(KType from, RequireKernelType(view, 0));
  const auto to_type = static_cast<DataType>(view.GetInt("to", 0));
  const std::optional<KType> to = KernelType(to_type);
  if (!to) return NotLowered("a cast to type ", view.GetInt("to", 0), " (the kernel casts among float32, float16, bfloat16)");
  return std::unique_ptr<LoweredNode>(std::make_unique<CastNode>(from, *to, to_type));
}

class WhereNode final : public KernelNode {
 public:
  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& c = ctx.tensor(0);
    const Tensor& x = ctx.tensor(1);
    const Tensor& z = ctx.tensor(2);
    if (c.dtype() != DataType::kBool || x.dtype() != z.dtype()) {
      return ctx.Error("inputs of ", c.Description(), ", ", x.Description(), " and ", z.Description());
    }
    PARITY_ASSIGN_OR_RETURN(Shape out_dims, ops::BroadcastShapes(ctx, {c.shape(), x.shape(), z.shape()}));
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, out_dims.size()));
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims));
    PARITY_ASSIGN_OR_RETURN(const void* dc, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(const void* dx, In(*cuda, ctx, 1));
    PARITY_ASSIGN_OR_RETURN(const void* dz, In(*cuda, ctx, 2));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out,
                            cuda->Allocate(static_cast<size_t>(n) * StorageSize(x.dtype())));
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchWhere(static_cast<int>(StorageSize(x.dtype())), dc,
                                                BroadcastView(c.shape(), out_dims), dx, BroadcastView(x.shape(), out_dims),
                                                dz, BroadcastView(z.shape(), out_dims), out->data(), n, cuda->stream()),
                                    "where"));
    return Out(*cuda, out, x.dtype(), out_dims);
  }
};

StatusOr<std::unique_ptr<LoweredNode>> LowerWhere(const NodeView& view) {
  if (view.input_type(0) != DataType::kBool) return NotLowered("a condition not known to be bool");
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 1).status());
  if (view.input_type(2) != view.input_type(1)) return NotLowered("X and Y of two types");
  return std::unique_ptr<LoweredNode>(std::make_unique<WhereNode>());
}

// --- Concat -----------------------------------------------------------------

// Each input, viewed as [outer, its own axis extent * inner], is one 2-D
// copy into its columns of the output.
class ConcatNode final : public KernelNode {
 public:
  explicit ConcatNode(int64_t axis) : axis_(axis) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& first = ctx.tensor(0);
    const int64_t rank = first.rank();
    if (rank == 0) return ctx.Error("Concat of a scalar");
    if (axis_ < -rank || axis_ >= rank) return ctx.Error("axis ", axis_, " is out of range for rank ", rank);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    Shape out_dims = first.shape();
    out_dims[static_cast<size_t>(axis)] = 0;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (!ctx.has_input(i)) return ctx.Error("input ", i, " is absent");
      const Tensor& t = ctx.tensor(i);
      if (t.dtype() != first.dtype() || t.rank() != rank) {
        return ctx.Error("input ", i, " is ", t.Description(), ", input 0 is ", first.Description());
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && t.dim(d) != first.dim(d)) {
          return ctx.Error("input ", i, " has dim ", d, " = ", t.dim(d), ", input 0 has ", first.dim(d));
        }
      }
      out_dims[static_cast<size_t>(axis)] += t.dim(axis);
    }
    // Bytes: `inner` is the bytes of one step along the axis.
    int64_t outer = 1, inner = static_cast<int64_t>(StorageSize(first.dtype()));
    for (int64_t d = 0; d < axis; ++d) outer *= first.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= first.dim(d);
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(static_cast<size_t>(n) * StorageSize(first.dtype())));
    const int64_t out_row = out_dims[static_cast<size_t>(axis)] * inner;
    int64_t column = 0;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      const Tensor& t = ctx.tensor(i);
      const int64_t row = t.dim(axis) * inner;
      if (row > 0 && outer > 0) {
        PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, i));
        PARITY_RETURN_IF_ERROR(Launched(
            ctx,
            cudaMemcpy2DAsync(static_cast<char*>(out->data()) + column, static_cast<size_t>(out_row), in,
                              static_cast<size_t>(row), static_cast<size_t>(row), static_cast<size_t>(outer),
                              cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(cuda->stream())),
            "concat copy"));
      }
      column += row;
    }
    return Out(*cuda, out, first.dtype(), out_dims);
  }

 private:
  int64_t axis_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerConcat(const NodeView& view) {
  if (view.opset() < 4) return NotLowered("opset ", view.opset(), " (axis optional)");
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  return std::unique_ptr<LoweredNode>(std::make_unique<ConcatNode>(view.GetInt("axis", 0)));
}

// --- RMSNormalization -------------------------------------------------------

class RmsNormNode final : public KernelNode {
 public:
  RmsNormNode(KType type, int64_t axis, float epsilon) : type_(type), axis_(axis), epsilon_(epsilon) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const Tensor& scale = ctx.tensor(1);
    const int64_t rank = x.rank();
    if (axis_ < -rank || axis_ >= rank) return ctx.Error("axis ", axis_, " is out of range for rank ", rank);
    const auto axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    if (scale.dtype() != x.dtype()) return ctx.Error("scale of ", scale.Description(), " for X of ", x.Description());
    const Shape block(x.shape().begin() + static_cast<std::ptrdiff_t>(axis), x.shape().end());
    PARITY_RETURN_IF_ERROR(RequireRank(ctx, block.size()));
    // The scale broadcasts to X; the kernel reads it along the normalized
    // dims, so the dims before them must be 1 (or absent) in the scale.
    Shape own = scale.shape();
    while (own.size() > block.size()) {
      if (own.front() != 1) {
        return ctx.Error("scale ", scale.Description(), " varies along dims before axis ", axis,
                         ", which the kernel does not read");
      }
      own.erase(own.begin());
    }
    PARITY_ASSIGN_OR_RETURN(Shape joined, ops::BroadcastShapes(ctx, {own, block}));
    if (joined != block) return ctx.Error("scale ", scale.Description(), " does not broadcast to ", x.Description());
    const int64_t cols = std::accumulate(block.begin(), block.end(), int64_t{1}, std::multiplies<>());
    const int64_t rows = cols == 0 ? 0 : x.size() / cols;
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(const void* weights, In(*cuda, ctx, 1));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchRmsNorm(type_, in, weights, BroadcastView(own, block), out->data(), rows,
                                                  cols, epsilon_, cuda->stream()),
                                    "RMS normalization"));
    return Out(*cuda, out, x.dtype(), x.shape());
  }

 private:
  KType type_;
  int64_t axis_;
  float epsilon_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerRmsNorm(const NodeView& view) {
  PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
  const int64_t stash = view.GetInt("stash_type", 1);
  if (stash != static_cast<int64_t>(DataType::kFloat)) return NotLowered("stash_type ", stash, " (the kernel takes 1)");
  return std::unique_ptr<LoweredNode>(
      std::make_unique<RmsNormNode>(type, view.GetInt("axis", -1), view.GetFloat("epsilon", 1e-5f)));
}

// --- BatchNormalization -------------------------------------------------------

// Inference mode (the given mean and variance), every parameter of X's
// type and of shape [C]; training mode stays with the reference.
class BatchNormNode final : public KernelNode {
 public:
  BatchNormNode(KType type, float epsilon) : type_(type), epsilon_(epsilon) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    if (x.rank() < 2) return ctx.Error("input X must have rank >= 2, got ", x.Description());
    const int64_t channels = x.dim(1);
    const char* names[] = {"scale", "B", "input_mean", "input_var"};
    const void* params[4] = {};
    for (size_t p = 0; p < 4; ++p) {
      if (!ctx.has_input(p + 1)) return ctx.Error(names[p], " is absent");
      const Tensor& t = ctx.tensor(p + 1);
      if (t.rank() != 1 || t.dim(0) != channels || t.dtype() != x.dtype()) {
        return ctx.Error(names[p], " must be ", DataTypeName(x.dtype()), "[", channels, "], got ", t.Description());
      }
      PARITY_ASSIGN_OR_RETURN(params[p], In(*cuda, ctx, p + 1));
    }
    const int64_t inner = channels == 0 || x.dim(0) == 0 ? 1 : x.size() / x.dim(0) / channels;
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchBatchNorm(type_, in, params, channels, inner, out->data(), x.size(),
                                                    static_cast<double>(epsilon_), cuda->stream()),
                                    "batch normalization"));
    return Out(*cuda, out, x.dtype(), x.shape());
  }

 private:
  KType type_;
  float epsilon_;
};

}  // namespace

StatusOr<std::unique_ptr<LoweredNode>> LowerBatchNormKernel(const NodeView& view) {
  if (view.opset() < 9) return NotLowered("opset ", view.opset(), " (is_test and spatial)");
  PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
  for (int i = 1; i <= 4; ++i) {
    if (view.input_type(i) != view.input_type(0)) return NotLowered("input ", i, " of another type than X");
  }
  if (view.GetInt("training_mode", 0) != 0) return NotLowered("training mode");
  for (int i = 1; i < view.node().output_size(); ++i) {
    if (!view.node().output(i).empty()) return NotLowered("the running statistics asked for (training mode)");
  }
  return std::unique_ptr<LoweredNode>(std::make_unique<BatchNormNode>(type, view.GetFloat("epsilon", 1e-5f)));
}

namespace {

// --- RotaryEmbedding --------------------------------------------------------

class RotaryNode final : public KernelNode {
 public:
  RotaryNode(KType type, bool interleaved, int64_t num_heads, int64_t rotary_dim)
      : type_(type), interleaved_(interleaved), num_heads_(num_heads), rotary_dim_(rotary_dim) {}

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    const Tensor& cos_cache = ctx.tensor(1);
    const Tensor& sin_cache = ctx.tensor(2);
    RotaryShape shape;
    shape.interleaved = interleaved_;
    if (x.rank() == 4) {
      shape.batch = x.dim(0), shape.heads = x.dim(1), shape.seq = x.dim(2), shape.head_size = x.dim(3);
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0) return ctx.Error("a 3-D input needs a positive num_heads attribute");
      if (x.dim(2) % num_heads_ != 0) {
        return ctx.Error("hidden size ", x.dim(2), " is not a multiple of num_heads ", num_heads_);
      }
      shape.four_d = false;
      shape.batch = x.dim(0), shape.seq = x.dim(1), shape.heads = num_heads_, shape.head_size = x.dim(2) / num_heads_;
    } else {
      return ctx.Error("input must be 3-D or 4-D, got ", x.Description());
    }
    shape.rotary_dim = rotary_dim_ == 0 ? shape.head_size : rotary_dim_;
    if (shape.rotary_dim < 0 || shape.rotary_dim > shape.head_size || shape.rotary_dim % 2 != 0) {
      return ctx.Error("rotary_embedding_dim ", shape.rotary_dim, " must be even and at most the head size ",
                       shape.head_size);
    }
    const int64_t half = shape.rotary_dim / 2;
    if (cos_cache.dtype() != x.dtype() || cos_cache.shape() != sin_cache.shape() ||
        sin_cache.dtype() != x.dtype() || cos_cache.rank() < 1 || cos_cache.dim(cos_cache.rank() - 1) != half) {
      return ctx.Error("cos_cache ", cos_cache.Description(), " and sin_cache ", sin_cache.Description(),
                       " must have X's type and one shape with last dimension ", half);
    }
    // The caches' row of each (b, s), found on the host.
    PARITY_ASSIGN_OR_RETURN(Tensor rows, Tensor::Create(DataType::kInt64, {shape.batch * shape.seq}));
    if (ctx.has_input(3)) {
      const Tensor& positions = ctx.tensor(3);
      if (cos_cache.rank() != 2) return ctx.Error("with position_ids the caches must be 2-D, got ", cos_cache.Description());
      if (positions.shape() != Shape({shape.batch, shape.seq})) {
        return ctx.Error("position_ids ", positions.Description(), " must have shape [", shape.batch, ", ", shape.seq,
                         "]");
      }
      for (int64_t i = 0; i < rows.size(); ++i) {
        const int64_t p = positions.GetInt64(i);
        if (p < 0 || p >= cos_cache.dim(0)) return ctx.Error("position id ", p, " is outside the cache of ", cos_cache.dim(0));
        rows.mutable_data<int64_t>()[i] = p;
      }
    } else {
      if (cos_cache.shape() != Shape({shape.batch, shape.seq, half})) {
        return ctx.Error("without position_ids the caches must have shape [", shape.batch, ", ", shape.seq, ", ", half,
                         "], got ", cos_cache.Description());
      }
      std::iota(rows.mutable_data<int64_t>(), rows.mutable_data<int64_t>() + rows.size(), int64_t{0});
    }
    PARITY_ASSIGN_OR_RETURN(const void* in, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(const void* cosines, In(*cuda, ctx, 1));
    PARITY_ASSIGN_OR_RETURN(const void* sines, In(*cuda, ctx, 2));
    PARITY_ASSIGN_OR_RETURN(const void* device_rows, cuda->DeviceData(rows));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchRotary(type_, shape, in, cosines, sines,
                                                 static_cast<const int64_t*>(device_rows), out->data(), cuda->stream()),
                                    "rotary embedding"));
    return Out(*cuda, out, x.dtype(), x.shape());
  }

 private:
  KType type_;
  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerRotary(const NodeView& view) {
  PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
  return std::unique_ptr<LoweredNode>(std::make_unique<RotaryNode>(type, view.GetInt("interleaved", 0) != 0,
                                                                   view.GetInt("num_heads", 0),
                                                                   view.GetInt("rotary_embedding_dim", 0)));
}

// --- TensorScatter ----------------------------------------------------------

// Each batch entry's update rows written into `cache` (device bytes of the
// plan's cache) by a 2-D copy, two when a circular write wraps.
Status WriteRows(const KernelContext& ctx, CudaContext& cuda, const ops::attention::ScatterPlan& g, size_t row_bytes,
                 const void* rows, void* cache) {
  if (g.len == 0 || row_bytes == 0 || g.per_batch == 0) return Status::Ok();
  auto* stream = static_cast<cudaStream_t>(cuda.stream());
  auto copy = [&](int64_t b, int64_t from_row, int64_t to_row, int64_t count) {
    const char* from = static_cast<const char*>(rows) + (b * g.per_batch * g.len + from_row) * row_bytes;
    char* to = static_cast<char*>(cache) + (b * g.per_batch * g.max_len + to_row) * row_bytes;
    return cudaMemcpy2DAsync(to, g.max_len * row_bytes, from, g.len * row_bytes, count * row_bytes,
                             static_cast<size_t>(g.per_batch), cudaMemcpyDeviceToDevice, stream);
  };
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t start = g.starts[static_cast<size_t>(b)];
    const int64_t first = g.circular ? std::min(g.len, g.max_len - start) : g.len;
    PARITY_RETURN_IF_ERROR(Launched(ctx, copy(b, 0, start, first), "update rows"));
    if (first < g.len) PARITY_RETURN_IF_ERROR(Launched(ctx, copy(b, first, 0, g.len - first), "update rows"));
  }
  return Status::Ok();
}

// The functional form copies the cache on the device and writes the rows
// into the copy. The in-place form (spec/aliasing.md, region "scatter";
// a stateful session that binds the cache) writes only the rows, into the
// cache's device copy, which stays resident from step to step; the host
// buffer is behind until the host reads it, so no cache-sized copy
// crosses per step.
class TensorScatterNode final : public KernelNode {
 public:
  bool in_place() const override { return true; }

  StatusOr<std::vector<Value>> RunOn(CudaContext* cuda, const KernelContext& ctx) override {
    const Tensor& cache = ctx.tensor(0);
    const Tensor& update = ctx.tensor(1);
    PARITY_ASSIGN_OR_RETURN(const ops::attention::ScatterPlan g, ops::attention::PlanScatter(ctx, cache, update));
    PARITY_ASSIGN_OR_RETURN(const void* past, In(*cuda, ctx, 0));
    PARITY_ASSIGN_OR_RETURN(const void* rows, In(*cuda, ctx, 1));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(cache.byte_size()));
    if (cache.byte_size() > 0) {
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      cudaMemcpyAsync(out->data(), past, cache.byte_size(), cudaMemcpyDeviceToDevice,
                                                      static_cast<cudaStream_t>(cuda->stream())),
                                      "cache copy"));
    }
    PARITY_RETURN_IF_ERROR(WriteRows(ctx, *cuda, g, RowBytes(g, cache), rows, out->data()));
    return Out(*cuda, out, cache.dtype(), cache.shape());
  }

  Status RunInPlace(const KernelContext& ctx, Tensor& buffer) override {
    PARITY_RETURN_IF_ERROR(RequireTensors(ctx));
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    PARITY_RETURN_IF_ERROR(BringHostInputs(*cuda, ctx));  // write_indices
    if (!ctx.tensor(0).SharesBufferWith(buffer)) {
      return Internal(ctx.NodeLabel(), ": the in-place target is not the buffer of past_cache");
    }
    // An update that views the cache is read from a copy, made on the host
    // (its rows could be overwritten before they are read).
    const bool views_cache = ctx.tensor(1).SharesBufferWith(buffer);
    if (views_cache) PARITY_RETURN_IF_ERROR(cuda->Bring(buffer).WithContext(ctx.NodeLabel()));
    const Tensor update = views_cache ? ctx.tensor(1).Clone() : ctx.tensor(1);
    PARITY_ASSIGN_OR_RETURN(const ops::attention::ScatterPlan g, ops::attention::PlanScatter(ctx, buffer, update));
    PARITY_ASSIGN_OR_RETURN(void* cache, cuda->MutableDeviceData(buffer));
    PARITY_ASSIGN_OR_RETURN(const void* rows, cuda->DeviceData(update));
    // Only the device copy is written: the host buffer is behind until the
    // host reads it (read_state, or a node on the reference's kernels).
    const Status written = WriteRows(ctx, *cuda, g, RowBytes(g, buffer), rows, cache);
    if (written.ok()) {
      cuda->DeviceWrote(buffer);
      return written;
    }
    // A failure halfway must not leave a device copy that differs from the
    // host's buffer: it goes, and the host's holds the value. When the
    // device's was the only current one, the buffer is marked lost: every
    // later read of it fails too, instead of reading what the host has.
    if (!cuda->WriteFailed(buffer)) {
      return written.WithContext(StrCat(ctx.NodeLabel(), ": the cache's current value was on the device only, and is "
                                                         "lost with the failed write"));
    }
    return written;
  }

 private:
  static size_t RowBytes(const ops::attention::ScatterPlan& g, const Tensor& cache) {
    return static_cast<size_t>(g.inner) * StorageSize(cache.dtype());
  }
};

StatusOr<std::unique_ptr<LoweredNode>> LowerTensorScatter(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  return std::unique_ptr<LoweredNode>(std::make_unique<TensorScatterNode>());
}

}  // namespace

void AddKernelLowerings(Lowering& lowering) {
  const std::pair<const char*, UnaryOp> plain[] = {
      {"Relu", UnaryOp::kRelu}, {"Sigmoid", UnaryOp::kSigmoid}, {"Tanh", UnaryOp::kTanh},
      {"Exp", UnaryOp::kExp},   {"Log", UnaryOp::kLog},         {"Neg", UnaryOp::kNeg},
      {"Abs", UnaryOp::kAbs},   {"Sqrt", UnaryOp::kSqrt},       {"Reciprocal", UnaryOp::kReciprocal},
      {"Erf", UnaryOp::kErf},   {"Sin", UnaryOp::kSin},         {"Cos", UnaryOp::kCos},
      {"Floor", UnaryOp::kFloor}, {"Ceil", UnaryOp::kCeil},     {"Softplus", UnaryOp::kSoftplus},
      {"Gelu", UnaryOp::kGelu},
  };
  for (const auto& [name, op] : plain) lowering.Add(name, LowerUnary(op));
  lowering.Add("LeakyRelu", LowerUnary(UnaryOp::kLeakyRelu, "alpha", 0.01f));
  lowering.Add("Elu", LowerUnary(UnaryOp::kElu, "alpha", 1.0f));
  lowering.Add("HardSigmoid", LowerUnary(UnaryOp::kHardSigmoid, "alpha", 0.2f, "beta", 0.5f));
  const std::pair<const char*, BinaryOp> binary[] = {
      {"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv},
      {"Pow", BinaryOp::kPow},
  };
  for (const auto& [name, op] : binary) lowering.Add(name, LowerBinary(op, 7));
  lowering.Add("Max", LowerBinary(BinaryOp::kMax, 8));
  lowering.Add("Min", LowerBinary(BinaryOp::kMin, 8));
  const std::pair<const char*, ReduceOp> reductions[] = {
      {"ReduceMean", ReduceOp::kMean}, {"ReduceMax", ReduceOp::kMax},   {"ReduceMin", ReduceOp::kMin},
      {"ReduceProd", ReduceOp::kProd}, {"ReduceL1", ReduceOp::kL1},     {"ReduceL2", ReduceOp::kL2},
      {"ReduceLogSum", ReduceOp::kLogSum}, {"ReduceLogSumExp", ReduceOp::kLogSumExp},
      {"ReduceSumSquare", ReduceOp::kSumSquare},
  };
  for (const auto& [name, op] : reductions) lowering.Add(name, LowerReduce(op, 18));
  lowering.Add("ReduceSum", LowerReduce(ReduceOp::kSum, 13));
  lowering.Add("Softmax", LowerSoftmax(false));
  lowering.Add("LogSoftmax", LowerSoftmax(true));
  lowering.Add("Transpose", LowerTranspose);
  lowering.Add("Gather", LowerGather);
  lowering.Add("Concat", LowerConcat);
  lowering.Add("Slice", LowerSlice);
  lowering.Add("Expand", LowerExpand);
  lowering.Add("Cast", LowerCast);
  lowering.Add("Where", LowerWhere);
  lowering.Add("RMSNormalization", LowerRmsNorm);
  lowering.Add("RotaryEmbedding", LowerRotary);
  lowering.Add("TensorScatter", LowerTensorScatter);
  AddViewLowerings(lowering);
}

const Lowering& CudaLowering() {
  static const Lowering* lowering = [] {
    auto* table = new Lowering;
    AddKernelLowerings(*table);
    AddQuantizedLowerings(*table);  // before MatMul's float region: a QDQ region is claimed whole
    AddMatMulLowerings(*table);
    AddAttentionLowerings(*table);
    AddCudnnLowerings(*table);
    // A buffer the evaluator writes on the host loses its device copy.
    table->host_wrote = [](const Tensor& buffer) {
      if (StatusOr<CudaContext*> cuda = CudaContext::Get(); cuda.ok()) (*cuda)->Forget(buffer);
    };
    // The results the kernels leave on the device come back when the host
    // reads them: a node on the reference's kernels, a returned output, a
    // state read back.
    table->host_reads = [](const Tensor& tensor) -> Status {
      StatusOr<CudaContext*> cuda = CudaContext::Get();
      return cuda.ok() ? (*cuda)->Bring(tensor) : Status::Ok();
    };
    // A whole-region alias's result that is on the device goes into the
    // bound buffer's device copy there.
    table->copy_into = [](const Tensor& from, const Tensor& into) -> StatusOr<bool> {
      StatusOr<CudaContext*> cuda = CudaContext::Get();
      return cuda.ok() ? (*cuda)->CopyInto(from, into) : StatusOr<bool>(false);
    };
    return table;
  }();
  return *lowering;
}

}  // namespace parity::adapters::cuda
