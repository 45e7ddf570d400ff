// The CUDA adapter's device state: device 0, one stream, device memory,
// and the residency of the session's values.
//
// The evaluator passes host tensors between nodes (adapters/device/
// partition.h). A lowered node reads its inputs through DeviceData: a
// tensor whose device copy is resident (an initializer uploaded at
// creation, or the output of an earlier lowered node) is read there, with
// no copy; any other is uploaded once and then kept. Each output a lowered
// node makes is downloaded into a host tensor at once (the reference's
// nodes and the graph's outputs read it there) and its device buffer is
// kept beside it, so the next lowered node reads it on the device. A
// device copy is dropped when no tensor but the cache's own holds its host
// buffer. A host buffer written after it is made (a key/value cache that a
// stateful session binds) is either written on both sides at once by the
// adapter's in-place TensorScatter (MutableDeviceData), or written by the
// evaluator on the host, which tells the adapter (Forget), so a resident
// copy never goes stale.
//
// Every copy is counted (Transfers), so that a report or a benchmark can
// say what fallback and the host boundary cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "adapters/cuda/kernel_math.h"
#include "reference/core/status.h"
#include "reference/core/tensor.h"

namespace parity::adapters::cuda {

// Device memory, freed on the context's stream when the last holder lets go
// (cudaFreeAsync: after the work queued on the stream before it, so a
// buffer may be dropped while a kernel that reads it is still queued).
class DeviceBuffer {
 public:
  DeviceBuffer(void* data, size_t bytes, void* stream) : data_(data), bytes_(bytes), stream_(stream) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_;
  size_t bytes_;
  void* stream_;
};

struct Transfers {
  uint64_t uploads = 0, upload_bytes = 0;      // host to device
  uint64_t downloads = 0, download_bytes = 0;  // device to host
  uint64_t resident_reads = 0;                 // inputs found on the device
};

// The kernels' element type of `type`, or nullopt for a type they do not take.
std::optional<KType> KernelType(DataType type);

class CudaContext {
 public:
  // The process's context on device 0, made on the first call; kUnavailable
  // saying why when the CUDA runtime cannot start (no driver, no device, a
  // driver older than the runtime).
  static StatusOr<CudaContext*> Get();

  void* stream() const { return stream_; }

  // `bytes` of device memory (at least one byte, so that every buffer has an address).
  StatusOr<std::shared_ptr<DeviceBuffer>> Allocate(size_t bytes);
  // The device copy of `host`'s bytes: resident, or uploaded now and kept.
  StatusOr<const void*> DeviceData(const Tensor& host);
  // The same copy, to be written: the caller writes the same change into
  // the host buffer, so that both keep one value (an in-place node).
  StatusOr<void*> MutableDeviceData(const Tensor& host);
  // A host tensor of `type` and `shape` holding `device`'s bytes, downloaded
  // now (the stream is synchronized first); `device` stays resident for it.
  StatusOr<Tensor> Download(const std::shared_ptr<DeviceBuffer>& device, DataType type, const Shape& shape);
  // Drops the device copy of `host`'s buffer, if one is resident: the host
  // wrote that buffer (NodeKernels::host_wrote), or a write to the device
  // copy failed halfway.
  void Forget(const Tensor& host);
  // Waits for the stream; an error names the failed kernel's error.
  Status Synchronize();

  // An error from a launch or a runtime call, named: "what: cudaErrorX (n): text".
  static Status Error(int code, std::string_view what);

  Transfers transfers() const;
  size_t resident_count() const;

 private:
  CudaContext() = default;
  struct Resident {
    Tensor host;  // holds the host buffer, so that its address is not reused
    std::shared_ptr<DeviceBuffer> device;
  };
  void Prune();  // drops the copies no other tensor holds the host buffer of

  void* stream_ = nullptr;
  mutable std::mutex mutex_;
  std::vector<Resident> resident_;
  Transfers transfers_;
};

}  // namespace parity::adapters::cuda
