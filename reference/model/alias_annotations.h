// The alias annotations of a graph (spec/aliasing.md, "Representation"): one
// GraphProto.metadata_props entry per aliased output,
//   key   "ai.onnx.alias.<output name>"
//   value "input=<input name>[;mode=may|must][;region=whole|scatter]"
// and their parser. The types live in the model layer so that the evaluator's
// in-place mode and the rules of reference/aliasing/ share them.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"

namespace parity {

// the value does not parse: a field that is not input/mode/region, a field
// given twice, no input, an unknown mode or region, an empty output name
inline constexpr char kAliasRuleKey[] = "ALIAS-KEY";

inline constexpr char kAliasKeyPrefix[] = "ai.onnx.alias.";

enum class AliasMode { kMay, kMust };
enum class AliasRegion {
  kWhole,    // the output may be written over the whole input buffer
  kScatter,  // only the rows a TensorScatter writes change (linear or circular)
};

struct Alias {
  std::string output;  // graph output
  std::string input;   // graph input whose buffer it shares
  AliasMode mode = AliasMode::kMay;
  AliasRegion region = AliasRegion::kWhole;
};

// The annotations of `graph` (its own metadata_props only), in metadata
// order; keys outside the prefix are ignored. An entry that does not parse
// is an error (kInvalidModel, message starting with ALIAS-KEY).
StatusOr<std::vector<Alias>> ReadAliases(const onnx::GraphProto& graph);

// Whether any graph of the model (main graph, subgraphs, function bodies)
// carries a key with kAliasKeyPrefix.
bool HasAliases(const onnx::ModelProto& model);

}  // namespace parity
