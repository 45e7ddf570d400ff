// The evaluator's in-place mode (in_place.h): the plan of writers and the run.
#include "reference/eval/in_place.h"

#include <algorithm>
#include <unordered_set>

#include "reference/model/graph_index.h"

namespace parity {
namespace {

// `order` with each writer moved up to run right after its ancestors: the
// ancestors of the first writer (in their order), that writer, the same for
// the next writer, then every other node in its order. Still topological,
// since `order` is and each node keeps its ancestors before it.
std::vector<const onnx::NodeProto*> WritersFirst(const onnx::GraphProto& graph, graph::GraphIndex& index,
                                                 const std::vector<const onnx::NodeProto*>& order,
                                                 const InPlacePlan& plan) {
  std::unordered_map<const onnx::NodeProto*, int32_t> at;  // a node's place in the graph
  for (int32_t n = 0; n < graph.node_size(); ++n) at.emplace(&graph.node(n), n);
  std::vector<char> emitted(order.size(), 0);
  std::vector<const onnx::NodeProto*> result;
  result.reserve(order.size());
  for (size_t w = 0; w < order.size(); ++w) {
    if (!plan.writes.count(order[w]) || emitted[w]) continue;
    index.MarkAncestors(at.at(order[w]));
    for (size_t i = 0; i < w; ++i) {
      if (!emitted[i] && index.is_ancestor(at.at(order[i]))) {
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
// The buffer's bytes are read on the host for the copies: a backend that
// holds them on its device brings them back first (NodeKernels::host_reads).
Status CopyViewsOut(std::unordered_map<std::string, Value>& values, const Tensor& buffer,
                    const std::unordered_set<std::string>& on_purpose, const NodeKernels* node_kernels) {
  bool read = false;
  for (auto& [name, value] : values) {
    if (on_purpose.count(name) || !ValueSharesBuffer(value, buffer)) continue;
    if (!read && node_kernels) PARITY_RETURN_IF_ERROR(node_kernels->HostReads(Value::FromTensor(buffer)));
    read = true;
    value = CopyOutOf(value, buffer);
  }
  return Status::Ok();
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
// Whether it wrote the buffer on the host: not when the writer's result
// already is it, nor when the backend copied it on its device (copy_into).
StatusOr<bool> BindWholeAlias(std::unordered_map<std::string, Value>& values, const Alias& alias,
                              std::unordered_set<std::string>& on_purpose, const std::string& where,
                              const NodeKernels* node_kernels) {
  PARITY_ASSIGN_OR_RETURN(Tensor buffer, AliasedBuffer(values, alias, where));
  const Value& result = values[alias.output];
  if (!result.is_tensor() || result.tensor().dtype() != buffer.dtype() ||
      result.tensor().shape() != buffer.shape()) {
    return InvalidArgument(where, ": in-place alias: output '", alias.output, "' is ", result.Description(),
                           " but input '", alias.input, "' is ", buffer.Description(),
                           "; sharing the whole buffer needs the same type and shape");
  }
  const Tensor fresh = result.tensor();
  bool on_host = !fresh.SharesBufferWith(buffer);
  if (on_host) {
    PARITY_RETURN_IF_ERROR(CopyViewsOut(values, buffer, on_purpose, node_kernels));
    if (node_kernels && node_kernels->copy_into) {
      PARITY_ASSIGN_OR_RETURN(const bool on_device, node_kernels->copy_into(fresh, buffer));
      on_host = !on_device;
    }
  }
  if (on_host) {
    if (node_kernels) PARITY_RETURN_IF_ERROR(node_kernels->HostReads(result).WithContext(where));
    if (buffer.dtype() == DataType::kString) {
      buffer.mutable_strings() = fresh.strings();
    } else {
      std::copy(fresh.raw_bytes(), fresh.raw_bytes() + fresh.byte_size(), buffer.mutable_raw_bytes());
    }
  }
  values[alias.output] = Value::FromTensor(buffer);
  on_purpose.insert(alias.output);
  return on_host;
}

// Region scatter: the writer's in-place form writes its rows straight into
// the input's buffer, and the output is that buffer; nothing buffer-sized
// is made.
Status ScatterInPlace(const onnx::NodeProto& node, const InPlaceKernel& in_place, int64_t opset,
                      std::unordered_map<std::string, Value>& values, const Alias& alias,
                      std::unordered_set<std::string>& on_purpose, const std::string& where,
                      const NodeKernels* node_kernels, bool on_host) {
  PARITY_ASSIGN_OR_RETURN(Tensor buffer, AliasedBuffer(values, alias, where));
  PARITY_RETURN_IF_ERROR(CopyViewsOut(values, buffer, on_purpose, node_kernels));
  std::vector<const Value*> inputs;
  for (const auto& name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto it = values.find(name);
    if (it == values.end()) {
      return InvalidModel(where, ": ", graph::DescribeNode(node), " reads '", name, "', which has no value");
    }
    // The reference's in-place kernel reads its inputs (the buffer among
    // them) on the host.
    if (on_host && node_kernels) PARITY_RETURN_IF_ERROR(node_kernels->HostReads(it->second).WithContext(where));
    inputs.push_back(&it->second);
  }
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  KernelContext ctx(node, std::move(inputs), opset, [&node](const onnx::GraphProto&, const std::vector<Value>&) {
    return StatusOr<std::vector<Value>>(Internal(node.op_type(), " in place runs no subgraph"));
  });
  Status written = in_place(ctx, buffer);
  if (!written.ok()) return written.WithContext(where);
  values[alias.output] = Value::FromTensor(buffer);
  on_purpose.insert(alias.output);
  return Status::Ok();
}

// Tells the backend's kernels, when they ask (NodeKernels::host_wrote),
// that `value`'s buffer was written on the host.
void TellHostWrote(const InPlaceContext& context, const Value& value) {
  if (context.node_kernels && context.node_kernels->host_wrote && value.is_tensor()) {
    context.node_kernels->host_wrote(value.tensor());
  }
}

}  // namespace

StatusOr<InPlacePlan> PlanInPlace(const onnx::GraphProto& graph, const std::vector<const onnx::NodeProto*>& order,
                                  const std::vector<Alias>& aliases, bool writers_first,
                                  const std::string& model_name) {
  InPlacePlan plan;
  graph::GraphIndex index(graph);
  for (const Alias& alias : aliases) {
    const bool is_input = std::any_of(graph.input().begin(), graph.input().end(),
                                      [&](const onnx::ValueInfoProto& i) { return i.name() == alias.input; });
    if (!is_input) {
      return InvalidArgument(model_name, ": in-place alias of output '", alias.output, "' names input '",
                             alias.input, "', which is not an input of the main graph");
    }
    const int32_t output = index.Find(alias.output);
    const int32_t writer = output < 0 ? -1 : index.producer(output);
    if (writer < 0) {
      // An output that is the input itself shares its buffer already.
      if (alias.output == alias.input) continue;
      return InvalidArgument(model_name, ": in-place alias of output '", alias.output, "' to input '", alias.input,
                             "': no node of the main graph computes '", alias.output, "'");
    }
    plan.writes[&graph.node(writer)].push_back(&alias);
  }
  plan.order = writers_first ? WritersFirst(graph, index, order, plan) : order;
  return plan;
}

Status RunInPlace(const onnx::GraphProto& graph, size_t given_inputs, const std::vector<Alias>& aliases,
                  const InPlacePlan& plan, std::unordered_map<std::string, Value>& values,
                  const InPlaceContext& context) {
  const std::string& model_name = context.model_name;
  std::unordered_set<std::string> on_purpose;
  for (const Alias& alias : aliases) {
    const auto index = static_cast<size_t>(
        std::find_if(graph.input().begin(), graph.input().end(),
                     [&](const onnx::ValueInfoProto& i) { return i.name() == alias.input; }) -
        graph.input().begin());
    PARITY_ASSIGN_OR_RETURN(Tensor buffer, AliasedBuffer(values, alias, model_name));
    if (index >= given_inputs) {
      // Not given: the value is the initializer, kept for every later run,
      // so this run writes a copy of it instead.
      values[alias.input] = Value::FromTensor(buffer.Clone());
    } else {
      // The caller's tensor is written, so any other input that is the
      // same tensor gets a copy first (the first alias of it wins).
      for (const auto& other : graph.input()) {
        Value& v = values[other.name()];
        if (other.name() == alias.input || !ValueSharesBuffer(v, buffer)) continue;
        if (context.node_kernels) PARITY_RETURN_IF_ERROR(context.node_kernels->HostReads(v).WithContext(model_name));
        v = CopyOutOf(v, buffer);
      }
    }
    on_purpose.insert(alias.input);
  }
  for (const onnx::NodeProto* node : plan.order) {
    PARITY_RETURN_IF_ERROR(context.check_deadline());
    auto writes = plan.writes.find(node);
    if (writes == plan.writes.end()) {
      PARITY_RETURN_IF_ERROR(context.run_node(*node));
      continue;
    }
    const std::vector<const Alias*>& written = writes->second;
    if (written.size() == 1 && written[0]->region == AliasRegion::kScatter && node->input_size() > 0 &&
        node->input(0) == written[0]->input) {
      auto opset = context.opsets->find(CanonicalDomain(node->domain()));
      const int64_t version = opset == context.opsets->end() ? 0 : opset->second;
      const InPlaceKernel* in_place = context.node_kernels ? context.node_kernels->FindInPlace(*node) : nullptr;
      const bool on_host = in_place == nullptr;
      if (!in_place) in_place = context.registry->FindInPlace(node->domain(), node->op_type(), version);
      if (in_place) {
        PARITY_RETURN_IF_ERROR(
            ScatterInPlace(*node, *in_place, version, values, *written[0], on_purpose, model_name,
                           context.node_kernels, on_host));
        if (on_host) TellHostWrote(context, values[written[0]->output]);
        continue;
      }
    }
    // Region whole, or a scatter region whose writer has no in-place form
    // for the aliased input (which ValidateAliases refuses; the checking
    // mode runs it): compute as usual, then write the whole result.
    PARITY_RETURN_IF_ERROR(context.run_node(*node));
    for (const Alias* alias : written) {
      PARITY_ASSIGN_OR_RETURN(const bool wrote,
                              BindWholeAlias(values, *alias, on_purpose, model_name, context.node_kernels));
      // A writer whose result is the buffer itself (a view of it) left it as
      // it was; a copy on the backend's device kept its copy current.
      if (wrote) TellHostWrote(context, values[alias->output]);
    }
  }
  return Status::Ok();
}

}  // namespace parity
