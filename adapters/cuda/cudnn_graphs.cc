// The cuDNN graphs (cudnn_graphs.h). The frontend is header-only and slow
// to compile: this is its only translation unit.
#include "adapters/cuda/cudnn_graphs.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <unordered_map>

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

// A graph and its tensors in the order CudnnPlan::Run takes them.
struct Graph {
  std::shared_ptr<fe::graph::Graph> graph;
  std::vector<std::shared_ptr<fe::graph::Tensor_attributes>> tensors;
};

fe::DataType_t IoType(DataType type) {
  switch (type) {
    case DataType::kFloat16: return fe::DataType_t::HALF;
    case DataType::kBfloat16: return fe::DataType_t::BFLOAT16;
    default: return fe::DataType_t::FLOAT;
  }
}

// A new graph for `type`, computing in float32; the compute capability set
// first when `sm_version` is positive (no device is asked then).
Graph NewGraph(DataType type, int sm_version) {
  Graph made;
  made.graph = std::make_shared<fe::graph::Graph>();
  fe::graph::Graph& g = *made.graph;
  if (sm_version > 0) g.set_sm_version(sm_version);
  g.set_io_data_type(IoType(type))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return made;
}

std::vector<int64_t> RowMajor(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::shared_ptr<fe::graph::Tensor_attributes> Input(Graph& made, const char* name, const std::vector<int64_t>& dims) {
  auto tensor = made.graph->tensor(
      fe::graph::Tensor_attributes().set_name(name).set_dim(dims).set_stride(RowMajor(dims)));
  made.tensors.push_back(tensor);
  return tensor;
}

void Output(Graph& made, const std::shared_ptr<fe::graph::Tensor_attributes>& tensor,
            const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  tensor->set_output(true).set_dim(dims).set_stride(strides);
  made.tensors.push_back(tensor);
}

StatusOr<Graph> Validated(Graph made) {
  if (fe::error_t e = made.graph->validate(); e.is_bad()) return Refused(e, "validate");
  return made;
}

StatusOr<Graph> BuildSdpa(const SdpaShape& s, int sm_version) {
  PARITY_RETURN_IF_ERROR(SdpaEligible(s));
  PARITY_RETURN_IF_ERROR(OpenCudnn());
  Graph made = NewGraph(s.type, sm_version);
  const int64_t d = s.head_size;
  auto q = made.graph->tensor(fe::graph::Tensor_attributes()
                                  .set_name("Q")
                                  .set_dim({s.batch, s.q_heads, s.q_len, d})
                                  .set_stride({s.q_strides[0], s.q_strides[1], s.q_strides[2], 1}));
  made.tensors.push_back(q);
  auto k = Input(made, "K", {s.batch, s.kv_heads, s.total, d});
  auto v = Input(made, "V", {s.batch, s.kv_heads, s.total, d});
  auto options = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(false).set_attn_scale(s.scale);
  // Query i of q_len sees keys up to (total - q_len) + i: bottom-right.
  if (s.causal) options.set_causal_mask_bottom_right(true);
  auto [o, stats] = made.graph->sdpa(q, k, v, options);
  (void)stats;
  Output(made, o, {s.batch, s.q_heads, s.q_len, d}, {s.o_strides[0], s.o_strides[1], s.o_strides[2], 1});
  return Validated(std::move(made));
}

// A 1-D convolution is a 2-D one of height 1.
std::vector<int64_t> AsTwoD(std::vector<int64_t> dims, int64_t fill) {
  if (dims.size() == 3) dims.insert(dims.begin() + 2, fill);
  return dims;
}
std::vector<int64_t> SpatialTwoD(std::vector<int64_t> values, int64_t fill) {
  if (values.size() == 1) values.insert(values.begin(), fill);
  return values;
}

StatusOr<Graph> BuildConv(const ConvShape& s, int sm_version) {
  if (s.x.size() < 3 || s.x.size() > 5 || s.w.size() != s.x.size()) {
    return Status(StatusCode::kUnimplemented, StrCat("cuDNN's convolution takes 1 to 3 spatial dims, not X ",
                                                     ShapeToString(s.x), " and W ", ShapeToString(s.w)));
  }
  // Groups are read from the channels (cuDNN's convention): X's channels
  // split into groups of W's, and each group owns as many of W's filters.
  // The frontend's validation does not check this; it is checked here.
  if (s.w[1] <= 0 || s.x[1] % s.w[1] != 0 || s.w[0] % (s.x[1] / s.w[1]) != 0) {
    return Status(StatusCode::kUnimplemented, StrCat("X's ", s.x[1], " channels and W ", ShapeToString(s.w),
                                                     " make no whole groups"));
  }
  PARITY_RETURN_IF_ERROR(OpenCudnn());
  Graph made = NewGraph(s.type, sm_version);
  fe::graph::Graph& g = *made.graph;
  auto x = Input(made, "X", AsTwoD(s.x, 1));
  auto w = Input(made, "W", AsTwoD(s.w, 1));
  auto options = fe::graph::Conv_fprop_attributes()
                     .set_name("conv")
                     .set_convolution_mode(fe::ConvolutionMode_t::CROSS_CORRELATION)
                     .set_pre_padding(SpatialTwoD(s.pads_begin, 0))
                     .set_post_padding(SpatialTwoD(s.pads_end, 0))
                     .set_stride(SpatialTwoD(s.strides, 1))
                     .set_dilation(SpatialTwoD(s.dilations, 1));
  auto y = g.conv_fprop(x, w, options);
  const std::vector<int64_t> y_dims = AsTwoD(s.Output(), 1);
  if (s.bias) {
    y->set_data_type(fe::DataType_t::FLOAT);  // the sum before the bias stays float32
    std::vector<int64_t> bias_dims(y_dims.size(), 1);
    bias_dims[1] = s.w[0];
    auto b = Input(made, "B", bias_dims);
    y = g.pointwise(y, b, fe::graph::Pointwise_attributes().set_name("bias").set_mode(fe::PointwiseMode_t::ADD));
  }
  y->set_data_type(IoType(s.type));
  Output(made, y, y_dims, RowMajor(y_dims));
  return Validated(std::move(made));
}

StatusOr<Graph> BuildLayerNorm(const LayerNormShape& s, int sm_version) {
  PARITY_RETURN_IF_ERROR(OpenCudnn());
  Graph made = NewGraph(s.type, sm_version);
  auto x = Input(made, "X", {s.rows, s.cols, 1, 1});
  auto scale = Input(made, "scale", {1, s.cols, 1, 1});
  auto bias = Input(made, "bias", {1, s.cols, 1, 1});
  auto epsilon = made.graph->tensor(s.epsilon);
  auto [y, mean, inv_variance] = made.graph->layernorm(
      x, scale, bias,
      fe::graph::Layernorm_attributes().set_name("layernorm").set_forward_phase(fe::NormFwdPhase_t::INFERENCE)
          .set_epsilon(epsilon));
  (void)mean, (void)inv_variance;
  Output(made, y, {s.rows, s.cols, 1, 1}, {s.cols, 1, 1, 1});
  return Validated(std::move(made));
}

StatusOr<Graph> BuildBatchNorm(const BatchNormShape& s, int sm_version) {
  PARITY_RETURN_IF_ERROR(OpenCudnn());
  Graph made = NewGraph(s.type, sm_version);
  const std::vector<int64_t> dims = {s.n, s.channels, s.inner, 1}, per_channel = {1, s.channels, 1, 1};
  auto x = Input(made, "X", dims);
  auto parameter = [&](const char* name) {
    auto t = Input(made, name, per_channel);
    t->set_data_type(fe::DataType_t::FLOAT);
    return t;
  };
  auto scale = parameter("scale");
  auto bias = parameter("bias");
  auto mean = parameter("mean");
  auto inv_variance = parameter("inv_variance");
  auto y = made.graph->batchnorm_inference(x, mean, inv_variance, scale, bias,
                                           fe::graph::Batchnorm_inference_attributes().set_name("batchnorm"));
  Output(made, y, dims, RowMajor(dims));
  return Validated(std::move(made));
}

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

class GraphPlan final : public CudnnPlan {
 public:
  GraphPlan(Graph graph, cudnnHandle_t handle, std::shared_ptr<DeviceBuffer> workspace)
      : graph_(std::move(graph)), handle_(handle), workspace_(std::move(workspace)) {}

  Status Run(const std::vector<const void*>& tensors) override {
    if (tensors.size() != graph_.tensors.size()) {
      return Status(StatusCode::kInternal, StrCat("a cuDNN plan of ", graph_.tensors.size(), " tensors given ",
                                                  tensors.size()));
    }
    std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack;
    for (size_t i = 0; i < tensors.size(); ++i) pack[graph_.tensors[i]] = const_cast<void*>(tensors[i]);
    if (fe::error_t e = graph_.graph->execute(handle_, pack, workspace_ ? workspace_->data() : nullptr); e.is_bad()) {
      return Status(StatusCode::kInternal, StrCat("a cuDNN plan failed to run: ", e.get_message()));
    }
    return Status::Ok();
  }

 private:
  Graph graph_;
  cudnnHandle_t handle_;
  std::shared_ptr<DeviceBuffer> workspace_;
};

}  // namespace

Status SdpaEligible(const SdpaShape& s) {
  if (s.type != DataType::kFloat16 && s.type != DataType::kBfloat16) {
    return Status(StatusCode::kUnimplemented, StrCat("cuDNN's SDPA takes float16 and bfloat16, not ",
                                                     DataTypeName(s.type)));
  }
  if (s.head_size % 8 != 0 || s.head_size > 256 || s.head_size == 0) {
    return Status(StatusCode::kUnimplemented,
                  StrCat("cuDNN's SDPA takes head sizes that are multiples of 8 up to 256, not ", s.head_size));
  }
  if (s.kv_heads == 0 || s.q_heads % s.kv_heads != 0 || s.q_len == 0 || s.total == 0 || s.batch == 0) {
    return Status(StatusCode::kUnimplemented, "an empty problem or heads that do not group");
  }
  return Status::Ok();
}

Shape ConvShape::Output() const {
  Shape y = {x[0], w[0]};
  for (size_t i = 2; i < x.size(); ++i) {
    const size_t d = i - 2;
    const int64_t span = dilations[d] * (w[i] - 1) + 1;
    y.push_back((x[i] + pads_begin[d] + pads_end[d] - span) / strides[d] + 1);
  }
  return y;
}

namespace {

std::string Joined(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) out += StrCat(v, ",");
  return out;
}

// Runs `build` for a validation or a plan; the frontend's exceptions become errors.
template <typename Build>
auto Guard(Build&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const std::exception& e) {
    return Status(StatusCode::kUnimplemented, StrCat("the cuDNN frontend threw: ", e.what()));
  }
}

// Whether plans are autotuned (PARITY_CUDA_AUTOTUNE, on unless "0"): the
// GPU corpus run turns it off to spend its device time on cases.
bool AutotuneOn() {
  static const bool on = [] {
    const char* value = std::getenv("PARITY_CUDA_AUTOTUNE");
    return !value || std::string_view(value) != "0";
  }();
  return on;
}

// The bytes of one element of `tensor`: its own type where it has one (a
// batch norm's float32 parameters beside 16-bit data), else the graph's.
size_t ElementBytes(const fe::graph::Tensor_attributes& tensor, DataType graph_type) {
  switch (tensor.get_data_type()) {
    case fe::DataType_t::FLOAT: return 4;
    case fe::DataType_t::HALF: case fe::DataType_t::BFLOAT16: return 2;
    default: return StorageSize(graph_type);
  }
}

// Every plan built is run on scratch buffers of the graph's shapes (zeros)
// and timed by the frontend; the fastest is kept (cuDNN's autotuning).
Status Autotune(Graph& made, cudnnHandle_t handle, CudaContext& cuda, DataType type) {
  fe::graph::Graph& g = *made.graph;
  std::vector<std::shared_ptr<DeviceBuffer>> scratch;
  std::unordered_map<std::shared_ptr<fe::graph::Tensor_attributes>, void*> pack;
  for (const auto& tensor : made.tensors) {
    const std::vector<int64_t> dims = tensor->get_dim();
    const std::vector<int64_t> strides = tensor->get_stride();
    int64_t extent = 1;  // elements up to the last one addressed
    for (size_t i = 0; i < dims.size() && i < strides.size(); ++i) {
      if (dims[i] <= 0) return Status::Ok();  // nothing to time
      extent += (dims[i] - 1) * strides[i];
    }
    const size_t bytes = static_cast<size_t>(extent) * ElementBytes(*tensor, type);
    PARITY_ASSIGN_OR_RETURN(std::shared_ptr<DeviceBuffer> buffer, cuda.Allocate(bytes));
    if (const cudaError_t e = cudaMemsetAsync(buffer->data(), 0, bytes, static_cast<cudaStream_t>(cuda.stream()));
        e != cudaSuccess) {
      return CudaContext::Error(e, "zeroing an autotuning buffer");
    }
    pack[tensor] = buffer->data();
    scratch.push_back(std::move(buffer));
  }
  std::shared_ptr<DeviceBuffer> workspace;
  if (const int64_t bytes = g.get_autotune_workspace_size(); bytes > 0) {
    PARITY_ASSIGN_OR_RETURN(workspace, cuda.Allocate(static_cast<size_t>(bytes)));
  }
  if (fe::error_t e = g.autotune(handle, pack, workspace ? workspace->data() : nullptr); e.is_bad()) {
    return Refused(e, "autotune");
  }
  return cuda.Synchronize();
}

StatusOr<std::unique_ptr<CudnnPlan>> MakePlan(StatusOr<Graph> built, CudaContext& cuda, DataType type) {
  PARITY_ASSIGN_OR_RETURN(Graph graph, std::move(built));
  PARITY_ASSIGN_OR_RETURN(cudnnHandle_t handle, Handle(cuda));
  fe::graph::Graph& g = *graph.graph;
  if (fe::error_t e = g.build_operation_graph(handle); e.is_bad()) return Refused(e, "operation graph");
  if (fe::error_t e = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}); e.is_bad()) {
    return Refused(e, "heuristics");
  }
  // Every engine accumulates in float32; a float32 graph takes no TF32 input rounding.
  std::vector<fe::NumericalNote_t> excluded = {fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION};
  if (type == DataType::kFloat) {
    excluded.push_back(fe::NumericalNote_t::TENSOR_CORE);
    excluded.push_back(fe::NumericalNote_t::DOWN_CONVERT_INPUTS);
  }
  g.deselect_numeric_notes(excluded);
  if (fe::error_t e = g.check_support(handle); e.is_bad()) return Refused(e, "support");
  // Autotuned: every plan the heuristics offer is built and timed, at load
  // time; else the heuristics' first plan that builds.
  const bool tune = AutotuneOn();
  if (fe::error_t e = g.build_plans(handle, tune ? fe::BuildPlanPolicy_t::ALL : fe::BuildPlanPolicy_t::HEURISTICS_CHOICE);
      e.is_bad()) {
    return Refused(e, "plans");
  }
  // Timing is a choice among plans that all built: when it cannot be done
  // (no memory for the scratch buffers), the heuristics' first plan runs.
  if (tune) (void)Autotune(graph, handle, cuda, type);
  int64_t workspace_bytes = 0;
  if (fe::error_t e = g.get_workspace_size(workspace_bytes); e.is_bad()) return Refused(e, "workspace");
  std::shared_ptr<DeviceBuffer> workspace;
  if (workspace_bytes > 0) {
    PARITY_ASSIGN_OR_RETURN(workspace, cuda.Allocate(static_cast<size_t>(workspace_bytes)));
  }
  return std::unique_ptr<CudnnPlan>(std::make_unique<GraphPlan>(std::move(graph), handle, std::move(workspace)));
}

}  // namespace

std::string ConvShape::Key() const {
  return StrCat(static_cast<int>(type), ":", Joined(x), ":", Joined(w), ":", bias, ":", Joined(pads_begin), ":",
                Joined(pads_end), ":", Joined(strides), ":", Joined(dilations));
}

std::string LayerNormShape::Key() const {
  return StrCat(static_cast<int>(type), ":", rows, ",", cols, ":", bias, ":", epsilon);
}

std::string BatchNormShape::Key() const {
  return StrCat(static_cast<int>(type), ":", n, ",", channels, ",", inner);
}

Status ValidateSdpa(const SdpaShape& shape, int sm_version) {
  return Guard([&]() -> Status { return BuildSdpa(shape, sm_version).status(); });
}
Status ValidateConv(const ConvShape& shape, int sm_version) {
  return Guard([&]() -> Status { return BuildConv(shape, sm_version).status(); });
}
Status ValidateLayerNorm(const LayerNormShape& shape, int sm_version) {
  return Guard([&]() -> Status { return BuildLayerNorm(shape, sm_version).status(); });
}

Status ValidateBatchNorm(const BatchNormShape& shape, int sm_version) {
  return Guard([&]() -> Status { return BuildBatchNorm(shape, sm_version).status(); });
}

StatusOr<std::unique_ptr<CudnnPlan>> MakeSdpaPlan(const SdpaShape& shape, CudaContext& cuda) {
  return Guard([&] { return MakePlan(BuildSdpa(shape, 0), cuda, shape.type); });
}
StatusOr<std::unique_ptr<CudnnPlan>> MakeConvPlan(const ConvShape& shape, CudaContext& cuda) {
  return Guard([&] { return MakePlan(BuildConv(shape, 0), cuda, shape.type); });
}
StatusOr<std::unique_ptr<CudnnPlan>> MakeLayerNormPlan(const LayerNormShape& shape, CudaContext& cuda) {
  return Guard([&] { return MakePlan(BuildLayerNorm(shape, 0), cuda, shape.type); });
}

StatusOr<std::unique_ptr<CudnnPlan>> MakeBatchNormPlan(const BatchNormShape& shape, CudaContext& cuda) {
  return Guard([&] { return MakePlan(BuildBatchNorm(shape, 0), cuda, shape.type); });
}

std::string CudnnVersionText() {
  if (Status opened = OpenCudnn(); !opened.ok()) return opened.message();
  const size_t v = fe::detail::get_backend_version();
  return StrCat("cuDNN ", v / 10000, ".", (v % 10000) / 100, ".", v % 100);
}

}  // namespace parity::adapters::cuda
