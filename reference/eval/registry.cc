// OpRegistry and opset resolution.
#include "reference/eval/registry.h"

#include <algorithm>

namespace parity {

namespace {

// The entry of `versions` in force at `opset`: the largest since_version <= opset.
template <typename Entry>
const Entry* FindVersion(const std::map<int, Entry>& versions, int64_t opset, int* since_version) {
  auto v = versions.upper_bound(static_cast<int>(std::min<int64_t>(opset, 1 << 30)));
  if (v == versions.begin()) return nullptr;
  --v;
  if (since_version) *since_version = v->first;
  return &v->second;
}

}  // namespace

void OpRegistry::Register(std::string_view domain, std::string_view op_type, int since_version, Kernel kernel) {
  kernels_[{std::string(CanonicalDomain(domain)), std::string(op_type)}][since_version] = std::move(kernel);
}

const Kernel* OpRegistry::Find(std::string_view domain, std::string_view op_type, int64_t opset,
                               int* since_version) const {
  auto it = kernels_.find(std::pair<std::string, std::string>(CanonicalDomain(domain), op_type));
  return it == kernels_.end() ? nullptr : FindVersion(it->second, opset, since_version);
}

void OpRegistry::RegisterInPlace(std::string_view domain, std::string_view op_type, int since_version,
                                 InPlaceKernel kernel) {
  in_place_[{std::string(CanonicalDomain(domain)), std::string(op_type)}][since_version] = std::move(kernel);
}

const InPlaceKernel* OpRegistry::FindInPlace(std::string_view domain, std::string_view op_type,
                                             int64_t opset) const {
  auto it = in_place_.find(std::pair<std::string, std::string>(CanonicalDomain(domain), op_type));
  return it == in_place_.end() ? nullptr : FindVersion(it->second, opset, nullptr);
}

bool OpRegistry::Knows(std::string_view domain, std::string_view op_type) const {
  return kernels_.count(std::pair<std::string, std::string>(CanonicalDomain(domain), op_type)) > 0;
}

std::vector<std::pair<std::string, std::string>> OpRegistry::Operators() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, versions] : kernels_) out.push_back(key);
  return out;
}

}  // namespace parity
