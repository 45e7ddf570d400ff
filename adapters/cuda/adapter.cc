// The CUDA GPU adapter: the nodes its lowering claims run on the GPU (its
// own kernels, kernels.cu; MatMul and Gemm on cuBLASLt, matmul.cc;
// Attention on cuDNN's SDPA or its own kernel, attention.cc), every
// other node on the reference's kernels on the host, and the session
// report says which ran where. Values cross between the host and the
// device as cuda_context.h says, every copy counted. With no GPU, every
// session is DEVICE_UNAVAILABLE (SKIP), saying what is missing.
#include "adapters/cuda/cublaslt.h"
#include "adapters/cuda/cuda_device.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/cuda/cudnn_graphs.h"
#include "adapters/reference/reference_adapter.h"

namespace parity::adapters::cuda {

namespace {

const SessionBackend* Backend() {
  static const SessionBackend backend = [] {
    SessionBackend b;
    b.device = "cuda";
    b.lowering = &CudaLowering();
    b.variant_targets = {kPortableTarget};
    // The driver must find a device and the runtime must start on it.
    b.available = [] { return CudaContext::Get().status(); };
    // Each run's copies and device memory (parity_run_cost), from the
    // context's counts: every copy each way, the buffers held.
    b.device_counters = [] {
      parity_run_cost counters{};
      StatusOr<CudaContext*> cuda = CudaContext::Get();
      if (!cuda.ok()) return counters;
      const Transfers t = (*cuda)->transfers();
      const DeviceMemory m = (*cuda)->memory();
      counters = {t.uploads, t.upload_bytes, t.downloads, t.download_bytes, m.bytes, m.peak_bytes};
      return counters;
    };
    b.reset_device_peak = [] {
      if (StatusOr<CudaContext*> cuda = CudaContext::Get(); cuda.ok()) (*cuda)->ResetPeak();
    };
    return b;
  }();
  return &backend;
}

const char* BackendVersion() {
  static const std::string version = [] {
    StatusOr<CudaDescription> device = FindCudaDevice();
    if (!device.ok()) return StrCat("CUDA: ", device.status().message());
    StatusOr<const CublasLt*> lt = LoadCublasLt();
    return StrCat("CUDA driver API ", device->driver_version / 1000, ".", (device->driver_version % 1000) / 10,
                  "; ", lt.ok() ? StrCat("cuBLASLt ", (*lt)->GetVersion()) : lt.status().message(), "; ",
                  CudnnVersionText());
  }();
  return version.c_str();
}

const char* DeviceDescription() {
  static const std::string description = [] {
    StatusOr<CudaDescription> device = FindCudaDevice();
    return device.ok() ? device->Text() : StrCat("absent: ", device.status().message());
  }();
  return description.c_str();
}

constexpr ReferenceFlavour kCuda = {
    .name = "cuda",
    .description = "an NVIDIA GPU through CUDA (own kernels, cuBLASLt, cuDNN); nodes it does not lower run on the ONNX "
                   "Parity reference",
    // A stateful case's bound caches stay in device memory from step to
    // step, TensorScatter writing only the new rows (lowering.cc).
    .in_place = true,
    .backend = Backend,
    .backend_version = BackendVersion,
    .device_kind = "gpu",
    .device_description = DeviceDescription,
};

}  // namespace
}  // namespace parity::adapters::cuda

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  return parity::adapters::ReferenceAdapter<parity::adapters::cuda::kCuda>::Query(host_abi_version);
}
