// The CUDA adapter's graphs on cuDNN's graph API, through the cuDNN
// frontend (cuDNN opened at run time): fused scaled-dot-product attention,
// convolution with its bias, layer normalization and batch normalization.
//
// Each graph is built and validated for a compute capability with no
// device (the device-free tests do it for sm_90); its plan is built against
// the device's cuDNN handle: at session creation for static shapes (the
// load-time cost), else at the first run of a shape. A float32 graph
// excludes the engines that round inputs to TF32 or reduce in lower
// precision (numerical notes TENSOR_CORE, DOWN_CONVERT_INPUTS,
// REDUCED_PRECISION_REDUCTION); a 16-bit graph excludes reduced-precision
// reductions: every graph accumulates in float32.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapters/cuda/cuda_context.h"

namespace parity::adapters::cuda {

// A built plan, run on the context's stream: the device pointers of the
// graph's tensors in its order (inputs, then the output).
class CudnnPlan {
 public:
  virtual ~CudnnPlan() = default;
  virtual Status Run(const std::vector<const void*>& tensors) = 0;
};

// --- SDPA: the float16 and bfloat16 problems whose masking cuDNN's SDPA
// implements as the operator does (its roundings are its own: P is rounded
// to the input type before P·V): no mask tensor, no soft cap, no window,
// no per-entry key lengths; causal or not (the diagonal bottom-right aligned: query i of
// q_len sees keys up to past_len + i); grouped-query heads; head size a
// multiple of 8 up to 256. Tensors: Q, K, V, O.
struct SdpaShape {
  DataType type = DataType::kFloat16;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, total = 0, head_size = 0;
  // Q and O rows start at b * strides[0] + h * strides[1] + s * strides[2];
  // K and V are whole caches [batch, kv_heads, total, head_size], contiguous.
  int64_t q_strides[3] = {}, o_strides[3] = {};
  bool causal = false;
  float scale = 1;
  std::string Key() const;
};
// Whether cuDNN's SDPA is asked at all for this shape (its types, head
// sizes, grouping). A shape that passes may still be refused by the graph.
Status SdpaEligible(const SdpaShape& shape);

// --- Convolution (ONNX Conv, cross-correlation): X [N, C, spatial...],
// W [K, C / group, kernel...] (the groups read from the channels), an
// optional bias [K]; 1-D convolutions as 2-D ones of height 1. Tensors:
// X, W, (B,) Y.
struct ConvShape {
  DataType type = DataType::kFloat;
  Shape x, w;
  bool bias = false;
  std::vector<int64_t> pads_begin, pads_end, strides, dilations;  // one per spatial dim
  Shape Output() const;  // Y's dims by ONNX's rule
  std::string Key() const;
};

// --- LayerNormalization over the last `cols` elements of `rows` rows,
// scale and bias of `cols` elements each. Tensors: X, scale, (bias,) Y.
struct LayerNormShape {
  DataType type = DataType::kFloat;
  int64_t rows = 0, cols = 0;
  bool bias = false;
  float epsilon = 1e-5f;
  std::string Key() const;
};

// --- BatchNormalization in inference mode over X [n, channels, inner] (the
// spatial dims flattened), with float32 parameters [channels] each: scale,
// bias, mean and inv_variance = 1 / sqrt(var + epsilon) (cuDNN's node takes
// the inverse standard deviation; LaunchBatchNormParams makes the four).
// Tensors: X, scale, bias, mean, inv_variance, Y.
struct BatchNormShape {
  DataType type = DataType::kFloat;
  int64_t n = 0, channels = 0, inner = 0;
  std::string Key() const;
};

// Builds the graph and validates it for `sm_version` (90 for sm_90) with
// no device: kUnimplemented naming what cuDNN refuses; kUnavailable when
// cuDNN cannot be opened.
Status ValidateSdpa(const SdpaShape& shape, int sm_version);
Status ValidateConv(const ConvShape& shape, int sm_version);
Status ValidateLayerNorm(const LayerNormShape& shape, int sm_version);
Status ValidateBatchNorm(const BatchNormShape& shape, int sm_version);

// The plan on the device; kUnimplemented when cuDNN refuses the problem.
StatusOr<std::unique_ptr<CudnnPlan>> MakeSdpaPlan(const SdpaShape& shape, CudaContext& cuda);
StatusOr<std::unique_ptr<CudnnPlan>> MakeConvPlan(const ConvShape& shape, CudaContext& cuda);
StatusOr<std::unique_ptr<CudnnPlan>> MakeLayerNormPlan(const LayerNormShape& shape, CudaContext& cuda);
StatusOr<std::unique_ptr<CudnnPlan>> MakeBatchNormPlan(const BatchNormShape& shape, CudaContext& cuda);

// cuDNN's version ("cuDNN 9.19.0"), or why it could not be opened.
std::string CudnnVersionText();

}  // namespace parity::adapters::cuda
