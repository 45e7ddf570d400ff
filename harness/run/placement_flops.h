// The FLOPs behind a session's placement report: each reported node matched
// to a top-level node of the model and counted by NodeFlops at the dims of a
// data set's actual inputs (reference/model/static_facts.h), summed per
// device. A node whose FLOPs are not known is counted apart, never guessed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx-ml.pb.h"

namespace parity {

struct PlacementFlops {
  // Device -> the FLOPs of its nodes whose FLOPs are known; a device none of
  // whose nodes is known is absent.
  std::map<std::string, double> by_device;
  // Reported nodes whose FLOPs are not known: not matched to a node of the
  // model, or a dim or rule NodeFlops needs is missing.
  int64_t unknown = 0;
};

// `placement` is the session report's (node, device) pairs. A report that
// names every top-level node in graph order (node name, or "op_type#index"
// for an unnamed node) is matched position by position; any other report (an
// adapter that reports its own rewritten graph) is matched by node name
// alone, for names that occur once in the graph. `known_dims` are the dims
// of values known at run time (a data set's inputs).
PlacementFlops CountPlacementFlops(const onnx::GraphProto& graph,
                                   const std::vector<std::pair<std::string, std::string>>& placement,
                                   const std::map<std::string, std::vector<int64_t>>& known_dims);

}  // namespace parity
