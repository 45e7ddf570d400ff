// Function bodies the evaluator can expand for operators that have no
// kernel: the definitions in spec/functions/*.onnxtxt (ONNX text syntax),
// keyed by (domain, name, overload).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"

namespace parity {

class FunctionLibrary {
 public:
  // Adds a function; a second one with the same (domain, name, overload) is an error.
  Status Add(onnx::FunctionProto function, const std::string& source);
  const onnx::FunctionProto* Find(const std::string& domain, const std::string& name,
                                  const std::string& overload = "") const;
  size_t size() const { return functions_.size(); }

  // Reads every *.onnxtxt file of a folder (not recursive).
  static StatusOr<FunctionLibrary> LoadDirectory(const std::string& dir);
  // spec/functions of this source tree (PARITY_SOURCE_DIR), loaded once;
  // an empty library if the folder is absent.
  static const FunctionLibrary& Standard();

 private:
  std::map<std::tuple<std::string, std::string, std::string>, onnx::FunctionProto> functions_;
};

}  // namespace parity
