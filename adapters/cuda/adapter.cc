// The CUDA GPU adapter, as far as it goes today: it finds the GPU through
// the driver (cuda_device.h) and says what it is in the adapter info. Its
// lowering is still empty: on a machine with a GPU every node runs on the
// reference's kernels on the host, and the session report says so node by
// node (with fallback forbidden, creation fails with FALLBACK_REQUIRED
// naming them). With no GPU, every session is DEVICE_UNAVAILABLE (SKIP),
// saying what is missing. adapters/cuda/README.md says what is to come.
#include "adapters/cuda/cuda_device.h"
#include "adapters/reference/reference_adapter.h"

namespace parity::adapters::cuda {
namespace {

const SessionBackend* Backend() {
  static const SessionBackend backend = [] {
    static const Lowering* nothing_yet = new Lowering;
    SessionBackend b;
    b.device = "cuda";
    b.lowering = nothing_yet;
    b.variant_targets = {kPortableTarget};
    b.available = [] { return FindCudaDevice().status(); };
    return b;
  }();
  return &backend;
}

const char* BackendVersion() {
  static const std::string version = [] {
    StatusOr<CudaDescription> device = FindCudaDevice();
    return device.ok() ? StrCat("CUDA driver API ", device->driver_version / 1000, ".",
                                (device->driver_version % 1000) / 10, "; no node lowered yet")
                       : StrCat("CUDA: ", device.status().message());
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
    .description = "an NVIDIA GPU through CUDA",
    // The worker carries a stateful case's kept values (nothing is kept in device memory yet).
    .in_place = false,
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
