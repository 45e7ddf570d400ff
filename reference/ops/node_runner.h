// NodeRunner: builds a one-node model and runs it on the reference
// evaluator; a small fluent builder for kernel tests.
//
//   auto out = NodeRunner("Add").Opset(18).Input(a).Input(b).Run();
#pragma once

#include <string>
#include <vector>

#include "reference/eval/evaluator.h"

namespace parity {

class NodeRunner {
 public:
  explicit NodeRunner(std::string op_type, std::string domain = "");

  NodeRunner& Opset(int64_t version);
  // Another opset import (for nodes of other domains).
  NodeRunner& Import(const std::string& domain, int64_t version);
  NodeRunner& Input(Tensor tensor);
  NodeRunner& Input(Value value);
  NodeRunner& AbsentInput();  // an optional input left out ("")
  // A graph input that the node does not take, named like the others
  // ("input_K"): a value its subgraphs can read from the outer scope.
  NodeRunner& ScopeInput(Value value);
  NodeRunner& Outputs(int count);
  NodeRunner& Attr(const std::string& name, int64_t value);
  NodeRunner& Attr(const std::string& name, float value);
  NodeRunner& Attr(const std::string& name, const std::string& value);
  NodeRunner& Attr(const std::string& name, const std::vector<int64_t>& values);
  NodeRunner& Attr(const std::string& name, const std::vector<float>& values);
  NodeRunner& Attr(const std::string& name, const Tensor& value);
  NodeRunner& Attr(const std::string& name, const onnx::GraphProto& graph);
  NodeRunner& Registry(const OpRegistry* registry);

  // The model it would run (for inspection).
  onnx::ModelProto Model() const;
  StatusOr<std::vector<Value>> Run() const;
  // The first output as a tensor; an error if the run failed.
  StatusOr<Tensor> RunOne() const;

 private:
  onnx::NodeProto node_;
  std::vector<std::pair<std::string, int64_t>> opsets_;
  std::vector<Value> inputs_;
  const OpRegistry* registry_ = nullptr;
};

}  // namespace parity
