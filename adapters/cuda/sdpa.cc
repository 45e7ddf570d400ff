// cuDNN's SDPA through the cuDNN frontend (sdpa.h). The frontend is
// header-only and slow to compile: this is its only translation unit.
#include "adapters/cuda/sdpa.h"

#include <dlfcn.h>

#include <chrono>
#include <mutex>

#include <cudnn_frontend.h>

namespace cudnn_frontend {
// The frontend's handle of libcudnn.so.9 (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING):
// opened by OpenCudnn below before any frontend call.
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace parity::adapters::cuda {
namespace fe = cudnn_frontend;

std::string SdpaShape::Key() const {
  return StrCat(static_cast<int>(type), ":", batch, ",", q_heads, ",", kv_heads, ",", q_len, ",", total, ",",
                head_size, ":", q_strides[0], ",", q_strides[1], ",", q_strides[2], ":", o_strides[0], ",",
                o_strides[1], ",", o_strides[2], ":", causal, ":", scale);
}

namespace {

// libcudnn.so.9, opened once for the frontend; kUnavailable saying why not.
Status OpenCudnn() {
  static const Status opened = []() -> Status {
    constexpr const char* kLibrary = "libcudnn.so.9";
    void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);  // kept for the process's life
    if (!library) return Status(StatusCode::kUnavailable, StrCat(kLibrary, " could not be opened: ", dlerror()));
    fe::cudnn_dlhandle = library;
    return Status::Ok();
  }();
  return opened;
}

Status Refused(fe::error_t error, std::string_view step) {
  return Status(StatusCode::kUnimplemented, StrCat("cuDNN's SDPA refused the problem (", step, "): ",
                                                   error.get_message()));
}

struct Graph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::shared_ptr<fe::graph::Tensor_attributes> q, k, v, o;
};

// The graph of `shape`, validated; the compute capability set first when
// `sm_version` is positive (no device is asked then).
StatusOr<Graph> BuildGraph(const SdpaShape& s, int sm_version) {
  PARITY_RETURN_IF_ERROR(SdpaEligible(s));
  PARITY_RETURN_IF_ERROR(OpenCudnn());
  Graph made;
  made.graph = std::make_shared<fe::graph::Graph>();
  fe::graph::Graph& g = *made.graph;
  if (sm_version > 0) g.set_sm_version(sm_version);
  g.set_io_data_type(s.type == DataType::kBfloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t d = s.head_size;
  made.q = g.tensor(fe::graph::Tensor_attributes()
                        .set_name("Q")
                        .set_dim({s.batch, s.q_heads, s.q_len, d})
                        .set_stride({s.q_strides[0], s.q_strides[1], s.q_strides[2], 1}));
  const std::vector<int64_t> cache_dims = {s.batch, s.kv_heads, s.total, d};
  const std::vector<int64_t> cache_strides = {s.kv_heads * s.total * d, s.total * d, d, 1};
  made.k = g.tensor(fe::graph::Tensor_attributes().set_name("K").set_dim(cache_dims).set_stride(cache_strides));
  made.v = g.tensor(fe::graph::Tensor_attributes().set_name("V").set_dim(cache_dims).set_stride(cache_strides));
  auto options = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(false).set_attn_scale(s.scale);
  // Query i of q_len sees keys up to (total - q_len) + i: bottom-right.
  if (s.causal) options.set_causal_mask_bottom_right(true);
  auto [o, stats] = g.sdpa(made.q, made.k, made.v, options);
  (void)stats;
  made.o = o;
  made.o->set_output(true)
      .set_dim({s.batch, s.q_heads, s.q_len, d})
      .set_stride({s.o_strides[0], s.o_strides[1], s.o_strides[2], 1});
  if (fe::error_t e = g.validate(); e.is_bad()) return Refused(e, "validate");
  return made;
}

class CudnnSdpaPlan final : public SdpaPlan {
 public:
  CudnnSdpaPlan(Graph graph, cudnnHandle_t handle, std::shared_ptr<DeviceBuffer> workspace)
      : graph_(std::move(graph)), handle_(handle), workspace_(std::move(workspace)) {}

  Status Run(const void* q, const void* k, const void* v, void* o) override {
    std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack = {
        {graph_.q, const_cast<void*>(q)}, {graph_.k, const_cast<void*>(k)},
        {graph_.v, const_cast<void*>(v)}, {graph_.o, o}};
    if (fe::error_t e = graph_.graph->execute(handle_, pack, workspace_ ? workspace_->data() : nullptr); e.is_bad()) {
      return Status(StatusCode::kInternal, StrCat("cuDNN's SDPA failed to run: ", e.get_message()));
    }
    return Status::Ok();
  }

 private:
  Graph graph_;
  cudnnHandle_t handle_;
  std::shared_ptr<DeviceBuffer> workspace_;
};

// The process's cuDNN handle, on the context's stream.
StatusOr<cudnnHandle_t> Handle(CudaContext& cuda) {
  static const StatusOr<cudnnHandle_t> made = [&]() -> StatusOr<cudnnHandle_t> {
    PARITY_RETURN_IF_ERROR(OpenCudnn());
    cudnnHandle_t handle = nullptr;
    if (const cudnnStatus_t s = fe::detail::create_handle(&handle); s != CUDNN_STATUS_SUCCESS) {
      return Status(StatusCode::kUnavailable, StrCat("cudnnCreate failed: cudnnStatus_t ", static_cast<int>(s)));
    }
    if (const cudnnStatus_t s = fe::detail::set_stream(handle, static_cast<cudaStream_t>(cuda.stream()));
        s != CUDNN_STATUS_SUCCESS) {
      return Status(StatusCode::kUnavailable, StrCat("cudnnSetStream failed: cudnnStatus_t ", static_cast<int>(s)));
    }
    return handle;
  }();
  return made;
}

}  // namespace

Status SdpaEligible(const SdpaShape& s) {
  if (s.type != DataType::kFloat16 && s.type != DataType::kBfloat16) {
    return Status(StatusCode::kUnimplemented, StrCat("cuDNN's SDPA takes float16 and bfloat16, not ",
                                                     DataTypeName(s.type)));
  }
  if (s.head_size % 8 != 0 || s.head_size > 256 || s.head_size == 0) {
    return Status(StatusCode::kUnimplemented, StrCat("cuDNN's SDPA takes head sizes that are multiples of 8 up to 256, not ",
                                                     s.head_size));
  }
  if (s.kv_heads == 0 || s.q_heads % s.kv_heads != 0 || s.q_len == 0 || s.total == 0 || s.batch == 0) {
    return Status(StatusCode::kUnimplemented, "an empty problem or heads that do not group");
  }
  return Status::Ok();
}

Status ValidateSdpa(const SdpaShape& shape, int sm_version) {
  try {
    return BuildGraph(shape, sm_version).status();
  } catch (const std::exception& e) {
    return Status(StatusCode::kUnimplemented, StrCat("the cuDNN frontend threw: ", e.what()));
  }
}

StatusOr<std::unique_ptr<SdpaPlan>> SdpaPlan::Make(const SdpaShape& shape, CudaContext& cuda) {
  try {
    PARITY_ASSIGN_OR_RETURN(cudnnHandle_t handle, Handle(cuda));
    PARITY_ASSIGN_OR_RETURN(Graph graph, BuildGraph(shape, 0));
    fe::graph::Graph& g = *graph.graph;
    if (fe::error_t e = g.build_operation_graph(handle); e.is_bad()) return Refused(e, "operation graph");
    if (fe::error_t e = g.create_execution_plans({fe::HeurMode_t::A}); e.is_bad()) return Refused(e, "heuristics");
    if (fe::error_t e = g.check_support(handle); e.is_bad()) return Refused(e, "support");
    if (fe::error_t e = g.build_plans(handle); e.is_bad()) return Refused(e, "plans");
    int64_t workspace_bytes = 0;
    if (fe::error_t e = g.get_workspace_size(workspace_bytes); e.is_bad()) return Refused(e, "workspace");
    std::shared_ptr<DeviceBuffer> workspace;
    if (workspace_bytes > 0) {
      PARITY_ASSIGN_OR_RETURN(workspace, cuda.Allocate(static_cast<size_t>(workspace_bytes)));
    }
    return std::unique_ptr<SdpaPlan>(std::make_unique<CudnnSdpaPlan>(std::move(graph), handle, std::move(workspace)));
  } catch (const std::exception& e) {
    return Status(StatusCode::kUnimplemented, StrCat("the cuDNN frontend threw: ", e.what()));
  }
}

std::string CudnnVersionText() {
  if (Status opened = OpenCudnn(); !opened.ok()) return opened.message();
  const size_t v = fe::detail::get_backend_version();
  return StrCat("cuDNN ", v / 10000, ".", (v % 10000) / 100, ".", v % 100);
}

}  // namespace parity::adapters::cuda
