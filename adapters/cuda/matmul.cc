// MatMul and Gemm on cuBLASLt (matmul_geometry.h says how a row-major
// product becomes one column-major strided-batched call), in float32,
// float16 and bfloat16, accumulating in float32. Gemm's C is added by
// cuBLASLt's bias epilogue when it is one row of N values and beta is 1;
// otherwise C is broadcast into the output first and added with beta.
//
// A plan (descriptors and the algorithm cuBLASLt's heuristic picks) is made
// per input shapes: at session creation when the shapes are static (the
// load-time cost, reported as compile time), else at the first run of
// those shapes.
#include <dlfcn.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>

#include "adapters/cuda/cublaslt.h"
#include "adapters/cuda/kernels.h"
#include "adapters/cuda/lowerings.h"
#include "adapters/cuda/strided_views.h"
#include "adapters/device/driver_symbols.h"
#include "reference/ops/common.h"

namespace parity::adapters::cuda {

// --- Geometry ---------------------------------------------------------------

std::string MatMulGeometry::Text() const {
  auto operand = [](const LtOperand& o) {
    return StrCat(o.rows, "x", o.cols, " ld ", o.ld, o.transposed ? " T" : "", " stride ", o.batch_stride);
  };
  return StrCat("m=", m, " n=", n, " k=", k, " batch=", batch, "; first ", operand(first), "; second ",
                operand(second), "; out ", operand(out));
}

namespace {

int64_t Product(const Shape& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// The batch stride of an operand with batch dims `dims` read along the
// output's `batch` dims, or nullopt when it needs expanding first.
std::optional<int64_t> BatchStride(const Shape& dims, const Shape& batch, int64_t matrix) {
  if (Product(dims) == 1) return 0;
  Shape padded(batch.size() - dims.size(), 1);
  padded.insert(padded.end(), dims.begin(), dims.end());
  if (padded == batch) return matrix;
  return std::nullopt;
}

}  // namespace

StatusOr<MatMulGeometry> MatMulGeometryOf(const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) return InvalidArgument("MatMul of a scalar");
  const Shape a = a_in.size() == 1 ? Shape{1, a_in[0]} : a_in;
  const Shape b = b_in.size() == 1 ? Shape{b_in[0], 1} : b_in;
  const int64_t m = a[a.size() - 2], k = a[a.size() - 1], n = b[b.size() - 1];
  if (b[b.size() - 2] != k) {
    return InvalidArgument("MatMul of ", ShapeToString(a_in), " and ", ShapeToString(b_in),
                           ": inner dims ", k, " and ", b[b.size() - 2], " differ");
  }
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  Shape batch(std::max(a_batch.size(), b_batch.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    const size_t ia = i + a_batch.size(), ib = i + b_batch.size();
    const int64_t da = ia < batch.size() ? 1 : a_batch[ia - batch.size()];
    const int64_t db = ib < batch.size() ? 1 : b_batch[ib - batch.size()];
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("MatMul of ", ShapeToString(a_in), " and ", ShapeToString(b_in),
                             ": batch dims do not broadcast");
    }
    batch[i] = da == 1 ? db : da;
  }
  MatMulGeometry g;
  g.m = n, g.n = m, g.k = k;
  g.batch = Product(batch);
  std::optional<int64_t> a_stride = BatchStride(a_batch, batch, m * k);
  std::optional<int64_t> b_stride = BatchStride(b_batch, batch, k * n);
  if (!a_stride) {
    g.expand_a = batch, g.expand_a->push_back(m), g.expand_a->push_back(k);
    a_stride = m * k;
  }
  if (!b_stride) {
    g.expand_b = batch, g.expand_b->push_back(k), g.expand_b->push_back(n);
    b_stride = k * n;
  }
  g.first = {n, k, n, false, *b_stride};
  g.second = {k, m, k, false, *a_stride};
  g.out = {n, m, n, false, m * n};
  g.out_dims = batch;
  if (a_in.size() > 1) g.out_dims.push_back(m);
  if (b_in.size() > 1) g.out_dims.push_back(n);
  return g;
}

StatusOr<MatMulGeometry> GemmGeometryOf(const Shape& a, const Shape& b, bool trans_a, bool trans_b) {
  if (a.size() != 2 || b.size() != 2) {
    return InvalidArgument("Gemm of ", ShapeToString(a), " and ", ShapeToString(b), ": both must be 2-D");
  }
  const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0], n = trans_b ? b[0] : b[1];
  if (k != kb) {
    return InvalidArgument("Gemm of ", ShapeToString(a), trans_a ? "ᵀ" : "", " and ", ShapeToString(b),
                           trans_b ? "ᵀ" : "", ": inner dims ", k, " and ", kb, " differ");
  }
  MatMulGeometry g;
  g.m = n, g.n = m, g.k = k;
  // B's bytes, column-major, are [N, K] with ld N (B row-major [K, N]) or,
  // with trans_b, [K, N] with ld K, read transposed.
  g.first = trans_b ? LtOperand{k, n, k, true, 0} : LtOperand{n, k, n, false, 0};
  g.second = trans_a ? LtOperand{m, k, m, true, 0} : LtOperand{k, m, k, false, 0};
  g.out = {n, m, n, false, 0};
  g.out_dims = {m, n};
  return g;
}

StatusOr<Int8Geometry> Int8GeometryOf(const Shape& a, const Shape& b, bool flip_a, bool flip_b) {
  PARITY_ASSIGN_OR_RETURN(MatMulGeometry full, MatMulGeometryOf(a, b));
  if (full.expand_a || full.expand_b) {
    return Status(StatusCode::kUnimplemented, StrCat("batch dims of ", ShapeToString(a), " and ", ShapeToString(b),
                                                     " that broadcast both ways (the int8 path takes one way only)"));
  }
  if (full.k > kMaxInt8K) {
    return Status(StatusCode::kUnimplemented, StrCat("K = ", full.k, " (int32 sums of int8 products hold K <= ", kMaxInt8K, ")"));
  }
  auto up4 = [](int64_t v) { return (v + 3) / 4 * 4; };
  Int8Geometry g;
  g.m = full.n, g.n = full.m, g.k = full.k;  // MatMulGeometry's m is N, its n M
  g.n_pad = up4(g.n), g.k_pad = up4(g.k);
  g.batch = full.batch;
  g.a_matrices = full.second.batch_stride == 0 ? 1 : g.batch;
  g.b_matrices = full.first.batch_stride == 0 ? 1 : g.batch;
  // A: [m, k] rows as they are; B: [k, n] read transposed, element (j, kk) at kk * n + j.
  g.a_pack = Int8Pack{g.m * g.k, g.m, g.k, g.k, 1, g.m, g.k_pad, flip_a};
  g.b_pack = Int8Pack{g.k * g.n, g.n, g.k, 1, g.n, g.n_pad, g.k_pad, flip_b};
  MatMulGeometry& lt = g.lt;
  lt.m = g.n_pad, lt.n = g.m, lt.k = g.k_pad, lt.batch = g.batch;
  lt.first = {g.k_pad, g.n_pad, g.k_pad, true, g.b_matrices == 1 ? 0 : g.n_pad * g.k_pad};
  lt.second = {g.k_pad, g.m, g.k_pad, false, g.a_matrices == 1 ? 0 : g.m * g.k_pad};
  lt.out = {g.n_pad, g.m, g.n_pad, false, g.m * g.n_pad};
  lt.out_dims = {g.batch, g.m, g.n_pad};
  g.out_dims = full.out_dims;
  return g;
}

Int8Finish Int8FinishOf(const Int8Geometry& g, IntFinish finish, DataType out_type, const Int8Parameters& p,
                        std::vector<int64_t>& packed_b_zero) {
  Int8Finish f;
  f.finish = finish;
  f.batch = g.batch, f.m = g.m, f.n = g.n, f.k = g.k, f.n_pad = g.n_pad;
  f.a_sums_stride = g.a_matrices == 1 ? 0 : g.m;
  f.b_sums_stride = g.b_matrices == 1 ? 0 : g.n_pad;
  f.a_zero = p.a_zero - (g.a_pack.flip ? 128 : 0);
  packed_b_zero.clear();
  for (int64_t z : p.b_zero) packed_b_zero.push_back(z - (g.b_pack.flip ? 128 : 0));
  f.b_zero_count = static_cast<int64_t>(packed_b_zero.size());
  f.x_scale = p.x_scale, f.y_scale = p.y_scale, f.y_zero = p.y_zero;
  f.w_scale_count = static_cast<int64_t>(p.w_scale.size());
  if (finish == IntFinish::kQuantize) {
    f.lo = static_cast<double>(IntegerMin(out_type));
    f.hi = static_cast<double>(IntegerMax(out_type));
  }
  return f;
}

// --- cuBLASLt ---------------------------------------------------------------

std::string CublasLt::StatusText(cublasStatus_t status) const {
  if (status == CUBLAS_STATUS_SUCCESS) return "";
  return StrCat(GetStatusName ? GetStatusName(status) : "cublasStatus_t", " (", static_cast<int>(status), ")");
}

StatusOr<const CublasLt*> LoadCublasLt() {
  static const StatusOr<const CublasLt*> loaded = []() -> StatusOr<const CublasLt*> {
    constexpr const char* kLibrary = "libcublasLt.so.13";
    void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);  // kept for the process's life
    if (!library) return Status(StatusCode::kUnavailable, StrCat(kLibrary, " could not be opened: ", dlerror()));
    auto* lt = new CublasLt;
    std::string missing;
    BindSymbol(library, "cublasLtCreate", &lt->Create, &missing);
    BindSymbol(library, "cublasLtGetVersion", &lt->GetVersion, &missing);
    BindSymbol(library, "cublasLtGetStatusName", &lt->GetStatusName, &missing);
    BindSymbol(library, "cublasLtMatmulDescCreate", &lt->MatmulDescCreate, &missing);
    BindSymbol(library, "cublasLtMatmulDescDestroy", &lt->MatmulDescDestroy, &missing);
    BindSymbol(library, "cublasLtMatmulDescSetAttribute", &lt->MatmulDescSetAttribute, &missing);
    BindSymbol(library, "cublasLtMatrixLayoutCreate", &lt->MatrixLayoutCreate, &missing);
    BindSymbol(library, "cublasLtMatrixLayoutDestroy", &lt->MatrixLayoutDestroy, &missing);
    BindSymbol(library, "cublasLtMatrixLayoutSetAttribute", &lt->MatrixLayoutSetAttribute, &missing);
    BindSymbol(library, "cublasLtMatmulPreferenceCreate", &lt->MatmulPreferenceCreate, &missing);
    BindSymbol(library, "cublasLtMatmulPreferenceDestroy", &lt->MatmulPreferenceDestroy, &missing);
    BindSymbol(library, "cublasLtMatmulPreferenceSetAttribute", &lt->MatmulPreferenceSetAttribute, &missing);
    BindSymbol(library, "cublasLtMatmulAlgoGetHeuristic", &lt->MatmulAlgoGetHeuristic, &missing);
    BindSymbol(library, "cublasLtMatmul", &lt->Matmul, &missing);
    if (!missing.empty()) {
      delete lt;
      return Status(StatusCode::kUnavailable, StrCat(kLibrary, " lacks ", missing));
    }
    return static_cast<const CublasLt*>(lt);
  }();
  return loaded;
}

LtDescriptors::~LtDescriptors() {
  if (!lt_) return;
  if (matmul) lt_->MatmulDescDestroy(matmul);
  for (cublasLtMatrixLayout_t layout : {first, second, out}) {
    if (layout) lt_->MatrixLayoutDestroy(layout);
  }
}

namespace {

std::optional<cudaDataType_t> LtType(DataType type) {
  switch (type) {
    case DataType::kFloat: return CUDA_R_32F;
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBfloat16: return CUDA_R_16BF;
    default: return std::nullopt;
  }
}

}  // namespace

StatusOr<std::unique_ptr<LtDescriptors>> LtDescriptors::Make(const CublasLt& lt, const MatMulGeometry& g,
                                                             DataType type, Epilogue epilogue) {
  // int8 operands give int32 sums, accumulated and scaled in int32.
  const bool int8 = type == DataType::kInt8;
  const std::optional<cudaDataType_t> element = int8 ? std::optional(CUDA_R_8I) : LtType(type);
  if (!element) return InvalidArgument("cuBLASLt is not given ", DataTypeName(type), " data here");
  if (int8 && epilogue != Epilogue::kNone) return InvalidArgument("an epilogue on int8 sums");
  const cudaDataType_t out_element = int8 ? CUDA_R_32I : *element;
  auto made = std::make_unique<LtDescriptors>();
  made->lt_ = &lt;
  auto check = [&](cublasStatus_t status, std::string_view what) -> Status {
    if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
    return Status(StatusCode::kInternal, StrCat("cuBLASLt refused ", what, " for ", g.Text(), ": ", lt.StatusText(status)));
  };
  PARITY_RETURN_IF_ERROR(check(lt.MatmulDescCreate(&made->matmul, int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F,
                                                    int8 ? CUDA_R_32I : CUDA_R_32F), "the matmul"));
  const cublasOperation_t trans_first = g.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_second = g.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  PARITY_RETURN_IF_ERROR(check(lt.MatmulDescSetAttribute(made->matmul, CUBLASLT_MATMUL_DESC_TRANSA, &trans_first,
                                                         sizeof(trans_first)),
                               "transa"));
  PARITY_RETURN_IF_ERROR(check(lt.MatmulDescSetAttribute(made->matmul, CUBLASLT_MATMUL_DESC_TRANSB, &trans_second,
                                                         sizeof(trans_second)),
                               "transb"));
  if (epilogue == Epilogue::kBias) {
    const cublasLtEpilogue_t bias = CUBLASLT_EPILOGUE_BIAS;
    PARITY_RETURN_IF_ERROR(
        check(lt.MatmulDescSetAttribute(made->matmul, CUBLASLT_MATMUL_DESC_EPILOGUE, &bias, sizeof(bias)), "the bias"));
    const cudaDataType_t bias_type = *element;
    PARITY_RETURN_IF_ERROR(check(lt.MatmulDescSetAttribute(made->matmul, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                           &bias_type, sizeof(bias_type)),
                                 "the bias type"));
  }
  auto layout = [&](const LtOperand& o, cudaDataType_t type_of, cublasLtMatrixLayout_t* out,
                    std::string_view what) -> Status {
    PARITY_RETURN_IF_ERROR(check(lt.MatrixLayoutCreate(out, type_of, static_cast<uint64_t>(o.rows),
                                                       static_cast<uint64_t>(o.cols), o.ld),
                                 what));
    if (g.batch > 1) {
      const auto count = static_cast<int32_t>(g.batch);
      PARITY_RETURN_IF_ERROR(
          check(lt.MatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), what));
      const int64_t stride = o.batch_stride;
      PARITY_RETURN_IF_ERROR(check(
          lt.MatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
          what));
    }
    return Status::Ok();
  };
  if (g.batch > INT32_MAX) return InvalidArgument("a batch of ", g.batch, " matrices (cuBLASLt counts in int32)");
  PARITY_RETURN_IF_ERROR(layout(g.first, *element, &made->first, "the first operand's layout"));
  PARITY_RETURN_IF_ERROR(layout(g.second, *element, &made->second, "the second operand's layout"));
  PARITY_RETURN_IF_ERROR(layout(g.out, out_element, &made->out, "the output's layout"));
  return made;
}

StatusOr<const LtDevice*> GetLtDevice(CudaContext& cuda) {
  static const StatusOr<const LtDevice*> made = [&]() -> StatusOr<const LtDevice*> {
    PARITY_ASSIGN_OR_RETURN(const CublasLt* lt, LoadCublasLt());
    auto* device = new LtDevice;
    device->lt = lt;
    if (const cublasStatus_t s = lt->Create(&device->handle); s != CUBLAS_STATUS_SUCCESS) {
      delete device;
      return Status(StatusCode::kUnavailable, StrCat("cublasLtCreate: ", lt->StatusText(s)));
    }
    PARITY_ASSIGN_OR_RETURN(device->workspace, cuda.Allocate(kLtWorkspaceBytes));
    return static_cast<const LtDevice*>(device);
  }();
  return made;
}

StatusOr<MatMulPlan> MakeLtPlan(CudaContext& cuda, const MatMulGeometry& geometry, DataType type, Epilogue epilogue) {
  PARITY_ASSIGN_OR_RETURN(const LtDevice* device, GetLtDevice(cuda));
  const CublasLt& lt = *device->lt;
  MatMulPlan plan;
  plan.geometry = geometry;
  PARITY_ASSIGN_OR_RETURN(plan.descriptors, LtDescriptors::Make(lt, geometry, type, epilogue));
  cublasLtMatmulPreference_t preference = nullptr;
  if (const cublasStatus_t s = lt.MatmulPreferenceCreate(&preference); s != CUBLAS_STATUS_SUCCESS) {
    return Status(StatusCode::kInternal, StrCat("cublasLtMatmulPreferenceCreate: ", lt.StatusText(s)));
  }
  const uint64_t workspace = kLtWorkspaceBytes;
  lt.MatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const LtDescriptors& d = *plan.descriptors;
  const cublasStatus_t s = lt.MatmulAlgoGetHeuristic(device->handle, d.matmul, d.first, d.second, d.out, d.out,
                                                     preference, 1, &result, &found);
  lt.MatmulPreferenceDestroy(preference);
  if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
    return Status(StatusCode::kUnimplemented,
                  StrCat("cuBLASLt has no algorithm for ", DataTypeName(type), " ", geometry.Text(),
                         s == CUBLAS_STATUS_SUCCESS ? "" : StrCat(": ", lt.StatusText(s))));
  }
  plan.algorithm = result.algo;
  return plan;
}

namespace {

// An operand's batch made full (matmul_geometry.h, expand_*): its elements
// read along `dims` by broadcasting into a new buffer.
StatusOr<std::shared_ptr<DeviceBuffer>> Expanded(CudaContext& cuda, const KernelContext& ctx, const Tensor& t,
                                                 const void* data, const Shape& dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) return ctx.Error("rank ", dims.size(), " is over the kernels' ", kMaxRank);
  const StridedView view = BroadcastView(t.shape(), dims);
  const int64_t n = Product(dims);
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out,
                          cuda.Allocate(static_cast<size_t>(n) * StorageSize(t.dtype())));
  PARITY_RETURN_IF_ERROR(Launched(
      ctx, LaunchStridedCopy(static_cast<int>(StorageSize(t.dtype())), data, view, out->data(), n, cuda.stream()),
      "batch expansion"));
  return out;
}

// Whether `dims` is one row of n values: [n], or [1, ..., 1, n].
bool IsBiasRow(const Shape& dims, int64_t n) {
  if (dims.empty() || dims.back() != n) return false;
  return std::all_of(dims.begin(), dims.end() - 1, [](int64_t d) { return d == 1; });
}

// MatMul and Gemm: one cuBLASLt call over the plan of the inputs' shapes.
class LtMatMulNode final : public LoweredNode {
 public:
  // Gemm when `gemm`: its transposes, alpha, beta.
  LtMatMulNode(DataType type, bool gemm, bool trans_a, bool trans_b, float alpha, float beta)
      : type_(type), gemm_(gemm), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), beta_(beta) {}
  // A MatMul region (LowerMatMulRegion): A, B and a bias of N values added
  // by the bias epilogue.
  LtMatMulNode(DataType type, bool fused_bias)
      : type_(type), gemm_(false), trans_a_(false), trans_b_(false), alpha_(1), beta_(1), fused_(fused_bias) {}

  bool deferred() const override { return plans_.empty(); }

  // The plan of static shapes, made at session creation.
  Status Prepare(const NodeView& view) {
    std::vector<const std::vector<int64_t>*> dims;
    for (int i = 0; i < view.input_count(); ++i) {
      if (view.has_input(i)) dims.push_back(view.input_dims(i));
    }
    return Prepare(dims);
  }
  // The same for the runner's inputs' dims (a region's: A, B, the bias);
  // one not known leaves the plan to the first run.
  Status Prepare(const std::vector<const std::vector<int64_t>*>& dims) {
    std::vector<Shape> shapes;
    for (const std::vector<int64_t>* d : dims) {
      if (!d) return Status::Ok();
      shapes.push_back(*d);
    }
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, CudaContext::Get());
    return Find(*cuda, shapes).status();
  }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && !ctx.input(i).is_tensor()) return ctx.Error("input ", i, " is not a tensor");
    }
    PARITY_ASSIGN_OR_RETURN(CudaContext * cuda, NodeContext(ctx));
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i)) shapes.push_back(ctx.tensor(i).shape());
    }
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (ctx.has_input(i) && ctx.tensor(i).dtype() != type_) {
        return ctx.Error("input ", i, " is ", ctx.tensor(i).Description(), ", not ", DataTypeName(type_));
      }
    }
    StatusOr<const MatMulPlan*> found = Find(*cuda, shapes);
    if (!found.ok()) return found.status().WithContext(graph::DescribeNode(ctx.node()));
    const MatMulPlan& plan = **found;
    const MatMulGeometry& g = plan.geometry;
    const Tensor& a = ctx.tensor(0);
    const Tensor& b = ctx.tensor(1);
    PARITY_ASSIGN_OR_RETURN(const void* a_data, cuda->DeviceData(a));
    PARITY_ASSIGN_OR_RETURN(const void* b_data, cuda->DeviceData(b));
    std::shared_ptr<DeviceBuffer> a_full, b_full;
    if (g.expand_a) {
      PARITY_ASSIGN_OR_RETURN(a_full, Expanded(*cuda, ctx, a, a_data, *g.expand_a));
      a_data = a_full->data();
    }
    if (g.expand_b) {
      PARITY_ASSIGN_OR_RETURN(b_full, Expanded(*cuda, ctx, b, b_data, *g.expand_b));
      b_data = b_full->data();
    }
    const int64_t n = Product(g.out_dims);
    const size_t element = StorageSize(type_);
    auto* stream = static_cast<cudaStream_t>(cuda->stream());
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> out, cuda->Allocate(static_cast<size_t>(n) * element));
    const bool has_c = (gemm_ || fused_) && ctx.has_input(2) && beta_ != 0;
    const bool bias_row = has_c && BiasEpilogue(ctx.tensor(2).shape(), g);
    if (fused_ && !bias_row) {
      return ctx.Error("the bias ", ctx.tensor(2).Description(), " is not one row of ", g.m, " values");
    }
    if (n == 0) {
      PARITY_ASSIGN_OR_RETURN(Tensor y, cuda->Made(out, type_, g.out_dims));
      return std::vector<Value>{Value::FromTensor(std::move(y))};
    }
    const void* c_data = nullptr;
    if (has_c) {
      PARITY_ASSIGN_OR_RETURN(c_data, cuda->DeviceData(ctx.tensor(2)));
    }
    float beta = 0;
    if (has_c && !bias_row) {
      // C broadcast into the output, which cuBLASLt reads as C and writes as D.
      PARITY_ASSIGN_OR_RETURN(Shape joined, ops::BroadcastShapes(ctx, {ctx.tensor(2).shape(), g.out_dims}));
      if (joined != g.out_dims) {
        return ctx.Error("C ", ctx.tensor(2).Description(), " does not broadcast to ", ShapeToString(g.out_dims));
      }
      PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> c_full,
                              Expanded(*cuda, ctx, ctx.tensor(2), c_data, g.out_dims));
      PARITY_RETURN_IF_ERROR(Launched(ctx,
                                      cudaMemcpyAsync(out->data(), c_full->data(), static_cast<size_t>(n) * element,
                                                      cudaMemcpyDeviceToDevice, stream),
                                      "C copy"));
      beta = beta_;
    }
    if (g.k == 0) {
      // An empty sum: the result is beta * C, or the bias, or zeros; cuBLASLt
      // is not asked to multiply nothing.
      if (beta != 0) {
        PARITY_ASSIGN_OR_RETURN(Tensor scalar, Tensor::FromDoubles(type_, {}, {static_cast<double>(beta)}));
        PARITY_ASSIGN_OR_RETURN(const void* factor, cuda->DeviceData(scalar));
        const StridedView all = BroadcastView(g.out_dims, g.out_dims);
        PARITY_RETURN_IF_ERROR(Launched(ctx,
                                        LaunchBinary(*KernelType(type_), BinaryOp::kMul, out->data(), all, factor,
                                                     BroadcastView({}, g.out_dims), out->data(), n, cuda->stream()),
                                        "beta * C"));
      } else if (bias_row) {
        PARITY_RETURN_IF_ERROR(Launched(ctx,
                                        LaunchStridedCopy(static_cast<int>(element), c_data,
                                                          BroadcastView({g.m}, g.out_dims), out->data(), n,
                                                          cuda->stream()),
                                        "bias rows"));
      } else {
        PARITY_RETURN_IF_ERROR(
            Launched(ctx, cudaMemsetAsync(out->data(), 0, static_cast<size_t>(n) * element, stream), "zero fill"));
      }
    } else {
      const LtDescriptors& d = *plan.descriptors;
      if (bias_row) {
        const cublasStatus_t s = lt_->MatmulDescSetAttribute(d.matmul, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c_data,
                                                             sizeof(c_data));
        if (s != CUBLAS_STATUS_SUCCESS) return ctx.Error("cuBLASLt refused the bias pointer: ", lt_->StatusText(s));
      }
      const float alpha = gemm_ ? alpha_ : 1.0f;
      PARITY_ASSIGN_OR_RETURN(const LtDevice* device, GetLtDevice(*cuda));
      const cublasStatus_t s =
          lt_->Matmul(device->handle, d.matmul, &alpha, b_data, d.first, a_data, d.second, &beta, out->data(), d.out,
                      out->data(), d.out, &plan.algorithm, device->workspace->data(), kLtWorkspaceBytes, stream);
      if (s != CUBLAS_STATUS_SUCCESS) return ctx.Error("cublasLtMatmul failed: ", lt_->StatusText(s), " for ", g.Text());
    }
    PARITY_ASSIGN_OR_RETURN(Tensor y, cuda->Made(out, type_, g.out_dims));
    return std::vector<Value>{Value::FromTensor(std::move(y))};
  }

 private:
  // Whether C (or a region's bias) of `c` is added by the bias epilogue:
  // one row of N values ([N], or [1, ..., 1, N]) with beta 1.
  bool BiasEpilogue(const Shape& c, const MatMulGeometry& g) const {
    return beta_ == 1.0f && IsBiasRow(c, g.m) && c.size() <= std::max<size_t>(g.out_dims.size(), 1);
  }

  StatusOr<const MatMulPlan*> Find(CudaContext& cuda, const std::vector<Shape>& shapes) {
    auto it = plans_.find(shapes);
    if (it != plans_.end()) return &it->second;
    PARITY_ASSIGN_OR_RETURN(const CublasLt* lt, LoadCublasLt());
    lt_ = lt;
    PARITY_ASSIGN_OR_RETURN(MatMulGeometry g, gemm_ ? GemmGeometryOf(shapes[0], shapes[1], trans_a_, trans_b_)
                                                    : MatMulGeometryOf(shapes[0], shapes[1]));
    MatMulPlan plan;
    if (g.m * g.n * g.k * g.batch == 0) {
      plan.geometry = g;  // nothing to multiply: the run fills the output itself
    } else {
      const bool bias = (gemm_ || fused_) && shapes.size() > 2 && beta_ != 0 && BiasEpilogue(shapes[2], g);
      PARITY_ASSIGN_OR_RETURN(plan, MakeLtPlan(cuda, g, type_, bias ? Epilogue::kBias : Epilogue::kNone));
    }
    return &plans_.emplace(shapes, std::move(plan)).first->second;
  }

  DataType type_;
  bool gemm_, trans_a_, trans_b_;
  float alpha_, beta_;
  bool fused_ = false;
  const CublasLt* lt_ = nullptr;
  std::map<std::vector<Shape>, MatMulPlan> plans_;
};

StatusOr<std::unique_ptr<LoweredNode>> Lower(const NodeView& view, bool gemm) {
  PARITY_RETURN_IF_ERROR(RequireKernelType(view, 0).status());
  const DataType type = *view.input_type(0);
  if (view.input_type(1) != type) return NotLowered("inputs of two types");
  if (StatusOr<const CublasLt*> lt = LoadCublasLt(); !lt.ok()) return NotLowered(lt.status().message());
  if (gemm && view.opset() < 7) return NotLowered("opset ", view.opset(), " (C broadcast by attribute)");
  auto node = std::make_unique<LtMatMulNode>(type, gemm, view.GetInt("transA", 0) != 0, view.GetInt("transB", 0) != 0,
                                             view.GetFloat("alpha", 1.0f), view.GetFloat("beta", 1.0f));
  // With a device, the plan of static shapes is made now (load time); the
  // device-free tests claim without one.
  if (CudaContext::Get().ok()) {
    // Shapes cuBLASLt has no algorithm for, or that the operator refuses,
    // leave the node to the reference, which says what is wrong with them.
    if (Status prepared = node->Prepare(view); !prepared.ok()) return NotLowered(prepared.message());
  }
  return std::unique_ptr<LoweredNode>(std::move(node));
}

// MatMul, then Add of a bias of N values, as one cuBLASLt call with the
// bias epilogue: the sum and the bias are added in float32 and rounded
// once (the graph rounds twice in a 16-bit type: a neighbour's difference).
// Claimed where the product's output feeds only the Add, the bias's shape
// is known to be one row of B's N columns of a rank no higher than the
// product's, and everything is of one type. A Relu after it is not fused:
// cuBLASLt's Relu epilogue is max(x, 0), which gives 0 for NaN where ONNX
// keeps NaN.
StatusOr<std::optional<RegionClaim>> LowerMatMulRegion(const RegionView& region) {
  const int anchor = region.anchor();
  const NodeView mm = region.view(anchor);
  const std::optional<DataType> type = mm.input_type(0);
  const std::vector<int64_t>* b = mm.input_dims(1);
  const int64_t a_rank = mm.input_rank(0);
  if (!type || !KernelType(*type) || mm.input_type(1) != type || !b || b->size() < 2 || a_rank < 2 ||
      !LoadCublasLt().ok()) {
    return std::optional<RegionClaim>();
  }
  const auto product_rank = static_cast<size_t>(std::max<int64_t>(a_rank, static_cast<int64_t>(b->size())));
  const int add_index = region.sole_consumer(anchor);
  if (add_index < 0) return std::optional<RegionClaim>();
  const NodeView add = region.view(add_index);
  const std::string& product = mm.node().output(0);
  if (add.node().op_type() != "Add" || !(add.node().domain().empty() || add.node().domain() == "ai.onnx") ||
      add.opset() < 7 || add.input_count() != 2 ||
      (add.node().input(0) == product) == (add.node().input(1) == product)) {
    return std::optional<RegionClaim>();
  }
  const std::string& bias = add.node().input(0) == product ? add.node().input(1) : add.node().input(0);
  const std::vector<int64_t>* bias_dims = region.facts().StaticDims(bias);
  if (region.facts().TypeOf(bias) != type || !bias_dims || !IsBiasRow(*bias_dims, b->back()) ||
      bias_dims->size() > product_rank) {
    return std::optional<RegionClaim>();
  }
  RegionClaim claim;
  claim.nodes = {anchor, add_index};
  claim.inputs = {mm.node().input(0), mm.node().input(1), bias};
  claim.outputs = {add.node().output(0)};
  auto runner = std::make_unique<LtMatMulNode>(*type, true);
  // With a device, the plan of static shapes is made now (load time), as
  // for a lone MatMul; shapes cuBLASLt refuses leave the nodes unfused.
  if (CudaContext::Get().ok() && !runner->Prepare({mm.input_dims(0), b, bias_dims}).ok()) {
    return std::optional<RegionClaim>();
  }
  claim.runner = std::move(runner);
  return std::optional<RegionClaim>(std::move(claim));
}

}  // namespace

void AddMatMulLowerings(Lowering& lowering) {
  lowering.AddRegion("MatMul", LowerMatMulRegion);
  lowering.Add("MatMul", [](const NodeView& view) { return Lower(view, false); });
  lowering.Add("Gemm", [](const NodeView& view) { return Lower(view, true); });
}

}  // namespace parity::adapters::cuda
