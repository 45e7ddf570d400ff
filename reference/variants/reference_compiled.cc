// Compiled calls the reference runs itself (variants.h,
// LowerReferenceCompiled): the blob of identifier kReferenceIdentifier is a
// serialized FunctionProto, added to the model as a local function that the
// Compiled node then calls.
#include <set>

#include "reference/model/graph.h"
#include "reference/model/graph_index.h"
#include "reference/variants/variants.h"

namespace parity {
namespace {

class Lowering {
 public:
  explicit Lowering(onnx::ModelProto& model) : model_(model) {
    for (const auto& f : model.functions()) taken_.emplace(std::string(CanonicalDomain(f.domain())), f.name());
    for (const auto& o : model.opset_import()) imported_.insert(std::string(CanonicalDomain(o.domain())));
  }

  Status Graph(onnx::GraphProto& graph, const std::string& path) {
    for (int n = 0; n < graph.node_size(); ++n) {
      onnx::NodeProto& node = *graph.mutable_node(n);
      const std::string label = graph::NodeLabel(node, n);
      for (auto& attr : *node.mutable_attribute()) {
        const std::string where = StrCat(path, "/", label, ".", attr.name());
        if (attr.has_g()) PARITY_RETURN_IF_ERROR(Graph(*attr.mutable_g(), where));
        for (int g = 0; g < attr.graphs_size(); ++g) {
          PARITY_RETURN_IF_ERROR(Graph(*attr.mutable_graphs(g), StrCat(where, "[", g, "]")));
        }
      }
      if (node.op_type() == kCompiledOp && Identifier(node) == kReferenceIdentifier) {
        PARITY_RETURN_IF_ERROR(Lower(node, StrCat("node '", label, "' of graph '", path, "'")));
      }
    }
    return Status::Ok();
  }

 private:
  static std::string Identifier(const onnx::NodeProto& node) {
    for (const auto& a : node.attribute()) {
      if (a.name() == kIdentifierAttr && a.type() == onnx::AttributeProto::STRING) return a.s();
    }
    return "";
  }

  Status Lower(onnx::NodeProto& node, const std::string& where) {
    const onnx::AttributeProto* binary = nullptr;
    for (const auto& a : node.attribute()) {
      if (a.name() == kBinaryAttr) binary = &a;
    }
    if (!binary || !binary->has_t() || binary->t().string_data_size() != 1) {
      return InvalidModel(where, ": ", kBinaryAttr, " must be a STRING tensor holding one serialized FunctionProto");
    }
    onnx::FunctionProto function;
    if (!function.ParseFromString(binary->t().string_data(0)) || function.output_size() == 0) {
      return InvalidModel(where, ": ", kBinaryAttr, " of identifier ", kReferenceIdentifier,
                          " does not hold a FunctionProto with outputs");
    }
    const std::string domain(CanonicalDomain(node.domain()));
    if (!imported_.count(domain)) {
      return InvalidModel(where, ": domain '", node.domain(), "' is not in the model's opset_import");
    }
    std::string name;
    for (int k = 0;; ++k) {
      name = StrCat("compiled_", k);
      if (taken_.emplace(domain, name).second) break;
    }
    function.set_domain(node.domain());
    function.set_name(name);
    function.clear_overload();
    *model_.add_functions() = std::move(function);
    node.set_op_type(name);
    node.clear_overload();
    // The remaining attributes are values for the function's attribute parameters.
    auto* attributes = node.mutable_attribute();
    for (int i = attributes->size() - 1; i >= 0; --i) {
      if (attributes->Get(i).name().rfind("__", 0) == 0) attributes->DeleteSubrange(i, 1);
    }
    return Status::Ok();
  }

  onnx::ModelProto& model_;
  std::set<std::pair<std::string, std::string>> taken_;  // (canonical domain, name) of local functions
  std::set<std::string> imported_;
};

}  // namespace

Status LowerReferenceCompiled(onnx::ModelProto& model) {
  return Lowering(model).Graph(*model.mutable_graph(), "main");
}

}  // namespace parity
