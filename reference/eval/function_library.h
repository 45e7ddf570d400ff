// Function bodies the evaluator can expand for operators that have no
// kernel: the definitions in spec/functions/*.onnxtxt (ONNX text syntax),
// keyed by (domain, name, overload).
#pragma once

#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"
#include "reference/eval/embedded_functions.h"

namespace parity {

class FunctionLibrary {
 public:
  // Adds a function; a second one with the same (domain, name, overload) is an error.
  Status Add(onnx::FunctionProto function, const std::string& source);
  const onnx::FunctionProto* Find(const std::string& domain, const std::string& name,
                                  const std::string& overload = "") const;
  size_t size() const { return functions_.size(); }

  // Parses function texts; errors name the file and the line.
  static StatusOr<FunctionLibrary> Parse(std::span<const EmbeddedFunctionFile> files);
  // The bodies of spec/functions/, embedded in the binary when it was built
  // and parsed on first use; nothing is read from disk. The build refuses a
  // body that does not parse (embed_functions_main.cc), so an error here is
  // a bug of ONNX Parity (kInternal). Thread-safe.
  static StatusOr<const FunctionLibrary*> Standard();

 private:
  std::map<std::tuple<std::string, std::string, std::string>, onnx::FunctionProto> functions_;
};

}  // namespace parity
