// Model validation: the structural rules of the ONNX IR that the evaluator
// relies on, checked before anything runs. Every problem is a Status whose
// message names the model and the graph, node, function or value at fault.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/core/status.h"
#include "reference/model/loader.h"

namespace parity {

struct ValidationOptions {
  // A declared or stored tensor over this many bytes is refused up front.
  // 0: Tensor::AllocationLimit().
  int64_t max_tensor_bytes = 0;
  size_t max_problems = 100;  // stop collecting after this many
  // Whether an operator that the pinned onnx release does not define has a
  // function body elsewhere (spec/functions/, which this layer does not
  // know): such a node is valid. Unset: none has.
  std::function<bool(std::string_view domain, std::string_view op_type)> has_function_body;
};

// Every problem found (empty: valid). Checks: IR version and opset imports
// (missing, duplicate, a node's domain not imported); value names (duplicate
// definitions, reads of unknown values, outputs never computed), acyclic
// graphs, attributes (types that do not match the stored field, duplicates,
// references outside functions), tensors (negative dimensions, element counts
// that overflow or exceed the memory limit, data whose size does not match
// the shape), model-local functions (duplicate ids, call cycles), and all of
// these inside subgraphs and function bodies.
//
// A node of an ONNX domain whose operator the pinned onnx release does not
// define at all (an operator newer than the pin) and that has no function
// body (ValidationOptions::has_function_body) is a kUnimplemented problem,
// not an invalid model: the model may be valid under a newer release.
std::vector<Status> ValidateModel(const LoadedModel& model, const ValidationOptions& options = {});

// The problems of one attribute's declared type against the field that
// holds its value (no type, an unknown type, no value of the declared type,
// a list in a scalar or a scalar in a list), each a phrase that follows the
// attribute's name: " has no type". ValidateModel reports these for every
// node; variant validation for the attributes of an entry's call, which
// resolution turns into a node.
std::vector<std::string> AttributeTypeProblems(const onnx::AttributeProto& attribute);

}  // namespace parity
