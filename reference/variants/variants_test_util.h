// Test-only helpers for the variant tests (included by *_test.cc alone):
// models from ONNX text, entries written as nodes, a model's problems (all or
// by rule), and runs of the reference evaluator to compare a resolved model
// with its main graph.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "reference/eval/evaluator.h"
#include "reference/model/text_syntax.h"
#include "reference/model/validator.h"
#include "reference/variants/variants.h"
#include "reference/ops/reference_registry.h"

namespace parity::variants_test {

inline onnx::ModelProto Model(std::string_view text) {
  StatusOr<onnx::ModelProto> model = ParseModelText(text);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : onnx::ModelProto();
}

inline LoadedModel Loaded(const onnx::ModelProto& model) {
  return LoadedModel{std::make_shared<onnx::ModelProto>(model), "m.onnx", ""};
}

// Appends to `graph` an entry written as a node of the text syntax, e.g.
// "y = com.example.Fused <alpha = 1.0> (a, b)" (an entry has NodeProto's
// field numbers, so the node's bytes parse as one), with metadata pairs.
inline onnx::EquivalentSubgraphProto& AddEntry(onnx::GraphProto& graph, std::string_view node,
                                               const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  StatusOr<onnx::GraphProto> holder = ParseGraphText(std::string("holder () => () { ") + std::string(node) + " }");
  EXPECT_TRUE(holder.ok()) << holder.status().ToString();
  onnx::EquivalentSubgraphProto& entry = *graph.add_equivalent_subgraph();
  if (holder.ok() && holder->node_size() == 1) {
    onnx::NodeProto call = holder->node(0);
    call.clear_name();
    EXPECT_TRUE(entry.ParseFromString(call.SerializeAsString()));
  }
  for (const auto& [key, value] : metadata) {
    auto* prop = entry.add_metadata_props();
    prop->set_key(key);
    prop->set_value(value);
  }
  return entry;
}

inline std::vector<std::pair<std::string, std::string>> Target(const std::string& target) {
  return {{kTargetKey, target}};
}

// Makes `entry` a Compiled call for `target` with an unstamped hash.
inline void MakeCompiled(onnx::EquivalentSubgraphProto& entry, const std::string& target,
                         const std::string& identifier = "com.example.blob/1", const std::string& blob = "BLOB") {
  entry.set_op_type(kCompiledOp);
  auto* hash = entry.add_attribute();
  hash->set_name(kHashAttr);
  hash->set_type(onnx::AttributeProto::STRING);
  hash->set_s("");
  auto* id = entry.add_attribute();
  id->set_name(kIdentifierAttr);
  id->set_type(onnx::AttributeProto::STRING);
  id->set_s(identifier);
  auto* binary = entry.add_attribute();
  binary->set_name(kBinaryAttr);
  binary->set_type(onnx::AttributeProto::TENSOR);
  binary->mutable_t()->set_data_type(onnx::TensorProto::STRING);
  binary->mutable_t()->add_string_data(blob);
  auto* prop = entry.add_metadata_props();
  prop->set_key(kTargetKey);
  prop->set_value(target);
}

inline std::vector<std::string> Messages(const std::vector<Status>& problems) {
  std::vector<std::string> messages;
  for (const Status& p : problems) messages.push_back(p.message());
  return messages;
}

inline std::string Joined(const std::vector<Status>& problems) {
  std::string text;
  for (const Status& p : problems) text += p.message() + "\n";
  return text;
}

// The variant problems of `model`, which must pass the IR's rules (a test
// failure where it does not).
inline std::vector<Status> Validate(const onnx::ModelProto& model) {
  const LoadedModel loaded = Loaded(model);
  std::vector<Status> ir = ValidateModel(loaded);
  EXPECT_TRUE(ir.empty()) << "the test model itself is invalid: " << Joined(ir);
  return ValidateVariants(loaded);
}

// The messages that start with `rule` and a colon.
inline std::vector<std::string> WithRule(const std::vector<Status>& problems, const std::string& rule) {
  std::vector<std::string> found;
  for (const Status& p : problems) {
    if (p.message().rfind(rule + ": ", 0) == 0) found.push_back(p.message());
  }
  return found;
}

// Runs `model` on float inputs (in graph input order) and returns its outputs' values.
// Runs `model` on `values` with the evaluator; every output as doubles
// (empty, with a test failure, when it does not run).
inline std::vector<std::vector<double>> RunValues(const onnx::ModelProto& model, const std::vector<Value>& values) {
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(Loaded(model), WithReferenceKernels());
  EXPECT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  if (!evaluator.ok()) return {};
  StatusOr<std::vector<Value>> outputs = (*evaluator)->Run(values);
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  std::vector<std::vector<double>> result;
  for (const Value& v : *outputs) result.push_back(v.tensor().ToDoubles());
  return result;
}

inline std::vector<std::vector<double>> RunFloats(const onnx::ModelProto& model,
                                                  const std::vector<std::pair<Shape, std::vector<double>>>& inputs) {
  std::vector<Value> values;
  for (const auto& [shape, data] : inputs) {
    StatusOr<Tensor> t = Tensor::FromDoubles(DataType::kFloat, shape, data);
    EXPECT_TRUE(t.ok());
    if (!t.ok()) return {};
    values.push_back(Value::FromTensor(std::move(t).value()));
  }
  return RunValues(model, values);
}

}  // namespace parity::variants_test
