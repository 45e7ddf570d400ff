// The NPU's lowering for one model (npu_lowering.h).
#include "adapters/level_zero/npu_lowering.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include <openvino/core/model.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/result.hpp>
#include <openvino/pass/manager.hpp>
#include <openvino/pass/serialize.hpp>
#include <openvino/runtime/core.hpp>

#include "adapters/openvino/ov_errors.h"
#include "adapters/openvino/ov_tensors.h"
#include "reference/model/graph.h"
#include "reference/model/tensor_io.h"
#include "reference/variants/variants.h"

namespace parity::adapters::level_zero {
namespace {

using openvino::CleanOvMessage;
using openvino::OvElementType;

// OpenVINO's ONNX frontend, loaded once per worker from the wheel's libs.
ov::Core& Core() {
  static ov::Core core;
  return core;
}

// The NPU's graph arguments carry at most five dims (ze_graph_ext.h).
constexpr size_t kMaxRank = PZE_MAX_ARGUMENT_DIMS;

struct Ir {
  std::string xml, weights;
};

Ir Serialize(const std::shared_ptr<ov::Model>& model) {
  std::ostringstream xml, bin;
  ov::pass::Manager manager;
  manager.register_pass<ov::pass::Serialize>(xml, bin);
  manager.run_passes(model);
  return {xml.str(), bin.str()};
}

StatusOr<std::shared_ptr<ov::Model>> ReadOnnx(const std::string& bytes, const std::string& name) {
  try {
    return Core().read_model(bytes, ov::Tensor());
  } catch (const std::exception& e) {
    return Unimplemented(name, ": OpenVINO's ONNX frontend cannot convert it: ", CleanOvMessage(e.what()));
  }
}

void SetType(onnx::ValueInfoProto* info, const std::string& name, std::optional<DataType> type,
             const std::vector<int64_t>* dims) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  if (type) tensor->set_elem_type(static_cast<int32_t>(*type));
  if (dims) {
    onnx::TensorShapeProto* shape = tensor->mutable_shape();
    for (size_t d = 0; d < dims->size(); ++d) {
      if ((*dims)[d] >= 0) {
        shape->add_dim()->set_dim_value((*dims)[d]);
      } else {
        shape->add_dim()->set_dim_param(StrCat(name, "_", d));
      }
    }
  }
}

// Why node `node` cannot be in an NPU graph whatever the driver says: a
// subgraph, or a value whose type or rank the graph's arguments cannot carry.
std::string StaticRefusal(const onnx::NodeProto& node, const StaticFacts& facts) {
  if (graph::HasGraphAttribute(node)) return "control flow runs on the host: the NPU compiles static graphs";
  auto check = [&](const std::string& value) -> std::string {
    if (value.empty()) return "";
    const ValueFacts* f = facts.Find(value);
    if (!f || !f->type) return StrCat("the type of '", value, "' is not known before the run");
    if (*f->type == DataType::kDouble) {
      return StrCat("'", value, "' is float64, which the NPU does not compute");
    }
    if (!OvElementType(*f->type) || *f->type == DataType::kFloat8E4M3FN || *f->type == DataType::kFloat8E5M2) {
      return StrCat("'", value, "' is ", DataTypeName(*f->type), ", which the NPU's graph arguments do not carry");
    }
    if (f->dims && f->dims->size() > kMaxRank) {
      return StrCat("'", value, "' has rank ", f->dims->size(), "; the NPU's graph arguments have at most ", kMaxRank,
                    " dims");
    }
    return "";
  };
  for (const std::string& in : node.input()) {
    if (std::string why = check(in); !why.empty()) return why;
  }
  for (const std::string& out : node.output()) {
    if (std::string why = check(out); !why.empty()) return why;
  }
  return "";
}

// Which value each of a graph's arguments carries: the driver names them
// after the IR's tensors, which are the ONNX values' names; an argument
// whose name is not among them (a frontend may rename a value that flows
// straight through) is matched by position when the counts agree.
int64_t Elements(const Shape& dims) {
  const StatusOr<int64_t> count = ElementCount(dims);
  return count.ok() ? *count : -1;
}

struct ArgumentMap {
  std::vector<size_t> inputs;   // per input argument, in the driver's order: the index into `inputs`
  std::vector<size_t> outputs;  // per wanted output: the index among the graph's outputs
};

StatusOr<ArgumentMap> MapArguments(const NpuGraph& graph, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs, const std::string& name,
                                   const std::vector<DataType>* types = nullptr,
                                   const std::vector<std::vector<int64_t>>* dims = nullptr) {
  std::vector<const NpuGraph::Argument*> in_args, out_args;
  for (const NpuGraph::Argument& arg : graph.arguments()) (arg.input ? in_args : out_args).push_back(&arg);
  ArgumentMap map;
  std::vector<bool> used(inputs.size(), false);
  for (const NpuGraph::Argument* arg : in_args) {
    const auto found = std::find(inputs.begin(), inputs.end(), arg->name);
    map.inputs.push_back(found == inputs.end() ? inputs.size() : static_cast<size_t>(found - inputs.begin()));
    if (found != inputs.end()) used[map.inputs.back()] = true;
  }
  for (size_t a = 0; a < in_args.size(); ++a) {
    if (map.inputs[a] < inputs.size()) continue;
    if (in_args.size() == inputs.size()) {
      map.inputs[a] = a;
      continue;
    }
    // A parameter renamed by the frontend (a value that flows straight to
    // an output takes the output's name): the one value left of its type
    // and size.
    size_t match = inputs.size(), matches = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!used[i] && types && (*types)[i] == in_args[a]->type && dims &&
          Elements((*dims)[i]) == Elements(in_args[a]->dims)) {
        match = i;
        ++matches;
      }
    }
    if (matches != 1) {
      return Internal(name, ": the driver's graph takes '", in_args[a]->name, "', which is none of the ",
                      inputs.size(), " values it was compiled for");
    }
    map.inputs[a] = match;
    used[match] = true;
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    size_t index = out_args.size();
    for (size_t a = 0; a < out_args.size(); ++a) {
      if (out_args[a]->name == outputs[k]) index = a;
    }
    if (index == out_args.size() && out_args.size() == outputs.size()) index = k;
    if (index == out_args.size()) {
      return Internal(name, ": the driver's graph gives no output for '", outputs[k], "'");
    }
    map.outputs.push_back(index);
  }
  return map;
}

// Runs `graph` on the inputs `map` picks from `given`, and gives the
// outputs reshaped to `shapes`, in the wanted order.
StatusOr<std::vector<Value>> RunMapped(NpuGraph& graph, const ArgumentMap& map,
                                       const std::vector<const Tensor*>& given, const std::vector<Shape>& shapes) {
  std::vector<const Tensor*> inputs;
  for (size_t index : map.inputs) inputs.push_back(given[index]);
  PARITY_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, graph.Run(inputs));
  std::vector<Value> values;
  for (size_t k = 0; k < map.outputs.size(); ++k) {
    const Tensor& out = outputs[map.outputs[k]];
    // The shape comes from the model (a blob's value_info), the data from the driver.
    if (Elements(shapes[k]) != out.size()) {
      return InvalidModel(graph.name(), ": output ", k, " has ", out.size(), " elements from the NPU, but its shape ",
                          ShapeToString(shapes[k]), " holds ", Elements(shapes[k]));
    }
    values.push_back(Value::FromTensor(out.Reshaped(shapes[k])));
  }
  return values;
}

// One region compiled by the driver: compiled at creation when the facts
// know every input's shape, else at the first run with each new set of
// input shapes (the NPU compiles static shapes only).
class NpuRegionNode : public LoweredNode {
 public:
  NpuRegionNode(NpuDevice& device, std::shared_ptr<const onnx::ModelProto> model, RegionCut cut,
                std::shared_ptr<const StaticFacts> facts, std::string name)
      : device_(device), model_(std::move(model)), cut_(std::move(cut)), facts_(std::move(facts)),
        name_(std::move(name)) {}

  // Compiles now when every input's shape is known.
  Status CompileIfStatic() {
    std::vector<std::vector<int64_t>> dims;
    for (const std::string& in : cut_.inputs) {
      const std::vector<int64_t>* known = facts_->StaticDims(in);
      if (!known) {
        deferred_ = true;
        return Status::Ok();
      }
      dims.push_back(*known);
    }
    return Compile(dims, nullptr).status();
  }
  bool deferred() const override { return deferred_; }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    std::vector<const Tensor*> inputs;
    std::vector<std::vector<int64_t>> dims;
    for (size_t i = 0; i < cut_.inputs.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
      inputs.push_back(t);
      dims.push_back(t->shape());
    }
    auto found = compiled_.find(Key(dims, &inputs));
    if (found == compiled_.end()) {
      PARITY_ASSIGN_OR_RETURN(Compiled * made, Compile(dims, &inputs));
      (void)made;
      found = compiled_.find(Key(dims, &inputs));
    }
    Compiled& compiled = found->second;
    std::vector<const Tensor*> given;
    for (size_t i : compiled.kept) given.push_back(inputs[i]);
    return RunMapped(*compiled.region.graph, compiled.map, given, compiled.region.output_shapes);
  }

 private:
  struct Compiled {
    CompiledRegion region;
    ArgumentMap map;
    std::vector<size_t> kept;  // the cut's inputs the graph takes (the others were compiled in)
  };

  // An input a specialized graph takes as a constant: a small integer
  // tensor, the kind that holds shapes, sizes and axes.
  static bool Bakeable(const Tensor& t) {
    return (t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32) && t.size() <= 64;
  }

  // The graphs by their inputs' shapes and, once the region is
  // specialized, the values of its bakeable inputs.
  std::string Key(const std::vector<std::vector<int64_t>>& dims, const std::vector<const Tensor*>* inputs) const {
    std::string key;
    for (size_t i = 0; i < dims.size(); ++i) {
      key += ShapeToString(dims[i]);
      if (specialized_ && inputs && Bakeable(*(*inputs)[i])) {
        key.append(reinterpret_cast<const char*>((*inputs)[i]->raw_bytes()), (*inputs)[i]->byte_size());
      }
      key += '|';
    }
    return key;
  }

  // `inputs` (null at creation) are the run's values: a region whose
  // output shapes depend on input values (a size computed on the host) is
  // compiled again with its small integer inputs as constants, per value.
  StatusOr<Compiled*> Compile(const std::vector<std::vector<int64_t>>& dims, const std::vector<const Tensor*>* inputs) {
    for (const auto& d : dims) {
      if (d.size() > kMaxRank) {
        return InvalidArgument(name_, ": an input of rank ", d.size(), "; the NPU's graph arguments have at most ",
                               kMaxRank, " dims");
      }
    }
    Compiled compiled;
    RegionCut cut = cut_;
    cut.inputs.clear();
    std::vector<std::vector<int64_t>> kept_dims;
    std::vector<DataType> types;
    std::map<std::string, const Tensor*> constants;
    for (size_t i = 0; i < cut_.inputs.size(); ++i) {
      if (specialized_ && inputs && Bakeable(*(*inputs)[i])) {
        constants[cut_.inputs[i]] = (*inputs)[i];
        continue;
      }
      compiled.kept.push_back(i);
      cut.inputs.push_back(cut_.inputs[i]);
      kept_dims.push_back(dims[i]);
      types.push_back(facts_->TypeOf(cut_.inputs[i]).value_or(DataType::kUndefined));
    }
    PARITY_ASSIGN_OR_RETURN(std::string bytes, RegionModelBytes(*model_, cut, *facts_, name_, &kept_dims, &constants));
    bool dynamic_output = false;
    StatusOr<CompiledRegion> region = CompileRegion(device_, bytes, name_, &dynamic_output);
    if (!region.ok()) {
      const bool can_specialize = inputs && std::any_of(inputs->begin(), inputs->end(),
                                                         [](const Tensor* t) { return Bakeable(*t); });
      if (dynamic_output && !specialized_ && can_specialize) {
        specialized_ = true;
        return Compile(dims, inputs);
      }
      return region.status();
    }
    compiled.region = std::move(region).value();
    PARITY_ASSIGN_OR_RETURN(compiled.map,
                            MapArguments(*compiled.region.graph, cut.inputs, cut.outputs, name_, &types, &kept_dims));
    return &compiled_.emplace(Key(dims, inputs), std::move(compiled)).first->second;
  }

  NpuDevice& device_;
  std::shared_ptr<const onnx::ModelProto> model_;
  RegionCut cut_;
  std::shared_ptr<const StaticFacts> facts_;
  std::string name_;
  bool deferred_ = false;
  bool specialized_ = false;
  std::map<std::string, Compiled> compiled_;
};

// A Compiled call whose blob the driver loads, with no compilation.
class NpuBlobNode : public LoweredNode {
 public:
  NpuBlobNode(std::unique_ptr<NpuGraph> graph, ArgumentMap map, std::vector<Shape> output_shapes)
      : graph_(std::move(graph)), map_(std::move(map)), output_shapes_(std::move(output_shapes)) {}

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      if (!ctx.has_input(i)) continue;
      PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
      inputs.push_back(t);
    }
    return RunMapped(*graph_, map_, inputs, output_shapes_);
  }

 private:
  std::unique_ptr<NpuGraph> graph_;
  ArgumentMap map_;
  std::vector<Shape> output_shapes_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerBlob(NpuDevice& device, const NodeView& view,
                                                 const std::string& model_name) {
  const std::string identifier = view.GetString(kIdentifierAttr);
  const std::string& own = device.description().blob_identifier;
  if (identifier != own) {
    return NotLowered("blob '", identifier, "' is not this NPU's (", own, ")");
  }
  const onnx::AttributeProto* binary = view.attribute(kBinaryAttr);
  if (!binary || !binary->has_t() || binary->t().string_data_size() != 1) {
    return InvalidModel(model_name, ": ", view.label(), " has no ", kBinaryAttr, " string tensor");
  }
  std::vector<Shape> shapes;
  for (int k = 0; k < view.node().output_size(); ++k) {
    const std::vector<int64_t>* dims = view.facts().StaticDims(view.node().output(k));
    if (!dims) {
      return InvalidModel(model_name, ": ", view.label(), " output '", view.node().output(k),
                          "' has no declared static shape (value_info), which the blob's outputs are read with");
    }
    shapes.push_back(*dims);
  }
  const std::string graph_name = StrCat(model_name, "/", view.label());
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<NpuGraph> graph, device.LoadBlob(binary->t().string_data(0), graph_name));
  std::vector<std::string> inputs, outputs;
  for (const std::string& in : view.node().input()) {
    if (!in.empty()) inputs.push_back(in);
  }
  outputs.assign(view.node().output().begin(), view.node().output().end());
  PARITY_ASSIGN_OR_RETURN(ArgumentMap map, MapArguments(*graph, inputs, outputs, graph_name));
  return std::unique_ptr<LoweredNode>(new NpuBlobNode(std::move(graph), std::move(map), std::move(shapes)));
}

}  // namespace

StatusOr<std::string> RegionModelBytes(const onnx::ModelProto& model, const RegionCut& cut, const StaticFacts& facts,
                                       const std::string& name, const std::vector<std::vector<int64_t>>* input_dims,
                                       const std::map<std::string, const Tensor*>* constants) {
  onnx::ModelProto out;
  out.set_ir_version(model.ir_version());
  *out.mutable_opset_import() = model.opset_import();
  *out.mutable_functions() = model.functions();
  onnx::GraphProto* g = out.mutable_graph();
  g->set_name(name);
  const onnx::GraphProto& graph = model.graph();
  std::set<std::string> inputs(cut.inputs.begin(), cut.inputs.end());
  std::set<std::string> read;
  for (int n : cut.nodes) {
    *g->add_node() = graph.node(n);
    for (const std::string& in : graph.node(n).input()) read.insert(in);
    std::vector<std::string_view> outer;
    graph::CollectSubgraphOuterReads(graph.node(n), &outer);
    read.insert(outer.begin(), outer.end());
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (read.count(init.name()) && !inputs.count(init.name()) && !(constants && constants->count(init.name()))) {
      *g->add_initializer() = init;
    }
  }
  if (constants) {
    for (const auto& [value, tensor] : *constants) {
      onnx::TensorProto* init = g->add_initializer();
      TensorToProto(*tensor, init);
      init->set_name(value);
    }
  }
  for (size_t i = 0; i < cut.inputs.size(); ++i) {
    const std::string& in = cut.inputs[i];
    const std::vector<int64_t>* dims = input_dims ? &(*input_dims)[i] : nullptr;
    const ValueFacts* f = facts.Find(in);
    if (!dims && f && f->dims) dims = &*f->dims;
    SetType(g->add_input(), in, f ? f->type : std::nullopt, dims);
  }
  for (const std::string& o : cut.outputs) {
    const ValueFacts* f = facts.Find(o);
    SetType(g->add_output(), o, f ? f->type : std::nullopt, nullptr);
  }
  std::string bytes;
  if (!out.SerializeToString(&bytes)) return Internal(name, ": the region's model does not serialize");
  return bytes;
}

StatusOr<CompiledRegion> CompileRegion(NpuDevice& device, const std::string& onnx_bytes, const std::string& name,
                                       bool* dynamic_output) {
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<ov::Model> model, ReadOnnx(onnx_bytes, name));
  CompiledRegion region;
  try {
    for (const auto& result : model->outputs()) {
      if (result.get_partial_shape().is_dynamic()) {
        if (dynamic_output) *dynamic_output = true;
        return Internal(name, ": output '", result.get_any_name(), "' has no static shape (",
                        result.get_partial_shape().to_string(), ") although every input has one");
      }
      const ov::Shape shape = result.get_shape();
      region.output_shapes.emplace_back(shape.begin(), shape.end());
    }
  } catch (const std::exception& e) {
    return Internal(name, ": reading the region's output shapes: ", CleanOvMessage(e.what()));
  }
  const Ir ir = Serialize(model);
  PARITY_ASSIGN_OR_RETURN(region.graph, device.CompileIr(ir.xml, ir.weights, name));
  return region;
}

StatusOr<std::shared_ptr<const Lowering>> MakeNpuLowering(const LoadedModel& loaded, NpuDevice& device) {
  const onnx::ModelProto& model = *loaded.proto;
  const onnx::GraphProto& graph = model.graph();
  auto facts = std::make_shared<const StaticFacts>(StaticFacts::Infer(graph));
  const int count = graph.node_size();
  std::unordered_map<std::string, int> producer;
  std::map<std::string, std::vector<int>> consumers;
  for (int i = 0; i < count; ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (!out.empty()) producer[out] = i;
    }
    std::set<std::string> reads(graph.node(i).input().begin(), graph.node(i).input().end());
    std::vector<std::string_view> outer;
    graph::CollectSubgraphOuterReads(graph.node(i), &outer);
    reads.insert(outer.begin(), outer.end());
    for (const std::string& r : reads) {
      if (!r.empty()) consumers[r].push_back(i);
    }
  }

  // Why each node stays on the host ("" for those the NPU takes).
  std::vector<std::string> refusal(static_cast<size_t>(count));
  std::set<std::string> local_functions;
  for (const auto& f : model.functions()) local_functions.insert(StrCat(CanonicalDomain(f.domain()), ":", f.name()));
  for (int i = 0; i < count; ++i) {
    const onnx::NodeProto& node = graph.node(i);
    refusal[static_cast<size_t>(i)] = local_functions.count(StrCat(CanonicalDomain(node.domain()), ":", node.op_type()))
                                          ? "a model-local function"
                                          : StaticRefusal(node, *facts);
  }

  // The driver's answer over the whole model's IR. Each OpenVINO operation
  // belongs to the ONNX node whose output it produces, or else to the node
  // of the first operation that reads it (what a frontend adds inside a
  // node's translation has no ONNX name of its own).
  std::string whole;
  if (!model.SerializeToString(&whole)) return Internal(loaded.name, ": the model does not serialize");
  StatusOr<std::shared_ptr<ov::Model>> converted = ReadOnnx(whole, loaded.name);
  auto judge_ops = [&](const std::shared_ptr<ov::Model>& ov_model, const std::set<std::string>& supported,
                       const std::function<int(const ov::Node*)>& owner_of) {
    std::map<int, std::string> missing;
    for (const std::shared_ptr<ov::Node>& op : ov_model->get_ordered_ops()) {
      if (ov::is_type<ov::op::v0::Parameter>(op) || ov::is_type<ov::op::v0::Result>(op)) continue;
      if (supported.count(op->get_friendly_name())) continue;
      const int owner = owner_of(op.get());
      if (owner < 0) continue;
      std::string& list = missing[owner];
      if (std::count(list.begin(), list.end(), ',') < 3) {
        list += StrCat(list.empty() ? "" : ", ", op->get_type_name(), " '", op->get_friendly_name(), "'");
      }
    }
    for (const auto& [node, list] : missing) {
      std::string& why = refusal[static_cast<size_t>(node)];
      if (why.empty()) why = StrCat("the NPU driver does not run ", list);
    }
  };
  if (converted.ok()) {
    std::shared_ptr<ov::Model> ov_model = *converted;
    const Ir ir = Serialize(ov_model);
    PARITY_ASSIGN_OR_RETURN(std::vector<std::string> layers, device.SupportedLayers(ir.xml, ir.weights, loaded.name));
    const std::set<std::string> supported(layers.begin(), layers.end());
    std::unordered_map<const ov::Node*, int> owner;
    const std::vector<std::shared_ptr<ov::Node>> ops = ov_model->get_ordered_ops();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const ov::Node* op = it->get();
      int found = -1;
      for (const ov::Output<const ov::Node>& out : op->outputs()) {
        for (const std::string& n : out.get_names()) {
          const auto p = producer.find(n);
          if (p != producer.end() && found < 0) found = p->second;
        }
      }
      for (const ov::Output<const ov::Node>& out : op->outputs()) {
        for (const ov::Input<ov::Node>& reader : out.get_target_inputs()) {
          const auto o = owner.find(reader.get_node());
          if (o != owner.end() && found < 0) found = o->second;
        }
      }
      if (found >= 0) owner[op] = found;
    }
    judge_ops(ov_model, supported, [&](const ov::Node* op) {
      const auto o = owner.find(op);
      return o == owner.end() ? -1 : o->second;
    });
    // With every graph input's shape known, an operation whose output
    // shape OpenVINO still cannot tell has a shape that depends on input
    // values (NonZero, a Resize whose sizes are an input): no static graph
    // can hold it.
    bool inputs_static = true;
    for (const auto& parameter : ov_model->get_parameters()) {
      inputs_static &= parameter->get_output_partial_shape(0).is_static();
    }
    {
      for (const std::shared_ptr<ov::Node>& each : ops) {
        const ov::Node* op = each.get();
        const auto o = owner.find(op);
        if (o == owner.end()) continue;
        std::string& why = refusal[static_cast<size_t>(o->second)];
        if (!why.empty()) continue;
        for (size_t k = 0; k < op->get_input_size() && why.empty(); ++k) {
          const ov::PartialShape& shape = op->get_input_partial_shape(k);
          if (shape.rank().is_static() && shape.rank().get_length() > static_cast<int64_t>(kMaxRank)) {
            why = StrCat(op->get_type_name(), " '", op->get_friendly_name(), "' reads a value of rank ",
                         shape.rank().get_length(), "; the NPU's graph arguments have at most ", kMaxRank, " dims");
          }
        }
        for (size_t k = 0; k < op->get_output_size() && why.empty(); ++k) {
          const ov::PartialShape& shape = op->get_output_partial_shape(k);
          if (shape.rank().is_static() && shape.rank().get_length() > static_cast<int64_t>(kMaxRank)) {
            why = StrCat(op->get_type_name(), " '", op->get_friendly_name(), "' makes a value of rank ",
                         shape.rank().get_length(), "; the NPU's graph arguments have at most ", kMaxRank, " dims");
            break;
          }
          if (inputs_static && shape.is_dynamic()) {
            why = StrCat("its output shape depends on input values (", op->get_type_name(), " '",
                         op->get_friendly_name(), "' gives ", op->get_output_partial_shape(k).to_string(),
                         "), which a static NPU graph cannot hold");
            break;
          }
        }
      }
    }
  } else {
    // The frontend refuses the whole: each node is converted and asked
    // about on its own, and those it refuses stay on the host.
    for (int i = 0; i < count; ++i) {
      std::string& why = refusal[static_cast<size_t>(i)];
      if (!why.empty()) continue;
      RegionCut cut{{i}, {}, {}};
      for (const std::string& in : graph.node(i).input()) {
        if (!in.empty() && std::find(cut.inputs.begin(), cut.inputs.end(), in) == cut.inputs.end()) {
          bool baked = false;
          for (const auto& init : graph.initializer()) baked |= init.name() == in;
          for (const auto& gi : graph.input()) baked &= gi.name() != in;
          if (!baked) cut.inputs.push_back(in);
        }
      }
      for (const std::string& out : graph.node(i).output()) {
        if (!out.empty()) cut.outputs.push_back(out);
      }
      const std::string node_name = StrCat(loaded.name, "/", graph::DescribeNode(graph.node(i), i));
      PARITY_ASSIGN_OR_RETURN(std::string bytes, RegionModelBytes(model, cut, *facts, node_name));
      StatusOr<std::shared_ptr<ov::Model>> one = ReadOnnx(bytes, node_name);
      if (!one.ok()) {
        why = one.status().message();
        const std::string prefix = node_name + ": ";
        if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
        continue;
      }
      const Ir ir = Serialize(*one);
      PARITY_ASSIGN_OR_RETURN(std::vector<std::string> layers, device.SupportedLayers(ir.xml, ir.weights, node_name));
      const std::set<std::string> supported(layers.begin(), layers.end());
      judge_ops(*one, supported, [i](const ov::Node*) { return i; });
    }
  }

  // Regions: runs of nodes the NPU takes that are neighbours in the
  // topological order the partition walks, so that no path leaves a region
  // and comes back (each region is convex, and one node of the graph).
  PARITY_ASSIGN_OR_RETURN(std::vector<const onnx::NodeProto*> order, graph::TopologicalOrder(graph.node(), loaded.name));
  std::unordered_map<const onnx::NodeProto*, int> position;
  for (int i = 0; i < count; ++i) position[&graph.node(i)] = i;
  std::set<std::string> graph_outputs;
  for (const auto& o : graph.output()) graph_outputs.insert(o.name());
  std::set<std::string> overridable;  // initializers that are graph inputs too
  for (const auto& gi : graph.input()) overridable.insert(gi.name());
  std::set<std::string> constants;
  for (const auto& init : graph.initializer()) {
    if (!overridable.count(init.name())) constants.insert(init.name());
  }
  auto regions = std::make_shared<std::map<int, RegionCut>>();  // by first node
  // Compiled calls are the blobs' business, never part of a region.
  const std::string& target = device.description().target;
  auto is_blob = [&](const onnx::NodeProto& n) {
    return !target.empty() && n.op_type() == kCompiledOp && CanonicalDomain(n.domain()) == target;
  };
  RegionCut current;
  auto close = [&] {
    if (current.nodes.empty()) return;
    std::set<int> members(current.nodes.begin(), current.nodes.end());
    std::set<std::string> made;
    for (int n : current.nodes) {
      for (const std::string& in : graph.node(n).input()) {
        if (in.empty() || made.count(in) || constants.count(in)) continue;
        if (std::find(current.inputs.begin(), current.inputs.end(), in) == current.inputs.end()) {
          current.inputs.push_back(in);
        }
      }
      for (const std::string& out : graph.node(n).output()) {
        if (out.empty()) continue;
        made.insert(out);
        bool outside = graph_outputs.count(out) > 0;
        const auto readers = consumers.find(out);
        if (readers != consumers.end()) {
          for (int r : readers->second) outside = outside || !members.count(r);
        }
        if (outside) current.outputs.push_back(out);
      }
    }
    (*regions)[current.nodes.front()] = std::move(current);
    current = RegionCut{};
  };
  for (const onnx::NodeProto* node : order) {
    const int i = position.at(node);
    if (refusal[static_cast<size_t>(i)].empty() && !is_blob(*node)) {
      current.nodes.push_back(i);
    } else {
      close();
    }
  }
  close();

  auto lowering = std::make_shared<Lowering>();
  auto shared_model = loaded.proto;
  auto refusals = std::make_shared<std::vector<std::string>>(std::move(refusal));
  const std::string model_name = loaded.name;
  NpuDevice* npu = &device;
  RegionFn region_fn = [=](const RegionView& view) -> StatusOr<std::optional<RegionClaim>> {
    const int anchor = view.anchor();
    const auto found = regions->find(anchor);
    if (found == regions->end()) {
      const std::string& why = (*refusals)[static_cast<size_t>(anchor)];
      if (!why.empty()) return NotLowered(why);
      return std::optional<RegionClaim>();
    }
    const RegionCut& cut = found->second;
    const std::string region_name = StrCat(model_name, "/npu_region_", anchor);
    auto runner = std::make_unique<NpuRegionNode>(*npu, shared_model, cut, facts, region_name);
    PARITY_RETURN_IF_ERROR(runner->CompileIfStatic());
    RegionClaim claim;
    claim.nodes = cut.nodes;
    claim.inputs = cut.inputs;
    claim.outputs = cut.outputs;
    claim.runner = std::move(runner);
    return std::optional<RegionClaim>(std::move(claim));
  };
  std::set<std::pair<std::string, std::string>> op_types;
  for (const onnx::NodeProto& node : graph.node()) {
    op_types.insert({std::string(CanonicalDomain(node.domain())), node.op_type()});
  }
  for (const auto& [domain, op_type] : op_types) {
    if (!target.empty() && domain == target && op_type == kCompiledOp) {
      lowering->Add(domain, op_type, [npu, model_name](const NodeView& view) {
        return LowerBlob(*npu, view, model_name);
      });
      continue;
    }
    lowering->AddRegion(domain, op_type, region_fn);
  }
  return std::shared_ptr<const Lowering>(std::move(lowering));
}

}  // namespace parity::adapters::level_zero
