// The reference evaluator behind the adapter C ABI: status objects and a
// session that loads, runs and reports one model. Header-only because two
// adapter libraries compile it, the reference adapter and the
// fault-injection adapter (adapters/<name>/*.cc join only their own library).
#pragma once

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "adapters/device/partition.h"
#include "reference/aliasing/aliasing.h"
#include "reference/eval/evaluator.h"
#include "reference/model/loader.h"
#include "reference/model/tensor_io.h"
#include "reference/model/validator.h"
#include "reference/variants/variants.h"
#include "spec/abi/parity_adapter.h"
#include "reference/ops/reference_registry.h"

// The ABI's opaque status. Each adapter library has its own copy of this
// definition; the version script keeps it private to the library.
struct parity_status {
  parity_status_code code;
  std::string message;
};

namespace parity::adapters {

// Returned when a status object itself cannot be allocated, so that a
// failure is never reported as success (a null status). Never freed.
inline parity_status* OutOfMemoryStatus() {
  static parity_status status{PARITY_STATUS_OUT_OF_MEMORY, "out of memory"};
  return &status;
}

inline parity_status* MakeStatus(parity_status_code code, std::string message) {
  parity_status* status = new (std::nothrow) parity_status{code, std::move(message)};
  return status ? status : OutOfMemoryStatus();
}

// The ABI code for a reference status: a missing kernel is UNSUPPORTED; a
// model or input the reference refuses is INVALID_ARGUMENT; kUnavailable,
// which the evaluator never returns, carries DEVICE_UNAVAILABLE here.
inline parity_status_code AbiCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return PARITY_STATUS_OK;
    case StatusCode::kUnimplemented: return PARITY_STATUS_UNSUPPORTED;
    case StatusCode::kInvalidArgument:
    case StatusCode::kInvalidModel:
    case StatusCode::kNotFound:
    case StatusCode::kOutOfRange:
    case StatusCode::kIoError: return PARITY_STATUS_INVALID_ARGUMENT;
    case StatusCode::kResourceExhausted: return PARITY_STATUS_OUT_OF_MEMORY;
    case StatusCode::kUnavailable: return PARITY_STATUS_DEVICE_UNAVAILABLE;
    default: return PARITY_STATUS_INTERNAL;
  }
}

inline parity_status* ToAbiStatus(const Status& status) {
  return status.ok() ? nullptr : MakeStatus(AbiCode(status.code()), status.message());
}

// The three status slots of the table.
inline parity_status_code StatusCodeOf(const parity_status* status) { return status ? status->code : PARITY_STATUS_OK; }
inline const char* StatusMessageOf(const parity_status* status) { return status ? status->message.c_str() : ""; }
inline void ReleaseStatus(parity_status* status) {
  if (status != OutOfMemoryStatus()) delete status;
}

// Runs `body` (returning parity_status*) so that no C++ exception crosses the
// C ABI: std::bad_alloc becomes OUT_OF_MEMORY, anything else INTERNAL.
template <typename Body>
parity_status* Guarded(const char* call, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return OutOfMemoryStatus();
  } catch (const std::exception& e) {
    return MakeStatus(PARITY_STATUS_INTERNAL, std::string(call) + ": " + e.what());
  } catch (...) {
    return MakeStatus(PARITY_STATUS_INTERNAL, std::string(call) + ": unknown exception");
  }
}

// The folder a model's external data is read from
// (parity_session_options.model_dir, ABI version 3): "" when the options
// name none, or come from a host older than version 3, whose options end
// before the field. `host_abi_version` is what parity_adapter_query got.
inline std::string ModelDirOf(const parity_session_options* options, uint32_t host_abi_version) {
  if (!options || host_abi_version < 3 || !options->model_dir) return "";
  return options->model_dir;
}

// The variant targets the reference declares, preferred first: Compiled
// entries for the reference itself (their __binary__ is a FunctionProto),
// then entries that name no target (spec/variants.md, "Resolution").
inline const char* const kReferenceVariantTargets[] = {kReferenceTarget, kPortableTarget};

// What makes a session a device backend's rather than the reference's: its
// device name, its lowering and its own variant targets. The session then
// partitions the resolved model (adapters/device/partition.h): lowered
// nodes run the backend's kernels, the others the reference's on the host,
// and the report places each node accordingly.
struct SessionBackend {
  const char* device = "cpu";
  const Lowering* lowering = nullptr;
  std::vector<const char*> variant_targets;  // preferred first, when the options name none
  // A backend whose lowering depends on the model (an NPU driver answers a
  // layer query per model) makes it here for each session, instead of
  // `lowering`; the milliseconds it took count as compile time.
  struct ModelLowering {
    std::shared_ptr<const Lowering> lowering;
    double prepare_ms = 0;
  };
  std::function<StatusOr<ModelLowering>(const LoadedModel&)> lowering_for;
  // The backend's veto on entries of its targets (ResolveOptions::refuse).
  std::function<std::string(const VariantEntry&)> refuse_entry;
  // Asked before a session is made and for the capabilities: an error
  // (kUnavailable: the device is absent, hence SKIP) refuses them.
  std::function<Status()> available;
  // A backend whose values live in device memory of its own: its copies
  // between the host and the device so far (counted from any start), the
  // device memory it holds now and its peak since reset_device_peak. Read
  // before and after each run for the run's parity_run_cost.
  std::function<parity_run_cost()> device_counters;
  std::function<void()> reset_device_peak;
};

// One model on the reference evaluator, on the device "cpu" (or on a
// backend's device, with the nodes its lowering claims run by it). A model with
// variant entries is resolved for the options' targets (or, when they list
// none, kReferenceVariantTargets) and the resolved model is what runs.
//
// Stateful sessions (BindState, ABI v2): the session keeps each bound
// output, as a Value, for the bound input of the next run, so no cache is
// serialized between steps (ReadState serializes on demand). In in-place
// mode, the model's aliasing annotations whose (output, input) pair is a
// binding are passed to the evaluator (EvalOptions::in_place), which writes
// the kept tensor's buffer in place; otherwise every run makes fresh buffers.
// Ownership: outputs, read states and the report point into the session,
// valid until the next Run (outputs, states) or the session's destruction.
class ReferenceSession {
 public:
  // One output of the last run, serialized; callers that alter the bytes
  // (fault injection) call Publish() afterwards.
  struct Output {
    std::string name;
    parity_value_kind kind = PARITY_VALUE_TENSOR;
    std::string bytes;
  };

  // `in_place`: honour the model's aliasing annotations for the state
  // bindings; annotations that break a rule of spec/aliasing.md then fail
  // creation (kInvalidModel, the message starting with the rule's id).
  // `model_dir`: the folder of the model's external data (ModelDirOf), read
  // under ResolveExternalDataPath's rule; empty refuses external data.
  static StatusOr<std::unique_ptr<ReferenceSession>> Create(const void* model, size_t model_size,
                                                            const parity_session_options* options,
                                                            bool in_place = false, std::string model_dir = "",
                                                            const SessionBackend* backend = nullptr) {
    const char* device = options && options->device ? options->device : "";
    const char* own_device = backend ? backend->device : "cpu";
    if (*device != '\0' && std::strcmp(device, own_device) != 0) {
      return Status(StatusCode::kUnavailable,
                    StrCat("device '", device, "' is absent: this backend runs on '", own_device, "'"));
    }
    if (backend && backend->available) PARITY_RETURN_IF_ERROR(backend->available());
    const std::string name = options && options->case_name && *options->case_name ? options->case_name : "model";
    if (!model && model_size > 0) return InvalidArgument(name, ": no model bytes");
    PARITY_ASSIGN_OR_RETURN(
        LoadedModel loaded,
        LoadModelBytes(std::string_view(static_cast<const char*>(model), model ? model_size : 0), name,
                       std::move(model_dir)));
    std::vector<EntryDecision> decisions;
    if (HasVariants(*loaded.proto)) {
      std::vector<std::string> targets;
      for (size_t i = 0; options && options->variant_targets && i < options->variant_target_count; ++i) {
        if (options->variant_targets[i]) targets.emplace_back(options->variant_targets[i]);
      }
      // An empty list is "the adapter's own choice" (spec/abi/parity_adapter.h).
      if (targets.empty() && backend) targets.assign(backend->variant_targets.begin(), backend->variant_targets.end());
      if (targets.empty()) targets.assign(std::begin(kReferenceVariantTargets), std::end(kReferenceVariantTargets));
      PARITY_ASSIGN_OR_RETURN(loaded, Resolve(loaded, targets, backend, &decisions));
    }
    std::unique_ptr<Partition> partition;
    EvalOptions eval_options;
    if (backend && backend->lowering_for) {
      PARITY_ASSIGN_OR_RETURN(SessionBackend::ModelLowering made_lowering, backend->lowering_for(loaded));
      PARITY_ASSIGN_OR_RETURN(Partition made, PartitionModel(loaded, *made_lowering.lowering, own_device));
      made.compile_ms += made_lowering.prepare_ms;
      partition = std::make_unique<Partition>(std::move(made));
      eval_options.node_kernels = &partition->kernels;
      loaded = partition->model;
    } else if (backend && backend->lowering) {
      PARITY_ASSIGN_OR_RETURN(Partition made, PartitionModel(loaded, *backend->lowering, own_device));
      partition = std::make_unique<Partition>(std::move(made));
      eval_options.node_kernels = &partition->kernels;
      loaded = partition->model;  // with each fused region as one node
    }
    PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator,
                            Evaluator::Create(std::move(loaded), WithReferenceKernels(eval_options)));
    std::vector<Alias> aliases;
    if (in_place && HasAliases(*evaluator->model().proto)) {
      // Evaluator::Create has applied the IR's rules, which ValidAliases assumes.
      PARITY_ASSIGN_OR_RETURN(aliases, ValidAliases(evaluator->model()));
    }
    std::unique_ptr<ReferenceSession> session(new ReferenceSession(std::move(evaluator)));
    session->partition_ = std::move(partition);
    session->in_place_ = in_place;
    session->aliases_ = std::move(aliases);
    session->BuildReport(std::move(decisions));
    return session;
  }

  // Makes the session stateful (parity_adapter_api::bind_state): once, before
  // the first run; every binding names a graph output and a graph input, and
  // no input twice.
  Status BindState(const parity_state_binding* bindings, size_t count) {
    const onnx::GraphProto& graph = evaluator_->model().proto->graph();
    const std::string& model_name = evaluator_->model().name;
    if (stateful_) return InvalidArgument(model_name, ": bind_state may be called once only");
    if (runs_ > 0) return InvalidArgument(model_name, ": bind_state must come before the first run");
    if (count > 0 && !bindings) {
      return InvalidArgument(model_name, ": bind_state got ", count, " bindings but no array");
    }
    std::vector<Binding> bound;
    for (size_t i = 0; i < count; ++i) {
      const std::string output = bindings[i].output ? bindings[i].output : "";
      const std::string input = bindings[i].input ? bindings[i].input : "";
      Binding b{output, input, IndexOf(graph.output(), output), IndexOf(graph.input(), input)};
      if (b.output_index < 0) {
        return InvalidArgument(model_name, ": binding '", output, "'->'", input, "' names '", output,
                               "', which is not an output of the graph");
      }
      if (b.input_index < 0) {
        return InvalidArgument(model_name, ": binding '", output, "'->'", input, "' names '", input,
                               "', which is not an input of the graph");
      }
      for (const Binding& earlier : bound) {
        if (earlier.input_index == b.input_index) {
          return InvalidArgument(model_name, ": input '", input, "' is bound twice ('", earlier.output, "' and '",
                                 output, "')");
        }
      }
      bound.push_back(std::move(b));
    }
    if (in_place_) {
      // Only an annotation that is also a binding shares a buffer: the kept
      // tensor is the aliased input's buffer, owned by this session.
      std::vector<Alias> shared;
      for (const Alias& alias : aliases_) {
        const bool is_binding = std::any_of(bound.begin(), bound.end(), [&](const Binding& b) {
          return b.output == alias.output && b.input == alias.input;
        });
        if (is_binding) shared.push_back(alias);
      }
      if (!shared.empty()) {
        const size_t applied = shared.size();
        EvalOptions options;
        options.in_place = std::move(shared);
        if (partition_) options.node_kernels = &partition_->kernels;
        PARITY_ASSIGN_OR_RETURN(evaluator_, Evaluator::Create(evaluator_->model(), WithReferenceKernels(std::move(options))));
        in_place_aliases_ = applied;
      }
    }
    bindings_ = std::move(bound);
    stateful_ = true;
    return Status::Ok();
  }

  // The value bound input `input` holds now, serialized and named after the
  // input (parity_adapter_api::read_state); valid until the next run.
  Status ReadState(const char* input, parity_value* value) {
    const std::string& model_name = evaluator_->model().name;
    const std::string name = input ? input : "";
    const Value* kept = kept_state(name);
    if (!kept) {
      const bool bound =
          std::any_of(bindings_.begin(), bindings_.end(), [&](const Binding& b) { return b.input == name; });
      return InvalidArgument(model_name, ": read_state('", name, "'): ",
                             bound ? "no run has finished yet" : "it is not a bound input of the session");
    }
    PARITY_RETURN_IF_ERROR(HostReads(*kept).WithContext(StrCat(model_name, ": read_state('", name, "')")));
    Output& out = read_states_[name];
    out.name = name;
    PARITY_RETURN_IF_ERROR(Serialize(*kept, out));
    *value = {out.name.c_str(), out.kind, out.bytes.data(), out.bytes.size()};
    return Status::Ok();
  }

  // The value kept for bound input `input`, or null before the first run or
  // for an input that is not bound. Tests compare its buffer across runs;
  // fault injection alters it.
  Value* kept_state(const std::string& input) {
    const auto it = state_.find(input);
    return it == state_.end() ? nullptr : &it->second;
  }
  bool stateful() const { return stateful_; }
  uint64_t runs() const { return runs_; }
  // How many annotations the evaluator applies in place (0 when functional).
  size_t in_place_aliases() const { return in_place_aliases_; }

  // Binds inputs to graph inputs by name (an input with an empty name binds
  // by position), runs, and serializes the outputs. In a stateful session a
  // bound input left out takes the kept value, and only the unbound outputs
  // are serialized.
  Status Run(const parity_value* inputs, size_t input_count) {
    const onnx::GraphProto& graph = evaluator_->model().proto->graph();
    const std::string& model_name = evaluator_->model().name;
    // Made at the first run and kept: a decode step should not index the graph again.
    if (input_index_.empty()) {
      for (int i = 0; i < graph.input_size(); ++i) input_index_.emplace(graph.input(i).name(), i);
    }
    const std::unordered_map<std::string, int>& index_of = input_index_;
    std::vector<std::optional<Value>> bound(static_cast<size_t>(graph.input_size()));
    int last_bound = -1;
    for (size_t i = 0; i < input_count; ++i) {
      const parity_value& in = inputs[i];
      const std::string name = in.name ? in.name : "";
      int index = static_cast<int>(i);
      if (!name.empty()) {
        const auto it = index_of.find(name);
        if (it == index_of.end()) return InvalidArgument(model_name, ": '", name, "' is not an input of the graph");
        index = it->second;
      } else if (index >= graph.input_size()) {
        return InvalidArgument(model_name, ": input ", i, " has no name and the graph has only ", graph.input_size(),
                               " inputs");
      }
      if (bound[static_cast<size_t>(index)]) {
        return InvalidArgument(model_name, ": graph input '", graph.input(index).name(), "' is given twice");
      }
      PARITY_ASSIGN_OR_RETURN(Value value, ParseValue(in, graph.input(index).name()));
      bound[static_cast<size_t>(index)] = std::move(value);
      last_bound = std::max(last_bound, index);
    }
    // Kept values fill the bound inputs this run leaves out. A copy of a
    // Value shares its buffer, which in-place mode writes on purpose.
    for (const Binding& b : bindings_) {
      const auto kept = state_.find(b.input);
      if (kept == state_.end() || bound[static_cast<size_t>(b.input_index)]) continue;
      bound[static_cast<size_t>(b.input_index)] = kept->second;
      last_bound = std::max(last_bound, b.input_index);
    }
    // The evaluator takes inputs in graph order; one left out before the last
    // given input takes its initializer, as it would at the end.
    std::vector<Value> ordered;
    for (int i = 0; i <= last_bound; ++i) {
      if (bound[static_cast<size_t>(i)]) {
        ordered.push_back(std::move(*bound[static_cast<size_t>(i)]));
        continue;
      }
      const onnx::TensorProto* initializer = FindInitializer(graph, graph.input(i).name());
      if (!initializer)
        return InvalidArgument(model_name, ": graph input '", graph.input(i).name(), "' was given no value");
      PARITY_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(*initializer));
      ordered.push_back(Value::FromTensor(std::move(tensor)));
    }
    PARITY_ASSIGN_OR_RETURN(std::vector<Value> results, evaluator_->Run(ordered));
    // Built aside, so that a failure leaves the last run's outputs intact.
    std::vector<Output> outputs;
    for (size_t i = 0; i < results.size(); ++i) {
      const bool kept = std::any_of(bindings_.begin(), bindings_.end(),
                                    [&](const Binding& b) { return b.output_index == static_cast<int>(i); });
      if (kept) continue;
      Output& out = outputs.emplace_back();
      out.name = graph.output(static_cast<int>(i)).name();
      // Only the outputs that go back are read on the host: a bound one
      // stays where the backend keeps it (NodeKernels::host_reads).
      PARITY_RETURN_IF_ERROR(HostReads(results[i]).WithContext(StrCat(model_name, ": output '", out.name, "'")));
      PARITY_RETURN_IF_ERROR(Serialize(results[i], out));
    }
    for (const Binding& b : bindings_) state_[b.input] = results[static_cast<size_t>(b.output_index)];
    read_states_.clear();
    outputs_ = std::move(outputs);
    Publish();
    ++runs_;
    return Status::Ok();
  }

  std::vector<Output>& mutable_outputs() { return outputs_; }
  // Points the ABI view of the outputs at the current bytes.
  void Publish() {
    output_values_.clear();
    for (const Output& out : outputs_) {
      output_values_.push_back({out.name.c_str(), out.kind, out.bytes.data(), out.bytes.size()});
    }
  }
  const parity_value* outputs() const { return output_values_.data(); }
  size_t output_count() const { return output_values_.size(); }

  const parity_session_report* report() const { return &report_; }
  // The partition of a backend's session; null on the reference.
  const Partition* partition() const { return partition_.get(); }
  // Moves node `index` of the report to another device (fault injection).
  void PlaceNode(size_t index, std::string device) {
    if (index >= node_devices_.size()) return;
    node_devices_[index] = std::move(device);
    placement_[index].device = node_devices_[index].c_str();
  }
  // The resolution's decision on each variant entry, in CollectEntries
  // order; empty for a model without entries.
  const std::vector<EntryDecision>& variant_decisions() const { return decisions_; }
  // Reports `chosen` for entry `index` whatever was run (fault injection).
  void ReportVariant(size_t index, std::string chosen) {
    if (index >= variant_chosen_.size()) return;
    variant_chosen_[index] = std::move(chosen);
    variants_[index].chosen = variant_chosen_[index].c_str();
  }

 private:
  explicit ReferenceSession(std::unique_ptr<Evaluator> evaluator) : evaluator_(std::move(evaluator)) {}

  // The model a backend with `targets` runs: entries resolved, then Compiled
  // calls for the reference lowered to the functions their blobs carry.
  static StatusOr<LoadedModel> Resolve(const LoadedModel& loaded, const std::vector<std::string>& targets,
                                       const SessionBackend* backend, std::vector<EntryDecision>* decisions) {
    // ResolveVariants checks the IR's rules itself, and refuses a model that breaks them.
    // Selection depends on the targets alone (spec/variants.md, 4.1), on a
    // backend as on the reference: a portable entry it does not lower runs
    // on the fallback, as the rest of the graph would.
    ResolveOptions options;
    options.targets = targets;
    if (backend) options.refuse = backend->refuse_entry;
    PARITY_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveForReference(loaded, options));
    *decisions = std::move(resolved.decisions);
    return LoadedModel{std::make_shared<const onnx::ModelProto>(std::move(resolved.model)), loaded.name,
                       loaded.base_dir};
  }

  // Every top-level node of the model that runs is on "cpu" (or, on a
  // backend, where its partition put it); one choice per variant entry: the call it substituted, or "main".
  void BuildReport(std::vector<EntryDecision> decisions) {
    if (partition_) {
      // The nodes of the model as given, not of its rewritten form.
      for (const PlacedNode& placed : partition_->nodes) {
        node_names_.push_back(placed.name);
        node_devices_.push_back(placed.device);
      }
    } else {
      const onnx::GraphProto& graph = evaluator_->model().proto->graph();
      for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        node_names_.push_back(node.name().empty() ? StrCat(node.op_type(), "#", i) : node.name());
        node_devices_.push_back("cpu");
      }
    }
    decisions_ = std::move(decisions);
    for (const EntryDecision& d : decisions_) {
      variant_entries_.push_back(d.id);
      variant_chosen_.push_back(d.selected ? d.call : "main");
    }
    // The strings are all in place before any pointer into them is taken.
    for (size_t i = 0; i < node_names_.size(); ++i) {
      placement_.push_back({node_names_[i].c_str(), node_devices_[i].c_str()});
    }
    for (size_t i = 0; i < variant_entries_.size(); ++i) {
      variants_.push_back({variant_entries_[i].c_str(), variant_chosen_[i].c_str()});
    }
    report_ = {variants_.size(), variants_.data(), placement_.size(), placement_.data()};
  }

  // One state binding, with the positions of its output and input in the graph.
  struct Binding {
    std::string output, input;
    int output_index = -1, input_index = -1;
  };

  template <typename Infos>
  static int IndexOf(const Infos& infos, const std::string& name) {
    for (int i = 0; i < infos.size(); ++i) {
      if (infos.Get(i).name() == name) return i;
    }
    return -1;
  }

  static const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name) {
    for (const auto& init : graph.initializer()) {
      if (init.name() == name) return &init;
    }
    return nullptr;
  }

  static StatusOr<Value> ParseValue(const parity_value& in, const std::string& input_name) {
    if (!in.data && in.size > 0) return InvalidArgument("input '", input_name, "' has a size but no data");
    if (in.size > static_cast<size_t>(kMaxModelBytes)) {
      return InvalidArgument("input '", input_name, "' is ", in.size, " bytes, over protobuf's 2 GiB limit");
    }
    const int size = static_cast<int>(in.size);
    switch (in.kind) {
      case PARITY_VALUE_TENSOR: {
        // Most inputs are plain raw_data tensors, read without a TensorProto.
        if (std::optional<Tensor> plain = TensorFromPlainWire(in.data, in.size)) {
          return Value::FromTensor(std::move(*plain));
        }
        onnx::TensorProto proto;
        if (!proto.ParseFromArray(in.data, size))
          return InvalidArgument("input '", input_name, "' is not a TensorProto");
        PARITY_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(proto));
        return Value::FromTensor(std::move(tensor));
      }
      case PARITY_VALUE_SEQUENCE: {
        onnx::SequenceProto proto;
        if (!proto.ParseFromArray(in.data, size)) {
          return InvalidArgument("input '", input_name, "' is not a SequenceProto");
        }
        return ValueFromSequenceProto(proto);
      }
      case PARITY_VALUE_OPTIONAL: {
        onnx::OptionalProto proto;
        if (!proto.ParseFromArray(in.data, size)) {
          return InvalidArgument("input '", input_name, "' is not an OptionalProto");
        }
        return ValueFromOptionalProto(proto);
      }
    }
    return InvalidArgument("input '", input_name, "' has unknown kind ", static_cast<int>(in.kind));
  }

  // A backend's results on its device come back to the host (the
  // partition's NodeKernels::host_reads); a no-op for the reference.
  Status HostReads(const Value& value) const {
    return partition_ ? partition_->kernels.HostReads(value) : Status::Ok();
  }

  static Status Serialize(const Value& value, Output& out) {
    out.kind = value.is_sequence() ? PARITY_VALUE_SEQUENCE
               : value.is_optional() ? PARITY_VALUE_OPTIONAL
                                     : PARITY_VALUE_TENSOR;
    out.bytes.clear();
    bool serialized = false;
    {
      // A tensor's bytes go straight from its buffer (SerializeValue).
      google::protobuf::io::StringOutputStream stream(&out.bytes);
      serialized = SerializeValue(value, out.name, &stream);
    }
    // Protobuf parses no message of 2 GiB or more: one could not come back as an input.
    if (!serialized || out.bytes.size() > static_cast<size_t>(INT32_MAX)) {
      return Internal("output '", out.name, "' (", value.Description(), ") could not be serialized");
    }
    return Status::Ok();
  }

  // Declared before the evaluator, which holds a pointer into it.
  std::unique_ptr<Partition> partition_;
  std::unique_ptr<Evaluator> evaluator_;
  bool in_place_ = false;
  std::vector<Alias> aliases_;  // the model's valid annotations (in-place mode only)
  size_t in_place_aliases_ = 0;
  bool stateful_ = false;
  uint64_t runs_ = 0;
  std::vector<Binding> bindings_;
  std::unordered_map<std::string, Value> state_;            // by bound input
  std::unordered_map<std::string, int> input_index_;        // the graph's inputs by name
  std::unordered_map<std::string, Output> read_states_;     // ReadState's bytes, by input
  std::vector<Output> outputs_;
  std::vector<parity_value> output_values_;
  std::vector<std::string> node_names_;
  std::vector<std::string> node_devices_;
  std::vector<parity_node_placement> placement_;
  std::vector<EntryDecision> decisions_;
  std::vector<std::string> variant_entries_;
  std::vector<std::string> variant_chosen_;
  std::vector<parity_variant_choice> variants_;
  parity_session_report report_{};
};

}  // namespace parity::adapters
