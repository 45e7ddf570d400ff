// A generator of malformed models: each one breaks one rule that a loader
// must survive (truncated bytes, cycles, dangling inputs, recursive functions,
// external data escaping the model's folder, a shape of 10^12 elements, ...),
// with the words its error message must contain. Used by the tests (under
// AddressSanitizer and UndefinedBehaviorSanitizer in CI) and by
// `parity corpus malformed --out DIR`.
#pragma once

#include <string>
#include <vector>

#include "reference/core/status.h"

namespace parity {

struct MalformedModel {
  std::string name;         // folder name
  std::string description;  // which rule it breaks
  std::string expect;       // a phrase the error message must contain
};

// Writes one folder per malformed model under `dir` (model.onnx, plus any
// external data files, links or inputs it needs) and returns their list.
StatusOr<std::vector<MalformedModel>> WriteMalformedModels(const std::string& dir);

}  // namespace parity
