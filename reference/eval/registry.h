// The operator registry: kernels keyed by (domain, op_type, since_version).
// A node of a domain imported at opset V runs the kernel with the largest
// since_version <= V, the ONNX rule for which schema version applies.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "reference/eval/kernel.h"

namespace parity {

// "" and "ai.onnx" name the same domain; both are stored as "".
std::string_view CanonicalDomain(std::string_view domain);

class OpRegistry {
 public:
  // Registers `kernel` for versions since_version and up (until a later
  // registration of the same op). Registering the same key twice replaces it.
  void Register(std::string_view domain, std::string_view op_type, int since_version, Kernel kernel);
  // Shorthand for the default domain.
  void Register(std::string_view op_type, int since_version, Kernel kernel) {
    Register("", op_type, since_version, std::move(kernel));
  }
  // The kernel for a node of this op at `opset`, or null; `since_version`
  // receives the version it was registered for.
  const Kernel* Find(std::string_view domain, std::string_view op_type, int64_t opset,
                     int* since_version = nullptr) const;
  bool Knows(std::string_view domain, std::string_view op_type) const;
  // (domain, op_type) pairs with at least one kernel, sorted.
  std::vector<std::pair<std::string, std::string>> Operators() const;

 private:
  // (domain, op_type) -> since_version -> kernel
  std::map<std::pair<std::string, std::string>, std::map<int, Kernel>, std::less<>> kernels_;
};

// The registry with every kernel of the reference evaluator (built once).
const OpRegistry& ReferenceRegistry();

}  // namespace parity
