// The few entry points of NVIDIA's CUDA driver API (libcuda.so.1) that
// device discovery uses, declared here from the driver API's public
// reference so that the adapter builds on machines without the CUDA
// toolkit and opens the driver at run time: a machine without a GPU has no
// libcuda.so.1, or one whose cuInit answers that no device is there.
#pragma once
#include <cstddef>

namespace parity::adapters::cuda {

using CUresult = int;  // an enum in cuda.h; 0 is success
using CUdevice = int;  // a device ordinal

inline constexpr CUresult CUDA_SUCCESS = 0;
// CUdevice_attribute values read by discovery.
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// The driver's functions, as dlsym finds them (the _v2 forms are what
// cuda.h's macros name for these three).
struct DriverApi {
  CUresult (*Init)(unsigned int flags) = nullptr;                                 // cuInit
  CUresult (*DriverGetVersion)(int* version) = nullptr;                           // cuDriverGetVersion
  CUresult (*DeviceGetCount)(int* count) = nullptr;                               // cuDeviceGetCount
  CUresult (*DeviceGet)(CUdevice* device, int ordinal) = nullptr;                 // cuDeviceGet
  CUresult (*DeviceGetName)(char* name, int length, CUdevice device) = nullptr;   // cuDeviceGetName
  CUresult (*DeviceTotalMem)(size_t* bytes, CUdevice device) = nullptr;           // cuDeviceTotalMem_v2
  CUresult (*DeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;  // cuDeviceGetAttribute
  CUresult (*GetErrorName)(CUresult error, const char** name) = nullptr;          // cuGetErrorName
};

}  // namespace parity::adapters::cuda
