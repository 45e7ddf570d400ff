// What is known of a graph's values before it runs: each value's element
// type and dims, from the graph's declarations (inputs, outputs, value_info,
// initializers, Constant nodes), from dims a caller knows (a data set's
// actual inputs) and from per-operator rules carried forward in topological
// order. A device adapter's lowering decides from them which nodes it
// claims and creates its primitives at session creation; the harness counts
// each node's FLOPs with them.
//
// A fact is never guessed: a value whose type no rule gives has no type, a
// dim no rule gives is kUnknownDim, and a rank no rule gives leaves `dims`
// empty. Declarations win over rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/dtype.h"

namespace parity {

inline constexpr int64_t kUnknownDim = -1;

struct ValueFacts {
  std::optional<DataType> type;
  std::optional<std::vector<int64_t>> dims;  // kUnknownDim for a dim not known; nullopt: rank not known
  // The contents of a small int64/int32 initializer or Constant (a Reshape's
  // shape, a reduction's axes), when there is one.
  std::optional<std::vector<int64_t>> ints;
  // The contents of a small float32 initializer or Constant (a Resize's
  // scales), when there is one.
  std::optional<std::vector<double>> floats;

  // Every dim known.
  bool static_shape() const;
  int64_t element_count() const;  // -1 unless static_shape()
};

class StaticFacts {
 public:
  // Facts for the values of `graph` (its top level; subgraphs are not
  // entered). `known_dims` by value name override declarations.
  static StaticFacts Infer(const onnx::GraphProto& graph,
                           const std::map<std::string, std::vector<int64_t>>& known_dims = {});

  // Null for a name the graph does not produce or read.
  const ValueFacts* Find(std::string_view name) const;
  std::optional<DataType> TypeOf(std::string_view name) const;
  // Dims of `name` when all are known, else null.
  const std::vector<int64_t>* StaticDims(std::string_view name) const;

 private:
  std::unordered_map<std::string, ValueFacts> values_;
};

// The floating-point operations of one node at the facts' shapes, a
// multiply-add counted as two; nullopt when a dim it needs is unknown or no
// rule counts the operator (another domain, a node with a subgraph, an
// operator such as Einsum or LSTM). Element-wise operators, normalizations
// and Softmax count one per output element, reductions and pools one per
// input element or window tap, data movement zero (Reshape, Transpose,
// Concat, ...).
std::optional<double> NodeFlops(const onnx::NodeProto& node, const StaticFacts& facts);

}  // namespace parity
