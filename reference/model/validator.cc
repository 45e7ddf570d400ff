// Structural validation of ONNX models.
#include "reference/model/validator.h"

#include <functional>
#include <map>
#include <set>
#include <unordered_set>

#include "reference/core/tensor.h"
#include "reference/eval/evaluator.h"
#include "reference/eval/registry.h"
#include "reference/model/op_schemas.h"
#include "reference/model/tensor_io.h"

namespace parity {
namespace {

using Names = std::unordered_set<std::string>;

std::string NodeName(const onnx::NodeProto& node, int index) {
  std::string label = "node " + std::to_string(index) + " '" + node.name() + "' (";
  if (!node.domain().empty()) label += node.domain() + ".";
  return label + node.op_type() + ")";
}

class Validator {
 public:
  Validator(const LoadedModel& model, const ValidationOptions& options) : model_(model), options_(options) {
    limit_ = options.max_tensor_bytes > 0 ? options.max_tensor_bytes : Tensor::AllocationLimit();
  }

  std::vector<Status> Run() {
    const onnx::ModelProto& m = *model_.proto;
    if (!m.has_ir_version() || m.ir_version() <= 0) {
      Problem("ir_version is missing or not positive");
    } else if (m.ir_version() > onnx::IR_VERSION) {
      Problem("ir_version ", m.ir_version(), " is newer than the newest this build knows (", onnx::IR_VERSION, ")");
    }
    if (m.opset_import_size() == 0) Problem("the model imports no opset (opset_import is empty)");
    for (const auto& f : m.functions()) {
      local_functions_.insert({std::string(CanonicalDomain(f.domain())), f.name(), f.overload()});
    }
    for (const auto& o : m.opset_import()) {
      const std::string d(CanonicalDomain(o.domain()));
      opset_versions_[d] = o.version();
      if (!opsets_.insert(d).second) Problem("opset_import names domain '", o.domain(), "' twice");
      if (o.version() <= 0) Problem("opset_import of domain '", o.domain(), "' has version ", o.version());
    }
    CheckFunctions();
    if (!m.has_graph()) {
      Problem("the model has no graph");
    } else {
      Names outer;
      CheckGraph(m.graph(), "graph '" + m.graph().name() + "'", outer, /*in_function=*/false);
    }
    return std::move(problems_);
  }

 private:
  template <typename... Args>
  void Problem(const Args&... args) {
    if (problems_.size() < options_.max_problems) {
      problems_.push_back(InvalidModel(model_.name, ": ", args...));
    }
  }

  void CheckDomain(const onnx::NodeProto& node, const std::string& where, const std::set<std::string>& opsets) {
    const std::string d(CanonicalDomain(node.domain()));
    if (!opsets.count(d)) {
      Problem(where, " uses domain '", node.domain(), "', which is not in opset_import");
    }
  }

  void CheckTensorType(const onnx::TypeProto& type, const std::string& where) {
    if (type.has_tensor_type()) {
      const auto& tt = type.tensor_type();
      if (tt.has_elem_type() && tt.elem_type() != 0 && !IsKnownDataType(tt.elem_type())) {
        Problem(where, " has unknown element type ", tt.elem_type());
      }
      if (!tt.has_shape()) return;
      Shape dims;
      bool fully_static = true;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value()) {
          if (d.dim_value() < 0) Problem(where, " has negative dimension ", d.dim_value(), " at axis ", i);
          dims.push_back(d.dim_value());
        } else {
          fully_static = false;
        }
      }
      if (fully_static && tt.has_elem_type() && IsKnownDataType(tt.elem_type())) {
        CheckSize(static_cast<DataType>(tt.elem_type()), dims, where);
      }
    } else if (type.has_sequence_type() && type.sequence_type().has_elem_type()) {
      CheckTensorType(type.sequence_type().elem_type(), where);
    } else if (type.has_optional_type() && type.optional_type().has_elem_type()) {
      CheckTensorType(type.optional_type().elem_type(), where);
    }
  }

  void CheckSize(DataType dtype, const Shape& dims, const std::string& where) {
    for (int64_t d : dims) {
      if (d < 0) return;  // reported elsewhere
    }
    StatusOr<int64_t> count = ElementCount(dims);
    if (!count.ok()) {
      Problem(where, ": ", count.status().message());
      return;
    }
    const int64_t bits = PackedBits(dtype) > 0 ? PackedBits(dtype) : 8;
    if (*count > 0 && (*count > (INT64_MAX - 7) / bits || (*count * bits + 7) / 8 > limit_)) {
      Problem(where, " declares ", DataTypeName(dtype), ShapeToString(dims), " (", *count,
              " elements), over the memory limit of ", limit_, " bytes");
    }
  }

  void CheckInitializer(const onnx::TensorProto& t, const std::string& where) {
    const std::string w = where + " initializer '" + t.name() + "'";
    if (!IsKnownDataType(t.data_type())) {
      Problem(w, " has unknown data_type ", t.data_type());
      return;
    }
    Shape dims(t.dims().begin(), t.dims().end());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) {
        Problem(w, " has negative dimension ", dims[i], " at axis ", i);
        return;
      }
    }
    const size_t before = problems_.size();
    CheckSize(static_cast<DataType>(t.data_type()), dims, w);
    if (problems_.size() != before) return;
    const auto dtype = static_cast<DataType>(t.data_type());
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      Status external = CheckExternalData(t, ExternalDataPolicy{model_.base_dir});
      if (!external.ok()) Problem(w, ": ", external.message());
      return;
    }
    if (t.has_raw_data() && dtype != DataType::kString) {
      const int64_t count = *ElementCount(dims);
      const int64_t want = (count * PackedBits(dtype) + 7) / 8;
      if (static_cast<int64_t>(t.raw_data().size()) != want) {
        Problem(w, " (", DataTypeName(dtype), ShapeToString(dims), ") has ", t.raw_data().size(),
                " bytes of raw_data, expected ", want);
      }
    }
  }

  void CheckAttributes(const onnx::NodeProto& node, const std::string& where, const Names& visible,
                       bool in_function) {
    std::set<std::string> seen;
    for (const auto& a : node.attribute()) {
      const std::string w = where + " attribute '" + a.name() + "'";
      if (a.name().empty()) Problem(where, " has an attribute with no name");
      if (!seen.insert(a.name()).second) Problem(w, " is given twice");
      if (!a.ref_attr_name().empty()) {
        if (!in_function) Problem(w, " refers to attribute '", a.ref_attr_name(), "' outside a function body");
        continue;
      }
      CheckAttributeType(a, w);
      if (a.has_g()) CheckGraph(a.g(), w + " graph '" + a.g().name() + "'", visible, in_function);
      for (const auto& g : a.graphs()) CheckGraph(g, w + " graph '" + g.name() + "'", visible, in_function);
      if (a.has_t()) CheckInitializer(a.t(), w);
    }
  }

  void CheckAttributeType(const onnx::AttributeProto& a, const std::string& where) {
    using A = onnx::AttributeProto;
    // Which field each declared type stores its value in.
    if (!a.has_type() || a.type() == A::UNDEFINED) {
      Problem(where, " has no type");
      return;
    }
    // Whether the field of the declared type holds a value (an empty list is
    // a valid value, so list types always do); runs once per attribute.
    bool holds = true;
    switch (a.type()) {
      case A::FLOAT: holds = a.has_f(); break;
      case A::INT: holds = a.has_i(); break;
      case A::STRING: holds = a.has_s(); break;
      case A::TENSOR: holds = a.has_t(); break;
      case A::GRAPH: holds = a.has_g(); break;
      case A::SPARSE_TENSOR: holds = a.has_sparse_tensor(); break;
      case A::TYPE_PROTO: holds = a.has_tp(); break;
      case A::FLOATS:
      case A::INTS:
      case A::STRINGS:
      case A::TENSORS:
      case A::GRAPHS:
      case A::SPARSE_TENSORS:
      case A::TYPE_PROTOS: break;
      default:
        Problem(where, " has unknown type ", a.type());
        return;
    }
    if (!holds) {
      Problem(where, " is declared ", A::AttributeType_Name(a.type()), " but holds no value of that type");
    }
    // A value stored in a field of another type is a mismatch too.
    const bool list = a.floats_size() || a.ints_size() || a.strings_size() || a.tensors_size() || a.graphs_size() ||
                      a.sparse_tensors_size() || a.type_protos_size();
    const bool scalar_type = a.type() <= A::GRAPH || a.type() == A::SPARSE_TENSOR || a.type() == A::TYPE_PROTO;
    if (scalar_type && list) Problem(where, " is declared ", A::AttributeType_Name(a.type()), " but holds a list");
    if (!scalar_type && (a.has_f() || a.has_i() || a.has_s() || a.has_t() || a.has_g())) {
      Problem(where, " is declared ", A::AttributeType_Name(a.type()), " but holds a single value");
    }
  }

  // `outer`: names visible from enclosing graphs.
  void CheckGraph(const onnx::GraphProto& graph, const std::string& where, const Names& outer, bool in_function) {
    if (++depth_ > 64) {
      Problem(where, ": subgraphs nest deeper than 64 levels");
      --depth_;
      return;
    }
    Names defined;
    auto define = [&](const std::string& name, const std::string& what) {
      if (name.empty()) return;
      if (!defined.insert(name).second) Problem(where, ": value '", name, "' is defined twice (", what, ")");
    };
    std::set<std::string> input_names;
    for (const auto& i : graph.input()) {
      if (!input_names.insert(i.name()).second) Problem(where, ": input '", i.name(), "' is declared twice");
      defined.insert(i.name());
      CheckTensorType(i.type(), where + " input '" + i.name() + "'");
    }
    std::set<std::string> init_names;
    for (const auto& t : graph.initializer()) {
      if (!init_names.insert(t.name()).second) Problem(where, ": initializer '", t.name(), "' is defined twice");
      defined.insert(t.name());  // may share its name with an input (a default value)
      CheckInitializer(t, where);
    }
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const auto& o : graph.node(i).output()) define(o, "output of " + NodeName(graph.node(i), i));
    }
    for (const auto& v : graph.value_info()) CheckTensorType(v.type(), where + " value_info '" + v.name() + "'");
    Names visible = outer;
    visible.insert(defined.begin(), defined.end());
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& node = graph.node(i);
      const std::string w = where + " " + NodeName(node, i);
      if (node.op_type().empty()) Problem(w, " has no op_type");
      if (!in_function) {
        CheckDomain(node, w, opsets_);
        CheckAgainstSchema(node, w, opset_versions_);
      }
      for (const auto& in : node.input()) {
        if (!in.empty() && !visible.count(in)) Problem(w, " reads '", in, "', which no input, initializer or node defines");
      }
      CheckAttributes(node, w, visible, in_function);
    }
    for (const auto& o : graph.output()) {
      if (!visible.count(o.name())) Problem(where, ": output '", o.name(), "' is never computed");
      CheckTensorType(o.type(), where + " output '" + o.name() + "'");
    }
    StatusOr<std::vector<const onnx::NodeProto*>> order = TopologicalOrder(graph.node(), where);
    if (!order.ok()) problems_.push_back(order.status().WithContext(model_.name));
    --depth_;
  }

  void CheckFunctions() {
    const onnx::ModelProto& m = *model_.proto;
    using Id = std::tuple<std::string, std::string, std::string>;
    std::map<Id, const onnx::FunctionProto*> functions;
    for (const auto& f : m.functions()) {
      Id id{std::string(CanonicalDomain(f.domain())), f.name(), f.overload()};
      if (!functions.emplace(id, &f).second) {
        Problem("function ", f.domain(), ".", f.name(), f.overload().empty() ? "" : ":" + f.overload(),
                " is defined twice");
      }
    }
    for (const auto& f : m.functions()) {
      const std::string where = "function " + f.domain() + "." + f.name();
      std::set<std::string> opsets = opsets_;
      std::map<std::string, int64_t> versions = opset_versions_;
      for (const auto& o : f.opset_import()) {
        opsets.insert(std::string(CanonicalDomain(o.domain())));
        versions[std::string(CanonicalDomain(o.domain()))] = o.version();
      }
      Names visible(f.input().begin(), f.input().end());
      for (const auto& n : f.node()) visible.insert(n.output().begin(), n.output().end());
      for (int i = 0; i < f.node_size(); ++i) {
        const auto& node = f.node(i);
        const std::string w = where + " " + NodeName(node, i);
        if (!functions.count({std::string(CanonicalDomain(node.domain())), node.op_type(), node.overload()})) {
          CheckDomain(node, w, opsets);
          CheckAgainstSchema(node, w, versions);
        }
        for (const auto& in : node.input()) {
          if (!in.empty() && !visible.count(in)) Problem(w, " reads '", in, "', which the function does not define");
        }
        CheckAttributes(node, w, visible, /*in_function=*/true);
      }
      for (const auto& o : f.output()) {
        if (!visible.count(o)) Problem(where, ": output '", o, "' is never computed");
      }
      StatusOr<std::vector<const onnx::NodeProto*>> order = TopologicalOrder(f.node(), where);
      if (!order.ok()) problems_.push_back(order.status().WithContext(model_.name));
    }
    // Call cycles: depth-first search over calls between local functions.
    std::map<Id, int> state;  // 0 unvisited, 1 on the stack, 2 done
    std::vector<std::string> stack;
    std::function<void(const Id&)> visit = [&](const Id& id) {
      state[id] = 1;
      stack.push_back(std::get<0>(id).empty() ? std::get<1>(id) : std::get<0>(id) + "." + std::get<1>(id));
      for (const auto& node : functions[id]->node()) {
        Id callee{std::string(CanonicalDomain(node.domain())), node.op_type(), node.overload()};
        if (!functions.count(callee)) continue;
        if (state[callee] == 1) {
          std::string cycle;
          for (const auto& s : stack) cycle += s + " -> ";
          Problem("function call cycle: ", cycle, std::get<1>(callee));
        } else if (state[callee] == 0) {
          visit(callee);
        }
      }
      stack.pop_back();
      state[id] = 2;
    };
    for (const auto& [id, f] : functions) {
      if (state[id] == 0) visit(id);
    }
  }

  // A node of an ONNX domain against the schema of the pinned onnx release:
  // the operator exists at the imported opset, its input and output counts,
  // its attributes' names and types, and the required ones are present.
  void CheckAgainstSchema(const onnx::NodeProto& node, const std::string& where,
                          const std::map<std::string, int64_t>& opset_versions) {
    const std::string domain(CanonicalDomain(node.domain()));
    if (local_functions_.count({domain, node.op_type(), node.overload()})) return;
    const OpSchemas& schemas = OpSchemas::Onnx();
    if (!schemas.KnowsDomain(domain)) return;  // a domain onnx does not define: nothing to check against
    auto version = opset_versions.find(domain);
    if (version == opset_versions.end()) return;  // reported by CheckDomain
    const OpSchemaInfo* schema = schemas.Find(domain, node.op_type(), version->second);
    if (!schema) {
      if (schemas.KnowsOperator(domain, node.op_type())) {
        Problem(where, ": ", node.op_type(), " does not exist yet at opset ", version->second, " of domain '",
                node.domain(), "'");
      } else {
        Problem(where, ": onnx ", OpSchemas::OnnxVersion(), " defines no operator ", node.op_type(),
                " in domain '", node.domain(), "'");
      }
      return;
    }
    const std::string label = StrCat(node.op_type(), "-", schema->since_version);
    int present_inputs = node.input_size();
    while (present_inputs > 0 && node.input(present_inputs - 1).empty()) --present_inputs;
    if (present_inputs > schema->max_inputs) {
      Problem(where, " has ", present_inputs, " inputs; ", label, " takes at most ", schema->max_inputs);
    }
    if (present_inputs < schema->min_inputs) {
      Problem(where, " has ", present_inputs, " inputs; ", label, " needs at least ", schema->min_inputs);
    }
    if (node.output_size() > schema->max_outputs) {
      Problem(where, " has ", node.output_size(), " outputs; ", label, " gives at most ", schema->max_outputs);
    }
    for (const auto& a : node.attribute()) {
      auto it = schema->attributes.find(a.name());
      if (it == schema->attributes.end()) {
        Problem(where, " attribute '", a.name(), "' is not an attribute of ", label);
      } else if (a.has_type() && a.type() != it->second.type && a.ref_attr_name().empty()) {
        Problem(where, " attribute '", a.name(), "' is ",
                onnx::AttributeProto::AttributeType_Name(a.type()), " but ", label, " declares it ",
                onnx::AttributeProto::AttributeType_Name(
                    static_cast<onnx::AttributeProto::AttributeType>(it->second.type)));
      }
    }
    for (const auto& [name, attribute] : schema->attributes) {
      if (!attribute.required) continue;
      bool given = false;
      for (const auto& a : node.attribute()) given |= a.name() == name;
      if (!given) Problem(where, " lacks attribute '", name, "', which ", label, " requires");
    }
  }

  const LoadedModel& model_;
  ValidationOptions options_;
  std::map<std::string, int64_t> opset_versions_;
  std::set<std::tuple<std::string, std::string, std::string>> local_functions_;
  int64_t limit_ = 0;
  int depth_ = 0;
  std::set<std::string> opsets_;
  std::vector<Status> problems_;
};

}  // namespace

std::vector<Status> ValidateModel(const LoadedModel& model, const ValidationOptions& options) {
  if (!model.proto) return {Internal("ValidateModel: no model")};
  return Validator(model, options).Run();
}

}  // namespace parity
