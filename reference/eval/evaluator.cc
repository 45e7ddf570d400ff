// Graph execution: scopes, topological order, kernel dispatch, function
// expansion and subgraphs, and the in-place mode of aliased inputs.
#include "reference/eval/evaluator.h"

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_set>

#include "reference/model/validator.h"
#include "reference/ops/sequence/tensor_scatter.h"

namespace parity {

struct Evaluator::Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, Value> values;

  const Value* Find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
    }
    return nullptr;
  }
};

struct Evaluator::PreparedGraph {
  std::vector<const onnx::NodeProto*> order;
  std::vector<std::pair<std::string, Value>> initializers;
};

struct Evaluator::FunctionBody {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<const onnx::NodeProto*> order;  // points into `nodes`
};

namespace {

std::string NodeLabel(const onnx::NodeProto& node) {
  std::string label = "node '" + node.name() + "' (";
  if (!node.domain().empty()) label += node.domain() + ".";
  return label + node.op_type() + ")";
}

void CollectGraphReferences(const onnx::GraphProto& graph, std::unordered_set<std::string>& defined,
                            std::vector<std::string>* names) {
  std::unordered_set<std::string> local = defined;
  for (const auto& i : graph.input()) local.insert(i.name());
  for (const auto& i : graph.initializer()) local.insert(i.name());
  for (const auto& i : graph.sparse_initializer()) local.insert(i.values().name());
  for (const auto& n : graph.node()) {
    for (const auto& o : n.output()) local.insert(o);
  }
  for (const auto& n : graph.node()) {
    for (const auto& in : n.input()) {
      if (!in.empty() && !local.count(in)) names->push_back(in);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectGraphReferences(a.g(), local, names);
      for (const auto& g : a.graphs()) CollectGraphReferences(g, local, names);
    }
  }
  for (const auto& o : graph.output()) {
    if (!local.count(o.name())) names->push_back(o.name());
  }
}

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

// The values a node reads: its inputs and what its subgraphs read from outside.
std::vector<std::string> NodeReads(const onnx::NodeProto& node) {
  std::vector<std::string> reads(node.input().begin(), node.input().end());
  for (const auto& a : node.attribute()) {
    if (a.has_g()) CollectOuterReferences(a.g(), &reads);
    for (const auto& g : a.graphs()) CollectOuterReferences(g, &reads);
  }
  return reads;
}

// --- In-place mode (EvalOptions::in_place, spec/aliasing.md). ---------------

// What the top-level graph's writers do in place, worked out once per run.
struct InPlacePlan {
  std::vector<const onnx::NodeProto*> order;
  // The aliases each writer node computes (one node may write several).
  std::unordered_map<const onnx::NodeProto*, std::vector<const Alias*>> writes;
};

bool IsScatterWriter(const onnx::NodeProto& node, const Alias& alias) {
  return alias.region == AliasRegion::kScatter && node.op_type() == "TensorScatter" &&
         CanonicalDomain(node.domain()).empty() && node.input_size() > 0 && node.input(0) == alias.input;
}

// `order` with each writer moved up to run right after its ancestors: the
// ancestors of the first writer (in their order), that writer, the same for
// the next writer, then every other node in its order. Still topological,
// since `order` is and each node keeps its ancestors before it.
std::vector<const onnx::NodeProto*> WritersFirst(const std::vector<const onnx::NodeProto*>& order,
                                                 const InPlacePlan& plan) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& o : order[i]->output()) {
      if (!o.empty()) producer.emplace(o, i);
    }
  }
  std::vector<char> emitted(order.size(), 0);
  std::vector<const onnx::NodeProto*> result;
  result.reserve(order.size());
  for (size_t w = 0; w < order.size(); ++w) {
    if (!plan.writes.count(order[w]) || emitted[w]) continue;
    std::vector<char> ancestor(order.size(), 0);
    std::vector<size_t> stack = {w};
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      for (const auto& r : NodeReads(*order[i])) {
        auto it = producer.find(r);
        if (r.empty() || it == producer.end() || ancestor[it->second]) continue;
        ancestor[it->second] = 1;
        stack.push_back(it->second);
      }
    }
    for (size_t i = 0; i < w; ++i) {
      if (ancestor[i] && !emitted[i]) {
        emitted[i] = 1;
        result.push_back(order[i]);
      }
    }
    emitted[w] = 1;
    result.push_back(order[w]);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    if (!emitted[i]) result.push_back(order[i]);
  }
  return result;
}

StatusOr<InPlacePlan> PlanInPlace(const onnx::GraphProto& graph, const std::vector<const onnx::NodeProto*>& order,
                                  const EvalOptions& options, const std::string& model_name) {
  InPlacePlan plan;
  std::unordered_map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto* node : order) {
    for (const auto& o : node->output()) {
      if (!o.empty()) producer.emplace(o, node);
    }
  }
  for (const Alias& alias : options.in_place) {
    const bool is_input = std::any_of(graph.input().begin(), graph.input().end(),
                                      [&](const onnx::ValueInfoProto& i) { return i.name() == alias.input; });
    if (!is_input) {
      return InvalidArgument(model_name, ": in-place alias of output '", alias.output, "' names input '",
                             alias.input, "', which is not an input of the main graph");
    }
    auto writer = producer.find(alias.output);
    if (writer == producer.end()) {
      // An output that is the input itself shares its buffer already.
      if (alias.output == alias.input) continue;
      return InvalidArgument(model_name, ": in-place alias of output '", alias.output, "' to input '", alias.input,
                             "': no node of the main graph computes '", alias.output, "'");
    }
    plan.writes[writer->second].push_back(&alias);
  }
  plan.order = options.writers_first ? WritersFirst(order, plan) : order;
  return plan;
}

bool ValueSharesBuffer(const Value& value, const Tensor& buffer) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return value.tensor().SharesBufferWith(buffer);
    case Value::Kind::kSequence:
      return std::any_of(value.sequence().begin(), value.sequence().end(),
                         [&](const Value& e) { return ValueSharesBuffer(e, buffer); });
    case Value::Kind::kOptional: return value.has_element() && ValueSharesBuffer(value.element(), buffer);
  }
  return false;
}

// `value` with every tensor in it that views `buffer` replaced by its own copy.
Value CopyOutOf(const Value& value, const Tensor& buffer) {
  switch (value.kind()) {
    case Value::Kind::kTensor:
      return value.tensor().SharesBufferWith(buffer) ? Value::FromTensor(value.tensor().Clone()) : value;
    case Value::Kind::kSequence: {
      std::vector<Value> elements;
      for (const Value& e : value.sequence()) elements.push_back(CopyOutOf(e, buffer));
      return Value::FromSequence(std::move(elements), value.sequence_element_type());
    }
    case Value::Kind::kOptional:
      return value.has_element() ? Value::SomeOptional(CopyOutOf(value.element(), buffer)) : value;
  }
  return value;
}

// Before `buffer` is written: every value that views it gets its own copy,
// so that it keeps the value it had, except the names that share the buffer
// on purpose (the aliased inputs, and the outputs already bound to them).
void CopyViewsOut(std::unordered_map<std::string, Value>& values, const Tensor& buffer,
                  const std::unordered_set<std::string>& on_purpose) {
  for (auto& [name, value] : values) {
    if (!on_purpose.count(name) && ValueSharesBuffer(value, buffer)) value = CopyOutOf(value, buffer);
  }
}

// The tensor of aliased input `alias.input`, which in-place writes go into.
StatusOr<Tensor> AliasedBuffer(const std::unordered_map<std::string, Value>& values, const Alias& alias,
                               const std::string& model_name) {
  auto it = values.find(alias.input);
  if (it == values.end() || !it->second.is_tensor() || !it->second.tensor().defined()) {
    return InvalidArgument(model_name, ": in-place alias of output '", alias.output, "' needs input '", alias.input,
                           "' as a tensor, got ",
                           it == values.end() ? std::string("no value") : it->second.Description());
  }
  return it->second.tensor();
}

// Region whole: the writer has computed `alias.output` into a fresh tensor;
// its contents go into the input's buffer, and the output becomes that buffer.
Status BindWholeAlias(std::unordered_map<std::string, Value>& values, const Alias& alias,
                      std::unordered_set<std::string>& on_purpose, const std::string& where) {
  PARITY_ASSIGN_OR_RETURN(Tensor buffer, AliasedBuffer(values, alias, where));
  const Value& result = values[alias.output];
  if (!result.is_tensor() || result.tensor().dtype() != buffer.dtype() ||
      result.tensor().shape() != buffer.shape()) {
    return InvalidArgument(where, ": in-place alias: output '", alias.output, "' is ", result.Description(),
                           " but input '", alias.input, "' is ", buffer.Description(),
                           "; sharing the whole buffer needs the same type and shape");
  }
  const Tensor fresh = result.tensor();
  if (!fresh.SharesBufferWith(buffer)) {
    CopyViewsOut(values, buffer, on_purpose);
    if (buffer.dtype() == DataType::kString) {
      buffer.mutable_strings() = fresh.strings();
    } else {
      std::copy(fresh.raw_bytes(), fresh.raw_bytes() + fresh.byte_size(), buffer.mutable_raw_bytes());
    }
  }
  values[alias.output] = Value::FromTensor(buffer);
  on_purpose.insert(alias.output);
  return Status::Ok();
}

// Region scatter: TensorScatter writes its update rows straight into the
// input's buffer, and the output is that buffer; nothing cache-sized is made.
Status ScatterInPlace(const onnx::NodeProto& node, std::unordered_map<std::string, Value>& values,
                      const Alias& alias, int64_t opset, std::unordered_set<std::string>& on_purpose,
                      const std::string& where) {
  PARITY_ASSIGN_OR_RETURN(Tensor buffer, AliasedBuffer(values, alias, where));
  CopyViewsOut(values, buffer, on_purpose);
  std::vector<const Value*> inputs;
  for (const auto& name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto it = values.find(name);
    if (it == values.end()) {
      return InvalidModel(where, ": ", NodeLabel(node), " reads '", name, "', which has no value");
    }
    inputs.push_back(&it->second);
  }
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  KernelContext ctx(node, std::move(inputs), opset, [](const onnx::GraphProto&, const std::vector<Value>&) {
    return StatusOr<std::vector<Value>>(Internal("TensorScatter runs no subgraph"));
  });
  Status written = ops::sequence::TensorScatterInPlace(ctx, buffer);
  if (!written.ok()) return written.WithContext(where);
  values[alias.output] = Value::FromTensor(buffer);
  on_purpose.insert(alias.output);
  return Status::Ok();
}

}  // namespace

void CollectOuterReferences(const onnx::GraphProto& graph, std::vector<std::string>* names) {
  std::unordered_set<std::string> none;
  CollectGraphReferences(graph, none, names);
}

StatusOr<std::vector<const onnx::NodeProto*>> TopologicalOrder(
    const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& where) {
  const int n = nodes.size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : nodes[i].output()) {
      if (!o.empty()) producer.emplace(o, i);
    }
  }
  std::vector<std::vector<int>> consumers(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& r : NodeReads(nodes[i])) {
      auto it = producer.find(r);
      if (!r.empty() && it != producer.end()) deps.insert(it->second);
    }
    for (int d : deps) {
      consumers[d].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<const onnx::NodeProto*> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(&nodes[i]);
    for (int c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    std::string cycle;
    int shown = 0;
    for (int i = 0; i < n && shown < 8; ++i) {
      if (pending[i] > 0) {
        cycle += (shown++ ? ", " : "") + NodeLabel(nodes[i]);
      }
    }
    return InvalidModel(where, ": the graph has a cycle through ", cycle);
  }
  return order;
}

Evaluator::Evaluator(LoadedModel model, EvalOptions options) : model_(std::move(model)), options_(options) {
  if (!options_.registry) options_.registry = &ReferenceRegistry();
}

StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(LoadedModel model, EvalOptions options) {
  if (!model.proto) return Internal("Evaluator::Create: no model");
  // Never run a model that breaks the IR's rules: cycles, unknown values and
  // sizes over the memory limit are refused here, before any allocation.
  std::vector<Status> problems = ValidateModel(model);
  if (!problems.empty()) {
    std::string message = problems[0].message();
    if (problems.size() > 1) message += StrCat(" (and ", problems.size() - 1, " more problems)");
    return Status(problems[0].code(), message);
  }
  if (!options.functions) {
    PARITY_ASSIGN_OR_RETURN(options.functions, FunctionLibrary::Standard());
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
  PARITY_ASSIGN_OR_RETURN(prepared->order, TopologicalOrder(graph.node(), where));
  ExternalDataPolicy policy{model_.base_dir};
  for (const auto& init : graph.initializer()) {
    StatusOr<Tensor> t = TensorFromProto(init, policy);
    if (!t.ok()) return t.status().WithContext(where + ": initializer '" + init.name() + "'");
    prepared->initializers.emplace_back(init.name(), Value::FromTensor(std::move(t).value()));
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
  for (const auto& [name, value] : prepared->initializers) scope.values[name] = value;
  const bool top_level = outer == nullptr;
  if (inputs.size() > static_cast<size_t>(graph.input_size())) {
    return InvalidArgument(model_.name, ": graph '", graph.name(), "' takes ", graph.input_size(),
                           " inputs, got ", inputs.size());
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    const std::string& name = graph.input(i).name();
    if (static_cast<size_t>(i) < inputs.size()) {
      scope.values[name] = inputs[i];
    } else if (!scope.values.count(name) && top_level) {
      return InvalidArgument(model_.name, ": graph input '", name, "' was given no value");
    }
  }
  if (top_level && !options_.in_place.empty()) {
    // In-place mode: the aliased inputs' buffers (the caller's tensors) are
    // written by their outputs' writers; see EvalOptions::in_place.
    PARITY_ASSIGN_OR_RETURN(InPlacePlan plan, PlanInPlace(graph, prepared->order, options_, model_.name));
    std::unordered_set<std::string> on_purpose;
    for (const Alias& alias : options_.in_place) {
      const int index = static_cast<int>(
          std::find_if(graph.input().begin(), graph.input().end(),
                       [&](const onnx::ValueInfoProto& i) { return i.name() == alias.input; }) -
          graph.input().begin());
      PARITY_ASSIGN_OR_RETURN(Tensor buffer, AliasedBuffer(scope.values, alias, model_.name));
      if (static_cast<size_t>(index) >= inputs.size()) {
        // Not given: the value is the initializer, kept for every later run,
        // so this run writes a copy of it instead.
        scope.values[alias.input] = Value::FromTensor(buffer.Clone());
      } else {
        // The caller's tensor is written, so any other input that is the
        // same tensor gets a copy first (the first alias of it wins).
        for (const auto& other : graph.input()) {
          Value& v = scope.values[other.name()];
          if (other.name() != alias.input && ValueSharesBuffer(v, buffer)) v = CopyOutOf(v, buffer);
        }
      }
      on_purpose.insert(alias.input);
    }
    for (const onnx::NodeProto* node : plan.order) {
      PARITY_RETURN_IF_ERROR(CheckDeadline());
      auto writes = plan.writes.find(node);
      if (writes == plan.writes.end()) {
        PARITY_RETURN_IF_ERROR(RunNode(*node, scope, opsets, depth));
        continue;
      }
      const std::vector<const Alias*>& aliases = writes->second;
      if (aliases.size() == 1 && IsScatterWriter(*node, *aliases[0])) {
        auto opset = opsets.find("");
        PARITY_RETURN_IF_ERROR(ScatterInPlace(*node, scope.values, *aliases[0],
                                              opset == opsets.end() ? 0 : opset->second, on_purpose, model_.name));
        continue;
      }
      // Region whole, or a scatter region whose writer is not a TensorScatter
      // of the aliased input (which ValidateAliases refuses; the checking
      // mode runs it): compute as usual, then write the whole result.
      PARITY_RETURN_IF_ERROR(RunNode(*node, scope, opsets, depth));
      for (const Alias* alias : aliases) {
        PARITY_RETURN_IF_ERROR(BindWholeAlias(scope.values, *alias, on_purpose, model_.name));
      }
    }
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
    if (!v) return InvalidModel(model_.name, ": ", NodeLabel(node), " reads '", name, "', which has no value");
    inputs.push_back(v);
  }
  // Trailing absent inputs are the same as inputs not given at all.
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();

  const std::string domain(CanonicalDomain(node.domain()));
  StatusOr<std::vector<Value>> outputs = Status(StatusCode::kInternal, "no dispatch");
  auto local = local_functions_.find({domain, node.op_type(), node.overload()});
  auto opset_it = opsets.find(domain);
  if (local != local_functions_.end()) {
    outputs = CallFunction(*local->second, node, inputs, opsets, depth + 1);
  } else if (opset_it == opsets.end()) {
    return InvalidModel(model_.name, ": ", NodeLabel(node), " uses domain '", node.domain(),
                        "', which the opset imports do not name");
  } else if (const onnx::FunctionProto* f = options_.prefer_function_bodies
                                                ? options_.functions->Find(domain, node.op_type(), node.overload())
                                                : nullptr) {
    outputs = CallFunction(*f, node, inputs, opsets, depth + 1);
  } else if (const Kernel* kernel = options_.registry->Find(domain, node.op_type(), opset_it->second)) {
    KernelContext ctx(node, std::move(inputs), opset_it->second,
                      [this, &scope, &opsets, depth](const onnx::GraphProto& g, const std::vector<Value>& in) {
                        return RunGraph(g, in, &scope, opsets, depth + 1);
                      });
    outputs = (*kernel)(ctx);
  } else if (const onnx::FunctionProto* f = options_.functions->Find(domain, node.op_type(), node.overload())) {
    outputs = CallFunction(*f, node, inputs, opsets, depth + 1);
  } else {
    return Unimplemented("op not implemented: ", domain.empty() ? "" : domain + ".", node.op_type(), " (opset ",
                         opset_it->second, ")");
  }
  if (!outputs.ok()) {
    const Status& s = outputs.status();
    // Kernel errors already name the node; add the model for context.
    if (s.message().rfind("node '", 0) == 0) return s.WithContext(model_.name);
    return s.WithContext(model_.name + ": " + NodeLabel(node));
  }
  std::vector<Value>& values = *outputs;
  if (values.size() > static_cast<size_t>(node.output_size())) {
    return Internal(model_.name, ": ", NodeLabel(node), " produced ", values.size(), " outputs for ",
                    node.output_size(), " declared");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = node.output(static_cast<int>(i));
    if (!name.empty()) scope.values[name] = std::move(values[i]);
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
                          TopologicalOrder(body->nodes, "function " + function.domain() + "." + function.name()));
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
