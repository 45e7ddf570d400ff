// cuBLASLt, opened at run time (libcublasLt.so.13), so that the adapter
// loads where it is absent and MatMul then falls back saying so; and the
// descriptors of one MatMulGeometry, which need no device, so that the
// device-free tests make them for every shape they check.
#pragma once

#include <cublasLt.h>

#include <memory>
#include <string>

#include "adapters/cuda/matmul_geometry.h"

namespace parity::adapters::cuda {

struct CublasLt {
  decltype(&::cublasLtCreate) Create = nullptr;
  decltype(&::cublasLtGetVersion) GetVersion = nullptr;
  decltype(&::cublasLtGetStatusName) GetStatusName = nullptr;
  decltype(&::cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmul) Matmul = nullptr;

  // "CUBLAS_STATUS_X (n)", or "" for success.
  std::string StatusText(cublasStatus_t status) const;
};

// The library, bound once; kUnavailable naming what is missing.
StatusOr<const CublasLt*> LoadCublasLt();

// What the epilogue adds: nothing, or a bias of m (= N) values per column
// of the column-major output, one per output feature.
enum class Epilogue { kNone, kBias };

// The descriptors of one call (the matmul, the three layouts; the output's
// serves C and D), made without a device; destroyed with the object.
class LtDescriptors {
 public:
  ~LtDescriptors();
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;

  // For `geometry` on elements of `type` (float32, float16, bfloat16),
  // accumulating in float32 (CUBLAS_COMPUTE_32F: no TF32, no 16-bit sums);
  // or on int8 elements, giving their int32 sums (CUBLAS_COMPUTE_32I).
  static StatusOr<std::unique_ptr<LtDescriptors>> Make(const CublasLt& lt, const MatMulGeometry& geometry,
                                                       DataType type, Epilogue epilogue);

 private:
  const CublasLt* lt_ = nullptr;
};

class CudaContext;
class DeviceBuffer;

inline constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;

// The process's cuBLASLt handle and workspace, made with the context.
struct LtDevice {
  const CublasLt* lt = nullptr;
  cublasLtHandle_t handle = nullptr;
  std::shared_ptr<DeviceBuffer> workspace;
};
StatusOr<const LtDevice*> GetLtDevice(CudaContext& cuda);

// One call's descriptors and the algorithm cuBLASLt's heuristic picks.
struct MatMulPlan {
  MatMulGeometry geometry;
  std::unique_ptr<LtDescriptors> descriptors;
  cublasLtMatmulAlgo_t algorithm{};
};
// kUnimplemented naming the call when cuBLASLt has no algorithm for it.
StatusOr<MatMulPlan> MakeLtPlan(CudaContext& cuda, const MatMulGeometry& geometry, DataType type, Epilogue epilogue);

}  // namespace parity::adapters::cuda
