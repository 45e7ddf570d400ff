// The template adapter: the smallest complete native adapter, written to be
// copied by a vendor (README.md beside this file says how). It runs ai.onnx
// Relu and Add on float32 tensors with plain loops, declares exactly that,
// and answers UNSUPPORTED, naming the operator, for everything else.
//
// Every required slot of spec/abi/parity_adapter.h is implemented, in the
// order of the table. Replace the loops in RunNode with calls into your runtime.
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"  // generated from onnx/onnx-ml.proto with protoc
#include "spec/abi/parity_adapter.h"

// Tensors travel as onnx.TensorProto, whose raw_data is little-endian; the
// loops below copy it straight into floats.
static_assert(std::endian::native == std::endian::little, "this template assumes a little-endian host");

// ---------------------------------------------------------------------------
// 1. Status objects. The ABI only sees an opaque pointer; the definition is
// ours. The host calls release_status on every status we return.
struct parity_status {
  parity_status_code code;
  std::string message;
};

namespace {

parity_status* Fail(parity_status_code code, std::string message) {
  return new parity_status{code, std::move(message)};
}

// Returned when even a status cannot be allocated, so that a failure never
// reads as success (NULL); it is static, so ReleaseStatus leaves it alone.
parity_status* OutOfMemory() {
  static parity_status out_of_memory{PARITY_STATUS_OUT_OF_MEMORY, "out of memory"};
  return &out_of_memory;
}

parity_status_code StatusCode(const parity_status* status) { return status->code; }
const char* StatusMessage(const parity_status* status) { return status->message.c_str(); }
void ReleaseStatus(parity_status* status) {
  if (status != OutOfMemory()) delete status;
}

// No C++ exception may cross the C ABI: every entry point runs its body
// through Guard, which turns exceptions into statuses.
template <typename Body>
parity_status* Guard(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return OutOfMemory();
  } catch (const std::exception& e) {
    return Fail(PARITY_STATUS_INTERNAL, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return Fail(PARITY_STATUS_INTERNAL, "unexpected exception of unknown type");
  }
}

// ---------------------------------------------------------------------------
// 2. Information and devices: static data, valid for the library's lifetime.
// The first device is the default one; `parity run --device` picks another.
const parity_device_info kDevices[] = {
    {"cpu", "cpu", "template adapter: plain C++ loops on the host CPU"},
};
const parity_adapter_info kInfo = {
    .name = "template",                    // the name in reports
    .version = "1.0",                      // this adapter's own version
    .backend_version = "plain C++ loops",  // the runtime underneath: yours gives its version
    .device_count = 1,
    .devices = kDevices,
};

parity_status* GetInfo(const parity_adapter_info** info) {
  *info = &kInfo;
  return nullptr;
}

bool IsOurDevice(const char* device) { return !device || !*device || std::strcmp(device, "cpu") == 0; }

// ---------------------------------------------------------------------------
// 3. Capabilities: exactly what RunNode can do. The harness marks a case
// UNSUPPORTED without running it when it needs anything not listed here.
const char* const kOperators[] = {"ai.onnx:Relu", "ai.onnx:Add"};
const int32_t kDataTypes[] = {onnx::TensorProto::FLOAT};
const parity_capabilities kCapabilities = {
    .operator_count = 2,
    .operators = kOperators,
    .data_type_count = 1,
    .data_types = kDataTypes,
    .variant_target_count = 0,  // no variant targets (spec/variants.md): it always runs the main graph
    .variant_targets = nullptr,
    .honours_aliasing = 0,     // outputs are always fresh buffers
    .can_forbid_fallback = 1,  // it never falls back: every node runs on "cpu"
};

parity_status* GetCapabilities(const char* device, const parity_capabilities** capabilities) {
  return Guard([&]() -> parity_status* {
    if (!IsOurDevice(device)) {
      return Fail(PARITY_STATUS_DEVICE_UNAVAILABLE, std::string("device '") + device + "' is absent: only 'cpu'");
    }
    *capabilities = &kCapabilities;
    return nullptr;
  });
}

// ---------------------------------------------------------------------------
// 4. Sessions. A session owns everything it hands out: the report (valid
// until release) and the outputs (valid until the next run or release).
struct FloatTensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
};

// The element count of non-negative dims, or SIZE_MAX when it overflows
// (which no data can match, so the size checks below refuse it).
size_t ElementCount(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(n, static_cast<size_t>(d), &n)) return SIZE_MAX;
  }
  return n;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

// The host's ABI version (parity_adapter_query): its options carry
// model_dir only from version 3 on.
uint32_t g_host_abi_version = 0;

// The folder external data is read from: parity_session_options.model_dir
// when the host fills it, else "" (no folder: external data is refused).
std::string ModelDir(const parity_session_options* options) {
  if (!options || g_host_abi_version < 3 || !options->model_dir) return "";
  return options->model_dir;
}

// Reads the `count` floats of a tensor whose data_location is EXTERNAL, under
// the containment rule of spec/abi/README.md ("External data"): `location`
// is relative, has no '..', and its real path (symbolic links followed) is a
// regular file inside `model_dir`; offset and length lie inside that file.
// Every refusal names the rule it applies.
parity_status* ReadExternalFloats(const onnx::TensorProto& proto, const std::string& what,
                                  const std::string& model_dir, size_t count, std::vector<float>* data) {
  namespace fs = std::filesystem;
  auto invalid = [&](const std::string& why) { return Fail(PARITY_STATUS_INVALID_ARGUMENT, what + ": " + why); };
  std::string location;
  long long offset = 0;
  long long length = -1;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() != "offset" && entry.key() != "length") continue;
    // Decimal digits alone: no sign, no space, nothing strtoll would skip.
    const std::string& text = entry.value();
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
      return invalid("external data " + entry.key() + " '" + text + "' is not a non-negative decimal integer");
    }
    (entry.key() == "offset" ? offset : length) = std::stoll(text);
  }
  if (location.empty()) return invalid("external data has no location");
  if (model_dir.empty()) return invalid("external data '" + location + "' but the model has no folder");
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
    return invalid("external data location '" + location + "' is an absolute path");
  }
  for (const fs::path& part : loc) {
    if (part == "..") return invalid("external data location '" + location + "' contains '..'");
  }
  std::error_code ec;
  const fs::path base = fs::canonical(model_dir, ec);
  if (ec) return invalid("model folder '" + model_dir + "': " + ec.message());
  const fs::path file = fs::canonical(base / loc, ec);
  if (ec) return invalid("external data file '" + location + "' not found in '" + model_dir + "'");
  const fs::path inside = file.lexically_relative(base);
  if (inside.empty() || *inside.begin() == "..") {
    return invalid("external data location '" + location + "' resolves to '" + file.string() +
                   "', outside the model's folder");
  }
  if (!fs::is_regular_file(file, ec)) return invalid("external data location '" + location + "' is not a regular file");
  const auto size = static_cast<long long>(fs::file_size(file, ec));
  if (ec) return invalid("cannot stat external data '" + location + "': " + ec.message());
  if (count > SIZE_MAX / sizeof(float)) return invalid("has too many elements");
  const auto want = static_cast<long long>(count * sizeof(float));
  if (length < 0) length = want;
  if (length != want) {
    return invalid("external data length " + std::to_string(length) + " but the tensor needs " +
                   std::to_string(want) + " bytes");
  }
  if (offset > size || length > size - offset) {  // never offset + length: it could overflow
    return invalid("external data range at offset " + std::to_string(offset) + ", " + std::to_string(length) +
                   " bytes long, lies beyond the end of '" + location + "' (" + std::to_string(size) + " bytes)");
  }
  data->resize(count);
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(data->data()), length);
  if (!in || in.gcount() != length) return invalid("short read from '" + file.string() + "'");
  return nullptr;
}

// Reads a float32 TensorProto (raw_data, float_data, or external data in
// `model_dir`), checking its size.
parity_status* ReadFloatTensor(const onnx::TensorProto& proto, const std::string& what, const std::string& model_dir,
                               FloatTensor* out) {
  if (proto.data_type() != onnx::TensorProto::FLOAT) {
    return Fail(PARITY_STATUS_UNSUPPORTED, what + " has element type " + std::to_string(proto.data_type()) +
                                               "; the template adapter runs float32 (1) only");
  }
  out->dims.assign(proto.dims().begin(), proto.dims().end());
  for (int64_t d : out->dims) {
    if (d < 0) return Fail(PARITY_STATUS_INVALID_ARGUMENT, what + " has a negative dimension");
  }
  const size_t count = ElementCount(out->dims);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return ReadExternalFloats(proto, what, model_dir, count, &out->data);
  }
  if (proto.has_raw_data()) {
    if (count > SIZE_MAX / sizeof(float) || proto.raw_data().size() != count * sizeof(float)) {
      return Fail(PARITY_STATUS_INVALID_ARGUMENT, what + " has " + std::to_string(proto.raw_data().size()) +
                                                      " bytes of raw_data for shape " + DimsText(out->dims));
    }
    out->data.resize(count);
    if (count) std::memcpy(out->data.data(), proto.raw_data().data(), count * sizeof(float));
  } else {
    if (static_cast<size_t>(proto.float_data_size()) != count) {
      return Fail(PARITY_STATUS_INVALID_ARGUMENT, what + " has " + std::to_string(proto.float_data_size()) +
                                                      " float_data values for shape " + DimsText(out->dims));
    }
    out->data.assign(proto.float_data().begin(), proto.float_data().end());
  }
  return nullptr;
}

}  // namespace

struct parity_session {
  onnx::GraphProto graph;
  std::map<std::string, FloatTensor> initializers;
  // The report: every node on "cpu". Strings first, then pointers into them.
  std::vector<std::string> node_names;
  std::vector<parity_node_placement> placement;
  parity_session_report report{};
  // The outputs of the last run: serialized TensorProtos and the ABI's view of them.
  std::vector<std::string> output_bytes;
  std::vector<parity_value> outputs;
};

namespace {

std::string NodeName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? node.op_type() + "#" + std::to_string(index) : node.name();
}

// Checks, at session creation, that every node and value is one the loops
// can run; anything else is UNSUPPORTED with the reason, before any run.
parity_status* CheckSupported(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") opset = import.version();
  }
  if (opset < 7) {
    // Add before opset 7 broadcast by attribute, with other rules.
    return Fail(PARITY_STATUS_UNSUPPORTED,
                "ai.onnx opset " + std::to_string(opset) + ": the template adapter runs opset 7 and later");
  }
  const onnx::GraphProto& graph = model.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const bool onnx_domain = node.domain().empty() || node.domain() == "ai.onnx";
    const bool known = onnx_domain && ((node.op_type() == "Relu" && node.input_size() == 1) ||
                                       (node.op_type() == "Add" && node.input_size() == 2));
    if (!known || node.output_size() != 1) {
      return Fail(PARITY_STATUS_UNSUPPORTED, "node '" + NodeName(node, i) + "' is " +
                                                 (onnx_domain ? "ai.onnx" : node.domain()) + ":" + node.op_type() +
                                                 "; the template adapter runs only ai.onnx:Relu and ai.onnx:Add");
    }
  }
  for (const auto* values : {&graph.input(), &graph.output()}) {
    for (const onnx::ValueInfoProto& value : *values) {
      const onnx::TypeProto& type = value.type();
      if (!type.has_tensor_type() || type.tensor_type().elem_type() != onnx::TensorProto::FLOAT) {
        const std::string what = type.has_tensor_type()
                                     ? "a tensor of element type " + std::to_string(type.tensor_type().elem_type())
                                     : "not a tensor";
        return Fail(PARITY_STATUS_UNSUPPORTED, "graph value '" + value.name() + "' is " + what +
                                                   "; the template adapter runs float32 (1) tensors only");
      }
    }
  }
  return nullptr;
}

parity_status* CreateSession(const void* model_bytes, size_t model_size, const parity_session_options* options,
                             parity_session** session, const parity_session_report** report) {
  return Guard([&]() -> parity_status* {
    if (options && !IsOurDevice(options->device)) {
      return Fail(PARITY_STATUS_DEVICE_UNAVAILABLE,
                  std::string("device '") + options->device + "' is absent: only 'cpu'");
    }
    // allow_fallback needs no check: every node runs on "cpu" or the session fails.
    onnx::ModelProto model;
    if (model_size > 0x7fffffff || !model.ParseFromArray(model_bytes, static_cast<int>(model_size))) {
      return Fail(PARITY_STATUS_INVALID_ARGUMENT, "the model bytes are not an onnx.ModelProto");
    }
    if (parity_status* unsupported = CheckSupported(model)) return unsupported;

    // Initializers may keep their data in files beside the model
    // (data_location EXTERNAL), read from the folder the host names.
    const std::string model_dir = ModelDir(options);
    auto s = std::make_unique<parity_session>();
    s->graph = model.graph();
    for (const onnx::TensorProto& init : s->graph.initializer()) {
      FloatTensor tensor;
      if (parity_status* bad = ReadFloatTensor(init, "initializer '" + init.name() + "'", model_dir, &tensor)) {
        return bad;
      }
      s->initializers[init.name()] = std::move(tensor);
    }
    for (int i = 0; i < s->graph.node_size(); ++i) s->node_names.push_back(NodeName(s->graph.node(i), i));
    for (const std::string& name : s->node_names) s->placement.push_back({name.c_str(), "cpu"});
    s->report = {0, nullptr, s->placement.size(), s->placement.data()};
    if (report) *report = &s->report;
    *session = s.release();
    return nullptr;
  });
}

// The kernels. Relu keeps NaN as NaN; Add broadcasts only a one-element
// operand (a real backend implements full numpy broadcasting).
parity_status* RunNode(const onnx::NodeProto& node, const std::vector<const FloatTensor*>& in, FloatTensor* out) {
  if (node.op_type() == "Relu") {
    out->dims = in[0]->dims;
    out->data.resize(in[0]->data.size());
    for (size_t i = 0; i < out->data.size(); ++i) out->data[i] = in[0]->data[i] < 0 ? 0.0f : in[0]->data[i];
    return nullptr;
  }
  const FloatTensor& a = *in[0];
  const FloatTensor& b = *in[1];
  const bool same = a.dims == b.dims;
  const bool b_scalar = b.data.size() == 1 && b.dims.size() <= a.dims.size();
  const bool a_scalar = a.data.size() == 1 && a.dims.size() <= b.dims.size();
  if (!same && !b_scalar && !a_scalar) {
    return Fail(PARITY_STATUS_UNSUPPORTED, "Add of shapes " + DimsText(a.dims) + " and " + DimsText(b.dims) +
                                               ": the template adapter broadcasts only one-element operands");
  }
  const FloatTensor& big = same || b_scalar ? a : b;
  out->dims = big.dims;
  out->data.resize(big.data.size());
  for (size_t i = 0; i < out->data.size(); ++i) {
    out->data[i] = (a.data.size() == 1 ? a.data[0] : a.data[i]) + (b.data.size() == 1 ? b.data[0] : b.data[i]);
  }
  return nullptr;
}

parity_status* Run(parity_session* session, const parity_value* inputs, size_t input_count,
                   const parity_value** outputs, size_t* output_count) {
  return Guard([&]() -> parity_status* {
    const onnx::GraphProto& graph = session->graph;
    std::map<std::string, FloatTensor> values = session->initializers;
    // Inputs bind to graph inputs by name; an unnamed one binds by position.
    for (size_t i = 0; i < input_count; ++i) {
      std::string name = inputs[i].name ? inputs[i].name : "";
      if (name.empty() && i < static_cast<size_t>(graph.input_size())) name = graph.input(static_cast<int>(i)).name();
      if (inputs[i].kind != PARITY_VALUE_TENSOR) {
        return Fail(PARITY_STATUS_INVALID_ARGUMENT, "input '" + name + "' is not a tensor");
      }
      onnx::TensorProto proto;
      if (inputs[i].size > 0x7fffffff || !proto.ParseFromArray(inputs[i].data, static_cast<int>(inputs[i].size))) {
        return Fail(PARITY_STATUS_INVALID_ARGUMENT, "input '" + name + "' is not an onnx.TensorProto");
      }
      // Inputs carry their data inline: with no folder, external data is refused.
      if (parity_status* bad = ReadFloatTensor(proto, "input '" + name + "'", "", &values[name])) return bad;
    }
    // ONNX graphs list nodes in an order where producers come first.
    for (int n = 0; n < graph.node_size(); ++n) {
      const onnx::NodeProto& node = graph.node(n);
      std::vector<const FloatTensor*> in;
      for (const std::string& name : node.input()) {
        const auto it = values.find(name);
        if (it == values.end()) {
          return Fail(PARITY_STATUS_INVALID_ARGUMENT, "node '" + NodeName(node, n) + "' reads '" + name +
                                                          "', which no input, initializer or earlier node provides");
        }
        in.push_back(&it->second);
      }
      FloatTensor result;
      if (parity_status* failed = RunNode(node, in, &result)) return failed;
      values[node.output(0)] = std::move(result);
    }
    // Serialize the graph outputs, in order, into storage the session owns.
    std::vector<std::string> bytes;
    for (const onnx::ValueInfoProto& output : graph.output()) {
      const auto it = values.find(output.name());
      if (it == values.end()) {
        return Fail(PARITY_STATUS_INVALID_ARGUMENT, "graph output '" + output.name() + "' is never computed");
      }
      onnx::TensorProto proto;
      proto.set_name(output.name());
      proto.set_data_type(onnx::TensorProto::FLOAT);
      for (int64_t d : it->second.dims) proto.add_dims(d);
      proto.set_raw_data(it->second.data.data(), it->second.data.size() * sizeof(float));
      bytes.push_back(proto.SerializeAsString());
    }
    session->output_bytes = std::move(bytes);
    session->outputs.clear();
    for (int i = 0; i < graph.output_size(); ++i) {
      const std::string& data = session->output_bytes[static_cast<size_t>(i)];
      session->outputs.push_back({graph.output(i).name().c_str(), PARITY_VALUE_TENSOR, data.data(), data.size()});
    }
    *outputs = session->outputs.data();
    *output_count = session->outputs.size();
    return nullptr;
  });
}

void ReleaseSession(parity_session* session) { delete session; }

// ---------------------------------------------------------------------------
// 5. The table and the one exported symbol. Slots are in the order of
// parity_adapter_api; a slot you cannot offer may be NULL only where the
// header says it is optional (get_capabilities, bind_state, read_state).
// This template leaves the two state slots NULL: in a stateful session (a
// case with steps) the worker then passes each kept output back in as an
// input of the next run. Fill them to keep a key/value cache on the device.
const parity_adapter_api kApi = {
    .abi_version = PARITY_ABI_VERSION,          // the version this adapter was built with
    .struct_size = sizeof(parity_adapter_api),  // so that a newer host knows which slots exist
    .status_code = StatusCode,
    .status_message = StatusMessage,
    .release_status = ReleaseStatus,
    .get_info = GetInfo,
    .get_capabilities = GetCapabilities,
    .create_session = CreateSession,
    .run = Run,
    .release_session = ReleaseSession,
    .bind_state = nullptr,  // optional (ABI version 2): the worker carries the state
    .read_state = nullptr,
    .session_cost = nullptr,  // optional (ABI version 4): a backend with a compile step reports its time
    .run_cost = nullptr,      // optional (ABI version 5): a backend with device memory reports each run's copies
};

}  // namespace

extern "C" PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version) {
  // A host of any version from 1 on can use this table: it reads only the
  // slots that struct_size covers. Return NULL for a host you cannot serve.
  if (host_abi_version < 1) return nullptr;
  g_host_abi_version = host_abi_version;  // which fields of the options the host fills
  return &kApi;
}
