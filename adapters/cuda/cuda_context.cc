#include "adapters/cuda/cuda_context.h"

#include <cuda_runtime_api.h>

#include "adapters/cuda/cuda_device.h"

namespace parity::adapters::cuda {

DeviceBuffer::DeviceBuffer(void* data, size_t bytes, void* stream, MemoryCount* memory)
    : data_(data), bytes_(bytes), stream_(stream), memory_(memory) {
  if (memory_) memory_->Add(bytes_);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_));
  if (memory_) memory_->Remove(bytes_);
}

std::optional<KType> KernelType(DataType type) {
  switch (type) {
    case DataType::kFloat: return KType::kFloat32;
    case DataType::kFloat16: return KType::kFloat16;
    case DataType::kBfloat16: return KType::kBfloat16;
    default: return std::nullopt;
  }
}

Status CudaContext::Error(int code, std::string_view what) {
  const auto error = static_cast<cudaError_t>(code);
  return Status(StatusCode::kInternal,
                StrCat(what, ": ", cudaGetErrorName(error), " (", code, "): ", cudaGetErrorString(error)));
}

StatusOr<CudaContext*> CudaContext::Get() {
  static const StatusOr<CudaContext*> context = []() -> StatusOr<CudaContext*> {
    PARITY_ASSIGN_OR_RETURN(CudaDescription device, FindCudaDevice());
    (void)device;
    if (const cudaError_t e = cudaSetDevice(0); e != cudaSuccess) {
      return Status(StatusCode::kUnavailable, StrCat("the CUDA runtime could not start on device 0: ",
                                                     cudaGetErrorName(e), " (", static_cast<int>(e), "): ",
                                                     cudaGetErrorString(e)));
    }
    cudaStream_t stream = nullptr;
    if (const cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
      return Status(StatusCode::kUnavailable, StrCat("no CUDA stream: ", cudaGetErrorName(e)));
    }
    // Freed memory stays in the device's pool instead of going back to the
    // driver at each synchronization (the default threshold is 0).
    cudaMemPool_t pool = nullptr;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) {
      uint64_t keep = UINT64_MAX;
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    auto* made = new CudaContext();  // lives as long as the process
    made->stream_ = stream;
    return made;
  }();
  return context;
}

StatusOr<std::shared_ptr<DeviceBuffer>> CudaContext::Allocate(size_t bytes) {
  void* data = nullptr;
  const cudaError_t e = cudaMallocAsync(&data, bytes == 0 ? 1 : bytes, static_cast<cudaStream_t>(stream_));
  if (e != cudaSuccess) {
    cudaGetLastError();  // clears the error, which is not sticky
    return Status(e == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted : StatusCode::kInternal,
                  StrCat("cannot allocate ", bytes, " bytes of device memory: ", cudaGetErrorName(e)));
  }
  return std::make_shared<DeviceBuffer>(data, bytes, stream_, &memory_);
}

CudaContext::CudaContext()
    : residency_(Residency<DeviceBuffer>::Device{
          .allocate = [this](size_t bytes) { return Allocate(bytes); },
          .upload =
              [this](const Tensor& host, DeviceBuffer& device) {
                const cudaError_t e = cudaMemcpyAsync(device.data(), host.raw_bytes(), host.byte_size(),
                                                      cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream_));
                return e == cudaSuccess ? Status::Ok() : Error(e, StrCat("uploading ", host.Description()));
              },
          .download =
              [this](const DeviceBuffer& device, Tensor& host) {
                // The kernels that write it were queued on the stream.
                PARITY_RETURN_IF_ERROR(Synchronize());
                const cudaError_t e =
                    cudaMemcpy(host.mutable_raw_bytes(), device.data(), host.byte_size(), cudaMemcpyDeviceToHost);
                return e == cudaSuccess ? Status::Ok() : Error(e, StrCat("downloading ", host.Description()));
              },
          .copy =
              [this](const DeviceBuffer& from, DeviceBuffer& to, size_t bytes) {
                const cudaError_t e = cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice,
                                                      static_cast<cudaStream_t>(stream_));
                return e == cudaSuccess ? Status::Ok() : Error(e, "copying a whole-region alias's result");
              },
      }) {}

StatusOr<const void*> CudaContext::DeviceData(const Tensor& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  PARITY_ASSIGN_OR_RETURN(DeviceBuffer * device, residency_.DeviceCopy(host));
  return static_cast<const void*>(device->data());
}

StatusOr<void*> CudaContext::MutableDeviceData(const Tensor& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  PARITY_ASSIGN_OR_RETURN(DeviceBuffer * device, residency_.DeviceCopy(host));
  return device->data();
}

void CudaContext::DeviceWrote(const Tensor& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  residency_.DeviceWrote(host);
}

StatusOr<Tensor> CudaContext::Made(std::shared_ptr<DeviceBuffer> device, DataType type, const Shape& shape) {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.Made(std::move(device), type, shape);
}

Status CudaContext::Bring(const Tensor& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.Bring(host);
}

StatusOr<bool> CudaContext::CopyInto(const Tensor& from, const Tensor& into) {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.CopyInto(from, into);
}

bool CudaContext::Forget(const Tensor& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.Forget(host);
}

Status CudaContext::Synchronize() {
  const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  return e == cudaSuccess ? Status::Ok() : Error(e, "a kernel on the stream failed");
}

Transfers CudaContext::transfers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.transfers();
}

size_t CudaContext::resident_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.size();
}

bool CudaContext::WriteFailed(const Tensor& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  return residency_.WriteFailed(host);
}

DeviceMemory CudaContext::memory() {
  std::lock_guard<std::mutex> lock(mutex_);
  residency_.DropUnheld();
  return memory_.Read();
}

void CudaContext::ResetPeak() {
  std::lock_guard<std::mutex> lock(mutex_);
  residency_.DropUnheld();
  memory_.ResetPeak();
}

}  // namespace parity::adapters::cuda
