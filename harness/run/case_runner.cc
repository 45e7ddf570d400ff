// One case through a worker, and the worker slots that survive their workers.
#include "harness/run/case_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <functional>
#include <set>

#include "harness/case_outcome.h"
#include "harness/run/placement_flops.h"
#include "harness/run/variant_check.h"
#include "harness/shape_facts.h"
#include "reference/eval/evaluator.h"
#include "reference/model/loader.h"
#include "reference/model/tensor_io.h"
#include "reference/ops/reference_registry.h"
#include "reference/variants/variants.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The inputs of one data set (those whose files ReadDataSets found) as
// protocol values, read straight from the files (no conversion: the worker
// gets the bytes the case holds).
StatusOr<std::vector<protocol::Value>> ReadInputs(const DataSet& set, const onnx::GraphProto& graph) {
  std::vector<protocol::Value> inputs;
  for (const int k : set.input_index) {
    const fs::path file = fs::path(set.dir) / ("input_" + std::to_string(k) + ".pb");
    PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadProtobufFile(file.string()));
    protocol::Value value;
    value.set_name(graph.input(k).name());
    const onnx::TypeProto& type = graph.input(k).type();
    bool parsed = false;
    if (type.has_sequence_type()) parsed = value.mutable_sequence()->ParseFromString(bytes);
    else if (type.has_optional_type()) parsed = value.mutable_optional()->ParseFromString(bytes);
    else parsed = value.mutable_tensor()->ParseFromString(bytes);
    if (!parsed) return InvalidArgument(file.string(), ": not a valid value for input '", graph.input(k).name(), "'");
    inputs.push_back(std::move(value));
  }
  return inputs;
}

// Why the reference evaluator refuses `inputs` of `model` as invalid
// (kInvalidArgument or kInvalidModel at run), or nullopt when it accepts
// them, cannot run the model, or runs out of its time.
std::optional<std::string> ReferenceRefusal(const LoadedModel& model, const std::vector<Value>& inputs,
                                            double timeout_seconds) {
  EvalOptions options;
  options.time_limit_seconds = timeout_seconds;
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(model, WithReferenceKernels(options));
  if (!evaluator.ok()) return std::nullopt;
  StatusOr<std::vector<Value>> ran = (*evaluator)->Run(inputs);
  if (ran.ok()) return std::nullopt;
  const StatusCode code = ran.status().code();
  if (code != StatusCode::kInvalidArgument && code != StatusCode::kInvalidModel) return std::nullopt;
  return ran.status().message();
}

// Every (domain, op_type) the backend must run: the graph's nodes, those of
// subgraphs, and those inside model-local functions instead of the calls.
void CollectOperators(const onnx::GraphProto& graph, const std::set<std::string>& local_functions,
                      std::set<std::string>& out) {
  for (const auto& node : graph.node()) {
    const std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    if (!local_functions.count(node.domain() + ":" + node.op_type())) out.insert(domain + ":" + node.op_type());
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) CollectOperators(attribute.g(), local_functions, out);
      for (const auto& g : attribute.graphs()) CollectOperators(g, local_functions, out);
    }
  }
}

// The first operator the adapter does not declare, or empty.
std::string UndeclaredOperator(const onnx::ModelProto& model, const protocol::Capabilities& caps) {
  std::set<std::string> local_functions, needed;
  for (const auto& f : model.functions()) local_functions.insert(f.domain() + ":" + f.name());
  CollectOperators(model.graph(), local_functions, needed);
  for (const auto& f : model.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = f.node();
    CollectOperators(body, local_functions, needed);
  }
  const std::set<std::string> declared(caps.operators().begin(), caps.operators().end());
  for (const std::string& op : needed) {
    const std::string domain = op.substr(0, op.find(':'));
    if (!declared.count(op) && !declared.count(domain + ":*")) return op;
  }
  return "";
}

std::string StatusCodeText(protocol::StatusCode code) { return protocol::StatusCode_Name(code); }

// A failed call: TIMEOUT when the worker did not answer in time, CRASH otherwise.
void RecordWorkerFailure(const Status& failure, const std::string& phase, WorkerProcess* worker, WorkerSlot& slot,
                         double timeout_seconds, CaseResult& r) {
  if (failure.code() == StatusCode::kResourceExhausted && worker->alive()) {
    // Nothing was sent: the case is too large for the protocol, which is
    // the harness's limit, not the backend's fault.
    r.state = CaseState::kError;
    r.message = StrCat(phase, ": ", failure.message());
    return;
  }
  if (failure.code() == StatusCode::kDeadlineExceeded) {
    r.state = CaseState::kTimeout;
    r.message = StrCat("no answer within the case's ", timeout_seconds, " s (stuck in ", phase,
                       "); the worker was killed");
  } else {
    r.state = CaseState::kCrash;
    r.message = StrCat("the worker failed during ", phase, ": ",
                       failure.code() == StatusCode::kResourceExhausted ? failure.message() + "; " : "",
                       failure.code() == StatusCode::kIoError ? failure.message() + "; " : "",
                       worker->EndDescription());
  }
  slot.Discard();
}

// The state an adapter's status code stands for (spec/results.md), the same
// from session creation and from a run.
CaseState StateOfCode(protocol::StatusCode code) {
  switch (code) {
    case protocol::UNSUPPORTED:
    case protocol::FALLBACK_REQUIRED: return CaseState::kUnsupported;
    case protocol::DEVICE_UNAVAILABLE: return CaseState::kSkip;
    default: return CaseState::kFail;
  }
}

// One run's copies and device memory (RunDone.cost), when the adapter
// reported them; added to the case's sum.
std::optional<RunCost> CostOf(const protocol::RunDone& done, CaseResult& r) {
  if (!done.has_cost()) return std::nullopt;
  const protocol::RunCost& c = done.cost();
  auto count = [](uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); };
  RunCost cost;
  cost.runs = 1;
  cost.to_device_copies = count(c.to_device_copies());
  cost.to_device_bytes = count(c.to_device_bytes());
  cost.to_host_copies = count(c.to_host_copies());
  cost.to_host_bytes = count(c.to_host_bytes());
  cost.device_bytes = count(c.device_bytes());
  cost.device_peak_bytes = count(c.device_peak_bytes());
  if (!r.run_cost) r.run_cost.emplace();
  r.run_cost->Add(cost);
  return cost;
}

// A successful answer of the wrong kind is a protocol breach: the worker is
// given up and the case is a CRASH.
void RecordWrongAnswer(const std::string& phase, const char* expected, WorkerSlot& slot, CaseResult& r) {
  r.state = CaseState::kCrash;
  r.message = StrCat("the worker broke the protocol during ", phase, ": its answer holds no ", expected);
  slot.Discard();
}

// Whether the adapter declared every element type the model's graph inputs
// and outputs use; the first undeclared one's name, or empty.
std::string UndeclaredDataType(const onnx::ModelProto& model, const protocol::Capabilities& caps) {
  if (caps.data_types_size() == 0) return "";
  const std::set<int32_t> declared(caps.data_types().begin(), caps.data_types().end());
  auto check = [&](const onnx::ValueInfoProto& v) -> std::string {
    if (!v.type().has_tensor_type()) return "";
    const int32_t t = v.type().tensor_type().elem_type();
    return declared.count(t) ? "" : StrCat(onnx::TensorProto::DataType_Name(t), " (", v.name(), ")");
  };
  for (const auto& v : model.graph().input()) {
    if (std::string t = check(v); !t.empty()) return t;
  }
  for (const auto& v : model.graph().output()) {
    if (std::string t = check(v); !t.empty()) return t;
  }
  return "";
}

// Releases session `id`; false when the worker failed the call (`r` then
// records the CRASH or TIMEOUT and the slot has dropped the worker).
bool ReleaseSession(uint64_t id, WorkerProcess* worker, WorkerSlot& slot, int64_t deadline_ms, double timeout_seconds,
                    CaseResult& r) {
  protocol::Request request;
  request.mutable_release_session()->set_session_id(id);
  StatusOr<protocol::Response> released = worker->Call(request, std::max<int64_t>(deadline_ms, kReleaseMinMs));
  if (released.ok()) return true;
  RecordWorkerFailure(released.status(), "session release", worker, slot, timeout_seconds, r);
  return false;
}

// Creates (cold and warm repeats, as `create` asks) and releases a session
// of the model with its variant entries stripped, so that reports can set
// what a model's entries cost at session creation against the same model
// without them. The case's verdict is settled before this: a failure here
// never changes r.state or r.message; it is written to
// r.load_ms_stripped_error instead. The measurement has its own budget of
// `budget_ms` (what is left of the case's time could be nothing), and a
// worker that crashes, hangs or breaks the protocol is dropped as in any
// other phase, so the next case starts with a fresh one.
void MeasureStrippedLoad(protocol::Request create, std::string stripped_model, WorkerProcess* worker,
                         WorkerSlot& slot, int64_t budget_ms, CaseResult& r) {
  const auto start = Clock::now();
  auto left_ms = [&] {
    return budget_ms - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  };
  // A failed call: the worker is given up unless nothing was sent.
  auto failed = [&](const Status& failure, const char* step) {
    if (failure.code() == StatusCode::kResourceExhausted && worker->alive()) {
      r.load_ms_stripped_error = StrCat(step, ": ", failure.message());
      return;
    }
    if (failure.code() == StatusCode::kDeadlineExceeded) {
      r.load_ms_stripped_error =
          StrCat(step, ": no answer within ", budget_ms / 1000.0, " s; the worker was killed");
    } else {
      r.load_ms_stripped_error = StrCat(step, ": the worker failed: ",
                                        failure.code() == StatusCode::kIoError ? failure.message() + "; " : "",
                                        worker->EndDescription());
    }
    slot.Discard();
  };
  // Only the model changes: model_dir, options and warm repeats stay the
  // case's, so the twin reads the same external data from the same folder.
  create.mutable_create_session()->set_model(std::move(stripped_model));
  StatusOr<protocol::Response> created = worker->Call(create, std::max<int64_t>(left_ms(), 1));
  if (!created.ok()) return failed(created.status(), "session creation");
  if (created->has_status() && created->status().code() != protocol::OK) {
    r.load_ms_stripped_error = StrCat("session creation: ", StatusCodeText(created->status().code()), ": ",
                                      created->status().message());
    return;
  }
  if (!created->has_session()) {
    r.load_ms_stripped_error = "session creation: the worker broke the protocol: its answer holds no session";
    slot.Discard();
    return;
  }
  r.load_ms_stripped_cold = created->session().load_ms_cold();
  r.load_ms_stripped_warm.assign(created->session().load_ms_warm().begin(), created->session().load_ms_warm().end());
  protocol::Request request;
  request.mutable_release_session()->set_session_id(created->session().session_id());
  StatusOr<protocol::Response> released = worker->Call(request, std::max<int64_t>(left_ms(), kReleaseMinMs));
  if (!released.ok()) failed(released.status(), "session release");
}

// What a stateful case's steps need besides the worker (spec/results.md,
// "Stateful cases").
struct StepRun {
  const LoadedModel& model;  // for the reference's runs of an error budget
  const onnx::ModelProto& proto;
  const std::vector<DataSet>& sets;
  std::vector<std::vector<protocol::Value>>& inputs;  // per step, every input file read; moved into the requests
  const std::vector<StateCarry>& carries;
  const std::vector<std::string>& output_names;
  const CaseInfo& info;
  const CaseRunSettings& settings;
  uint64_t session_id = 0;
};

// Runs the steps of a stateful case on one session: step 0 sends every input,
// later steps only those not carried, every run names the same bindings; the
// kept outputs come back at every step or only at the last (state_readback).
// Each step compares every returned output that has an expected file. Stops
// at the first step that decides the case. Returns false when the worker was
// given up (r says why), so that the session cannot be released.
bool RunSteps(StepRun& run, WorkerProcess* worker, WorkerSlot& slot, const std::function<int64_t()>& left_ms,
              CaseResult& r) {
  const CaseRunSettings& settings = run.settings;
  r.state_readback = StateReadbackName(settings.state_readback);
  std::set<std::string> carried_inputs;
  std::vector<bool> bound(run.output_names.size(), false);
  for (const StateCarry& c : run.carries) {
    carried_inputs.insert(c.input);
    bound[static_cast<size_t>(c.output_index)] = true;
  }
  // The outputs of a run, in the protocol's order: the unbound ones in graph
  // order, then (when asked for) the bound ones in binding order.
  std::vector<int> unbound_outputs;
  for (size_t k = 0; k < bound.size(); ++k) {
    if (!bound[k]) unbound_outputs.push_back(static_cast<int>(k));
  }
  // Dims for the tolerance formulas: a carried input is not sent after step 0;
  // its dims are those of the value it carries, when that came back.
  KnownDims dims;
  KnownInts ints;
  for (size_t s = 0; s < run.sets.size(); ++s) {
    const DataSet& set = run.sets[s];
    const bool readback = settings.state_readback == StateReadback::kEvery || s + 1 == run.sets.size();
    const std::string phase = StrCat("step ", s, " (", fs::path(set.dir).filename().string(), ")");
    protocol::Request request;
    protocol::Run* call = request.mutable_run();
    call->set_session_id(run.session_id);
    for (const StateCarry& c : run.carries) {
      protocol::StateBinding* keep = call->add_keep();
      keep->set_output(c.output);
      keep->set_input(c.input);
    }
    call->set_return_kept(readback);
    for (protocol::Value& v : run.inputs[s]) {
      if (s > 0 && carried_inputs.count(v.name())) continue;  // the state feeds it
      if (v.has_tensor()) NoteKnownTensor(v.name(), v.tensor(), dims, ints);
      *call->add_inputs() = std::move(v);
    }
    const ShapeFacts facts = ShapeFactsFor(run.proto, r.op, dims, ints);
    const OutputFacts output_facts = OutputOperatorFacts(run.info, run.proto, dims, ints);
    StatusOr<protocol::Response> ran = worker->Call(request, std::max<int64_t>(left_ms(), 1));
    if (!ran.ok()) {
      RecordWorkerFailure(ran.status(), phase, worker, slot, settings.timeout_seconds, r);
      return false;
    }
    if (ran->has_status() && ran->status().code() != protocol::OK) {
      const protocol::StatusCode code = ran->status().code();
      r.state = StateOfCode(code);
      r.message = StrCat(phase, ": ", StatusCodeText(code), ": ", ran->status().message());
      return true;
    }
    if (!ran->has_run()) {
      RecordWrongAnswer(phase, "run result", slot, r);
      return false;
    }
    const protocol::RunDone& done = ran->run();
    r.run_ms += done.run_ms();
    StepRecord record;
    record.step = static_cast<int>(s);
    record.run_ms = done.run_ms();
    if (done.has_run_peak_rss_kb()) record.run_peak_rss_kb = static_cast<int64_t>(done.run_peak_rss_kb());
    if (done.has_rss_kb()) record.rss_kb = static_cast<int64_t>(done.rss_kb());
    record.cost = CostOf(done, r);
    std::vector<int> returned = unbound_outputs;
    if (readback) {
      for (const StateCarry& c : run.carries) returned.push_back(c.output_index);
    }
    if (static_cast<size_t>(done.outputs_size()) != returned.size()) {
      r.steps.push_back(std::move(record));
      r.state = CaseState::kFail;
      r.message = StrCat(phase, ": produced ", done.outputs_size(), " outputs, expected ", returned.size(),
                         readback ? " (every output, the kept ones included)" : " (the outputs that are not kept)");
      return true;
    }
    // Outputs are matched by name when named, else by position in the protocol's order.
    DataSet compared;
    compared.dir = set.dir;
    std::vector<Value> actual;
    for (size_t i = 0; i < returned.size(); ++i) {
      const int g = returned[i];
      const std::string& name = run.output_names[static_cast<size_t>(g)];
      const protocol::Value* v = &done.outputs(static_cast<int>(i));
      for (const auto& candidate : done.outputs()) {
        if (candidate.name() == name) v = &candidate;
      }
      StatusOr<Value> value = ValueFromProtocol(*v);
      if (!value.ok()) {
        r.steps.push_back(std::move(record));
        r.state = CaseState::kFail;
        r.message = StrCat(phase, ": output ", g, " '", name, "' ", value.status().message());
        return true;
      }
      for (const StateCarry& c : run.carries) {
        if (c.output_index == g) NoteKnownValue(c.input, *value, dims, ints);
      }
      const auto at = std::find(set.output_index.begin(), set.output_index.end(), g);
      if (at == set.output_index.end()) continue;  // no expected file at this step
      compared.outputs.push_back(set.outputs[static_cast<size_t>(at - set.output_index.begin())]);
      compared.output_index.push_back(g);
      actual.push_back(std::move(value).value());
      record.compared.push_back(name);
    }
    r.steps.push_back(std::move(record));
    if (compared.outputs.empty()) continue;
    const std::string before = r.message;
    // The reference can run a step alone only where its files hold every
    // input (step 0, or a step whose carried inputs are written out too).
    std::optional<ReferenceRuns> runs;
    if (set.inputs.size() == static_cast<size_t>(run.proto.graph().input_size())) {
      runs.emplace(run.model, set.inputs, settings.timeout_seconds);
    }
    const bool go_on = CompareDataSet(compared, actual, run.output_names, *settings.policy, facts, run.info,
                                      settings.adapter, r, output_facts, runs ? &*runs : nullptr);
    if (r.message != before) r.message = StrCat(phase, ": ", r.message);
    // The step's largest ULP error ("inf"/"nan" when not finite).
    double worst = 0;
    for (const auto& out : r.outputs) {
      const auto& ulp = out.contains("max_ulp_error") ? out["max_ulp_error"] : nlohmann::json();
      worst = ulp.is_number() ? std::max(worst, ulp.get<double>()) : std::numeric_limits<double>::infinity();
    }
    r.steps.back().max_ulp_error = worst;
    if (!go_on) return true;
  }
  return true;
}

}  // namespace

StatusOr<Value> ValueFromProtocol(const protocol::Value& v) {
  const int kinds = v.has_tensor() + v.has_sequence() + v.has_optional();
  if (kinds != 1) return InvalidArgument("holds ", kinds, " of tensor, sequence and optional; exactly one is due");
  if (v.has_tensor()) {
    if (v.tensor().data_location() == onnx::TensorProto::EXTERNAL) {
      return InvalidArgument("is stored as external data, which an output may not be");
    }
    PARITY_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(v.tensor()));
    return Value::FromTensor(std::move(t));
  }
  if (v.has_sequence()) return ValueFromSequenceProto(v.sequence());
  return ValueFromOptionalProto(v.optional());
}

const char* StateReadbackName(StateReadback readback) {
  return readback == StateReadback::kLast ? "last" : "every";
}

StatusOr<WorkerProcess*> WorkerSlot::Get(int64_t deadline_ms) {
  if (worker_ && worker_->CheckAlive()) return worker_.get();
  if (worker_) ++replaced_;  // it ended while idle; the next case gets a new one
  worker_.reset();
  PARITY_ASSIGN_OR_RETURN(worker_, WorkerProcess::Start(launch_));
  protocol::Request hello;
  hello.mutable_hello()->set_protocol_version(protocol::PROTOCOL_VERSION);
  StatusOr<protocol::Response> answer = worker_->Call(hello, deadline_ms);
  if (!answer.ok()) {
    const std::string how = answer.status().code() == StatusCode::kUnavailable ? worker_->EndDescription()
                                                                              : answer.status().message();
    worker_.reset();
    return Status(StatusCode::kUnavailable, StrCat("the worker of adapter '", launch_.adapter, "' did not start: ", how));
  }
  if (answer->has_status() && answer->status().code() != protocol::OK) {
    worker_.reset();
    return Status(StatusCode::kUnavailable, StrCat("the worker of adapter '", launch_.adapter, "' refused the handshake: ",
                                                   answer->status().message()));
  }
  info_ = answer->info();
  return worker_.get();
}

int64_t WorkerSlot::RetireIfOverMemory() {
  if (!worker_ || launch_.memory_limit_kb <= 0) return 0;
  const int64_t resident = worker_->ResidentKb();
  if (resident <= launch_.memory_limit_kb) return 0;
  Shutdown();
  ++replaced_;
  return resident;
}

void WorkerSlot::Shutdown() {
  if (worker_) worker_->Shutdown();
  worker_.reset();
}

std::string PlannedOperator(CaseInfo info) {
  if (!ReadCaseMeta(info).ok()) return "";
  StatusOr<LoadedModel> model = LoadModelFile((fs::path(info.dir) / "model.onnx").string());
  return model.ok() ? CaseOperator(info, *model->proto) : "";
}

CaseResult RunCase(CaseInfo info, WorkerSlot& slot, const CaseRunSettings& settings) {
  CaseResult r;
  r.name = info.name;
  r.suite = info.suite;
  r.dir = info.dir;
  r.adapter = settings.adapter;
  r.device = settings.device;
  r.repro = settings.repro_prefix + " --cases " + ShellQuote(info.dir) + " --out " +
            ShellQuote("/tmp/parity-repro/" + info.name) + " --fresh";
  r.state = CaseState::kError;
  auto error = [&](const Status& s) {
    r.state = CaseState::kError;
    r.message = s.ToString();
    return r;
  };

  // Everything from the case's files is read before the worker's clock starts.
  if (Status meta = ReadCaseMeta(info); !meta.ok()) return error(meta);
  StatusOr<std::string> model_bytes = ReadProtobufFile((fs::path(info.dir) / "model.onnx").string());
  if (!model_bytes.ok()) return error(model_bytes.status());
  StatusOr<LoadedModel> model = LoadModelBytes(*model_bytes, (fs::path(info.dir) / "model.onnx").string(), info.dir);
  if (!model.ok()) return error(model.status());
  // External data that leaves the case's folder, or lies beyond its file, is
  // a broken case: ERROR here, before any adapter is asked to read it.
  if (Status external = CheckModelExternalData(*model); !external.ok()) return error(external);
  const onnx::ModelProto& proto = *model->proto;
  r.op = CaseOperator(info, proto);
  // The inputs are decoded and checked against the graph's declared types
  // here, so that a broken file ends the case ERROR, named, instead of being
  // blamed on the backend that refuses it; the worker then gets the files'
  // bytes as they are.
  StatusOr<std::vector<DataSet>> sets = ReadDataSets(info, proto, /*read_inputs=*/true);
  if (!sets.ok()) return error(sets.status());
  std::vector<std::vector<protocol::Value>> inputs;
  for (const DataSet& set : *sets) {
    StatusOr<std::vector<protocol::Value>> in = ReadInputs(set, proto.graph());
    if (!in.ok()) return error(in.status());
    inputs.push_back(std::move(in).value());
  }
  std::vector<std::string> output_names;
  for (const auto& o : proto.graph().output()) output_names.push_back(o.name());

  if (sets->empty()) return error(InvalidArgument(info.dir, ": no test_data_set_N folder: nothing to compare"));
  const bool stateful = IsStateful(info);
  StatusOr<std::vector<StateCarry>> carries = ReadStepCarries(info, proto.graph());
  if (!carries.ok()) return error(carries.status());
  if (stateful) {
    // A step may leave out every carried output's file, but some step must compare something.
    if (std::all_of(sets->begin(), sets->end(), [](const DataSet& set) { return set.outputs.empty(); })) {
      return error(InvalidArgument(info.dir, ": no step has an output_K.pb: nothing to compare"));
    }
  } else {
    for (const DataSet& set : *sets) {
      if (set.outputs.empty()) return error(InvalidArgument(set.dir, ": no output_K.pb: nothing to compare"));
    }
  }
  bool allow_fallback = settings.allow_fallback;
  if (info.case_file.fallback == FallbackRule::kForbidden) allow_fallback = false;
  if (settings.capabilities && settings.capabilities->declared()) {
    const protocol::Capabilities& caps = *settings.capabilities;
    std::string missing = UndeclaredOperator(proto, caps);
    if (missing.empty()) missing = UndeclaredDataType(proto, caps);
    if (missing.empty() && !allow_fallback && !caps.can_forbid_fallback()) missing = "running with fallback forbidden";
    if (!missing.empty()) {
      r.state = CaseState::kUnsupported;
      r.message = StrCat("the adapter does not declare ", missing);
      return r;
    }
  }
  // Variant targets, and for a model with entries the selection to expect
  // and the stripped twin, all before the worker's clock starts.
  std::vector<std::string> declared_targets;
  if (settings.capabilities) {
    declared_targets.assign(settings.capabilities->variant_targets().begin(),
                            settings.capabilities->variant_targets().end());
  }
  StatusOr<std::vector<std::string>> targets = VariantTargetsFor(info, settings.variant_targets, declared_targets);
  if (!targets.ok()) return error(targets.status());
  const bool has_variants = HasVariants(proto);
  std::string stripped_model;
  if (has_variants) {
    StatusOr<std::vector<std::string>> expected = ExpectedSelection(info, *model, *targets, declared_targets);
    if (!expected.ok()) return error(expected.status());
    r.variants_expected = std::move(expected).value();
    if (!StripVariants(proto).SerializeToString(&stripped_model)) {
      return error(Internal(info.dir, "/model.onnx: the model without variant entries could not be serialized"));
    }
  }

  const auto start = Clock::now();
  const int64_t budget_ms = static_cast<int64_t>(settings.timeout_seconds * 1000);
  auto left_ms = [&] {
    return budget_ms - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  };
  StatusOr<WorkerProcess*> worker = slot.Get(kWorkerStartMs);
  if (!worker.ok()) return error(worker.status());

  protocol::Request create;
  auto* c = create.mutable_create_session();
  c->set_model(*model_bytes);
  // External data locations are relative to the case's folder
  // (spec/protocol/README.md, "External data"); MeasureStrippedLoad sends it too.
  c->set_model_dir(fs::absolute(info.dir).lexically_normal().string());
  c->set_warm_repeats(static_cast<uint32_t>(settings.warm_repeats));
  c->mutable_options()->set_device(settings.device);
  c->mutable_options()->set_allow_fallback(allow_fallback);
  c->mutable_options()->set_case_name(info.name);
  for (const std::string& t : *targets) c->mutable_options()->add_variant_targets(t);
  r.variant_targets = *targets;
  StatusOr<protocol::Response> created = (*worker)->Call(create, std::max<int64_t>(left_ms(), 1));
  if (!created.ok()) {
    RecordWorkerFailure(created.status(), "session creation", *worker, slot, settings.timeout_seconds, r);
    return r;
  }
  if (created->has_status() && created->status().code() != protocol::OK) {
    const protocol::StatusCode code = created->status().code();
    r.state = StateOfCode(code);
    r.message = StrCat("session creation: ", StatusCodeText(code), ": ", created->status().message());
    return r;
  }
  if (!created->has_session()) {
    RecordWrongAnswer("session creation", "session", slot, r);
    return r;
  }
  const protocol::SessionCreated& session = created->session();
  r.load_ms_cold = session.load_ms_cold();
  r.load_ms_warm.assign(session.load_ms_warm().begin(), session.load_ms_warm().end());
  if (session.has_compile_ms_cold()) {
    r.compile_ms_cold = session.compile_ms_cold();
    r.compile_ms_warm.assign(session.compile_ms_warm().begin(), session.compile_ms_warm().end());
    if (session.has_kernels_compiled()) r.kernels_compiled = static_cast<int64_t>(session.kernels_compiled());
    if (session.has_kernels_deferred()) r.kernels_deferred = static_cast<int64_t>(session.kernels_deferred());
  }
  for (const auto& v : session.variants()) r.variants.push_back({{"entry", v.entry()}, {"chosen", v.chosen()}});
  std::string fell_back;
  std::vector<std::pair<std::string, std::string>> placed;
  for (const auto& p : session.placement()) {
    placed.emplace_back(p.node(), p.device());
    r.placement[p.device()] = r.placement.value(p.device(), 0) + 1;
    if (!allow_fallback && p.device() != settings.device) {
      fell_back += (fell_back.empty() ? "" : ", ") + p.node() + " on " + p.device();
    }
  }

  if (!placed.empty()) {
    // At the first data set's (the first step's) actual input dims.
    KnownDims dims;
    KnownInts ints;
    for (const auto& v : inputs.front()) if (v.has_tensor()) NoteKnownTensor(v.name(), v.tensor(), dims, ints);
    const PlacementFlops flops = CountPlacementFlops(proto.graph(), placed, dims);
    r.placement_flops = nlohmann::json::object();
    for (const auto& [device, count] : flops.by_device) r.placement_flops[device] = count;
    r.placement_flops_unknown = flops.unknown;
  }

  auto release = [&] {
    return ReleaseSession(session.session_id(), *worker, slot, left_ms(), settings.timeout_seconds, r);
  };
  if (!fell_back.empty()) {
    r.state = CaseState::kFellBack;
    r.message = StrCat("fallback was forbidden, but the session places nodes off ", settings.device, ": ", fell_back);
    release();
    return r;
  }

  r.state = CaseState::kPass;
  if (stateful) {
    StepRun steps{*model, proto, *sets, inputs, *carries, output_names, info, settings, session.session_id()};
    if (!RunSteps(steps, *worker, slot, left_ms, r)) return r;
  }
  for (size_t s = 0; !stateful && s < sets->size(); ++s) {
    protocol::Request request;
    request.mutable_run()->set_session_id(session.session_id());
    KnownDims dims;
    KnownInts ints;
    for (const auto& v : inputs[s]) if (v.has_tensor()) NoteKnownTensor(v.name(), v.tensor(), dims, ints);
    const ShapeFacts facts = ShapeFactsFor(proto, r.op, dims, ints);
    const OutputFacts output_facts = OutputOperatorFacts(info, proto, dims, ints);
    for (auto& v : inputs[s]) *request.mutable_run()->add_inputs() = std::move(v);
    StatusOr<protocol::Response> ran = (*worker)->Call(request, std::max<int64_t>(left_ms(), 1));
    const std::string phase = StrCat("run of ", fs::path((*sets)[s].dir).filename().string());
    if (!ran.ok()) {
      RecordWorkerFailure(ran.status(), phase, *worker, slot, settings.timeout_seconds, r);
      return r;
    }
    if (ran->has_status() && ran->status().code() != protocol::OK) {
      const protocol::StatusCode code = ran->status().code();
      r.state = StateOfCode(code);
      r.message = StrCat(phase, ": ", StatusCodeText(code), ": ", ran->status().message());
      if (r.state == CaseState::kFail) {
        // Inputs that parse and fit their declared types may still be
        // invalid for the model (an axis out of range, an index past the
        // end), whatever code the adapter gives it. The reference is the
        // judge: if it refuses them too, the case is broken, not the backend.
        if (std::optional<std::string> refusal = ReferenceRefusal(*model, (*sets)[s].inputs, settings.timeout_seconds)) {
          r.state = CaseState::kError;
          r.message = StrCat(phase, ": the case's inputs are invalid: the reference refuses them too (", *refusal,
                             "); the adapter said: ", ran->status().message());
        }
      }
      break;
    }
    if (!ran->has_run()) {
      RecordWrongAnswer(phase, "run result", slot, r);
      return r;
    }
    r.run_ms += ran->run().run_ms();
    CostOf(ran->run(), r);
    // Outputs are matched to the graph's outputs by name when named, else by position.
    std::vector<Value> actual;
    bool unreadable = false;
    for (size_t k = 0; k < output_names.size() && k < static_cast<size_t>(ran->run().outputs_size()); ++k) {
      const protocol::Value* v = &ran->run().outputs(static_cast<int>(k));
      for (const auto& candidate : ran->run().outputs()) {
        if (candidate.name() == output_names[k]) v = &candidate;
      }
      StatusOr<Value> value = ValueFromProtocol(*v);
      if (!value.ok()) {
        r.state = CaseState::kFail;
        r.message = StrCat(phase, ": output ", k, " '", output_names[k], "' ", value.status().message());
        unreadable = true;
        break;
      }
      actual.push_back(std::move(value).value());
    }
    if (unreadable) break;
    if (static_cast<size_t>(ran->run().outputs_size()) != (*sets)[s].outputs.size()) {
      r.state = CaseState::kFail;
      r.message = StrCat(phase, ": produced ", ran->run().outputs_size(), " outputs, expected ", (*sets)[s].outputs.size());
      break;
    }
    ReferenceRuns runs(*model, (*sets)[s].inputs, settings.timeout_seconds);
    if (!CompareDataSet((*sets)[s], actual, output_names, *settings.policy, facts, info, settings.adapter, r,
                        output_facts, &runs)) {
      break;
    }
  }
  // The outputs are always compared with the main graph's; a backend must
  // also have selected what its targets call for (spec/variants.md).
  if (r.variants_expected) {
    // Named as checked: an empty list sent stands for the declared targets.
    StatusOr<std::vector<std::string>> reported = ReportedSelection(r.variants, CollectEntries(proto));
    const std::string mismatch =
        reported.ok() ? SelectionMismatch(targets->empty() ? declared_targets : *targets, *reported,
                                          *r.variants_expected)
                      : reported.status().message();
    if (!mismatch.empty() && (r.state == CaseState::kPass || r.state == CaseState::kMistrusted)) {
      r.state = CaseState::kFail;
      r.message = mismatch;
    } else if (!mismatch.empty() && r.state == CaseState::kFail) {
      r.message = mismatch + "; " + r.message;
    }
  }
  if (!release()) return r;
  if (has_variants) {
    // Its own budget: the case's time may be spent, and its verdict stands.
    MeasureStrippedLoad(std::move(create), std::move(stripped_model), *worker, slot, budget_ms, r);
  }
  return r;
}

}  // namespace parity
