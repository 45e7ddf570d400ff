// Graph execution: scopes, topological order, kernel dispatch, function
// expansion and subgraphs, and the in-place mode of aliased inputs.
#include "reference/eval/evaluator.h"

#include <algorithm>
#include <unordered_set>

#include "reference/eval/in_place.h"
#include "reference/model/graph.h"
#include "reference/model/validator.h"

namespace parity {

const char* ArithmeticName(Arithmetic arithmetic) {
  switch (arithmetic) {
    case Arithmetic::kReference: return "reference";
    case Arithmetic::kWide: return "wide";
    case Arithmetic::kConventional: return "conventional";
  }
  return "?";
}

namespace {

// `value` with its float32, float16 and bfloat16 tensors as float64 holding
// the same numbers (Arithmetic::kWide); other values are returned as they are.
StatusOr<Value> Widen(const Value& value) {
  if (value.is_tensor()) {
    const Tensor& t = value.tensor();
    if (!IsFloat32OrHalf(t.dtype())) return value;
    PARITY_ASSIGN_OR_RETURN(Tensor wide, Tensor::FromDoubles(DataType::kDouble, t.shape(), t.ToDoubles()));
    return Value::FromTensor(std::move(wide));
  }
  if (value.is_sequence()) {
    std::vector<Value> elements;
    elements.reserve(value.sequence().size());
    for (const Value& e : value.sequence()) {
      PARITY_ASSIGN_OR_RETURN(Value w, Widen(e));
      elements.push_back(std::move(w));
    }
    const DataType kept = value.sequence_element_type();
    return Value::FromSequence(std::move(elements), IsFloat32OrHalf(kept) ? DataType::kDouble : kept);
  }
  if (value.is_optional() && value.has_element()) {
    PARITY_ASSIGN_OR_RETURN(Value w, Widen(value.element()));
    return Value::SomeOptional(std::move(w));
  }
  return value;
}

}  // namespace

struct Evaluator::Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, Value> values;
  // The graph's initializers, when they are read where the prepared graph
  // keeps them instead of being copied into `values` at each run; a value
  // of the same name in `values` (a graph input given) hides one.
  const std::unordered_map<std::string, Value>* initializers = nullptr;

  const Value* Find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
      if (s->initializers) {
        it = s->initializers->find(name);
        if (it != s->initializers->end()) return &it->second;
      }
    }
    return nullptr;
  }
};

struct Evaluator::PreparedGraph {
  std::vector<const onnx::NodeProto*> order;
  std::unordered_map<std::string, Value> initializers;
};

struct Evaluator::FunctionBody {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<const onnx::NodeProto*> order;  // points into `nodes`
};

namespace {

// Replaces attribute references (ref_attr_name) in a function body node with
// the caller's attribute, or the function's default, or drops them.
void ResolveAttributeReferences(onnx::NodeProto* node, const onnx::NodeProto& call,
                                const onnx::FunctionProto& function) {
  auto* attrs = node->mutable_attribute();
  for (int i = 0; i < attrs->size();) {
    onnx::AttributeProto* a = attrs->Mutable(i);
    if (a->has_g()) {
      for (auto& n : *a->mutable_g()->mutable_node()) ResolveAttributeReferences(&n, call, function);
    }
    for (auto& g : *a->mutable_graphs()) {
      for (auto& n : *g.mutable_node()) ResolveAttributeReferences(&n, call, function);
    }
    if (a->ref_attr_name().empty()) {
      ++i;
      continue;
    }
    const onnx::AttributeProto* source = nullptr;
    for (const auto& c : call.attribute()) {
      if (c.name() == a->ref_attr_name()) source = &c;
    }
    if (!source) {
      for (const auto& d : function.attribute_proto()) {
        if (d.name() == a->ref_attr_name()) source = &d;
      }
    }
    if (!source) {
      attrs->DeleteSubrange(i, 1);
      continue;
    }
    const std::string name = a->name();
    *a = *source;
    a->set_name(name);
    a->clear_ref_attr_name();
    ++i;
  }
}

// Blanks every use of the names in `absent` (formal inputs the call leaves
// out), so that body nodes see them as absent optional inputs, as when ONNX
// inlines a function. Subgraphs are included: they read the body's scope.
void BlankAbsentInputs(onnx::NodeProto* node, const std::unordered_set<std::string>& absent) {
  for (auto& in : *node->mutable_input()) {
    if (absent.count(in)) in.clear();
  }
  for (auto& a : *node->mutable_attribute()) {
    if (a.has_g()) {
      for (auto& n : *a.mutable_g()->mutable_node()) BlankAbsentInputs(&n, absent);
    }
    for (auto& g : *a.mutable_graphs()) {
      for (auto& n : *g.mutable_node()) BlankAbsentInputs(&n, absent);
    }
  }
}

}  // namespace

Evaluator::Evaluator(LoadedModel model, EvalOptions options) : model_(std::move(model)), options_(options) {}

StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(LoadedModel model, EvalOptions options) {
  if (!model.proto) return Internal("Evaluator::Create: no model");
  // The kernels come from the caller (the reference's are in
  // reference/ops/reference_registry.h): this layer knows no operator.
  if (!options.registry) return Internal("Evaluator::Create: EvalOptions.registry is not set");
  // Never run a model that breaks the IR's rules: cycles, unknown values and
  // sizes over the memory limit are refused here, before any allocation.
  if (!options.functions) {
    PARITY_ASSIGN_OR_RETURN(options.functions, FunctionLibrary::Standard());
  }
  ValidationOptions validation;
  // An operator newer than the pinned onnx is runnable when spec/functions/ defines it.
  validation.has_function_body = [functions = options.functions](std::string_view domain, std::string_view op) {
    return functions->Find(std::string(domain), std::string(op), "") != nullptr;
  };
  std::vector<Status> problems = ValidateModel(model, validation);
  if (!problems.empty()) {
    // An unknown operator beside real problems is not the model's only fault: INVALID_MODEL wins.
    const auto invalid = std::find_if(problems.begin(), problems.end(),
                                      [](const Status& p) { return p.code() != StatusCode::kUnimplemented; });
    const Status& first = invalid != problems.end() ? *invalid : problems[0];
    std::string message = first.message();
    if (problems.size() > 1) message += StrCat(" (and ", problems.size() - 1, " more problems)");
    return Status(first.code(), message);
  }
  std::unique_ptr<Evaluator> e(new Evaluator(std::move(model), options));
  const onnx::ModelProto& proto = *e->model_.proto;
  for (const auto& opset : proto.opset_import()) {
    e->model_opsets_[std::string(CanonicalDomain(opset.domain()))] = opset.version();
  }
  for (const auto& f : proto.functions()) {
    e->local_functions_[{std::string(CanonicalDomain(f.domain())), f.name(), f.overload()}] = &f;
  }
  return e;
}

StatusOr<std::shared_ptr<const Evaluator::PreparedGraph>> Evaluator::Prepare(const onnx::GraphProto& graph) const {
  {
    std::lock_guard<std::mutex> lock(prepared_mutex_);
    auto it = prepared_.find(&graph);
    if (it != prepared_.end()) return it->second;
  }
  auto prepared = std::make_shared<PreparedGraph>();
  const std::string where = model_.name + ": graph '" + graph.name() + "'";
  PARITY_ASSIGN_OR_RETURN(prepared->order, graph::TopologicalOrder(graph.node(), where));
  ExternalDataPolicy policy{model_.base_dir};
  for (const auto& init : graph.initializer()) {
    StatusOr<Tensor> t = TensorFromProto(init, policy);
    if (!t.ok()) return t.status().WithContext(where + ": initializer '" + init.name() + "'");
    // Two initializers of one name: the last one holds, as when they were bound in turn.
    prepared->initializers.insert_or_assign(init.name(), Value::FromTensor(std::move(t).value()));
  }
  if (graph.sparse_initializer_size() > 0) {
    return Unimplemented(where, ": sparse initializers are not supported");
  }
  std::lock_guard<std::mutex> lock(prepared_mutex_);
  prepared_.emplace(&graph, prepared);
  return std::shared_ptr<const PreparedGraph>(prepared);
}

thread_local std::chrono::steady_clock::time_point Evaluator::deadline_;

Status Evaluator::CheckDeadline() const {
  if (options_.time_limit_seconds > 0 && std::chrono::steady_clock::now() > deadline_) {
    return DeadlineExceeded(model_.name, ": the run took longer than its limit of ", options_.time_limit_seconds,
                            " s");
  }
  return Status::Ok();
}

StatusOr<std::vector<Value>> Evaluator::Run(const std::vector<Value>& inputs) const {
  const onnx::GraphProto& graph = model_.proto->graph();
  if (options_.time_limit_seconds > 0) {
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(options_.time_limit_seconds));
  }
  return RunGraph(graph, inputs, nullptr, model_opsets_, 0);
}

StatusOr<std::vector<Value>> Evaluator::RunGraph(const onnx::GraphProto& graph, const std::vector<Value>& inputs,
                                                  const Scope* outer, const OpsetMap& opsets, int depth) const {
  if (depth > options_.max_call_depth) {
    return InvalidModel(model_.name, ": subgraphs and function calls nest deeper than ", options_.max_call_depth);
  }
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<const PreparedGraph> prepared, Prepare(graph));
  Scope scope;
  scope.parent = outer;
  const bool wide = options_.arithmetic == Arithmetic::kWide;
  const bool top_level = outer == nullptr;
  // In-place mode reads and rebinds every value by name in `values`, and
  // wide arithmetic widens the initializers: both take copies. Otherwise
  // the run reads the prepared graph's own, and a step copies none.
  const bool in_place = top_level && !options_.in_place.empty();
  if (wide || in_place) {
    for (const auto& [name, value] : prepared->initializers) {
      if (wide) {
        PARITY_ASSIGN_OR_RETURN(scope.values[name], Widen(value));
      } else {
        scope.values[name] = value;
      }
    }
  } else {
    scope.initializers = &prepared->initializers;
  }
  if (inputs.size() > static_cast<size_t>(graph.input_size())) {
    return InvalidArgument(model_.name, ": graph '", graph.name(), "' takes ", graph.input_size(),
                           " inputs, got ", inputs.size());
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    const std::string& name = graph.input(i).name();
    if (static_cast<size_t>(i) < inputs.size() && wide) {
      PARITY_ASSIGN_OR_RETURN(scope.values[name], Widen(inputs[i]));
    } else if (static_cast<size_t>(i) < inputs.size()) {
      scope.values[name] = inputs[i];
    } else if (top_level && !scope.values.count(name) &&
               !(scope.initializers && scope.initializers->count(name))) {
      return InvalidArgument(model_.name, ": graph input '", name, "' was given no value");
    }
  }
  if (in_place) {
    // In-place mode: the aliased inputs' buffers (the caller's tensors) are
    // written by their outputs' writers; see EvalOptions::in_place.
    // The plan depends only on the main graph and the options: made on the
    // first run and kept, so that a decode step does not index the graph again.
    std::shared_ptr<const InPlacePlan> plan;
    {
      std::lock_guard<std::mutex> lock(prepared_mutex_);
      plan = in_place_plan_;
    }
    if (!plan) {
      PARITY_ASSIGN_OR_RETURN(InPlacePlan made, PlanInPlace(graph, prepared->order, options_.in_place,
                                                            options_.writers_first, model_.name));
      plan = std::make_shared<const InPlacePlan>(std::move(made));
      std::lock_guard<std::mutex> lock(prepared_mutex_);
      in_place_plan_ = plan;
    }
    InPlaceContext context;
    context.registry = options_.registry;
    context.node_kernels = options_.node_kernels;
    context.opsets = &opsets;
    context.run_node = [&](const onnx::NodeProto& node) { return RunNode(node, scope, opsets, depth); };
    context.check_deadline = [this] { return CheckDeadline(); };
    context.model_name = model_.name;
    PARITY_RETURN_IF_ERROR(RunInPlace(graph, inputs.size(), options_.in_place, *plan, scope.values, context));
  } else {
    PARITY_RETURN_IF_ERROR(RunNodes(prepared->order, scope, opsets, depth));
  }
  std::vector<Value> outputs;
  outputs.reserve(graph.output_size());
  for (const auto& o : graph.output()) {
    const Value* v = scope.Find(o.name());
    if (!v) return InvalidModel(model_.name, ": graph '", graph.name(), "' output '", o.name(), "' was not computed");
    outputs.push_back(*v);
  }
  return outputs;
}

Status Evaluator::RunNodes(const std::vector<const onnx::NodeProto*>& order, Scope& scope, const OpsetMap& opsets,
                           int depth) const {
  for (const onnx::NodeProto* node : order) {
    PARITY_RETURN_IF_ERROR(CheckDeadline());
    PARITY_RETURN_IF_ERROR(RunNode(*node, scope, opsets, depth));
  }
  return Status::Ok();
}

Status Evaluator::RunNode(const onnx::NodeProto& node, Scope& scope, const OpsetMap& opsets, int depth) const {
  std::vector<const Value*> inputs;
  inputs.reserve(node.input_size());
  for (const auto& name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const Value* v = scope.Find(name);
    if (!v) return InvalidModel(model_.name, ": ", graph::DescribeNode(node), " reads '", name, "', which has no value");
    inputs.push_back(v);
  }
  // Trailing absent inputs are the same as inputs not given at all.
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();

  const std::string_view domain = CanonicalDomain(node.domain());
  StatusOr<std::vector<Value>> outputs = Status(StatusCode::kInternal, "no dispatch");
  // Most models define no local function: no key is built for them.
  auto local = local_functions_.empty()
                   ? local_functions_.end()
                   : local_functions_.find({std::string(domain), node.op_type(), node.overload()});
  auto opset_it = opsets.find(domain);
  const Kernel* node_kernel = options_.node_kernels ? options_.node_kernels->Find(node) : nullptr;
  // What a kernel's subgraphs run in. The lambda captures one pointer, so
  // that std::function keeps it in place instead of allocating per node.
  struct SubgraphCall {
    const Evaluator* evaluator;
    Scope* scope;
    const OpsetMap* opsets;
    int depth;
  } call{this, &scope, &opsets, depth};
  const auto run_subgraph = [&call](const onnx::GraphProto& g,
                                    const std::vector<Value>& in) -> StatusOr<std::vector<Value>> {
    PARITY_ASSIGN_OR_RETURN(std::vector<Value> out, call.evaluator->RunGraph(g, in, call.scope, *call.opsets,
                                                                             call.depth + 1));
    // A body's output may name an outer value a backend made on its device;
    // the kernel that runs the body (Loop, Scan) reads it on the host.
    if (const NodeKernels* kernels = call.evaluator->options_.node_kernels; kernels && kernels->host_reads) {
      for (const Value& v : out) PARITY_RETURN_IF_ERROR(kernels->HostReads(v));
    }
    return out;
  };
  if (!node_kernel && options_.node_kernels && options_.node_kernels->host_reads) {
    // The node runs on the host: a backend's results it reads come back first.
    for (const Value* v : inputs) {
      if (!v) continue;
      const Status read = options_.node_kernels->HostReads(*v);
      if (!read.ok()) return read.WithContext(model_.name + ": " + graph::DescribeNode(node));
    }
  }
  if (node_kernel && opset_it != opsets.end()) {
    KernelContext ctx(node, std::move(inputs), opset_it->second, run_subgraph);
    outputs = (*node_kernel)(ctx);
  } else if (local != local_functions_.end()) {
    outputs = CallFunction(*local->second, node, inputs, opsets, depth + 1);
  } else if (opset_it == opsets.end()) {
    return InvalidModel(model_.name, ": ", graph::DescribeNode(node), " uses domain '", node.domain(),
                        "', which the opset imports do not name");
  } else if (const onnx::FunctionProto* f =
                 options_.prefer_function_bodies || options_.arithmetic == Arithmetic::kConventional
                     ? options_.functions->Find(std::string(domain), node.op_type(), node.overload())
                     : nullptr) {
    outputs = CallFunction(*f, node, inputs, opsets, depth + 1);
  } else if (const Kernel* kernel = options_.registry->Find(domain, node.op_type(), opset_it->second)) {
    KernelContext ctx(node, std::move(inputs), opset_it->second, run_subgraph);
    ctx.set_float32_sums(options_.arithmetic == Arithmetic::kConventional);
    ctx.set_widened(options_.arithmetic == Arithmetic::kWide);
    outputs = (*kernel)(ctx);
  } else if (const onnx::FunctionProto* f =
                 options_.functions->Find(std::string(domain), node.op_type(), node.overload())) {
    outputs = CallFunction(*f, node, inputs, opsets, depth + 1);
  } else {
    return Unimplemented("op not implemented: ", domain.empty() ? "" : std::string(domain) + ".", node.op_type(),
                         " (opset ", opset_it->second, ")");
  }
  if (!outputs.ok()) {
    const Status& s = outputs.status();
    // Kernel errors already name the node; add the model for context.
    if (s.message().rfind("node '", 0) == 0) return s.WithContext(model_.name);
    return s.WithContext(model_.name + ": " + graph::DescribeNode(node));
  }
  std::vector<Value>& values = *outputs;
  if (values.size() > static_cast<size_t>(node.output_size())) {
    return Internal(model_.name, ": ", graph::DescribeNode(node), " produced ", values.size(), " outputs for ",
                    node.output_size(), " declared");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = node.output(static_cast<int>(i));
    if (name.empty()) continue;
    if (options_.arithmetic == Arithmetic::kWide) {
      // A kernel rounds to the type its inputs or attributes name (Cast to
      // float16, a Constant of float32): the value keeps that rounding, in float64.
      PARITY_ASSIGN_OR_RETURN(scope.values[name], Widen(values[i]));
    } else {
      scope.values[name] = std::move(values[i]);
    }
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<const Evaluator::FunctionBody>> Evaluator::InstantiateBody(
    const onnx::FunctionProto& function, const onnx::NodeProto& call) const {
  {
    std::lock_guard<std::mutex> lock(prepared_mutex_);
    auto it = bodies_.find({&function, &call});
    if (it != bodies_.end()) return it->second;
  }
  auto body = std::make_shared<FunctionBody>();
  body->nodes = function.node();
  std::unordered_set<std::string> absent;
  for (int i = 0; i < function.input_size(); ++i) {
    if (i >= call.input_size() || call.input(i).empty()) absent.insert(function.input(i));
  }
  for (auto& n : body->nodes) {
    ResolveAttributeReferences(&n, call, function);
    if (!absent.empty()) BlankAbsentInputs(&n, absent);
  }
  PARITY_ASSIGN_OR_RETURN(body->order,
                          graph::TopologicalOrder(body->nodes, "function " + function.domain() + "." + function.name()));
  // The body's subgraphs are prepared (and cached) by address, so the body
  // must outlive every run: it is kept for the evaluator's lifetime.
  std::lock_guard<std::mutex> lock(prepared_mutex_);
  auto [it, inserted] = bodies_.emplace(std::make_pair(&function, &call), body);
  return std::shared_ptr<const FunctionBody>(it->second);
}

StatusOr<std::vector<Value>> Evaluator::CallFunction(const onnx::FunctionProto& function, const onnx::NodeProto& call,
                                                     const std::vector<const Value*>& inputs,
                                                     const OpsetMap& caller_opsets, int depth) const {
  const std::string label = "function " + function.domain() + "." + function.name();
  if (depth > options_.max_call_depth) {
    return InvalidModel(label, ": function calls nest deeper than ", options_.max_call_depth,
                        " (a recursive function?)");
  }
  if (inputs.size() > static_cast<size_t>(function.input_size())) {
    return InvalidModel(label, " takes ", function.input_size(), " inputs, the call gives ", inputs.size());
  }
  // A function sees only its own inputs, never the caller's scope.
  Scope scope;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]) scope.values[function.input(static_cast<int>(i))] = *inputs[i];
  }
  OpsetMap opsets = caller_opsets;
  for (const auto& opset : function.opset_import()) {
    opsets[std::string(CanonicalDomain(opset.domain()))] = opset.version();
  }
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> body, InstantiateBody(function, call));
  Status run = RunNodes(body->order, scope, opsets, depth);
  if (!run.ok()) return run.WithContext("in " + label);
  std::vector<Value> outputs;
  for (int i = 0; i < function.output_size() && i < call.output_size(); ++i) {
    const Value* v = scope.Find(function.output(i));
    if (!v) {
      if (call.output(i).empty()) {
        outputs.emplace_back();
        continue;
      }
      return InvalidModel(label, ": output '", function.output(i), "' was not computed");
    }
    outputs.push_back(*v);
  }
  return outputs;
}

}  // namespace parity
