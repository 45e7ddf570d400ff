// The graph extension (ze_graph_ext.h, table pze_graph_ddi_1_4) of the test
// NPU driver: graphs "compiled" by OpenVINO's CPU plugin from the IR buffer
// or imported from this driver's native blob (native_blob.h), run
// synchronously when a command queue executes them, with the faults and
// unsupported operator types that the configuration (config.cc) names.
#include <cstring>
#include <cstdio>
#include <memory>
#include <sstream>

#include <openvino/openvino.hpp>

#include "adapters/level_zero/ir_buffer.h"
#include "adapters/level_zero/test_driver/driver.h"
#include "adapters/level_zero/test_driver/native_blob.h"
#include "adapters/openvino/ov_config.h"

namespace parity::ze_test_driver {

struct Argument {
  std::string name;
  bool input = true;
  ov::element::Type type;
  ov::Shape shape;
  pze_graph_precision precision = PZE_PRECISION_UNKNOWN;
  ov::Output<const ov::Node> port;
  const void* value = nullptr;  // bound by pfnSetArgumentValue; the caller owns it
};

struct Graph {
  Context* context = nullptr;
  std::string name;
  Fault fault = Fault::kNone;
  std::string log;  // the creation's build log, then any run's failure
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::vector<Argument> arguments;  // inputs in the compiled model's order, then outputs
  std::string blob;                 // the native blob, made on first request
  std::mutex run_mutex;             // one inference at a time on the one request
};

struct Query {
  std::string layers;  // ';'-joined
};

namespace {

// The last pfnCreate's build log on this thread: a failed creation has no
// graph handle to ask, so pfnBuildLogGetString(nullptr, ...) reads this.
thread_local std::string t_last_build_log;

// One Core for the process, never destroyed: the CPU plugin's threads must
// not be torn down by a static destructor while the loader unloads drivers.
ov::Core& Core() {
  static ov::Core* core = new ov::Core;
  return *core;
}

// The OpenVINO adapter's compile settings (adapters/openvino/ov_config.h).
ov::AnyMap CompileConfig() {
  const std::optional<int> threads = CurrentConfig().threads;
  return adapters::openvino::Float32CpuConfig(threads ? std::optional<int32_t>(*threads) : std::nullopt);
}

std::optional<pze_graph_precision> PrecisionOf(const ov::element::Type& type) {
  switch (ov::element::Type_t(type)) {
    case ov::element::Type_t::f32: return PZE_PRECISION_FP32;
    case ov::element::Type_t::f16: return PZE_PRECISION_FP16;
    case ov::element::Type_t::bf16: return PZE_PRECISION_BF16;
    case ov::element::Type_t::f64: return PZE_PRECISION_FP64;
    case ov::element::Type_t::i8: return PZE_PRECISION_INT8;
    case ov::element::Type_t::i16: return PZE_PRECISION_INT16;
    case ov::element::Type_t::i32: return PZE_PRECISION_INT32;
    case ov::element::Type_t::i64: return PZE_PRECISION_INT64;
    case ov::element::Type_t::u8: return PZE_PRECISION_UINT8;
    case ov::element::Type_t::u16: return PZE_PRECISION_UINT16;
    case ov::element::Type_t::u32: return PZE_PRECISION_UINT32;
    case ov::element::Type_t::u64: return PZE_PRECISION_UINT64;
    case ov::element::Type_t::boolean: return PZE_PRECISION_BOOLEAN;
    default: return std::nullopt;
  }
}

// A creation's outcome: the result code and, for a failure, the build log.
struct Failure {
  ze_result_t code = ZE_RESULT_SUCCESS;
  std::string log;
};

Failure Fail(ze_result_t code, std::string log) { return {code, std::move(log)}; }

std::string PortName(const ov::Output<const ov::Node>& port, bool input) {
  if (!port.get_names().empty()) return port.get_any_name();
  // A port without tensor names: the parameter's name, or the name of the
  // node the result reads.
  const ov::Node* node = port.get_node();
  if (!input && node->get_input_size() > 0) return node->get_input_node_ptr(0)->get_friendly_name();
  return node->get_friendly_name();
}

// The compiled model's ports as arguments, refusing what an NPU graph
// cannot have: a dynamic shape, a rank over 5, a type without a precision.
Failure DescribeArguments(Graph& graph) {
  auto add = [&](const ov::Output<const ov::Node>& port, bool input) -> Failure {
    Argument arg;
    arg.input = input;
    arg.port = port;
    arg.name = PortName(port, input);
    const char* what = input ? "input" : "output";
    const ov::PartialShape& shape = port.get_partial_shape();
    if (!shape.is_static()) {
      return Fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "graph '" + graph.name + "': " + what + " '" + arg.name +
                                                        "' has the dynamic shape " + shape.to_string() +
                                                        ": an NPU runs graphs of static shapes only");
    }
    arg.shape = shape.to_shape();
    if (arg.shape.size() > PZE_MAX_ARGUMENT_DIMS) {
      return Fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                  "graph '" + graph.name + "': " + what + " '" + arg.name + "' has rank " +
                      std::to_string(arg.shape.size()) + ", over the " + std::to_string(PZE_MAX_ARGUMENT_DIMS) +
                      " dimensions a graph argument may have");
    }
    for (size_t d : arg.shape) {
      if (d > UINT32_MAX) {
        return Fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "graph '" + graph.name + "': " + what + " '" + arg.name +
                                                             "' has a dimension over 2^32-1");
      }
    }
    arg.type = port.get_element_type();
    const std::optional<pze_graph_precision> precision = PrecisionOf(arg.type);
    if (!precision) {
      return Fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "graph '" + graph.name + "': " + what + " '" + arg.name +
                                                           "' has element type " + arg.type.get_type_name() +
                                                           ", which this device's arguments cannot hold");
    }
    arg.precision = *precision;
    graph.arguments.push_back(std::move(arg));
    return {};
  };
  for (const ov::Output<const ov::Node>& port : graph.compiled.inputs()) {
    if (Failure f = add(port, true); f.code != ZE_RESULT_SUCCESS) return f;
  }
  for (const ov::Output<const ov::Node>& port : graph.compiled.outputs()) {
    if (Failure f = add(port, false); f.code != ZE_RESULT_SUCCESS) return f;
  }
  return {};
}

Failure CheckCompiler(pze_graph_compiler_version given, const char* what, ze_result_t code) {
  if (given.major == kCompilerVersion.major && given.minor == kCompilerVersion.minor) return {};
  return Fail(code, std::string(what) + " is for compiler " + std::to_string(given.major) + "." +
                        std::to_string(given.minor) + "; this driver's compiler is " +
                        std::to_string(kCompilerVersion.major) + "." + std::to_string(kCompilerVersion.minor));
}

// The model in an IR buffer, or a failure naming what is wrong with it.
Failure ReadIr(const pze_graph_desc& desc, std::shared_ptr<ov::Model>* model) {
  const std::optional<adapters::level_zero::IrParts> parts =
      adapters::level_zero::ReadIrBuffer(desc.input, desc.input_size);
  if (!parts) {
    return Fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                "the IR buffer's sizes do not fit its " + std::to_string(desc.input_size) +
                    " bytes (expected: uint16 compiler major and minor, uint64 XML size, XML, uint64 weights "
                    "size, weights)");
  }
  if (Failure f = CheckCompiler(parts->compiler, "the IR buffer", ZE_RESULT_ERROR_INVALID_ARGUMENT);
      f.code != ZE_RESULT_SUCCESS) {
    return f;
  }
  // read_model keeps a view of the weights' tensor, so the tensor owns a copy.
  ov::Tensor weights(ov::element::u8, ov::Shape{parts->weights.size()});
  if (!parts->weights.empty()) std::memcpy(weights.data(), parts->weights.data(), parts->weights.size());
  try {
    *model = Core().read_model(std::string(parts->xml), weights);
  } catch (const std::exception& e) {
    return Fail(ZE_RESULT_ERROR_UNKNOWN, std::string("OpenVINO cannot read the IR: ") + e.what());
  }
  return {};
}

// The layers of `model` whose type the configuration marks unsupported.
std::vector<std::string> UnsupportedLayers(const ov::Model& model) {
  std::vector<std::string> layers;
  const std::set<std::string>& unsupported = CurrentConfig().unsupported;
  for (const std::shared_ptr<ov::Node>& node : model.get_ordered_ops()) {
    if (unsupported.count(node->get_type_name())) {
      layers.push_back(node->get_friendly_name() + " (" + node->get_type_name() + ")");
    }
  }
  return layers;
}

Failure InjectedFault(const Graph& graph) {
  switch (graph.fault) {
    case Fault::kOutOfMemory:
      return Fail(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                  "injected out-of-memory for graph '" + graph.name + "': the device memory cannot hold it");
    case Fault::kCompileFailure:
      return Fail(ZE_RESULT_ERROR_UNKNOWN, "injected compilation failure for graph '" + graph.name + "'");
    default:
      return {};
  }
}

Failure CreateFromIr(const pze_graph_desc& desc, const std::string& flag_name, Graph& graph) {
  std::shared_ptr<ov::Model> model;
  if (Failure f = ReadIr(desc, &model); f.code != ZE_RESULT_SUCCESS) return f;
  graph.name = flag_name.empty() ? model->get_friendly_name() : flag_name;
  if (const std::vector<std::string> layers = UnsupportedLayers(*model); !layers.empty()) {
    std::string log = "graph '" + graph.name + "': the device does not support " + std::to_string(layers.size()) +
                      " layer(s) (types listed in PARITY_ZE_TEST_UNSUPPORTED):";
    for (const std::string& layer : layers) log += " " + layer + ";";
    log.pop_back();
    return Fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, log);
  }
  // Named before compiling, so that the log says which parameter it is.
  for (const std::shared_ptr<ov::op::v0::Parameter>& parameter : model->get_parameters()) {
    if (!parameter->get_partial_shape().is_static()) {
      return Fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "graph '" + graph.name + "': parameter '" +
                                                        parameter->get_friendly_name() + "' has the dynamic shape " +
                                                        parameter->get_partial_shape().to_string() +
                                                        ": an NPU runs graphs of static shapes only");
    }
  }
  graph.fault = FaultFor(graph.name);
  if (Failure f = InjectedFault(graph); f.code != ZE_RESULT_SUCCESS) return f;
  try {
    graph.compiled = Core().compile_model(model, "CPU", CompileConfig());
  } catch (const std::exception& e) {
    return Fail(ZE_RESULT_ERROR_UNKNOWN,
                "graph '" + graph.name + "': OpenVINO's CPU plugin cannot compile it: " + e.what());
  }
  return {};
}

Failure CreateFromBlob(const pze_graph_desc& desc, const std::string& flag_name, Graph& graph) {
  NativeBlob blob;
  std::string error;
  if (!ReadNativeBlob(desc.input, desc.input_size, &blob, &error)) {
    return Fail(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, error);
  }
  if (blob.format != kNativeBlobFormat) {
    return Fail(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "the blob's format version is " +
                                                           std::to_string(blob.format) + "; this driver reads " +
                                                           std::to_string(kNativeBlobFormat));
  }
  if (Failure f = CheckCompiler(blob.compiler, "the blob", ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
      f.code != ZE_RESULT_SUCCESS) {
    return f;
  }
  graph.name = flag_name.empty() ? blob.name : flag_name;
  graph.fault = FaultFor(graph.name);
  if (Failure f = InjectedFault(graph); f.code != ZE_RESULT_SUCCESS) return f;
  try {
    std::istringstream stream(std::string(blob.payload));
    graph.compiled = Core().import_model(stream, "CPU", CompileConfig());
  } catch (const std::exception& e) {
    return Fail(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
                "graph '" + graph.name + "': OpenVINO's CPU plugin cannot import the blob's payload: " + e.what());
  }
  return {};
}

// --- The table's functions ----------------------------------------------------------------

ze_result_t GraphCreate(ze_context_handle_t hContext, ze_device_handle_t device, const pze_graph_desc* desc,
                        pze_graph_handle_t* out) {
  t_last_build_log.clear();
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context || !IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || !desc->input) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  auto fail = [](const Failure& f) {
    t_last_build_log = f.log;
    return f.code;
  };
  std::string error;
  const auto flags = ParseBuildFlags(desc->build_flags, &error);
  if (!flags) return fail(Fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, error));
  std::string flag_name;
  for (const auto& [key, value] : *flags) {
    if (key == "NPU_GRAPH_NAME") flag_name = value;
  }
  auto graph = std::make_unique<Graph>();
  graph->context = context;
  Failure failure;
  if (desc->format == PZE_GRAPH_FORMAT_IR) {
    failure = CreateFromIr(*desc, flag_name, *graph);
  } else if (desc->format == PZE_GRAPH_FORMAT_NATIVE) {
    failure = CreateFromBlob(*desc, flag_name, *graph);
  } else {
    failure = Fail(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                   "graph format " + std::to_string(desc->format) + " is neither NATIVE (1) nor IR (2)");
  }
  if (failure.code == ZE_RESULT_SUCCESS) failure = DescribeArguments(*graph);
  if (failure.code == ZE_RESULT_SUCCESS) {
    try {
      graph->request = graph->compiled.create_infer_request();
    } catch (const std::exception& e) {
      failure = Fail(ZE_RESULT_ERROR_UNKNOWN,
                     "graph '" + graph->name + "': OpenVINO cannot create an infer request: " + e.what());
    }
  }
  if (failure.code != ZE_RESULT_SUCCESS) return fail(failure);
  graph->log = "graph '" + graph->name + "' compiled by OpenVINO's CPU plugin";
  t_last_build_log = graph->log;
  return Make(Kind::kGraph, graph.release(), out);
}

ze_result_t GraphDestroy(pze_graph_handle_t graph) { return Destroy<Graph>(graph, Kind::kGraph); }

ze_result_t GraphGetProperties(pze_graph_handle_t hGraph, pze_graph_properties* properties) {
  Graph* graph = Lookup<Graph>(hGraph, Kind::kGraph);
  if (!graph) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (graph->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  properties->argument_count = static_cast<uint32_t>(graph->arguments.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t GraphGetArgumentProperties(pze_graph_handle_t hGraph, uint32_t index,
                                       pze_graph_argument_properties* properties) {
  Graph* graph = Lookup<Graph>(hGraph, Kind::kGraph);
  if (!graph) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (graph->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (index >= graph->arguments.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const Argument& arg = graph->arguments[index];
  std::snprintf(properties->name, PZE_MAX_ARGUMENT_NAME, "%s", arg.name.c_str());
  properties->kind = arg.input ? PZE_GRAPH_ARGUMENT_INPUT : PZE_GRAPH_ARGUMENT_OUTPUT;
  for (uint32_t d = 0; d < PZE_MAX_ARGUMENT_DIMS; ++d) {
    properties->dims[d] = d < arg.shape.size() ? static_cast<uint32_t>(arg.shape[d]) : 1;
  }
  properties->network_precision = arg.precision;
  properties->device_precision = arg.precision;
  properties->network_layout = 0;
  properties->device_layout = 0;
  return ZE_RESULT_SUCCESS;
}

// Any non-null address is taken: the driver cannot tell the caller's host
// memory from its own, and runs on the host either way.
ze_result_t GraphSetArgumentValue(pze_graph_handle_t hGraph, uint32_t index, const void* value) {
  Graph* graph = Lookup<Graph>(hGraph, Kind::kGraph);
  if (!graph) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!value) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (graph->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (index >= graph->arguments.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  graph->arguments[index].value = value;
  return ZE_RESULT_SUCCESS;
}

ze_result_t AppendGraph(Command::Type type, ze_command_list_handle_t hList, pze_graph_handle_t hGraph,
                        ze_event_handle_t signal, uint32_t wait_count, ze_event_handle_t* waits) {
  Graph* graph = Lookup<Graph>(hGraph, Kind::kGraph);
  CommandList* list = ListOf(hList);
  if (!graph || !list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (graph->context != list->context) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  Command command;
  command.type = type;
  command.graph = graph;
  return AppendCommand(hList, command, signal, wait_count, waits);
}

ze_result_t AppendGraphInitialize(ze_command_list_handle_t list, pze_graph_handle_t graph, ze_event_handle_t signal,
                                  uint32_t wait_count, ze_event_handle_t* waits) {
  return AppendGraph(Command::Type::kGraphInitialize, list, graph, signal, wait_count, waits);
}

ze_result_t AppendGraphExecute(ze_command_list_handle_t list, pze_graph_handle_t graph,
                               pze_graph_profiling_query_handle_t profiling, ze_event_handle_t signal,
                               uint32_t wait_count, ze_event_handle_t* waits) {
  if (profiling) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;  // no profiling queries on this device
  return AppendGraph(Command::Type::kGraphExecute, list, graph, signal, wait_count, waits);
}

ze_result_t GraphGetNativeBinary(pze_graph_handle_t hGraph, size_t* size, uint8_t* binary) {
  Graph* graph = Lookup<Graph>(hGraph, Kind::kGraph);
  if (!graph) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (graph->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (graph->blob.empty()) {
    try {
      std::ostringstream payload;
      graph->compiled.export_model(payload);
      graph->blob = WriteNativeBlob(kCompilerVersion, graph->name, payload.str());
    } catch (const std::exception& e) {
      graph->log += "\nexporting graph '" + graph->name + "' failed: " + e.what();
      return ZE_RESULT_ERROR_UNKNOWN;
    }
  }
  if (!binary) {
    *size = graph->blob.size();
    return ZE_RESULT_SUCCESS;
  }
  if (*size < graph->blob.size()) return ZE_RESULT_ERROR_INVALID_SIZE;
  std::memcpy(binary, graph->blob.data(), graph->blob.size());
  *size = graph->blob.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetGraphProperties(ze_device_handle_t device, pze_device_graph_properties* properties) {
  if (!IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->extension_version = PZE_GRAPH_EXT_VERSION_1_4;
  properties->compiler_version = kCompilerVersion;
  properties->formats_supported = PZE_GRAPH_FORMAT_NATIVE | PZE_GRAPH_FORMAT_IR;
  properties->max_ov_opset = kMaxOvOpset;
  return ZE_RESULT_SUCCESS;
}

ze_result_t QueryCreate(ze_context_handle_t hContext, ze_device_handle_t device, const pze_graph_desc* desc,
                        pze_graph_query_handle_t* out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context || !IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out || !desc->input) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  t_last_build_log.clear();
  if (desc->format != PZE_GRAPH_FORMAT_IR) {
    t_last_build_log = "the layer query reads OpenVINO IR only (PZE_GRAPH_FORMAT_IR), not a native blob";
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  std::shared_ptr<ov::Model> model;
  if (Failure f = ReadIr(*desc, &model); f.code != ZE_RESULT_SUCCESS) {
    t_last_build_log = f.log;
    return f.code;
  }
  auto query = std::make_unique<Query>();
  const std::set<std::string>& unsupported = CurrentConfig().unsupported;
  for (const std::shared_ptr<ov::Node>& node : model->get_ordered_ops()) {
    const std::string type = node->get_type_name();
    if (type == "Parameter" || type == "Result" || unsupported.count(type)) continue;
    if (!query->layers.empty()) query->layers += ';';
    query->layers += node->get_friendly_name();
  }
  return Make(Kind::kQuery, query.release(), out);
}

ze_result_t QueryDestroy(pze_graph_query_handle_t query) { return Destroy<Query>(query, Kind::kQuery); }

ze_result_t QuerySupportedLayers(pze_graph_query_handle_t hQuery, size_t* size, char* layers) {
  Query* query = Lookup<Query>(hQuery, Kind::kQuery);
  if (!query) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return CopyText(query->layers, size, layers);
}

// With a null graph: the log of this thread's last pfnCreate (which may
// have failed before any handle existed).
ze_result_t BuildLogGetString(pze_graph_handle_t hGraph, uint32_t* size, char* log) {
  if (!hGraph) return CopyText(t_last_build_log, size, log);
  Graph* graph = Lookup<Graph>(hGraph, Kind::kGraph);
  if (!graph) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return CopyText(graph->log, size, log);
}

const pze_graph_ddi_1_4 kGraphDdi = {
    .pfnCreate = Guarded<&GraphCreate>,
    .pfnDestroy = Guarded<&GraphDestroy>,
    .pfnGetProperties = Guarded<&GraphGetProperties>,
    .pfnGetArgumentProperties = Guarded<&GraphGetArgumentProperties>,
    .pfnSetArgumentValue = Guarded<&GraphSetArgumentValue>,
    .pfnAppendGraphInitialize = Guarded<&AppendGraphInitialize>,
    .pfnAppendGraphExecute = Guarded<&AppendGraphExecute>,
    .pfnGetNativeBinary = Guarded<&GraphGetNativeBinary>,
    .pfnDeviceGetGraphProperties = Guarded<&DeviceGetGraphProperties>,
    .pfnGraphGetArgumentMetadata = nullptr,
    .pfnGetArgumentProperties2 = nullptr,
    .pfnGetArgumentProperties3 = nullptr,
    .pfnQueryNetworkCreate = Guarded<&QueryCreate>,
    .pfnQueryNetworkDestroy = Guarded<&QueryDestroy>,
    .pfnQueryNetworkGetSupportedLayers = Guarded<&QuerySupportedLayers>,
    .pfnBuildLogGetString = Guarded<&BuildLogGetString>,
};

}  // namespace

const pze_graph_ddi_1_4* GraphDdi() { return &kGraphDdi; }
Fault FaultOf(const Graph* graph) { return graph->fault; }
const std::string& NameOf(const Graph* graph) { return graph->name; }

ze_result_t ExecuteGraph(Graph* graph) {
  std::lock_guard<std::mutex> lock(graph->run_mutex);
  for (const Argument& arg : graph->arguments) {
    if (!arg.value) {
      graph->log += "\ngraph '" + graph->name + "': argument '" + arg.name + "' is not bound";
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
  }
  try {
    // The caller's input memory, wrapped without a copy: it is only read.
    for (const Argument& arg : graph->arguments) {
      if (arg.input) {
        graph->request.set_tensor(arg.port, ov::Tensor(arg.type, arg.shape, const_cast<void*>(arg.value)));
      }
    }
    graph->request.infer();
    // Outputs are copied from the plugin's tensors: bound as output
    // tensors, the CPU plugin leaves a Result fed straight by a Parameter
    // unwritten (it hands out the input's tensor instead).
    for (const Argument& arg : graph->arguments) {
      if (arg.input) continue;
      const ov::Tensor written = graph->request.get_tensor(arg.port);
      std::memcpy(const_cast<void*>(arg.value), written.data(), written.get_byte_size());
    }
  } catch (const std::exception& e) {
    const std::string message = "graph '" + graph->name + "': inference failed: " + e.what();
    std::fprintf(stderr, "ze_parity_test_npu: %s\n", message.c_str());
    graph->log += "\n" + message;
    return ZE_RESULT_ERROR_UNKNOWN;
  }
  return ZE_RESULT_SUCCESS;
}

}  // namespace parity::ze_test_driver
