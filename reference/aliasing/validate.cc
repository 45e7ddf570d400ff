// The validity rules of aliasing annotations (spec/aliasing.md, "Validity"):
// one pass over the main graph builds who makes and who reads each value,
// then each annotation is checked against its rules (aliasing.h lists them).
#include <unordered_map>
#include <unordered_set>

#include "reference/aliasing/aliasing.h"
#include "reference/model/graph_index.h"

namespace parity {
namespace {

using graph::HoldsGraphs;
using graph::NodeLabel;

std::string OutputOfKey(const std::string& key) { return key.substr(sizeof(kAliasKeyPrefix) - 1); }

bool IsStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Nodes that read only the shape of a value: reading the input after the
// write is harmless, since the write keeps the shape.
bool ReadsOnlyShape(const onnx::NodeProto& node) {
  return IsStandardDomain(node.domain()) && (node.op_type() == "Shape" || node.op_type() == "Size");
}

// --- ALIAS-CONTROL-FLOW: annotations anywhere but the main graph. -----------

struct NestedAnnotation {
  std::string output;
  std::string value;
  std::string where;  // "subgraph 'loop/Loop#3.body'", "function 'com.x:F'"
};

template <typename Props>
void CollectProps(const Props& props, const std::string& where, std::vector<NestedAnnotation>* found) {
  for (const auto& prop : props) {
    if (std::string_view(prop.key()).starts_with(kAliasKeyPrefix)) {
      found->push_back({OutputOfKey(prop.key()), prop.value(), where});
    }
  }
}

// Annotations in the graphs `nodes` hold, at any depth; `path` names where
// the nodes are ("" for the main graph).
void CollectInSubgraphs(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& path,
                        std::vector<NestedAnnotation>* found) {
  for (int n = 0; n < nodes.size(); ++n) {
    for (const auto& attr : nodes[n].attribute()) {
      const std::string where = StrCat(path.empty() ? "" : path + "/", NodeLabel(nodes[n], n), ".", attr.name());
      const auto visit = [&](const onnx::GraphProto& g, const std::string& at) {
        CollectProps(g.metadata_props(), StrCat("subgraph '", at, "'"), found);
        CollectInSubgraphs(g.node(), at, found);
      };
      if (attr.has_g()) visit(attr.g(), where);
      for (int g = 0; g < attr.graphs_size(); ++g) visit(attr.graphs(g), StrCat(where, "[", g, "]"));
    }
  }
}

std::vector<NestedAnnotation> CollectNested(const onnx::ModelProto& model) {
  std::vector<NestedAnnotation> found;
  CollectInSubgraphs(model.graph().node(), "", &found);
  for (const auto& f : model.functions()) {
    const std::string name = StrCat(f.domain(), f.domain().empty() ? "" : ":", f.name());
    CollectProps(f.metadata_props(), StrCat("function '", name, "'"), &found);
    CollectInSubgraphs(f.node(), StrCat("function ", name), &found);
  }
  return found;
}

// --- The main graph: producers and readers of each value. -------------------

class MainGraph {
 public:
  explicit MainGraph(const onnx::GraphProto& graph) : graph_(graph), index_(graph) {
    for (int i = 0; i < graph.input_size(); ++i) inputs_.emplace(graph.input(i).name(), i);
    for (int i = 0; i < graph.output_size(); ++i) outputs_.emplace(graph.output(i).name(), i);
    for (const auto& init : graph.initializer()) initializers_.insert(init.name());
  }

  const onnx::GraphProto& graph() const { return graph_; }
  const onnx::ValueInfoProto* input(const std::string& name) const {
    auto it = inputs_.find(name);
    return it == inputs_.end() ? nullptr : &graph_.input(it->second);
  }
  const onnx::ValueInfoProto* output(const std::string& name) const {
    auto it = outputs_.find(name);
    return it == outputs_.end() ? nullptr : &graph_.output(it->second);
  }
  bool initialized(const std::string& name) const { return initializers_.count(name) > 0; }
  int producer(const std::string& name) const {
    const int32_t id = index_.Find(name);
    return id < 0 ? -1 : index_.producer(id);
  }
  // Nodes that read `name`, directly or through their subgraphs, in node
  // order, each once.
  std::vector<int> readers(const std::string& name) const {
    std::vector<int> nodes;
    const int32_t id = index_.Find(name);
    if (id < 0) return nodes;
    for (int32_t n : index_.consumers(id)) {
      if (nodes.empty() || nodes.back() != n) nodes.push_back(n);
    }
    return nodes;
  }
  std::string Label(int n) const { return NodeLabel(graph_.node(n), n); }

  // Marks the ancestors of node `writer`; is_ancestor answers until the next call.
  void MarkAncestors(int writer) { index_.MarkAncestors(writer); }
  bool is_ancestor(int n) const { return index_.is_ancestor(n); }

 private:
  const onnx::GraphProto& graph_;
  graph::GraphIndex index_;
  std::unordered_map<std::string, int> inputs_, outputs_;
  std::unordered_set<std::string> initializers_;
};

// --- ALIAS-TYPE. -------------------------------------------------------------

const char* TypeKind(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: return "a tensor";
    case onnx::TypeProto::kSequenceType: return "a sequence";
    case onnx::TypeProto::kMapType: return "a map";
    case onnx::TypeProto::kOptionalType: return "an optional";
    case onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    default: return "of an unknown kind";
  }
}

std::string ElemTypeName(int32_t elem) {
  const std::string name = onnx::TensorProto::DataType_IsValid(elem)
                               ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem))
                               : std::string();
  return name.empty() ? StrCat("type ", elem) : name;
}

// Types left out (no TypeProto, or an unset one) are accepted here: the
// tensors' own types are checked when a backend binds them.
void CheckTypes(const Alias& alias, const onnx::ValueInfoProto& in, const onnx::ValueInfoProto& out,
                std::vector<Status>* problems) {
  const auto missing = [](const onnx::ValueInfoProto& v) {
    return !v.has_type() || v.type().value_case() == onnx::TypeProto::VALUE_NOT_SET;
  };
  if (missing(in) || missing(out)) return;
  const auto fail = [&](const auto&... why) {
    problems->push_back(InvalidModel(kAliasRuleType, ": output '", alias.output, "' aliases input '", alias.input,
                                     "', but ", why...));
  };
  if (!in.type().has_tensor_type() || !out.type().has_tensor_type()) {
    fail("only tensors share buffers: the output is ", TypeKind(out.type()), " and the input ", TypeKind(in.type()));
    return;
  }
  const auto& ti = in.type().tensor_type();
  const auto& to = out.type().tensor_type();
  if (ti.elem_type() != 0 && to.elem_type() != 0 && ti.elem_type() != to.elem_type()) {
    fail("the output's element type ", ElemTypeName(to.elem_type()), " differs from the input's ",
         ElemTypeName(ti.elem_type()));
    return;
  }
  if (!ti.has_shape() || !to.has_shape()) return;
  if (ti.shape().dim_size() != to.shape().dim_size()) {
    fail("the output's rank ", to.shape().dim_size(), " differs from the input's ", ti.shape().dim_size());
    return;
  }
  for (int d = 0; d < ti.shape().dim_size(); ++d) {
    const auto& di = ti.shape().dim(d);
    const auto& dout = to.shape().dim(d);
    if (di.has_dim_value() && dout.has_dim_value() && di.dim_value() != dout.dim_value()) {
      fail("dimension ", d, " is ", dout.dim_value(), " in the output and ", di.dim_value(), " in the input");
      return;
    }
  }
}

// --- The rules of one annotation that need the graph. ----------------------

// ALIAS-NAMES; returns whether the names hold (the later rules need them).
bool CheckNames(const Alias& alias, const MainGraph& graph, std::vector<Status>* problems) {
  const auto fail = [&](const auto&... why) {
    problems->push_back(InvalidModel(kAliasRuleNames, ": output '", alias.output, "' ", why...));
    return false;
  };
  if (!graph.output(alias.output)) return fail("is not a graph output");
  if (!graph.input(alias.input)) return fail("aliases '", alias.input, "', which is not a graph input");
  if (graph.initialized(alias.input)) {
    return fail("aliases input '", alias.input,
                "', which has an initializer: sharing its buffer would change the default of later runs");
  }
  if (alias.output != alias.input && graph.producer(alias.output) < 0) {
    return fail("aliases input '", alias.input, "' but no node computes it (it is ",
                graph.input(alias.output) ? "a graph input" : graph.initialized(alias.output) ? "an initializer"
                                                                                               : "not defined",
                ")");
  }
  return true;
}

// ALIAS-CONTROL-FLOW (the writer's part), ALIAS-SCATTER, ALIAS-READ-AFTER-WRITE.
void CheckWriter(const Alias& alias, MainGraph& graph, bool check_reads, std::vector<Status>* problems) {
  const std::string head = StrCat(": output '", alias.output, "' aliases input '", alias.input, "'");
  if (alias.output == alias.input) {
    // Passed through: nothing writes the buffer, so nothing reads after a write.
    if (alias.region == AliasRegion::kScatter) {
      problems->push_back(InvalidModel(kAliasRuleScatter, head,
                                       " with region=scatter, but it is that input itself, which no TensorScatter "
                                       "writes"));
    }
    return;
  }
  const int writer = graph.producer(alias.output);
  const onnx::NodeProto& node = graph.graph().node(writer);
  const std::string writer_text = StrCat("'", graph.Label(writer), "' (", node.op_type(), ")");
  bool holds_graphs = false;
  for (const auto& attr : node.attribute()) holds_graphs = holds_graphs || HoldsGraphs(attr);
  if (holds_graphs) {
    problems->push_back(InvalidModel(kAliasRuleControlFlow, head, ", and its writer ", writer_text,
                                     " holds subgraphs: the buffer would cross a control-flow boundary"));
  }
  if (alias.region == AliasRegion::kScatter) {
    const bool scatter = IsStandardDomain(node.domain()) && node.op_type() == "TensorScatter";
    if (!scatter) {
      problems->push_back(InvalidModel(kAliasRuleScatter, head, " with region=scatter, but its writer ",
                                       writer_text, " is not a TensorScatter"));
    } else if (node.input_size() == 0 || node.input(0) != alias.input) {
      problems->push_back(InvalidModel(kAliasRuleScatter, head, " with region=scatter, but its writer ", writer_text,
                                       " updates '", node.input_size() ? node.input(0) : std::string(),
                                       "' (its past_cache, input 0), not '", alias.input, "'"));
    }
  }
  if (!check_reads) return;
  if (graph.output(alias.input)) {
    problems->push_back(InvalidModel(kAliasRuleReadAfterWrite, head,
                                     ", which is also a graph output: the caller reads it after the write"));
  }
  graph.MarkAncestors(writer);
  int first = -1, more = 0;
  for (int reader : graph.readers(alias.input)) {
    if (reader == writer || graph.is_ancestor(reader) || ReadsOnlyShape(graph.graph().node(reader))) continue;
    if (first < 0) first = reader;
    else ++more;
  }
  if (first >= 0) {
    problems->push_back(InvalidModel(kAliasRuleReadAfterWrite, head, ", which node '", graph.Label(first), "' (",
                                     graph.graph().node(first).op_type(),
                                     ") reads and which is not an ancestor of the writer ", writer_text,
                                     more ? StrCat(" (and ", more, " more such reader", more == 1 ? "" : "s", ")")
                                          : std::string()));
  }
}

}  // namespace

std::vector<Status> ValidateAliases(const LoadedModel& model) {
  std::vector<Status> problems;
  if (!model.proto) {
    problems.push_back(Internal("ValidateAliases: '", model.name, "' holds no model"));
    return problems;
  }
  const onnx::ModelProto& proto = *model.proto;
  if (!HasAliases(proto)) return problems;
  const std::vector<NestedAnnotation> nested = CollectNested(proto);
  if (proto.ir_version() < 10) {
    std::string first = nested.empty() ? std::string() : nested.front().output;
    for (const auto& prop : proto.graph().metadata_props()) {
      if (std::string_view(prop.key()).starts_with(kAliasKeyPrefix)) {
        first = OutputOfKey(prop.key());
        break;
      }
    }
    problems.push_back(InvalidModel(kAliasRuleIr, ": output '", first, "' is annotated, but the model's ir_version is ",
                                    proto.ir_version(), " and graph metadata_props exist only from IR 10"));
  }
  for (const NestedAnnotation& a : nested) {
    problems.push_back(InvalidModel(kAliasRuleControlFlow, ": output '", a.output, "' is annotated ('", a.value,
                                    "') in ", a.where,
                                    ": annotations belong on the main graph, a buffer cannot cross a control-flow "
                                    "or function boundary"));
  }
  // An annotation that does not parse leaves unknown which buffers are
  // shared, so the rules that need the graph wait until it parses.
  StatusOr<std::vector<Alias>> aliases = ReadAliases(proto.graph());
  if (!aliases.ok()) {
    problems.push_back(aliases.status());
    return problems;
  }
  if (aliases->empty()) return problems;

  MainGraph graph(proto.graph());
  std::vector<const Alias*> named;  // those whose names hold
  std::unordered_map<std::string, const Alias*> by_input;
  std::unordered_set<std::string> shared;  // inputs two outputs alias
  for (const Alias& alias : *aliases) {
    if (!CheckNames(alias, graph, &problems)) continue;
    named.push_back(&alias);
    auto [it, first] = by_input.emplace(alias.input, &alias);
    if (!first) {
      problems.push_back(InvalidModel(kAliasRuleTwice, ": output '", alias.output, "' aliases input '", alias.input,
                                      "', which output '", it->second->output, "' already aliases"));
      shared.insert(alias.input);
    }
  }
  for (const Alias* alias : named) {
    CheckTypes(*alias, *graph.input(alias->input), *graph.output(alias->output), &problems);
    // An input two outputs alias is already refused: each writer reading it
    // after the other's write is that same problem, not a second one.
    CheckWriter(*alias, graph, shared.count(alias->input) == 0, &problems);
  }
  return problems;
}

StatusOr<std::vector<Alias>> ValidAliases(const LoadedModel& model) {
  std::vector<Status> problems = ValidateAliases(model);
  if (!problems.empty()) return problems.front();
  return ReadAliases(model.proto->graph());
}

}  // namespace parity
