// The OpenVINO CPU adapter: the whole model goes to OpenVINO (its ONNX
// frontend reads the bytes, its CPU plugin compiles and runs them), with no
// fallback: a model OpenVINO cannot convert or compile is UNSUPPORTED,
// naming the operators its frontend names. Inference precision is float32
// (the CPU plugin's default on a CPU with bfloat16 units is bfloat16), and
// the session report places each node where OpenVINO's query_model says.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <openvino/openvino.hpp>

#include "adapters/openvino/onnx_model.h"
#include "adapters/openvino/ov_config.h"
#include "adapters/openvino/ov_errors.h"
#include "adapters/openvino/ov_tensors.h"
#include "adapters/reference/host_settings.h"
#include "adapters/reference/reference_session.h"
#include "reference/core/parallel.h"
#include "reference/ops/gemm.h"

struct parity_session {
  std::string name;  // the case, for messages
  std::vector<parity::adapters::openvino::GraphValue> outputs;
  std::vector<std::string> initializers;  // graph inputs OpenVINO holds as constants
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::map<std::string, ov::Output<const ov::Node>> input_ports;  // by the ONNX input's name
  std::vector<ov::Output<const ov::Node>> output_ports;           // in graph output order
  parity_session_cost cost{};
  // The report: strings first, then the ABI's views of them.
  std::vector<std::string> node_labels, node_devices, variant_entries, variant_chosen;
  std::vector<parity_node_placement> placement;
  std::vector<parity_variant_choice> variants;
  parity_session_report report{};
  // The last run's outputs, serialized, and the ABI's view of them.
  std::vector<std::string> output_bytes;
  std::vector<parity_value> output_values;
};

namespace parity::adapters::openvino {
namespace {

uint32_t g_host_abi_version = 0;

// The worker's memory limit bounds the tensors the adapter reads and writes;
// OpenBLAS's idle threads (the reference library is linked in for its
// tensors) are stopped, as in the reference adapter.
bool ApplyHostSettings() {
  ApplyHostMemoryLimit();
  ApplyHostThreads();
  return true;
}

// One Core per worker process: it loads the CPU plugin and the ONNX
// frontend once, from the wheel's libs folder (beside libopenvino.so).
ov::Core& Core() {
  static ov::Core core;
  return core;
}

bool IsOurDevice(const char* device) { return !device || !*device || std::string_view(device) == "cpu"; }

const char* BackendVersion() {
  static const std::string version = [] {
    const ov::Version v = ov::get_openvino_version();
    return StrCat("OpenVINO ", v.buildNumber, " (CPU plugin, ONNX frontend; inference precision float32)");
  }();
  return version.c_str();
}

parity_status* GetInfo(const parity_adapter_info** info) {
  static const parity_device_info kDevices[] = {
      {"cpu", "cpu", "the host CPU through OpenVINO's CPU plugin; the whole model or nothing, no fallback"}};
  static const parity_adapter_info kInfo = {"openvino", "1", BackendVersion(), 1, kDevices};
  *info = &kInfo;
  return nullptr;
}

// Every operator of the domains OpenVINO's ONNX frontend translates: it
// has no list to query, so the adapter tries each and answers UNSUPPORTED
// at creation, naming what the frontend cannot convert.
parity_status* GetCapabilities(const char* device, const parity_capabilities** capabilities) {
  if (!IsOurDevice(device)) {
    return MakeStatus(PARITY_STATUS_DEVICE_UNAVAILABLE,
                      StrCat("device '", device, "' is absent: the OpenVINO adapter runs on 'cpu'"));
  }
  static const char* const kOperators[] = {"ai.onnx:*", "ai.onnx.ml:*", "com.microsoft:*",
                                           "org.openvinotoolkit:*"};
  static const parity_capabilities kCapabilities = {
      .operator_count = std::size(kOperators),
      .operators = kOperators,
      .data_type_count = PassedDataTypes().size(),
      .data_types = PassedDataTypes().data(),
      // None: a selected entry is a call of a model-local function, which
      // OpenVINO's ONNX frontend does not convert ("no conversion rule for
      // org.onnxparity.local.<name>"), so every entry keeps its main graph.
      .variant_target_count = 0,
      .variant_targets = nullptr,
      .honours_aliasing = 0,     // every run's outputs are fresh; the worker carries kept state
      .can_forbid_fallback = 1,  // it never falls back: OpenVINO runs the whole model or refuses it
  };
  *capabilities = &kCapabilities;
  return nullptr;
}

parity_status* FromOv(OvStep step, const std::exception& e, const std::string& name) {
  OvFailure failure = ClassifyOvError(step, e.what(), name);
  return MakeStatus(failure.code, std::move(failure.message));
}

// What compile_model and query_model are given (ov_config.h), with the
// threads that `parity run --threads` passes in PARITY_THREADS.
ov::AnyMap CompileConfig() {
  const std::optional<int64_t> threads = HostNumber("PARITY_THREADS", 1024);
  return Float32CpuConfig(threads ? std::optional<int32_t>(static_cast<int32_t>(*threads)) : std::nullopt);
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The executable graph's nodes that compute (not its inputs, outputs and
// constants), and those among them whose shapes wait for the first run.
void CountKernels(const ov::CompiledModel& compiled, parity_session_cost* cost) {
  const std::shared_ptr<const ov::Model> runtime = compiled.get_runtime_model();
  for (const std::shared_ptr<ov::Node>& node : runtime->get_ordered_ops()) {
    const auto& info = node->get_rt_info();
    const auto type = info.find("layerType");
    const std::string layer = type == info.end() ? "" : type->second.as<std::string>();
    if (layer == "Input" || layer == "Output" || layer == "Const" || layer.empty()) continue;
    bool dynamic = false;
    for (size_t i = 0; i < node->get_output_size(); ++i) dynamic |= node->get_output_partial_shape(i).is_dynamic();
    ++(dynamic ? cost->kernels_deferred : cost->kernels_compiled);
  }
}

// Fills the report: each top-level node where query_model places it; a
// node whose name and outputs OpenVINO no longer has (folded into a
// constant or fused into its neighbour during conversion) runs inside the
// compiled CPU graph too, since the plugin compiled the whole model.
void BuildReport(parity_session* s, const PreparedModel& prepared, const ov::SupportedOpsMap& supported) {
  for (size_t i = 0; i < prepared.node_labels.size(); ++i) {
    std::string device = "cpu";
    for (const std::string& ov_name : prepared.node_ov_names[i]) {
      const auto found = supported.find(ov_name);
      if (found != supported.end()) {
        device = Lower(found->second);
        break;
      }
    }
    s->node_labels.push_back(prepared.node_labels[i]);
    s->node_devices.push_back(device);
  }
  for (const EntryDecision& d : prepared.decisions) {
    s->variant_entries.push_back(d.id);
    s->variant_chosen.push_back(d.selected ? d.call : "main");
  }
  for (size_t i = 0; i < s->node_labels.size(); ++i) {
    s->placement.push_back({s->node_labels[i].c_str(), s->node_devices[i].c_str()});
  }
  for (size_t i = 0; i < s->variant_entries.size(); ++i) {
    s->variants.push_back({s->variant_entries[i].c_str(), s->variant_chosen[i].c_str()});
  }
  s->report = {s->variants.size(), s->variants.data(), s->placement.size(), s->placement.data()};
}

// The compiled model's port that carries ONNX value `name`.
template <typename Ports>
std::optional<ov::Output<const ov::Node>> PortNamed(const Ports& ports, const std::string& name) {
  for (const auto& port : ports) {
    if (port.get_names().count(name)) return port;
  }
  return std::nullopt;
}

parity_status* CreateSession(const void* model, size_t model_size, const parity_session_options* options,
                             parity_session** session, const parity_session_report** report) {
  return Guarded("create_session", [&]() -> parity_status* {
    const std::string name = options && options->case_name && *options->case_name ? options->case_name : "model";
    if (options && !IsOurDevice(options->device)) {
      return MakeStatus(PARITY_STATUS_DEVICE_UNAVAILABLE,
                        StrCat("device '", options->device, "' is absent: the OpenVINO adapter runs on 'cpu'"));
    }
    StatusOr<PreparedModel> prepared = PrepareModel(model, model_size, name, ModelDirOf(options, g_host_abi_version));
    if (!prepared.ok()) return ToAbiStatus(prepared.status());

    auto s = std::make_unique<parity_session>();
    s->name = name;
    s->outputs = prepared->outputs;
    s->initializers = prepared->initializers;
    const ov::AnyMap config = CompileConfig();
    // Load time is the frontend's conversion plus the plugin's compilation.
    const auto read_start = std::chrono::steady_clock::now();
    std::shared_ptr<ov::Model> ov_model;
    try {
      ov_model = Core().read_model(prepared->bytes, ov::Tensor());
    } catch (const std::exception& e) {
      return FromOv(OvStep::kRead, e, name);
    }
    const double read_ms = MsSince(read_start);
    ov::SupportedOpsMap supported;
    try {
      supported = Core().query_model(ov_model, "CPU", config);
    } catch (const std::exception& e) {
      return FromOv(OvStep::kQuery, e, name);
    }
    const auto compile_start = std::chrono::steady_clock::now();
    try {
      s->compiled = Core().compile_model(ov_model, "CPU", config);
      s->request = s->compiled.create_infer_request();
    } catch (const std::exception& e) {
      return FromOv(OvStep::kCompile, e, name);
    }
    s->cost.compile_ms = read_ms + MsSince(compile_start);
    CountKernels(s->compiled, &s->cost);

    // Inputs by name; a parameter the frontend has renamed (a graph input
    // that flows straight to an output through Identity or Dropout takes the
    // output's name) goes to the one unnamed graph input of its element
    // type and rank. An input no node reads may have no parameter left; a
    // run's value for it is ignored.
    const std::vector<ov::Output<const ov::Node>> ports = s->compiled.inputs();
    std::vector<const GraphValue*> unnamed;
    for (const GraphValue& input : prepared->inputs) {
      std::optional<ov::Output<const ov::Node>> port = PortNamed(ports, input.name);
      if (port) {
        s->input_ports.emplace(input.name, *port);
      } else {
        unnamed.push_back(&input);
      }
    }
    for (const ov::Output<const ov::Node>& port : ports) {
      bool named = false;
      for (const auto& [input_name, bound] : s->input_ports) named |= bound == port;
      if (named) continue;
      const GraphValue* match = nullptr;
      int matches = 0;
      for (const GraphValue* input : unnamed) {
        const bool same_rank = input->rank < 0 || port.get_partial_shape().rank().is_dynamic() ||
                               port.get_partial_shape().rank().get_length() == input->rank;
        if (OvElementType(input->type) == port.get_element_type() && same_rank) {
          match = input;
          ++matches;
        }
      }
      if (matches == 1) s->input_ports.emplace(match->name, port);
    }
    if (s->input_ports.size() != ports.size()) {
      return MakeStatus(PARITY_STATUS_INTERNAL,
                        StrCat(name, ": OpenVINO's compiled model has ", ports.size(), " inputs, of which ",
                               s->input_ports.size(), " match the graph's inputs by name, or by type and rank"));
    }
    for (const GraphValue& output : prepared->outputs) {
      std::optional<ov::Output<const ov::Node>> port = PortNamed(s->compiled.outputs(), output.name);
      if (!port) {
        return MakeStatus(PARITY_STATUS_INTERNAL,
                          StrCat(name, ": OpenVINO's compiled model has no output named '", output.name, "'"));
      }
      s->output_ports.push_back(*port);
    }
    BuildReport(s.get(), *prepared, supported);
    if (report) *report = &s->report;
    *session = s.release();
    return nullptr;
  });
}

// Binds one ABI input to its port: a TensorProto of the port's type.
Status BindInput(parity_session* s, const parity_value& in, std::vector<ov::Tensor>* keep) {
  const std::string input_name = in.name ? in.name : "";
  if (in.kind != PARITY_VALUE_TENSOR) {
    return Unimplemented(s->name, ": input '", input_name,
                         "' is not a tensor; the OpenVINO adapter passes tensors only");
  }
  const auto port = s->input_ports.find(input_name);
  if (port == s->input_ports.end()) {
    if (std::find(s->initializers.begin(), s->initializers.end(), input_name) != s->initializers.end()) {
      return Unimplemented(s->name, ": input '", input_name, "' overrides an initializer, which OpenVINO ",
                           "holds as a constant of the compiled model");
    }
    return Status();  // a graph input no node reads: nothing to bind
  }
  onnx::TensorProto proto;
  if (!in.data || in.size > static_cast<size_t>(kMaxModelBytes) ||
      !proto.ParseFromArray(in.data, static_cast<int>(in.size))) {
    return InvalidArgument(s->name, ": input '", input_name, "' is not an onnx.TensorProto");
  }
  PARITY_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(proto));
  PARITY_ASSIGN_OR_RETURN(ov::Tensor ov_tensor, ToOvTensor(tensor, StrCat("input '", input_name, "'")));
  if (ov_tensor.get_element_type() != port->second.get_element_type()) {
    return InvalidArgument(s->name, ": input '", input_name, "' is ", DataTypeName(tensor.dtype()),
                           ", the compiled model takes ", port->second.get_element_type().get_type_name());
  }
  s->request.set_tensor(port->second, ov_tensor);
  keep->push_back(std::move(ov_tensor));
  return Status();
}

parity_status* Run(parity_session* s, const parity_value* inputs, size_t input_count, const parity_value** outputs,
                   size_t* output_count) {
  return Guarded("run", [&]() -> parity_status* {
    std::vector<ov::Tensor> keep;  // the input buffers, alive through infer()
    try {
      for (size_t i = 0; i < input_count; ++i) {
        if (parity_status* bad = ToAbiStatus(BindInput(s, inputs[i], &keep))) return bad;
      }
      // A parameter left unbound would run on whatever its tensor holds.
      if (keep.size() < s->input_ports.size()) {
        std::string missing;
        for (const auto& [input_name, port] : s->input_ports) {
          bool given = false;
          for (size_t i = 0; i < input_count; ++i) given |= inputs[i].name && input_name == inputs[i].name;
          if (!given) missing += (missing.empty() ? "'" : ", '") + input_name + "'";
        }
        return MakeStatus(PARITY_STATUS_INVALID_ARGUMENT, StrCat(s->name, ": no value for input ", missing));
      }
      s->request.infer();
    } catch (const std::exception& e) {
      return FromOv(OvStep::kInfer, e, s->name);
    }
    std::vector<std::string> bytes;
    for (size_t i = 0; i < s->output_ports.size(); ++i) {
      const GraphValue& output = s->outputs[i];
      ov::Tensor result;
      try {
        result = s->request.get_tensor(s->output_ports[i]);
      } catch (const std::exception& e) {
        return FromOv(OvStep::kInfer, e, s->name);
      }
      StatusOr<Tensor> tensor = FromOvTensor(result, output.type, StrCat(s->name, ": output '", output.name, "'"));
      if (!tensor.ok()) return ToAbiStatus(tensor.status());
      onnx::TensorProto proto;
      TensorToProto(*tensor, &proto);
      proto.set_name(output.name);
      bytes.push_back(proto.SerializeAsString());
    }
    s->output_bytes = std::move(bytes);
    s->output_values.clear();
    for (size_t i = 0; i < s->output_bytes.size(); ++i) {
      s->output_values.push_back({s->outputs[i].name.c_str(), PARITY_VALUE_TENSOR, s->output_bytes[i].data(),
                                  s->output_bytes[i].size()});
    }
    *outputs = s->output_values.data();
    *output_count = s->output_values.size();
    return nullptr;
  });
}

void ReleaseSession(parity_session* session) { delete session; }

parity_status* SessionCost(parity_session* session, parity_session_cost* cost) {
  *cost = session->cost;
  return nullptr;
}

const parity_adapter_api kApi = {
    .abi_version = PARITY_ABI_VERSION,
    .struct_size = sizeof(parity_adapter_api),
    .status_code = StatusCodeOf,
    .status_message = StatusMessageOf,
    .release_status = ReleaseStatus,
    .get_info = GetInfo,
    .get_capabilities = GetCapabilities,
    .create_session = CreateSession,
    .run = Run,
    .release_session = ReleaseSession,
    .bind_state = nullptr,  // the worker carries a stateful case's kept values
    .read_state = nullptr,
    .session_cost = SessionCost,
    .run_cost = nullptr,  // the CPU plugin's tensors are host memory: nothing crosses
};

}  // namespace
}  // namespace parity::adapters::openvino

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  static const bool applied = parity::adapters::openvino::ApplyHostSettings();
  (void)applied;
  if (host_abi_version < 1) return nullptr;
  parity::adapters::openvino::g_host_abi_version = host_abi_version;
  return &parity::adapters::openvino::kApi;
}
