// One-node models for kernel tests.
#include "reference/ops/node_runner.h"

#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

void SetType(const Value& value, onnx::TypeProto* type) {
  if (value.is_tensor()) {
    type->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(value.tensor().dtype()));
    auto* shape = type->mutable_tensor_type()->mutable_shape();
    for (int64_t d : value.tensor().shape()) shape->add_dim()->set_dim_value(d);
  } else if (value.is_sequence()) {
    type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
        static_cast<int32_t>(value.sequence_element_type()));
  } else if (value.is_optional()) {
    auto* elem = type->mutable_optional_type()->mutable_elem_type();
    if (value.has_element()) SetType(value.element(), elem);
    else elem->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(DataType::kFloat));
  }
}

}  // namespace

NodeRunner::NodeRunner(std::string op_type, std::string domain) {
  node_.set_op_type(std::move(op_type));
  node_.set_domain(domain);
  node_.set_name("node");
  node_.add_output("output_0");
  opsets_.emplace_back(domain, domain.empty() ? 23 : 1);
}

NodeRunner& NodeRunner::Opset(int64_t version) {
  opsets_[0].second = version;
  return *this;
}

NodeRunner& NodeRunner::Import(const std::string& domain, int64_t version) {
  opsets_.emplace_back(domain, version);
  return *this;
}

NodeRunner& NodeRunner::Input(Tensor tensor) { return Input(Value::FromTensor(std::move(tensor))); }

NodeRunner& NodeRunner::Input(Value value) {
  node_.add_input("input_" + std::to_string(inputs_.size()));
  inputs_.push_back(std::move(value));
  return *this;
}

NodeRunner& NodeRunner::ScopeInput(Value value) {
  inputs_.push_back(std::move(value));
  return *this;
}

NodeRunner& NodeRunner::AbsentInput() {
  node_.add_input("");
  return *this;
}

NodeRunner& NodeRunner::Outputs(int count) {
  node_.clear_output();
  for (int i = 0; i < count; ++i) node_.add_output("output_" + std::to_string(i));
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, int64_t value) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, float value) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, const std::string& value) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, const std::vector<float>& values) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, const Tensor& value) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  TensorToProto(value, a->mutable_t());
  return *this;
}

NodeRunner& NodeRunner::Attr(const std::string& name, const onnx::GraphProto& graph) {
  auto* a = node_.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = graph;
  return *this;
}

NodeRunner& NodeRunner::Registry(const OpRegistry* registry) {
  registry_ = registry;
  return *this;
}

onnx::ModelProto NodeRunner::Model() const {
  onnx::ModelProto model;
  model.set_ir_version(10);
  for (const auto& [domain, version] : opsets_) {
    auto* o = model.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  auto* graph = model.mutable_graph();
  graph->set_name("node_runner");
  *graph->add_node() = node_;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    auto* in = graph->add_input();
    in->set_name("input_" + std::to_string(i));
    SetType(inputs_[i], in->mutable_type());
  }
  for (const auto& o : node_.output()) {
    if (!o.empty()) graph->add_output()->set_name(o);
  }
  return model;
}

StatusOr<std::vector<Value>> NodeRunner::Run() const {
  LoadedModel loaded;
  loaded.proto = std::make_shared<onnx::ModelProto>(Model());
  loaded.name = "NodeRunner(" + node_.op_type() + ")";
  EvalOptions options;
  options.registry = registry_ != nullptr ? registry_ : &ReferenceRegistry();
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(std::move(loaded), options));
  return evaluator->Run(inputs_);
}

StatusOr<Tensor> NodeRunner::RunOne() const {
  PARITY_ASSIGN_OR_RETURN(std::vector<Value> outputs, Run());
  if (outputs.empty() || !outputs[0].is_tensor()) return Internal("NodeRunner: no tensor output");
  return outputs[0].tensor();
}

}  // namespace parity
