// Indexing the generated schema table.
#include "reference/model/op_schemas.h"

#include <algorithm>
#include <cstdlib>

namespace parity {
namespace {

std::string Canonical(std::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

}  // namespace

const OpSchemas& OpSchemas::Onnx() {
  static const OpSchemas* schemas = [] {
    auto* s = new OpSchemas();
    for (size_t i = 0; i < internal::kOnnxSchemaRowCount; ++i) {
      const internal::OpSchemaRow& row = internal::kOnnxSchemaRows[i];
      OpSchemaInfo info;
      info.domain = Canonical(row.domain);
      info.op_type = row.op_type;
      info.since_version = row.since_version;
      info.min_inputs = row.min_inputs;
      info.max_inputs = row.max_inputs;
      info.min_outputs = row.min_outputs;
      info.max_outputs = row.max_outputs;
      info.deprecated = row.deprecated;
      std::string_view spec = row.attributes;
      while (!spec.empty()) {
        const size_t end = std::min(spec.find(';'), spec.size());
        std::string_view item = spec.substr(0, end);
        spec.remove_prefix(std::min(end + 1, spec.size()));
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        OpSchemaInfo::Attribute attribute;
        attribute.required = item.back() == '!';
        attribute.type = std::atoi(std::string(item.substr(eq + 1)).c_str());
        info.attributes.emplace(std::string(item.substr(0, eq)), attribute);
      }
      s->domains_.insert(info.domain);
      s->by_op_[{info.domain, info.op_type}].push_back(std::move(info));
    }
    for (auto& [key, versions] : s->by_op_) {
      std::sort(versions.begin(), versions.end(),
                [](const OpSchemaInfo& a, const OpSchemaInfo& b) { return a.since_version < b.since_version; });
    }
    return s;
  }();
  return *schemas;
}

std::string_view OpSchemas::OnnxVersion() { return internal::kOnnxSchemaVersion; }

const OpSchemaInfo* OpSchemas::Find(std::string_view domain, std::string_view op_type, int64_t opset) const {
  auto it = by_op_.find(std::pair<std::string, std::string>(Canonical(domain), op_type));
  if (it == by_op_.end()) return nullptr;
  const OpSchemaInfo* found = nullptr;
  for (const auto& info : it->second) {
    if (info.since_version <= opset) found = &info;
  }
  return found;
}

bool OpSchemas::KnowsDomain(std::string_view domain) const { return domains_.count(Canonical(domain)) > 0; }

bool OpSchemas::KnowsOperator(std::string_view domain, std::string_view op_type) const {
  return by_op_.count(std::pair<std::string, std::string>(Canonical(domain), op_type)) > 0;
}

}  // namespace parity
