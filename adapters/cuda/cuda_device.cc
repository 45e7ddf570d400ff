#include "adapters/cuda/cuda_device.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "adapters/cuda/cuda_driver.h"
#include "adapters/device/driver_symbols.h"
#include <cstdio>

namespace parity::adapters::cuda {
namespace {

constexpr const char* kDriver = "libcuda.so.1";

std::string ResultName(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  if (api.GetErrorName && api.GetErrorName(result, &name) == CUDA_SUCCESS && name) {
    return StrCat(name, " (", result, ")");
  }
  return StrCat("CUresult ", result);
}

StatusOr<CudaDescription> Discover() {
  void* library = dlopen(kDriver, RTLD_NOW | RTLD_LOCAL);  // kept for the process's life
  if (!library) {
    return Status(StatusCode::kUnavailable,
                  StrCat("no CUDA device: the NVIDIA driver's ", kDriver, " is not installed (", dlerror(), ")"));
  }
  DriverApi api;
  std::string missing;
  BindSymbol(library, "cuGetErrorName", &api.GetErrorName, &missing);
  BindSymbol(library, "cuInit", &api.Init, &missing);
  BindSymbol(library, "cuDriverGetVersion", &api.DriverGetVersion, &missing);
  BindSymbol(library, "cuDeviceGetCount", &api.DeviceGetCount, &missing);
  BindSymbol(library, "cuDeviceGet", &api.DeviceGet, &missing);
  BindSymbol(library, "cuDeviceGetName", &api.DeviceGetName, &missing);
  BindSymbol(library, "cuDeviceTotalMem_v2", &api.DeviceTotalMem, &missing);
  BindSymbol(library, "cuDeviceGetAttribute", &api.DeviceGetAttribute, &missing);
  if (!missing.empty()) {
    return Status(StatusCode::kUnavailable, StrCat("no CUDA device: ", kDriver, " lacks ", missing));
  }
  if (const CUresult init = api.Init(0); init != CUDA_SUCCESS) {
    return Status(StatusCode::kUnavailable, StrCat("no CUDA device: cuInit answered ", ResultName(api, init)));
  }
  int count = 0;
  if (const CUresult r = api.DeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
    return Status(StatusCode::kUnavailable,
                  r != CUDA_SUCCESS ? StrCat("no CUDA device: cuDeviceGetCount answered ", ResultName(api, r))
                                    : std::string("no CUDA device: the driver lists none"));
  }
  CudaDescription d;
  CUdevice device = 0;
  char name[256] = {};
  if (const CUresult r = api.DeviceGet(&device, 0); r != CUDA_SUCCESS) {
    return Status(StatusCode::kUnavailable, StrCat("no CUDA device: cuDeviceGet(0) answered ", ResultName(api, r)));
  }
  const CUresult failed[] = {
      api.DriverGetVersion(&d.driver_version),
      api.DeviceGetName(name, static_cast<int>(sizeof(name) - 1), device),
      api.DeviceTotalMem(&d.memory_bytes, device),
      api.DeviceGetAttribute(&d.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
      api.DeviceGetAttribute(&d.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
  };
  for (CUresult r : failed) {
    if (r != CUDA_SUCCESS) {
      return Status(StatusCode::kUnavailable, StrCat("CUDA device 0 could not be described: ", ResultName(api, r)));
    }
  }
  d.name = name;
  return d;
}

}  // namespace

std::string CudaDescription::Text() const {
  const double gib = static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  char memory[32];
  std::snprintf(memory, sizeof(memory), "%.1f GiB", gib);
  return StrCat(name, ", compute capability ", major, ".", minor, ", ", memory, ", driver API ",
                driver_version / 1000, ".", (driver_version % 1000) / 10);
}

StatusOr<CudaDescription> FindCudaDevice() {
  static std::once_flag once;
  static StatusOr<CudaDescription>* found = nullptr;
  std::call_once(once, [] { found = new StatusOr<CudaDescription>(Discover()); });
  return *found;
}

}  // namespace parity::adapters::cuda
