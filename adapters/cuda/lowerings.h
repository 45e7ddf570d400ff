// The CUDA adapter's lowering table, one Add*Lowerings per family, and the
// pieces every family's nodes share.
#pragma once

#include <memory>
#include <string_view>

#include "adapters/cuda/cuda_context.h"
#include "adapters/device/lowering.h"

namespace parity::adapters::cuda {

void AddKernelLowerings(Lowering& lowering);  // lowering.cc: the adapter's own kernels (kernels.cu)
void AddQuantizedLowerings(Lowering& lowering);  // quantized.cc: the 8-bit products on cuBLASLt's int8 kernels
void AddMatMulLowerings(Lowering& lowering);  // matmul.cc: MatMul and Gemm on cuBLASLt
void AddAttentionLowerings(Lowering& lowering);  // attention.cc: Attention on cuDNN's SDPA or the own kernel
void AddCudnnLowerings(Lowering& lowering);  // conv_norm.cc: Conv and the normalizations on cuDNN's graph API

// BatchNormalization in inference mode on the own kernel (lowering.cc):
// where cuDNN's graph is not made for it (conv_norm.cc).
StatusOr<std::unique_ptr<LoweredNode>> LowerBatchNormKernel(const NodeView& view);

// Every family's entries; built on first use.
const Lowering& CudaLowering();

// A lowered node's device: the process's context, or the error that names
// why there is none (the node was claimed on a machine without a GPU, as
// the device-free tests do; a session is refused there before it lowers).
StatusOr<CudaContext*> NodeContext(const KernelContext& ctx);

// Before a node reads inputs on the host (indices, shapes, positions, key
// lengths): every input of a type the float kernels do not take comes back
// from the device if it is there (an 8-bit product's integer output is
// made there, quantized.cc).
Status BringHostInputs(CudaContext& cuda, const KernelContext& ctx);

// An error naming the node and the CUDA error of a launch or runtime call
// (`code` is a cudaError_t); Ok for 0.
Status Launched(const KernelContext& ctx, int code, std::string_view what);

// The element type a claim needs: float32, float16 or bfloat16, known
// before the run; else NotLowered naming what was found.
StatusOr<KType> RequireKernelType(const NodeView& view, int input);

}  // namespace parity::adapters::cuda
