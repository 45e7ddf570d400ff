// Attention on cuDNN's fused scaled-dot-product attention (the graph API
// through the cuDNN frontend, cuDNN opened at run time), for the float16
// and bfloat16 problems it computes as the operator does: no mask tensor,
// no soft cap, no window, no per-entry key lengths; causal or not (the
// causal diagonal bottom-right aligned: query i of q_len sees keys up to
// past_len + i); grouped-query heads; head size a multiple of 8 up to 256.
// Every other problem runs on the adapter's own kernel (attention.cc).
//
// The frontend graph is built and validated for a compute capability with
// no device (the device-free tests do it for sm_90); its plan is built
// against the device's cuDNN handle at the first run of a shape.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "adapters/cuda/cuda_context.h"

namespace parity::adapters::cuda {

// One problem, in elements: Q and O rows start at b * strides[0] + h *
// strides[1] + s * strides[2] (strides[3] is 1); K and V are whole caches
// [batch, kv_heads, total, head_size], contiguous.
struct SdpaShape {
  DataType type = DataType::kFloat16;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, total = 0, head_size = 0;
  int64_t q_strides[3] = {}, o_strides[3] = {};
  bool causal = false;
  float scale = 1;
  std::string Key() const;  // all of the above, for a plan cache
};

// Whether cuDNN's SDPA is asked at all for this shape: its types and head
// sizes. (A shape that passes may still be refused by the graph's checks.)
Status SdpaEligible(const SdpaShape& shape);

// Builds the frontend graph for `shape` and validates it for `sm_version`
// (90 for sm_90), with no device: kUnimplemented naming what cuDNN refuses.
Status ValidateSdpa(const SdpaShape& shape, int sm_version);

// A built plan on the device, run on the context's stream.
class SdpaPlan {
 public:
  virtual ~SdpaPlan() = default;
  // q, k, v, o: device pointers as the shape says.
  virtual Status Run(const void* q, const void* k, const void* v, void* o) = 0;
  // Made for the device: the graph, cuDNN's heuristics and the plan.
  static StatusOr<std::unique_ptr<SdpaPlan>> Make(const SdpaShape& shape, CudaContext& cuda);
};

// cuDNN's version ("cuDNN 9.19.0"), or why it could not be opened.
std::string CudnnVersionText();

}  // namespace parity::adapters::cuda
