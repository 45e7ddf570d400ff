// Attention (opsets 23 to 25) on the GPU. The problem is the reference's
// own (AttentionProblem: the same checks, masks and key ranges), read on
// the host without touching the data. The key and value caches are made
// whole on the device, past rows then current ones, [batch, kv_heads,
// total, size]: they are present_key and present_value, and what both
// paths read.
//
// Path: cuDNN's fused SDPA (cudnn_graphs.h) for the float16 and bfloat16
// problems whose masking it implements as the operator does; the adapter's
// own kernel otherwise
// (every type, masks, soft cap, windows, nonpad_kv_seqlen), which follows
// the reference's exact path in double. A shape cuDNN refuses is
// remembered and runs on the own kernel. The QK output is not computed
// here: a node that asks for it falls back.
#include <cuda_runtime_api.h>

#include <cmath>
#include <map>

#include "adapters/cuda/kernels.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/cuda/cudnn_graphs.h"
#include "reference/ops/attention/attention_problem.h"

namespace parity::adapters::cuda {
namespace {

using ops::attention::AttentionProblem;
using ops::attention::HeadLayout;

// Where rows of a head layout start: b, h and s strides in elements, for
// rows of `size` elements (Q's layout for Y too, with V's head size).
void LayoutStrides(const HeadLayout& layout, int64_t heads, int64_t seq, int64_t size, int64_t* strides) {
  if (layout.three_d) {  // [batch, seq, heads * size]
    strides[0] = seq * heads * size, strides[1] = size, strides[2] = heads * size;
  } else {  // [batch, heads, seq, size]
    strides[0] = heads * seq * size, strides[1] = seq * size, strides[2] = size;
  }
}

class AttentionNode final : public LoweredNode {
 public:
  // cuDNN's plan, when the problem is one it takes, waits for the shapes of
  // a run unless Prepare made it at creation.
  bool deferred() const override { return !prepared_; }

  // At session creation (load time): the SDPA plan of static shapes, for a
  // node with no mask, soft cap, window or key lengths. The run builds its
  // key from the reference's problem; a plan made here for another key is
  // only unused.
  Status Prepare(const NodeView& view, CudaContext& cuda) {
    const std::optional<DataType> type = view.input_type(0);
    if (!type || view.has_input(3) || view.has_input(6) || view.GetFloat("softcap", 0) != 0 ||
        view.GetInt("left_window_size", -1) >= 0 || view.GetInt("right_window_size", -1) >= 0) {
      return Status::Ok();
    }
    const std::vector<int64_t>* q = view.input_dims(0);
    const std::vector<int64_t>* k = view.input_dims(1);
    if (!q || !k || q->size() != k->size() || (q->size() != 3 && q->size() != 4)) return Status::Ok();
    SdpaShape shape;
    shape.type = *type;
    shape.batch = (*q)[0];
    int64_t kv_len = 0;
    if (q->size() == 4) {
      shape.q_heads = (*q)[1], shape.q_len = (*q)[2], shape.head_size = (*q)[3];
      shape.kv_heads = (*k)[1], kv_len = (*k)[2];
    } else {
      shape.q_heads = view.GetInt("q_num_heads", 0), shape.kv_heads = view.GetInt("kv_num_heads", 0);
      if (shape.q_heads <= 0 || shape.kv_heads <= 0) return Status::Ok();
      shape.q_len = (*q)[1], shape.head_size = (*q)[2] / shape.q_heads, kv_len = (*k)[1];
    }
    int64_t past = 0;
    if (view.has_input(4)) {
      const std::vector<int64_t>* past_dims = view.input_dims(4);
      if (!past_dims || past_dims->size() != 4) return Status::Ok();
      past = (*past_dims)[2];
    }
    shape.total = past + kv_len;
    HeadLayout layout;
    layout.three_d = q->size() == 3;
    LayoutStrides(layout, shape.q_heads, shape.q_len, shape.head_size, shape.q_strides);
    LayoutStrides(layout, shape.q_heads, shape.q_len, shape.head_size, shape.o_strides);
    shape.causal = view.GetInt("is_causal", 0) != 0;
    shape.scale = view.attribute("scale") ? view.GetFloat("scale", 1)
                                          : static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_size)));
    PARITY_ASSIGN_OR_RETURN(CudnnPlan * plan, FindSdpa(cuda, shape));
    prepared_ = plan != nullptr;
    return Status::Ok();
  }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && !ctx.input(i).is_tensor()) return ctx.Error("input ", i, " is not a tensor");
    }
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    PARITY_RETURN_IF_ERROR(BringHostInputs(*cuda, ctx));  // nonpad_kv_seqlen, a bool mask
    PARITY_ASSIGN_OR_RETURN(AttentionProblem p, ops::attention::MakeProblem(ctx));
    const DataType type = ctx.tensor(0).dtype();
    const std::optional<KType> kernel_type = KernelType(type);
    if (!kernel_type) return ctx.Error("Q of ", ctx.tensor(0).Description());
    const size_t element = StorageSize(type);

    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> keys,
                            WholeCache(*cuda, ctx, p, p.k, p.past_key, p.head_size, element));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> values,
                            WholeCache(*cuda, ctx, p, p.v, p.past_value, p.v_size, element));
    PARITY_ASSIGN_OR_RETURN(const void* q, cuda->DeviceData(ctx.tensor(0)));

    const Shape& q_dims = ctx.tensor(0).shape();
    Shape y_dims = q_dims;
    y_dims.back() = p.q.three_d ? p.q_heads * p.v_size : p.v_size;
    PARITY_ASSIGN_OR_RETURN(int64_t y_count, ElementCount(y_dims));
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> y, cuda->Allocate(static_cast<size_t>(y_count) * element));

    SdpaShape shape;
    shape.type = type;
    shape.batch = p.batch, shape.q_heads = p.q_heads, shape.kv_heads = p.kv_heads, shape.q_len = p.q_len;
    shape.total = p.total, shape.head_size = p.head_size;
    LayoutStrides(p.q, p.q_heads, p.q_len, p.head_size, shape.q_strides);
    LayoutStrides(p.q, p.q_heads, p.q_len, p.v_size, shape.o_strides);
    shape.causal = p.causal;
    shape.scale = static_cast<float>(p.scale);
    bool done = false;
    // cuDNN takes the scale in float32 (a relative change under 6e-8, far
    // below the 16-bit output's resolution).
    if (FitsSdpa(p)) {
      PARITY_ASSIGN_OR_RETURN(CudnnPlan * plan, FindSdpa(*cuda, shape));
      if (plan) {
        if (Status ran = plan->Run({q, keys->data(), values->data(), y->data()}); !ran.ok()) {
          return ran.WithContext(graph::DescribeNode(ctx.node()));
        }
        done = true;
      }
    }
    if (!done) PARITY_RETURN_IF_ERROR(RunOwnKernel(*cuda, ctx, p, *kernel_type, shape, q, *keys, *values, *y));

    std::vector<Value> outputs;
    PARITY_ASSIGN_OR_RETURN(Tensor y_host, cuda->Made(y, type, y_dims));
    outputs.push_back(Value::FromTensor(std::move(y_host)));
    const std::pair<const std::shared_ptr<DeviceBuffer>*, int64_t> present[] = {{&keys, p.head_size},
                                                                                 {&values, p.v_size}};
    for (size_t i = 1; i <= 2 && i < ctx.output_count(); ++i) {
      if (!ctx.output_requested(i)) {
        outputs.emplace_back();
        continue;
      }
      const auto& [buffer, size] = present[i - 1];
      PARITY_ASSIGN_OR_RETURN(Tensor cache, cuda->Made(*buffer, type, {p.batch, p.kv_heads, p.total, size}));
      outputs.push_back(Value::FromTensor(std::move(cache)));
    }
    return outputs;
  }

 private:
  // The problems whose masking cuDNN's SDPA implements as the operator does (cudnn_graphs.h).
  static bool FitsSdpa(const AttentionProblem& p) {
    return !p.mask.present() && p.softcap == 0 && p.left_window < 0 && p.right_window < 0 && p.nonpad_lens.empty() &&
           p.head_size == p.v_size && (!p.causal || p.Offset(0) == p.total - p.q_len);
  }

  // The plan of `shape`, made on first use; null when cuDNN refuses it (remembered).
  StatusOr<CudnnPlan*> FindSdpa(CudaContext& cuda, const SdpaShape& shape) {
    if (Status eligible = SdpaEligible(shape); !eligible.ok()) return nullptr;
    const std::string key = shape.Key();
    auto it = sdpa_.find(key);
    if (it == sdpa_.end()) {
      StatusOr<std::unique_ptr<CudnnPlan>> made = MakeSdpaPlan(shape, cuda);
      if (!made.ok() && made.status().code() != StatusCode::kUnimplemented &&
          made.status().code() != StatusCode::kUnavailable) {
        return made.status();
      }
      // Refused (or no cuDNN): the own kernel runs this shape from now on.
      it = sdpa_.emplace(key, made.ok() ? std::move(made).value() : nullptr).first;
    }
    return it->second.get();
  }

  // [batch, kv_heads, total, size] on the device: the past rows, then the
  // current ones. Without a past, a 4-D input is that buffer already.
  static StatusOr<std::shared_ptr<DeviceBuffer>> WholeCache(CudaContext& cuda, const KernelContext& ctx,
                                                            const AttentionProblem& p, const HeadLayout& current,
                                                            const Tensor* past, int64_t size, size_t element) {
    const int64_t heads = p.batch * p.kv_heads;
    const auto row_bytes = static_cast<size_t>(size) * element;
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> whole,
                            cuda.Allocate(static_cast<size_t>(heads * p.total) * row_bytes));
    auto* stream = static_cast<cudaStream_t>(cuda.stream());
    if (past && p.past_len > 0 && heads > 0 && row_bytes > 0) {
      PARITY_ASSIGN_OR_RETURN(const void* rows, cuda.DeviceData(*past));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      cudaMemcpy2DAsync(whole->data(), p.total * row_bytes, rows,
                                                        p.past_len * row_bytes, p.past_len * row_bytes,
                                                        static_cast<size_t>(heads), cudaMemcpyDeviceToDevice, stream),
                                      "past rows"));
    }
    const int64_t seq = current.seq;
    if (seq == 0 || heads == 0 || row_bytes == 0) return whole;
    PARITY_ASSIGN_OR_RETURN(const void* rows, cuda.DeviceData(*current.tensor));
    std::shared_ptr<DeviceBuffer> regrouped;
    if (current.three_d) {  // [batch, seq, heads * size] read as [batch, heads, seq, size]
      StridedView view;
      view.rank = 4;
      const int64_t dims[4] = {p.batch, p.kv_heads, seq, size};
      const int64_t strides[4] = {seq * p.kv_heads * size, size, p.kv_heads * size, 1};
      for (int i = 0; i < 4; ++i) view.dims[i] = dims[i], view.strides[i] = strides[i];
      PARITY_ASSIGN_OR_RETURN(regrouped, cuda.Allocate(static_cast<size_t>(heads * seq) * row_bytes));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      LaunchStridedCopy(static_cast<int>(element), rows, view, regrouped->data(),
                                                        heads * seq * size, cuda.stream()),
                                      "regrouping heads"));
      rows = regrouped->data();
    }
    PARITY_RETURN_IF_ERROR(Launched(
        ctx,
        cudaMemcpy2DAsync(static_cast<char*>(whole->data()) + p.past_len * row_bytes, p.total * row_bytes, rows,
                          seq * row_bytes, seq * row_bytes, static_cast<size_t>(heads), cudaMemcpyDeviceToDevice,
                          stream),
        "current rows"));
    // `regrouped` may go now: its memory is freed in stream order, after the copy.
    return whole;
  }

  static Status RunOwnKernel(CudaContext& cuda, const KernelContext& ctx, const AttentionProblem& p, KType type,
                             const SdpaShape& shape, const void* q, const DeviceBuffer& keys,
                             const DeviceBuffer& values, DeviceBuffer& y) {
    if (p.v_size > kMaxAttentionHead) {
      return ctx.Error("V's head size ", p.v_size, " is over the kernel's ", kMaxAttentionHead);
    }
    AttentionArgs a;
    a.batch = p.batch, a.q_heads = p.q_heads, a.kv_heads = p.kv_heads, a.q_len = p.q_len, a.total = p.total;
    a.head_size = p.head_size, a.v_size = p.v_size;
    for (int i = 0; i < 3; ++i) a.q_strides[i] = shape.q_strides[i], a.y_strides[i] = shape.o_strides[i];
    a.scale = p.scale, a.softcap = p.softcap, a.causal = p.causal;
    a.left_window = p.left_window, a.right_window = p.right_window, a.past_len = p.past_len;
    if (!p.nonpad_lens.empty()) {
      const Tensor lens = Tensor::FromInt64s({p.batch}, p.nonpad_lens);
      PARITY_ASSIGN_OR_RETURN(const void* device_lens, cuda.DeviceData(lens));
      a.nonpad = static_cast<const int64_t*>(device_lens);
      a.offset_from_nonpad = p.past_key == nullptr;
    }
    Tensor bias;
    if (p.mask.present()) {
      // The mask as additive bias in double, in its own dims right-aligned
      // to four (bool: 0 or -inf), made on the host where it is.
      const Tensor& mask = ctx.tensor(3);
      // A mask an earlier node made on the device comes back for that.
      PARITY_RETURN_IF_ERROR(cuda.Bring(mask).WithContext(ctx.NodeLabel()));
      for (int64_t i = 0; i < mask.rank(); ++i) a.bias_dims[4 - mask.rank() + i] = mask.dim(i);
      PARITY_ASSIGN_OR_RETURN(bias, Tensor::Create(DataType::kDouble, mask.shape()));
      for (int64_t i = 0; i < mask.size(); ++i) {
        bias.mutable_data<double>()[i] = mask.dtype() == DataType::kBool
                                             ? (mask.GetInt64(i) != 0 ? 0.0 : -HUGE_VAL)
                                             : mask.GetDouble(i);
      }
      PARITY_ASSIGN_OR_RETURN(const void* device_bias, cuda.DeviceData(bias));
      a.bias = static_cast<const double*>(device_bias);
    }
    return Launched(ctx, LaunchAttention(type, a, q, keys.data(), values.data(), y.data(), cuda.stream()),
                    "attention");
  }

  std::map<std::string, std::unique_ptr<CudnnPlan>> sdpa_;
  bool prepared_ = false;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerAttention(const NodeView& view) {
  if (view.opset() > 25) return NotLowered("Attention-", view.opset(), " (lowered: opsets 23 to 25)");
  PARITY_ASSIGN_OR_RETURN(KType type, RequireKernelType(view, 0));
  (void)type;
  for (int i : {1, 2, 4, 5}) {
    if (view.has_input(i) && view.input_type(i) != view.input_type(0)) {
      return NotLowered("input ", i, " of another type than Q");
    }
  }
  if (view.node().output_size() > 3 && !view.node().output(3).empty()) {
    return NotLowered("the QK output (qk_matmul_output) is not computed on the GPU");
  }
  auto node = std::make_unique<AttentionNode>();
  if (StatusOr<CudaContext*> cuda = CudaContext::Get(); cuda.ok()) {
    PARITY_RETURN_IF_ERROR(node->Prepare(view, **cuda));
  }
  return std::unique_ptr<LoweredNode>(std::move(node));
}

}  // namespace

void AddAttentionLowerings(Lowering& lowering) { lowering.Add("Attention", LowerAttention); }

}  // namespace parity::adapters::cuda
