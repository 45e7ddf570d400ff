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
#include "reference/model/graph.h"

namespace parity {

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

  // The slot of in-place forms (kernel.h, InPlaceKernel), by the same rule
  // of versions as the kernels.
  void RegisterInPlace(std::string_view domain, std::string_view op_type, int since_version, InPlaceKernel kernel);
  void RegisterInPlace(std::string_view op_type, int since_version, InPlaceKernel kernel) {
    RegisterInPlace("", op_type, since_version, std::move(kernel));
  }
  const InPlaceKernel* FindInPlace(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // (domain, op_type) pairs with at least one kernel, sorted.
  std::vector<std::pair<std::string, std::string>> Operators() const;

 private:
  // (domain, op_type) -> since_version -> kernel
  std::map<std::pair<std::string, std::string>, std::map<int, Kernel>, std::less<>> kernels_;
  std::map<std::pair<std::string, std::string>, std::map<int, InPlaceKernel>, std::less<>> in_place_;
};

}  // namespace parity
