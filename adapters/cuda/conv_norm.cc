// Conv (grouped and depthwise too), LayerNormalization and
// BatchNormalization (inference mode) on cuDNN's graph API
// (cudnn_graphs.h), in float32, float16 and bfloat16. Each is claimed on
// cuDNN only where its shapes are static, so that cuDNN's graph is built, checked and planned at
// session creation (the load-time cost): a problem cuDNN refuses falls
// back then, with cuDNN's reason, instead of failing a run. With no device
// (the device-free tests) the graph is validated for sm_90 instead.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "adapters/cuda/cudnn_graphs.h"
#include "adapters/cuda/kernels.h"
#include "adapters/cuda/lowerings.h"

namespace parity::adapters::cuda {
namespace {

// Compute capability the claims are validated for when no device answers.
constexpr int kValidatedSm = 90;

// `plan` made for the device, or the shape validated for sm_90 without one;
// a refusal is the node's reason to fall back.
template <typename Shape, typename Make, typename Validate>
StatusOr<std::unique_ptr<CudnnPlan>> PlanOrValidate(const Shape& shape, Make make, Validate validate) {
  StatusOr<CudaContext*> cuda = CudaContext::Get();
  if (!cuda.ok()) {
    if (Status valid = validate(shape, kValidatedSm); !valid.ok()) return NotLowered(valid.message());
    return std::unique_ptr<CudnnPlan>();
  }
  StatusOr<std::unique_ptr<CudnnPlan>> plan = make(shape, **cuda);
  if (!plan.ok() && (plan.status().code() == StatusCode::kUnimplemented ||
                     plan.status().code() == StatusCode::kUnavailable)) {
    return NotLowered(plan.status().message());
  }
  return plan;
}

// A node on one cuDNN plan: its inputs' device data, then the output.
class PlanNode final : public LoweredNode {
 public:
  PlanNode(std::unique_ptr<CudnnPlan> plan, DataType type, Shape out_dims, std::vector<int> inputs,
           std::shared_ptr<DeviceBuffer> zeros)
      : plan_(std::move(plan)), type_(type), out_dims_(std::move(out_dims)), inputs_(std::move(inputs)),
        zeros_(std::move(zeros)) {}

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    if (!plan_) return ctx.Error("has no cuDNN plan (claimed without a device)");
    std::vector<const void*> tensors;
    for (int i : inputs_) {
      if (i < 0) {  // the zero bias of a node without one
        tensors.push_back(zeros_->data());
        continue;
      }
      if (!ctx.has_input(static_cast<size_t>(i)) || !ctx.input(static_cast<size_t>(i)).is_tensor()) {
        return ctx.Error("input ", i, " is not a tensor");
      }
      const Tensor& t = ctx.tensor(static_cast<size_t>(i));
      if (t.dtype() != type_) return ctx.Error("input ", i, " is ", t.Description(), ", not ", DataTypeName(type_));
      PARITY_ASSIGN_OR_RETURN(const void* data, cuda->DeviceData(t));
      tensors.push_back(data);
    }
    // The shapes were static at creation: a run with others is refused.
    if (ctx.tensor(0).shape() != (in_dims_.empty() ? ctx.tensor(0).shape() : in_dims_)) {
      return ctx.Error("X is ", ctx.tensor(0).Description(), ", the shape its plan was made for is ",
                       ShapeToString(in_dims_));
    }
    PARITY_ASSIGN_OR_RETURN(int64_t n, ElementCount(out_dims_));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(static_cast<size_t>(n) * StorageSize(type_)));
    tensors.push_back(out->data());
    if (n > 0) PARITY_RETURN_IF_ERROR(plan_->Run(tensors).WithContext(graph::DescribeNode(ctx.node())));
    PARITY_ASSIGN_OR_RETURN(Tensor y, cuda->Made(out, type_, out_dims_));
    return std::vector<Value>{Value::FromTensor(std::move(y))};
  }

  void set_in_dims(Shape dims) { in_dims_ = std::move(dims); }

 private:
  std::unique_ptr<CudnnPlan> plan_;
  DataType type_;
  Shape out_dims_, in_dims_;
  std::vector<int> inputs_;  // node inputs in the plan's order; -1: the zero bias
  std::shared_ptr<DeviceBuffer> zeros_;
};

Status RequireSameType(const NodeView& view, std::initializer_list<int> inputs) {
  for (int i : inputs) {
    if (view.has_input(i) && view.input_type(i) != view.input_type(0)) {
      return NotLowered("input ", i, " of another type than input 0");
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<LoweredNode>> LowerConv(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  PARITY_RETURN_IF_ERROR(RequireSameType(view, {1, 2}));
  const std::vector<int64_t>* x = view.input_dims(0);
  const std::vector<int64_t>* w = view.input_dims(1);
  if (!x || !w) return NotLowered("shapes not known before the run (cuDNN's graph is made at creation)");
  if (x->size() < 3 || x->size() > 5 || w->size() != x->size()) {
    return NotLowered("X of rank ", x->size(), " (lowered: 1 to 3 spatial dims)");
  }
  const size_t spatial = x->size() - 2;
  const int64_t group = view.GetInt("group", 1);
  if (group <= 0 || (*w)[1] * group != (*x)[1] || (*w)[0] % group != 0) {
    return NotLowered("group ", group, " with X's ", (*x)[1], " channels and W ", ShapeToString(*w),
                      " (the operator refuses it; the reference says why)");
  }
  if (const auto kernel = view.GetInts("kernel_shape"); kernel && !std::equal(kernel->begin(), kernel->end(), w->begin() + 2, w->end())) {
    return NotLowered("kernel_shape differs from W's spatial dims");
  }
  ConvShape shape;
  shape.type = *view.input_type(0);
  shape.x = *x, shape.w = *w;
  shape.bias = view.has_input(2);
  if (shape.bias) {
    const std::vector<int64_t>* b = view.input_dims(2);
    if (!b || b->size() != 1 || (*b)[0] != (*w)[0]) return NotLowered("B is not known to be [", (*w)[0], "]");
  }
  shape.strides = view.GetInts("strides").value_or(std::vector<int64_t>(spatial, 1));
  shape.dilations = view.GetInts("dilations").value_or(std::vector<int64_t>(spatial, 1));
  if (shape.strides.size() != spatial || shape.dilations.size() != spatial) {
    return NotLowered("strides or dilations of the wrong length");
  }
  const std::string auto_pad = view.GetString("auto_pad", "NOTSET");
  shape.pads_begin.assign(spatial, 0), shape.pads_end.assign(spatial, 0);
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = view.GetInts("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial) return NotLowered("pads of the wrong length");
    for (size_t d = 0; d < spatial; ++d) shape.pads_begin[d] = pads[d], shape.pads_end[d] = pads[d + spatial];
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // Output ceil(in / stride); the padding it needs, the extra half at the end (UPPER) or the start (LOWER).
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t in = (*x)[d + 2], stride = shape.strides[d];
      const int64_t span = shape.dilations[d] * ((*w)[d + 2] - 1) + 1;
      const int64_t total = std::max<int64_t>(0, ((in + stride - 1) / stride - 1) * stride + span - in);
      const int64_t small = total / 2, large = total - small;
      shape.pads_begin[d] = auto_pad == "SAME_UPPER" ? small : large;
      shape.pads_end[d] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "VALID") {
    return NotLowered("auto_pad '", auto_pad, "'");
  }
  for (int64_t d : shape.Output()) {
    if (d <= 0) return NotLowered("an empty output");
  }
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<CudnnPlan> plan, PlanOrValidate(shape, MakeConvPlan, ValidateConv));
  std::vector<int> inputs = {0, 1};
  if (shape.bias) inputs.push_back(2);
  auto node = std::make_unique<PlanNode>(std::move(plan), shape.type, shape.Output(), inputs, nullptr);
  node->set_in_dims(shape.x);
  return std::unique_ptr<LoweredNode>(std::move(node));
}

StatusOr<std::unique_ptr<LoweredNode>> LowerLayerNorm(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  PARITY_RETURN_IF_ERROR(RequireSameType(view, {1, 2}));
  if (view.GetInt("stash_type", 1) != 1) return NotLowered("stash_type ", view.GetInt("stash_type", 1));
  for (int i = 1; i < view.node().output_size(); ++i) {
    if (!view.node().output(i).empty()) return NotLowered("Mean or InvStdDev asked for");
  }
  const std::vector<int64_t>* x = view.input_dims(0);
  if (!x || x->empty()) return NotLowered("X's shape not known before the run (cuDNN's graph is made at creation)");
  const auto rank = static_cast<int64_t>(x->size());
  int64_t axis = view.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return NotLowered("axis ", axis, " out of range");
  if (axis < 0) axis += rank;
  const Shape block(x->begin() + axis, x->end());
  LayerNormShape shape;
  shape.type = *view.input_type(0);
  shape.cols = 1;
  for (int64_t d : block) shape.cols *= d;
  shape.rows = 1;
  for (int64_t i = 0; i < axis; ++i) shape.rows *= (*x)[static_cast<size_t>(i)];
  if (shape.rows == 0 || shape.cols == 0) return NotLowered("an empty X");
  // Scale and bias must hold the whole normalized block (cuDNN does not broadcast them).
  for (int i : {1, 2}) {
    if (!view.has_input(i)) continue;
    const std::vector<int64_t>* dims = view.input_dims(i);
    if (!dims) return NotLowered("input ", i, "'s shape not known before the run");
    Shape own = *dims;
    while (own.size() > block.size() && own.front() == 1) own.erase(own.begin());
    if (own != block) return NotLowered("input ", i, " of ", ShapeToString(*dims), " broadcast over the block");
  }
  shape.bias = true;  // a node without B gets zeros
  shape.epsilon = view.GetFloat("epsilon", 1e-5f);
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<CudnnPlan> plan,
                          PlanOrValidate(shape, MakeLayerNormPlan, ValidateLayerNorm));
  std::shared_ptr<DeviceBuffer> zeros;
  if (!view.has_input(2) && plan) {
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, CudaContext::Get());
    const size_t bytes = static_cast<size_t>(shape.cols) * StorageSize(shape.type);
    PARITY_ASSIGN_OR_RETURN(zeros, cuda->Allocate(bytes));
    if (const cudaError_t e = cudaMemsetAsync(zeros->data(), 0, bytes, static_cast<cudaStream_t>(cuda->stream()));
        e != cudaSuccess) {
      return CudaContext::Error(e, "zeroing LayerNormalization's bias");
    }
  }
  auto node = std::make_unique<PlanNode>(std::move(plan), shape.type, *x,
                                         std::vector<int>{0, 1, view.has_input(2) ? 2 : -1}, std::move(zeros));
  node->set_in_dims(*x);
  return std::unique_ptr<LoweredNode>(std::move(node));
}

// BatchNormalization on cuDNN's batch-norm node: the operator's four
// parameters made into cuDNN's (float32, the variance as its inverse
// standard deviation, LaunchBatchNormParams), then the plan.
class BatchNormPlanNode final : public LoweredNode {
 public:
  BatchNormPlanNode(std::unique_ptr<CudnnPlan> plan, BatchNormShape shape, Shape x_dims, double epsilon)
      : plan_(std::move(plan)), shape_(shape), x_dims_(std::move(x_dims)), epsilon_(epsilon) {}

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    if (!plan_) return ctx.Error("has no cuDNN plan (claimed without a device)");
    const void* data[5] = {};
    for (size_t i = 0; i < 5; ++i) {
      if (!ctx.has_input(i) || !ctx.input(i).is_tensor()) return ctx.Error("input ", i, " is not a tensor");
      const Tensor& t = ctx.tensor(i);
      const Shape want = i == 0 ? x_dims_ : Shape{shape_.channels};
      if (t.dtype() != shape_.type || t.shape() != want) {
        return ctx.Error("input ", i, " is ", t.Description(), ", its plan was made for ", DataTypeName(shape_.type),
                         ShapeToString(want));
      }
      PARITY_ASSIGN_OR_RETURN(data[i], cuda->DeviceData(t));
    }
    const size_t channels = static_cast<size_t>(shape_.channels);
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> params, cuda->Allocate(4 * channels * sizeof(float)));
    auto* p = static_cast<float*>(params->data());
    PARITY_RETURN_IF_ERROR(Launched(ctx,
                                    LaunchBatchNormParams(*KernelType(shape_.type), data + 1, shape_.channels,
                                                          epsilon_, p, cuda->stream()),
                                    "cuDNN's batch-norm parameters"));
    const Tensor& x = ctx.tensor(0);
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(x.byte_size()));
    PARITY_RETURN_IF_ERROR(
        plan_->Run({data[0], p, p + channels, p + 2 * channels, p + 3 * channels, out->data()})
            .WithContext(graph::DescribeNode(ctx.node())));
    PARITY_ASSIGN_OR_RETURN(Tensor y, cuda->Made(out, shape_.type, x_dims_));
    return std::vector<Value>{Value::FromTensor(std::move(y))};
  }

 private:
  std::unique_ptr<CudnnPlan> plan_;
  BatchNormShape shape_;
  Shape x_dims_;
  double epsilon_;
};

// On cuDNN where the shapes are static and cuDNN takes them; else on the
// own kernel (LowerBatchNormKernel), whose checks come first.
StatusOr<std::unique_ptr<LoweredNode>> LowerBatchNorm(const NodeView& view) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<LoweredNode> own, LowerBatchNormKernel(view));
  const std::vector<int64_t>* x = view.input_dims(0);
  if (!x || x->size() < 2) return own;
  BatchNormShape shape;
  shape.type = *view.input_type(0);
  shape.n = (*x)[0], shape.channels = (*x)[1], shape.inner = 1;
  for (size_t d = 2; d < x->size(); ++d) shape.inner *= (*x)[d];
  if (shape.n * shape.channels * shape.inner == 0) return own;
  for (int i = 1; i <= 4; ++i) {
    const std::vector<int64_t>* dims = view.input_dims(i);
    if (!dims || *dims != std::vector<int64_t>{shape.channels}) return own;
  }
  StatusOr<std::unique_ptr<CudnnPlan>> plan = PlanOrValidate(shape, MakeBatchNormPlan, ValidateBatchNorm);
  if (!plan.ok() && plan.status().code() == StatusCode::kUnimplemented) return own;  // cuDNN refused it
  if (!plan.ok()) return plan.status();
  return std::unique_ptr<LoweredNode>(std::make_unique<BatchNormPlanNode>(
      std::move(*plan), shape, *x, static_cast<double>(view.GetFloat("epsilon", 1e-5f))));
}

}  // namespace

void AddCudnnLowerings(Lowering& lowering) {
  lowering.Add("Conv", LowerConv);
  lowering.Add("LayerNormalization", LowerLayerNorm);
  lowering.Add("BatchNormalization", LowerBatchNorm);
}

}  // namespace parity::adapters::cuda
