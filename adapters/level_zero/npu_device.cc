// NpuDevice and NpuGraph (npu_device.h).
#include "adapters/level_zero/npu_device.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "adapters/device/driver_symbols.h"
#include "adapters/level_zero/ir_buffer.h"

namespace parity::adapters::level_zero {

// The loader's entry points the adapter calls, looked up in
// libze_loader.so.1 when the NPU is first asked for.
struct NpuDevice::Api {
  decltype(&zeInit) Init = nullptr;
  decltype(&zeDriverGet) DriverGet = nullptr;
  decltype(&zeDriverGetProperties) DriverGetProperties = nullptr;
  decltype(&zeDriverGetApiVersion) DriverGetApiVersion = nullptr;
  decltype(&zeDriverGetExtensionProperties) DriverGetExtensionProperties = nullptr;
  decltype(&zeDriverGetExtensionFunctionAddress) DriverGetExtensionFunctionAddress = nullptr;
  decltype(&zeDeviceGet) DeviceGet = nullptr;
  decltype(&zeDeviceGetProperties) DeviceGetProperties = nullptr;
  decltype(&zeContextCreate) ContextCreate = nullptr;
  decltype(&zeContextDestroy) ContextDestroy = nullptr;
  decltype(&zeCommandQueueCreate) CommandQueueCreate = nullptr;
  decltype(&zeCommandQueueDestroy) CommandQueueDestroy = nullptr;
  decltype(&zeCommandQueueExecuteCommandLists) CommandQueueExecuteCommandLists = nullptr;
  decltype(&zeCommandListCreate) CommandListCreate = nullptr;
  decltype(&zeCommandListClose) CommandListClose = nullptr;
  decltype(&zeCommandListDestroy) CommandListDestroy = nullptr;
  decltype(&zeFenceCreate) FenceCreate = nullptr;
  decltype(&zeFenceDestroy) FenceDestroy = nullptr;
  decltype(&zeFenceHostSynchronize) FenceHostSynchronize = nullptr;
  decltype(&zeFenceReset) FenceReset = nullptr;
  decltype(&zeMemAllocHost) MemAllocHost = nullptr;
  decltype(&zeMemFree) MemFree = nullptr;
};

namespace {

constexpr const char kLoader[] = "libze_loader.so.1";

std::string ResultName(ze_result_t result) {
  switch (result) {
    case ZE_RESULT_NOT_READY: return "ZE_RESULT_NOT_READY";
    case ZE_RESULT_ERROR_DEVICE_LOST: return "ZE_RESULT_ERROR_DEVICE_LOST";
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
    case ZE_RESULT_ERROR_UNINITIALIZED: return "ZE_RESULT_ERROR_UNINITIALIZED";
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE";
    case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "ZE_RESULT_ERROR_INVALID_ARGUMENT";
    case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: return "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY";
    case ZE_RESULT_ERROR_UNKNOWN: return "ZE_RESULT_ERROR_UNKNOWN";
    default: {
      char text[32];
      std::snprintf(text, sizeof text, "0x%08x", static_cast<unsigned>(result));
      return text;
    }
  }
}

std::string VersionText(uint32_t version) { return StrCat(ZE_MAJOR_VERSION(version), ".", ZE_MINOR_VERSION(version)); }

// The variant target of an NPU's blobs: the test driver's own, or the
// vendor's NPU target for the vendors the project knows; empty otherwise
// (the adapter then takes portable entries only).
std::string TargetOf(const ze_device_properties_t& properties) {
  if (std::strncmp(properties.name, "ONNX Parity test NPU", 20) == 0) return "org.onnxparity.test-npu";
  if (properties.vendorId == 0x8086) return "com.intel.npu";
  return "";
}

std::optional<DataType> TypeOfPrecision(pze_graph_precision precision) {
  switch (precision) {
    case PZE_PRECISION_FP32: return DataType::kFloat;
    case PZE_PRECISION_FP16: return DataType::kFloat16;
    case PZE_PRECISION_BF16: return DataType::kBfloat16;
    case PZE_PRECISION_FP64: return DataType::kDouble;
    case PZE_PRECISION_INT8: return DataType::kInt8;
    case PZE_PRECISION_INT16: return DataType::kInt16;
    case PZE_PRECISION_INT32: return DataType::kInt32;
    case PZE_PRECISION_INT64: return DataType::kInt64;
    case PZE_PRECISION_UINT8: return DataType::kUint8;
    case PZE_PRECISION_UINT16: return DataType::kUint16;
    case PZE_PRECISION_UINT32: return DataType::kUint32;
    case PZE_PRECISION_UINT64: return DataType::kUint64;
    case PZE_PRECISION_BOOLEAN: return DataType::kBool;
    default: return std::nullopt;
  }
}

}  // namespace

StatusOr<NpuDevice*> NpuDevice::Get() {
  static std::mutex mutex;
  static NpuDevice* device = nullptr;
  static Status failed;
  std::lock_guard<std::mutex> lock(mutex);
  if (device) {
    if (device->lost_) PARITY_RETURN_IF_ERROR(device->Recover());
    return device;
  }
  if (!failed.ok()) return failed;
  auto made = std::unique_ptr<NpuDevice>(new NpuDevice);
  failed = made->Discover();
  if (!failed.ok()) return failed;
  device = made.release();
  return device;
}

Status NpuDevice::Discover() {
  void* library = dlopen(kLoader, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    return Status(StatusCode::kUnavailable,
                  StrCat("no Level Zero NPU driver was found: the Level Zero loader (", kLoader,
                         ") is not installed (", dlerror(), ")"));
  }
  api_ = std::make_unique<Api>();
  std::string missing;
  Api& a = *api_;
  BindSymbol(library, "zeInit", &a.Init, &missing);
  BindSymbol(library, "zeDriverGet", &a.DriverGet, &missing);
  BindSymbol(library, "zeDriverGetProperties", &a.DriverGetProperties, &missing);
  BindSymbol(library, "zeDriverGetApiVersion", &a.DriverGetApiVersion, &missing);
  BindSymbol(library, "zeDriverGetExtensionProperties", &a.DriverGetExtensionProperties, &missing);
  BindSymbol(library, "zeDriverGetExtensionFunctionAddress", &a.DriverGetExtensionFunctionAddress, &missing);
  BindSymbol(library, "zeDeviceGet", &a.DeviceGet, &missing);
  BindSymbol(library, "zeDeviceGetProperties", &a.DeviceGetProperties, &missing);
  BindSymbol(library, "zeContextCreate", &a.ContextCreate, &missing);
  BindSymbol(library, "zeContextDestroy", &a.ContextDestroy, &missing);
  BindSymbol(library, "zeCommandQueueCreate", &a.CommandQueueCreate, &missing);
  BindSymbol(library, "zeCommandQueueDestroy", &a.CommandQueueDestroy, &missing);
  BindSymbol(library, "zeCommandQueueExecuteCommandLists", &a.CommandQueueExecuteCommandLists, &missing);
  BindSymbol(library, "zeCommandListCreate", &a.CommandListCreate, &missing);
  BindSymbol(library, "zeCommandListClose", &a.CommandListClose, &missing);
  BindSymbol(library, "zeCommandListDestroy", &a.CommandListDestroy, &missing);
  BindSymbol(library, "zeFenceCreate", &a.FenceCreate, &missing);
  BindSymbol(library, "zeFenceDestroy", &a.FenceDestroy, &missing);
  BindSymbol(library, "zeFenceHostSynchronize", &a.FenceHostSynchronize, &missing);
  BindSymbol(library, "zeFenceReset", &a.FenceReset, &missing);
  BindSymbol(library, "zeMemAllocHost", &a.MemAllocHost, &missing);
  BindSymbol(library, "zeMemFree", &a.MemFree, &missing);
  if (!missing.empty()) {
    return Status(StatusCode::kUnavailable,
                  StrCat("no Level Zero NPU driver was found: the loader ", kLoader, " lacks ", missing));
  }
  const ze_result_t init = a.Init(ZE_INIT_FLAG_VPU_ONLY);
  if (init != ZE_RESULT_SUCCESS) {
    return Status(StatusCode::kUnavailable,
                  StrCat("no Level Zero NPU driver was found: zeInit(ZE_INIT_FLAG_VPU_ONLY) answered ",
                         ResultName(init), " (a driver library is named by ZE_ENABLE_ALT_DRIVERS or installed "
                         "where the loader looks)"));
  }
  uint32_t driver_count = 0;
  if (a.DriverGet(&driver_count, nullptr) != ZE_RESULT_SUCCESS || driver_count == 0) {
    return Status(StatusCode::kUnavailable, "no Level Zero NPU driver was found: zeDriverGet lists no driver");
  }
  std::vector<ze_driver_handle_t> drivers(driver_count);
  if (a.DriverGet(&driver_count, drivers.data()) != ZE_RESULT_SUCCESS) {
    return Status(StatusCode::kUnavailable, "no Level Zero NPU driver was found: zeDriverGet failed");
  }
  std::string seen;  // what each driver lacked, for the message when none fits
  for (ze_driver_handle_t driver : drivers) {
    uint32_t extension_count = 0;
    a.DriverGetExtensionProperties(driver, &extension_count, nullptr);
    std::vector<ze_driver_extension_properties_t> extensions(extension_count);
    a.DriverGetExtensionProperties(driver, &extension_count, extensions.data());
    uint32_t graph_version = 0;
    for (const auto& e : extensions) {
      if (std::strcmp(e.name, PZE_GRAPH_EXT_NAME_1_4) == 0) graph_version = e.version;
    }
    uint32_t device_count = 0;
    a.DeviceGet(driver, &device_count, nullptr);
    std::vector<ze_device_handle_t> devices(device_count);
    a.DeviceGet(driver, &device_count, devices.data());
    for (ze_device_handle_t device : devices) {
      ze_device_properties_t properties{};
      properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      if (a.DeviceGetProperties(device, &properties) != ZE_RESULT_SUCCESS) continue;
      if (properties.type != ZE_DEVICE_TYPE_VPU) continue;
      if (graph_version == 0) {
        seen += StrCat(" device '", properties.name, "' has no ", PZE_GRAPH_EXT_NAME_1_4, ";");
        continue;
      }
      void* table = nullptr;
      if (a.DriverGetExtensionFunctionAddress(driver, PZE_GRAPH_EXT_NAME_1_4, &table) != ZE_RESULT_SUCCESS ||
          !table) {
        seen += StrCat(" device '", properties.name, "': the driver gives no address for its graph extension;");
        continue;
      }
      graph_ddi_ = static_cast<const pze_graph_ddi_1_4*>(table);
      pze_device_graph_properties graph{};
      graph.stype = PZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES;
      if (!graph_ddi_->pfnDeviceGetGraphProperties ||
          graph_ddi_->pfnDeviceGetGraphProperties(device, &graph) != ZE_RESULT_SUCCESS) {
        seen += StrCat(" device '", properties.name, "': its graph properties cannot be read;");
        continue;
      }
      ze_driver_properties_t driver_properties{};
      driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
      a.DriverGetProperties(driver, &driver_properties);
      ze_api_version_t api_version{};
      a.DriverGetApiVersion(driver, &api_version);
      driver_ = driver;
      device_ = device;
      NpuDescription& d = description_;
      d.driver = StrCat("driver version 0x", [&] {
        char hex[16];
        std::snprintf(hex, sizeof hex, "%08x", driver_properties.driverVersion);
        return std::string(hex);
      }(), ", Level Zero API ", VersionText(api_version));
      d.device_name = properties.name;
      d.vendor_id = properties.vendorId;
      d.graph_extension = graph.extension_version;
      d.compiler = graph.compiler_version;
      d.target = TargetOf(properties);
      d.blob_identifier =
          d.target.empty() ? "" : StrCat(d.target, ".blob/", graph.compiler_version.major, ".", graph.compiler_version.minor);
      d.device = StrCat(properties.name, " (Level Zero NPU; ", d.driver, "; graph extension ",
                        VersionText(graph.extension_version), ", compiler ", graph.compiler_version.major, ".",
                        graph.compiler_version.minor, ", OpenVINO opsets up to ", graph.max_ov_opset,
                        "); nodes the driver does not run fall back to the ONNX Parity reference on the host");
      return OpenContext();
    }
  }
  return Status(StatusCode::kUnavailable,
                StrCat("no Level Zero NPU driver was found: ", drivers.size(), " driver(s), no NPU device with the "
                       "graph extension", seen.empty() ? "" : ":", seen));
}

Status NpuDevice::OpenContext() {
  const Api& a = *api_;
  ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  PARITY_RETURN_IF_ERROR(Check(a.ContextCreate(driver_, &context_desc, &context_), "zeContextCreate", "the NPU"));
  ze_command_queue_desc_t queue_desc{};
  queue_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  queue_desc.mode = ZE_COMMAND_QUEUE_MODE_DEFAULT;
  queue_desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  PARITY_RETURN_IF_ERROR(
      Check(a.CommandQueueCreate(context_, device_, &queue_desc, &queue_), "zeCommandQueueCreate", "the NPU"));
  lost_ = false;
  return Status::Ok();
}

// A lost device's context is dropped (its graphs with it: they belong to
// sessions that failed) and a new one made.
Status NpuDevice::Recover() {
  if (queue_) api_->CommandQueueDestroy(queue_);
  if (context_) api_->ContextDestroy(context_);
  queue_ = nullptr;
  context_ = nullptr;
  return OpenContext();
}

std::string NpuDevice::BuildLog(pze_graph_handle_t graph) {
  if (!graph_ddi_ || !graph_ddi_->pfnBuildLogGetString) return "";
  uint32_t size = 0;
  if (graph_ddi_->pfnBuildLogGetString(graph, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (graph_ddi_->pfnBuildLogGetString(graph, &size, log.data()) != ZE_RESULT_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

Status NpuDevice::Check(ze_result_t result, const std::string& what, const std::string& name,
                        pze_graph_handle_t graph) {
  if (result == ZE_RESULT_SUCCESS) return Status::Ok();
  std::string message = StrCat(name, ": ", what, " answered ", ResultName(result));
  const std::string log = BuildLog(graph);
  if (!log.empty()) message += ": " + log;
  switch (result) {
    case ZE_RESULT_ERROR_DEVICE_LOST:
      lost_ = true;
      return Status(StatusCode::kInternal, message + " (the NPU was lost; the next session opens a new context)");
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
      return Status(StatusCode::kResourceExhausted, message);
    default:
      return Status(StatusCode::kInternal, message);
  }
}

StatusOr<std::unique_ptr<NpuGraph>> NpuDevice::Create(const pze_graph_desc& desc, const std::string& name) {
  pze_graph_handle_t handle = nullptr;
  PARITY_RETURN_IF_ERROR(Check(graph_ddi_->pfnCreate(context_, device_, &desc, &handle),
                               desc.format == PZE_GRAPH_FORMAT_NATIVE ? "creating the graph from its blob"
                                                                      : "compiling the graph",
                               name));
  std::unique_ptr<NpuGraph> graph(new NpuGraph(this, handle, name));
  PARITY_RETURN_IF_ERROR(graph->Prepare());
  return graph;
}

namespace {
std::string BuildFlags(const std::string& name) {
  std::string quoted;
  for (char c : name) quoted += (c == '"' || c == '\\') ? '_' : c;
  return StrCat("--config NPU_GRAPH_NAME=\"", quoted, "\"");
}
}  // namespace

std::string NpuDevice::WriteIrBufferFor(const std::string& xml, const std::string& weights) const {
  return WriteIrBuffer(description_.compiler, xml, weights);
}

StatusOr<std::unique_ptr<NpuGraph>> NpuDevice::CompileIr(const std::string& xml, const std::string& weights,
                                                         const std::string& name) {
  const std::string buffer = WriteIrBufferFor(xml, weights);
  const std::string flags = BuildFlags(name);
  pze_graph_desc desc{PZE_STRUCTURE_TYPE_GRAPH_DESC, nullptr, PZE_GRAPH_FORMAT_IR, buffer.size(),
                      reinterpret_cast<const uint8_t*>(buffer.data()), flags.c_str()};
  return Create(desc, name);
}

StatusOr<std::unique_ptr<NpuGraph>> NpuDevice::LoadBlob(const std::string& blob, const std::string& name) {
  const std::string flags = BuildFlags(name);
  pze_graph_desc desc{PZE_STRUCTURE_TYPE_GRAPH_DESC, nullptr, PZE_GRAPH_FORMAT_NATIVE, blob.size(),
                      reinterpret_cast<const uint8_t*>(blob.data()), flags.c_str()};
  return Create(desc, name);
}

StatusOr<std::vector<std::string>> NpuDevice::SupportedLayers(const std::string& xml, const std::string& weights,
                                                              const std::string& name) {
  const std::string buffer = WriteIrBufferFor(xml, weights);
  const std::string flags = BuildFlags(name);
  pze_graph_desc desc{PZE_STRUCTURE_TYPE_GRAPH_DESC, nullptr, PZE_GRAPH_FORMAT_IR, buffer.size(),
                      reinterpret_cast<const uint8_t*>(buffer.data()), flags.c_str()};
  pze_graph_query_handle_t query = nullptr;
  PARITY_RETURN_IF_ERROR(Check(graph_ddi_->pfnQueryNetworkCreate(context_, device_, &desc, &query),
                               "the driver's layer query", name));
  size_t size = 0;
  ze_result_t result = graph_ddi_->pfnQueryNetworkGetSupportedLayers(query, &size, nullptr);
  std::string text(size, '\0');
  if (result == ZE_RESULT_SUCCESS && size > 0) {
    result = graph_ddi_->pfnQueryNetworkGetSupportedLayers(query, &size, text.data());
  }
  graph_ddi_->pfnQueryNetworkDestroy(query);
  PARITY_RETURN_IF_ERROR(Check(result, "reading the driver's supported layers", name));
  std::vector<std::string> layers;
  std::string current;
  for (char c : text) {
    if (c == ';' || c == '\0') {
      if (!current.empty()) layers.push_back(current);
      current.clear();
      if (c == '\0') break;
    } else {
      current += c;
    }
  }
  if (!current.empty()) layers.push_back(current);
  return layers;
}

NpuGraph::~NpuGraph() {
  const NpuDevice::Api& a = device_->api();
  if (fence_) a.FenceDestroy(fence_);
  if (list_) a.CommandListDestroy(list_);
  for (Argument& arg : arguments_) {
    if (!arg.memory) continue;
    a.MemFree(context_, arg.memory);
    device_->traffic_.held_bytes -= std::max<size_t>(arg.bytes, 1);
  }
  if (handle_) device_->graph_ddi().pfnDestroy(handle_);
}

Status NpuGraph::Prepare() {
  const NpuDevice::Api& a = device_->api();
  const pze_graph_ddi_1_4& ddi = device_->graph_ddi();
  pze_graph_properties properties{PZE_STRUCTURE_TYPE_GRAPH_PROPERTIES, nullptr, 0};
  PARITY_RETURN_IF_ERROR(device_->Check(ddi.pfnGetProperties(handle_, &properties), "reading the graph's properties", name_));
  for (uint32_t i = 0; i < properties.argument_count; ++i) {
    pze_graph_argument_properties p{};
    p.stype = PZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES;
    PARITY_RETURN_IF_ERROR(
        device_->Check(ddi.pfnGetArgumentProperties(handle_, i, &p), StrCat("reading argument ", i), name_));
    Argument arg;
    arg.name.assign(p.name, strnlen(p.name, sizeof p.name));
    arg.input = p.kind == PZE_GRAPH_ARGUMENT_INPUT;
    const std::optional<DataType> type = TypeOfPrecision(p.device_precision);
    if (!type) return Internal(name_, ": argument '", arg.name, "' has a precision the adapter does not pass (",
                               static_cast<int>(p.device_precision), ")");
    arg.type = *type;
    // The driver gives up to five dims; the IR's rank is what the region
    // declared, which the adapter keeps (see npu_lowering.cc).
    for (uint32_t d = 0; d < PZE_MAX_ARGUMENT_DIMS; ++d) arg.dims.push_back(p.dims[d]);
    PARITY_ASSIGN_OR_RETURN(int64_t count, ElementCount(arg.dims));
    arg.bytes = static_cast<size_t>(count) * StorageSize(arg.type);
    ze_host_mem_alloc_desc_t host{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    PARITY_RETURN_IF_ERROR(device_->Check(
        a.MemAllocHost(context_, &host, std::max<size_t>(arg.bytes, 1), 64, &arg.memory),
        StrCat("allocating argument '", arg.name, "'"), name_));
    PARITY_RETURN_IF_ERROR(
        device_->Check(ddi.pfnSetArgumentValue(handle_, i, arg.memory), StrCat("binding argument '", arg.name, "'"), name_));
    NpuDevice::Traffic& traffic = device_->traffic_;
    traffic.held_bytes += std::max<size_t>(arg.bytes, 1);
    traffic.peak_bytes = std::max(traffic.peak_bytes, traffic.held_bytes);
    arguments_.push_back(std::move(arg));
  }
  ze_command_list_desc_t list_desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
  PARITY_RETURN_IF_ERROR(device_->Check(
      a.CommandListCreate(context_, device_->device(), &list_desc, &list_), "zeCommandListCreate", name_));
  PARITY_RETURN_IF_ERROR(device_->Check(ddi.pfnAppendGraphInitialize(list_, handle_, nullptr, 0, nullptr),
                                        "initializing the graph", name_));
  PARITY_RETURN_IF_ERROR(device_->Check(ddi.pfnAppendGraphExecute(list_, handle_, nullptr, nullptr, 0, nullptr),
                                        "appending the graph's execution", name_));
  PARITY_RETURN_IF_ERROR(device_->Check(a.CommandListClose(list_), "zeCommandListClose", name_));
  ze_fence_desc_t fence_desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
  PARITY_RETURN_IF_ERROR(
      device_->Check(a.FenceCreate(device_->queue(), &fence_desc, &fence_), "zeFenceCreate", name_));
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> NpuGraph::Run(const std::vector<const Tensor*>& inputs) {
  const NpuDevice::Api& a = device_->api();
  size_t next = 0;
  for (Argument& arg : arguments_) {
    if (!arg.input) continue;
    if (next >= inputs.size() || !inputs[next]) return Internal(name_, ": no value for graph argument '", arg.name, "'");
    const Tensor& t = *inputs[next++];
    if (t.dtype() != arg.type || t.byte_size() != arg.bytes) {
      return InvalidArgument(name_, ": '", arg.name, "' is ", DataTypeName(t.dtype()), " ", ShapeToString(t.shape()),
                             ", the compiled graph takes ", DataTypeName(arg.type), " of ", arg.bytes, " bytes");
    }
    if (arg.bytes) std::memcpy(arg.memory, t.raw_bytes(), arg.bytes);
    ++device_->traffic_.in_copies;
    device_->traffic_.in_bytes += arg.bytes;
  }
  ze_command_list_handle_t list = list_;
  PARITY_RETURN_IF_ERROR(device_->Check(a.CommandQueueExecuteCommandLists(device_->queue(), 1, &list, fence_),
                                        "zeCommandQueueExecuteCommandLists", name_));
  // No time limit here: a graph that never ends is the harness's TIMEOUT.
  PARITY_RETURN_IF_ERROR(
      device_->Check(a.FenceHostSynchronize(fence_, UINT64_MAX), "waiting for the graph's fence", name_));
  PARITY_RETURN_IF_ERROR(device_->Check(a.FenceReset(fence_), "zeFenceReset", name_));
  std::vector<Tensor> outputs;
  for (const Argument& arg : arguments_) {
    if (arg.input) continue;
    PARITY_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(arg.type, arg.dims));
    if (arg.bytes) std::memcpy(out.mutable_raw_bytes(), arg.memory, arg.bytes);
    ++device_->traffic_.out_copies;
    device_->traffic_.out_bytes += arg.bytes;
    outputs.push_back(std::move(out));
  }
  return outputs;
}

StatusOr<std::string> NpuGraph::ExportBlob() {
  const pze_graph_ddi_1_4& ddi = device_->graph_ddi();
  size_t size = 0;
  PARITY_RETURN_IF_ERROR(device_->Check(ddi.pfnGetNativeBinary(handle_, &size, nullptr), "sizing the native blob", name_));
  std::string blob(size, '\0');
  PARITY_RETURN_IF_ERROR(device_->Check(
      ddi.pfnGetNativeBinary(handle_, &size, reinterpret_cast<uint8_t*>(blob.data())), "exporting the native blob", name_));
  blob.resize(size);
  return blob;
}

}  // namespace parity::adapters::level_zero
