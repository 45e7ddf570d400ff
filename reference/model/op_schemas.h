// The operator schemas of the pinned onnx release (generated at build time
// by export_schemas.py): which (domain, op_type) exist at which opset, how
// many inputs and outputs they take, and their attributes' types. The
// validator checks nodes against them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace parity {

struct OpSchemaInfo {
  std::string domain;  // canonical: "" for ai.onnx
  std::string op_type;
  int since_version = 0;
  int min_inputs = 0, max_inputs = 0, min_outputs = 0, max_outputs = 0;
  bool deprecated = false;
  struct Attribute {
    int type = 0;  // onnx::AttributeProto::AttributeType
    bool required = false;
  };
  std::map<std::string, Attribute, std::less<>> attributes;
};

class OpSchemas {
 public:
  // The schemas of the onnx package the build was made with.
  static const OpSchemas& Onnx();
  // The onnx version they come from ("1.23.2").
  static std::string_view OnnxVersion();

  // The schema in force for `op_type` of `domain` imported at `opset`: the one
  // with the largest since_version <= opset; null if none.
  const OpSchemaInfo* Find(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // True when onnx defines any version of this domain (so a node of it can be checked).
  bool KnowsDomain(std::string_view domain) const;
  bool KnowsOperator(std::string_view domain, std::string_view op_type) const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<OpSchemaInfo>, std::less<>> by_op_;
  std::set<std::string, std::less<>> domains_;
};

namespace internal {
struct OpSchemaRow {
  const char* domain;
  const char* op_type;
  int since_version, min_inputs, max_inputs, min_outputs, max_outputs;
  bool deprecated;
  const char* attributes;  // "name=TYPE[!];..." ('!' marks a required one)
};
extern const char kOnnxSchemaVersion[];
extern const OpSchemaRow kOnnxSchemaRows[];
extern const size_t kOnnxSchemaRowCount;
}  // namespace internal

}  // namespace parity
