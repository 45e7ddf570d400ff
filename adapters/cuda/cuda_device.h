// The process's CUDA device, found once through the driver (cuda_driver.h).
#pragma once
#include <string>

#include "reference/core/status.h"

namespace parity::adapters::cuda {

struct CudaDescription {
  std::string name;          // "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;  // compute capability
  size_t memory_bytes = 0;
  int driver_version = 0;  // 13000 for 13.0
  std::string Text() const;  // "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.6 GiB, driver API 13.0"
};

// Device 0 as the driver describes it; kUnavailable, with a message that
// says what is missing (no libcuda.so.1, cuInit's answer, no device), when
// there is none. Found on the first call; later calls give the same answer.
StatusOr<CudaDescription> FindCudaDevice();

}  // namespace parity::adapters::cuda
