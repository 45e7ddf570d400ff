// The CUDA adapter's device state: device 0, one stream, device memory,
// and the residency of the session's values (residency.h).
//
// The evaluator passes host tensors between nodes (adapters/device/
// partition.h). A lowered node reads its inputs through DeviceData: a
// tensor whose device copy is resident (an initializer uploaded at
// creation, or the output of an earlier lowered node) is read there, with
// no copy; any other is uploaded once and then kept. Each output a lowered
// node makes is a host tensor whose bytes stay on the device (Made) until
// the host reads them: a node on the reference's kernels, an output the
// session returns, a state read back (Bring, through
// NodeKernels::host_reads). A bound key/value cache written in place on
// the device (DeviceWrote, aliasing region "scatter") or made anew there
// (functional) therefore never comes back between steps, nor does one
// that a whole-region alias fills from a result on the device: that
// result is copied into the buffer's device copy there (CopyInto, through
// NodeKernels::copy_into). A device copy is
// dropped when no tensor but the ledger's own holds its host buffer, or
// when the evaluator writes that buffer on the host (Forget).
//
// Every copy is counted (Transfers), and so is the device memory the
// adapter's buffers hold (DeviceMemory), for the run's cost
// (parity_run_cost).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "adapters/cuda/kernel_math.h"
#include "adapters/cuda/residency.h"
#include "reference/core/status.h"
#include "reference/core/tensor.h"

namespace parity::adapters::cuda {

// Bytes of device memory the adapter's buffers hold now, and the most
// they held since the peak was last reset.
struct DeviceMemory {
  uint64_t bytes = 0;
  uint64_t peak_bytes = 0;
};

// The count behind DeviceMemory, kept by the buffers themselves (atomics:
// a buffer may go while the context's mutex is held).
class MemoryCount {
 public:
  void Add(uint64_t bytes) {
    const uint64_t now = bytes_.fetch_add(bytes) + bytes;
    uint64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  void Remove(uint64_t bytes) { bytes_.fetch_sub(bytes); }
  void ResetPeak() { peak_.store(bytes_.load()); }
  DeviceMemory Read() const { return {bytes_.load(), peak_.load()}; }

 private:
  std::atomic<uint64_t> bytes_{0}, peak_{0};
};

// Device memory, freed on the context's stream when the last holder lets go
// (cudaFreeAsync: after the work queued on the stream before it, so a
// buffer may be dropped while a kernel that reads it is still queued).
class DeviceBuffer {
 public:
  DeviceBuffer(void* data, size_t bytes, void* stream, MemoryCount* memory);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_;
  size_t bytes_;
  void* stream_;
  MemoryCount* memory_;  // the context's
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
  // The same copy, to be written by a kernel; the caller says DeviceWrote
  // once the write is done (an in-place node).
  StatusOr<void*> MutableDeviceData(const Tensor& host);
  // The device copy of `host` was written: the host buffer is behind.
  void DeviceWrote(const Tensor& host);
  // A host tensor of `type` and `shape` for the result a kernel is writing
  // into `device`: the bytes stay there until the host reads them (Bring).
  StatusOr<Tensor> Made(std::shared_ptr<DeviceBuffer> device, DataType type, const Shape& shape);
  // Before the host reads `host`: a newer device copy comes back (the
  // stream synchronized first); nothing for a host buffer that is current.
  Status Bring(const Tensor& host);
  // Drops the device copy of `host`'s buffer, if one is resident: the host
  // wrote that buffer (NodeKernels::host_wrote). False when the device copy
  // held the only current value.
  bool Forget(const Tensor& host);
  // A whole-region alias's result into the aliased buffer, on the device,
  // when the result is there (Residency::CopyInto); false leaves it to the
  // host.
  StatusOr<bool> CopyInto(const Tensor& from, const Tensor& into);
  // A write into `host`'s device copy failed (Residency::WriteFailed):
  // false when the device held the only current value, now lost.
  bool WriteFailed(const Tensor& host);
  // Waits for the stream; an error names the failed kernel's error.
  Status Synchronize();

  // An error from a launch or a runtime call, named: "what: cudaErrorX (n): text".
  static Status Error(int code, std::string_view what);

  Transfers transfers() const;
  size_t resident_count() const;
  // The device memory held now and the peak since ResetPeak, after the
  // copies whose host buffer nothing holds any more are dropped (a run's
  // intermediate values, let go when it returned).
  DeviceMemory memory();
  void ResetPeak();

 private:
  CudaContext();

  void* stream_ = nullptr;
  mutable std::mutex mutex_;
  Residency<DeviceBuffer> residency_;
  MemoryCount memory_;
};

}  // namespace parity::adapters::cuda
