// The variant rules that look at one entry alone (spec/variants.md,
// "Validity"): the call it names, its counts, its metadata keys, the
// attributes of a Compiled call, and weights copied into attributes.
#include <charconv>
#include <cstring>
#include <set>

#include "reference/core/tensor.h"
#include "reference/model/graph.h"
#include "reference/model/op_schemas.h"
#include "reference/model/tensor_io.h"
#include "reference/model/validator.h"
#include "reference/variants/analysis.h"

namespace parity::variants_internal {
namespace {

using Attribute = onnx::AttributeProto;

// Two or more dot-separated labels of [a-z0-9-], none empty, none starting
// or ending with '-': "com.example.npu", not "NPU", "a..b" or "-a.b".
bool ReverseDns(std::string_view name) {
  int labels = 0;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    const std::string_view label = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
    ++labels;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return labels >= 2;
}

bool DecimalInt32(std::string_view text) {
  int32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

class EntryChecker {
 public:
  EntryChecker(const ModelFacts& facts, const VariantEntry& entry, const GraphIndex& index,
               std::vector<Status>* problems)
      : facts_(facts), entry_(entry), proto_(*entry.proto), index_(index), problems_(problems) {}

  void Run() {
    CheckAttributeList();
    CheckCall();
    CheckMetadata();
    if (entry_.compiled) CheckCompiled();
    CheckCopiedWeights();
  }

 private:
  template <typename... Args>
  void Problem(const char* rule, const Args&... args) {
    problems_->push_back(EntryProblem(rule, entry_, StrCat(args...)));
  }

  // VAR-CALL for the attribute list itself: names unique (a node with a
  // name twice is invalid, and which one a backend reads is unspecified),
  // and no subgraphs. A subgraph in the call would read outer values no
  // entry input lists, and entries nested in it would escape validation and
  // survive resolution; control flow belongs in a model-local function.
  void CheckAttributeList() {
    std::set<std::string_view> seen;
    for (const auto& a : proto_.attribute()) {
      if (a.name().empty()) Problem(kRuleCall, "an attribute has no name");
      if (!seen.insert(a.name()).second) Problem(kRuleCall, "attribute '", a.name(), "' is given twice");
      // Resolution writes the call as a node of the graph, which
      // ValidateModel checks: the same attribute rules hold here.
      if (!a.ref_attr_name().empty()) {
        Problem(kRuleCall, "attribute '", a.name(), "' refers to attribute '", a.ref_attr_name(),
                "', which only a function body may do");
        continue;
      }
      for (const std::string& problem : AttributeTypeProblems(a)) {
        Problem(kRuleCall, "attribute '", a.name(), "'", problem);
      }
      if (a.type() == Attribute::GRAPH || a.type() == Attribute::GRAPHS || a.has_g() || a.graphs_size() > 0) {
        Problem(kRuleCall, "attribute '", a.name(),
                "' carries a subgraph: an entry's call may not carry subgraphs; wrap the control flow in a "
                "model-local function");
      }
    }
  }

  void CheckCall() {
    const std::string domain(CanonicalDomain(proto_.domain()));
    if (proto_.op_type().empty()) Problem(kRuleCall, "op_type is empty");
    auto opset = facts_.opsets.find(domain);
    if (opset == facts_.opsets.end()) {
      Problem(kRuleCall, "domain '", proto_.domain(), "' is not in the model's opset_import");
    }
    if (proto_.op_type().empty()) return;
    if (entry_.compiled) {
      if (domain.empty()) {
        Problem(kRuleCall, "a Compiled call needs a vendor's domain (reverse-DNS), not '",
                proto_.domain().empty() ? "ai.onnx" : proto_.domain(), "'");
      }
      return;
    }
    auto function = facts_.functions.find({domain, proto_.op_type(), proto_.overload()});
    if (function != facts_.functions.end()) {
      CheckFunctionArity(*function->second);
      return;
    }
    if (!proto_.overload().empty()) {
      Problem(kRuleCall, "overload '", proto_.overload(), "' names no model-local function ", entry_.call);
      return;
    }
    if (opset == facts_.opsets.end()) return;
    const OpSchemaInfo* schema = OpSchemas::Onnx().Find(domain, proto_.op_type(), opset->second);
    if (!schema) {
      Problem(kRuleCall, entry_.call, " is neither an operator of opset ", opset->second, " of domain '",
              domain.empty() ? "ai.onnx" : domain, "' nor a model-local function");
      return;
    }
    CheckSchemaArity(*schema);
    CheckSchemaAttributes(*schema);
  }

  int PresentInputs() const {
    int present = proto_.input_size();
    while (present > 0 && proto_.input(present - 1).empty()) --present;
    return present;
  }

  void CheckSchemaArity(const OpSchemaInfo& schema) {
    const std::string label = StrCat(schema.op_type, "-", schema.since_version);
    const int inputs = PresentInputs();
    if (inputs > schema.max_inputs) {
      Problem(kRuleArity, inputs, " inputs; ", label, " takes at most ", schema.max_inputs);
    }
    if (inputs < schema.min_inputs) {
      Problem(kRuleArity, inputs, " inputs; ", label, " needs at least ", schema.min_inputs);
    }
    if (proto_.output_size() > schema.max_outputs) {
      Problem(kRuleArity, proto_.output_size(), " outputs; ", label, " gives at most ", schema.max_outputs);
    }
    if (proto_.output_size() > 0 && proto_.output_size() < schema.min_outputs) {
      Problem(kRuleArity, proto_.output_size(), " outputs; ", label, " gives at least ", schema.min_outputs);
    }
  }

  // Resolution writes the call as a node, which must pass ValidateModel:
  // so a standard op's attributes are checked here as the validator will.
  void CheckSchemaAttributes(const OpSchemaInfo& schema) {
    const std::string label = StrCat(schema.op_type, "-", schema.since_version);
    for (const auto& a : proto_.attribute()) {
      auto it = schema.attributes.find(a.name());
      if (it == schema.attributes.end()) {
        Problem(kRuleCall, "attribute '", a.name(), "' is not an attribute of ", label);
      } else if (a.type() != it->second.type) {
        Problem(kRuleCall, "attribute '", a.name(), "' is ", Attribute::AttributeType_Name(a.type()), " but ", label,
                " declares it ",
                Attribute::AttributeType_Name(static_cast<Attribute::AttributeType>(it->second.type)));
      }
    }
    for (const auto& [name, attribute] : schema.attributes) {
      if (attribute.required && !FindAttribute(proto_, name)) {
        Problem(kRuleCall, "attribute '", name, "' is missing; ", label, " requires it");
      }
    }
  }

  void CheckFunctionArity(const onnx::FunctionProto& function) {
    const std::string label = StrCat("function ", entry_.call);
    if (PresentInputs() > function.input_size()) {
      Problem(kRuleArity, PresentInputs(), " inputs; ", label, " declares ", function.input_size());
    }
    if (proto_.output_size() != function.output_size()) {
      Problem(kRuleArity, proto_.output_size(), " outputs; ", label, " declares ", function.output_size());
    }
  }

  void CheckMetadata() {
    std::set<std::string_view> seen;
    constexpr std::string_view kReserved = "ai.onnx.variant.";
    for (const auto& prop : proto_.metadata_props()) {
      const std::string& key = prop.key();
      if (!seen.insert(key).second) {
        Problem(kRuleMetadata, "metadata key '", key, "' is given twice");
      } else if (key == kTargetKey) {
        if (!ReverseDns(prop.value())) {
          Problem(kRuleMetadata, kTargetKey, " '", prop.value(),
                  "' is not a reverse-DNS name (two or more labels of a-z, 0-9 and '-', e.g. com.example.npu)");
        }
      } else if (key == kPriorityKey) {
        if (!DecimalInt32(prop.value())) {
          Problem(kRuleMetadata, kPriorityKey, " '", prop.value(), "' is not a decimal int32");
        }
      } else if (key.compare(0, kReserved.size(), kReserved) == 0) {
        Problem(kRuleMetadata, "metadata key '", key, "' is reserved: '", kReserved, "' defines only ", kTargetKey,
                " and ", kPriorityKey);
      } else if (!ReverseDns(key)) {
        Problem(kRuleMetadata, "metadata key '", key,
                "' is not reverse-DNS (two or more dot-separated labels of a-z, 0-9 and '-')");
      }
    }
  }

  void CheckCompiled() {
    const Attribute* hash = FindAttribute(proto_, kHashAttr);
    if (!hash || hash->type() != Attribute::STRING) {
      Problem(kRuleCompiled, kHashAttr, " must be a STRING attribute");
    } else if (hash->s().empty()) {
      Problem(kRuleCompiled, kHashAttr, " is empty: the entry was not stamped with the hash of its region");
    } else if (!WellFormedHash(hash->s())) {
      Problem(kRuleCompiled, kHashAttr, " '", hash->s(), "' is not 'sha256:' followed by 64 lowercase hex digits");
    }
    const Attribute* identifier = FindAttribute(proto_, kIdentifierAttr);
    if (!identifier || identifier->type() != Attribute::STRING) {
      Problem(kRuleCompiled, kIdentifierAttr, " must be a STRING attribute");
    } else if (identifier->s().empty()) {
      Problem(kRuleCompiled, kIdentifierAttr, " is empty");
    }
    const Attribute* binary = FindAttribute(proto_, kBinaryAttr);
    if (!binary || binary->type() != Attribute::TENSOR || !binary->has_t()) {
      Problem(kRuleCompiled, kBinaryAttr, " must be a TENSOR attribute");
    } else {
      const onnx::TensorProto& t = binary->t();
      if (t.data_type() != onnx::TensorProto::STRING || t.dims_size() != 0 || t.string_data_size() != 1) {
        Problem(kRuleCompiled, kBinaryAttr, " must be a scalar STRING tensor (dims []) holding one string; it has ",
                "data_type ", IsKnownDataType(t.data_type()) ? std::string(DataTypeName(static_cast<DataType>(t.data_type())))
                                                           : StrCat(t.data_type()), ", ", t.dims_size(), " dims and ", t.string_data_size(), " strings");
      }
    }
    if (entry_.target.empty()) Problem(kRuleCompiled, "a Compiled entry needs the metadata key ", kTargetKey);
    for (const auto& a : proto_.attribute()) {
      if (a.name().rfind("__", 0) == 0 && a.name() != kHashAttr && a.name() != kIdentifierAttr &&
          a.name() != kBinaryAttr) {
        Problem(kRuleCompiled, "attribute '", a.name(), "' uses the reserved prefix '__'");
      }
    }
  }

  void CheckCopiedWeights() {
    for (const auto& a : proto_.attribute()) {
      if (a.name() == kBinaryAttr) continue;
      if (a.type() == Attribute::TENSOR && a.has_t()) CheckCopiedWeight(a.name(), a.t());
      if (a.type() == Attribute::TENSORS) {
        for (int i = 0; i < a.tensors_size(); ++i) CheckCopiedWeight(StrCat(a.name(), "[", i, "]"), a.tensors(i));
      }
    }
  }

  static std::string ShapeKey(const onnx::TensorProto& t) {
    std::string key = std::to_string(t.data_type()) + ":";
    for (int64_t d : t.dims()) key += std::to_string(d) + ",";
    return key;
  }

  // Compares against initializers of the same type and shape only, and
  // among those decodes one only when its bytes may match (MayBeCopy), so
  // that no weight is read, external data above all, unless it may be the copy.
  void CheckCopiedWeight(const std::string& attribute, const onnx::TensorProto& tensor) {
    const std::string key = ShapeKey(tensor);
    std::optional<StatusOr<Tensor>> value;
    for (const GraphIndex* g = &index_; g; g = g->parent()) {
      auto [cache, fresh] = facts_.initializers_by_shape.try_emplace(g);
      if (fresh) {
        for (const auto& init : g->graph().initializer()) cache->second.emplace(ShapeKey(init), &init);
      }
      auto [begin, end] = cache->second.equal_range(key);
      for (auto it = begin; it != end; ++it) {
        const onnx::TensorProto& init = *it->second;
        if (!value) value = TensorFromProto(tensor, ExternalDataPolicy{facts_.base_dir});
        if (!value->ok()) return;  // an unreadable tensor is ValidateModel's to report
        if (!MayBeCopy(tensor, **value, init)) continue;
        StatusOr<Tensor> other = TensorFromProto(init, ExternalDataPolicy{facts_.base_dir});
        if (!other.ok() || !SameContents(**value, *other)) continue;
        Problem(kRuleCopiedWeight, "attribute '", attribute, "' holds a copy of initializer '", init.name(), "' (",
                other->Description(), ", ", ContentBytes(*other),
                " bytes); pass the initializer by name as an entry input instead");
        return;
      }
    }
  }

  // Whether `init` may hold the same contents as `tensor` (decoded as
  // `value`), judged without decoding it: raw bytes in memory are compared
  // as they are, and external data is read only when its length matches.
  static bool MayBeCopy(const onnx::TensorProto& tensor, const Tensor& value, const onnx::TensorProto& init) {
    const auto kExternal = onnx::TensorProto::EXTERNAL;
    // Only raw bytes in memory can be compared without decoding (typed
    // fields, strings and packed types need the decoded values).
    if (value.dtype() == DataType::kString || !tensor.has_raw_data() || tensor.data_location() == kExternal) {
      return true;
    }
    if (init.data_location() != kExternal) {
      // Same type and shape, both raw: the bytes decide.
      return !init.has_raw_data() || init.raw_data() == tensor.raw_data();
    }
    for (const auto& kv : init.external_data()) {
      if (kv.key() != "length") continue;
      uint64_t length = 0;
      const std::string& text = kv.value();
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), length);
      if (error == std::errc() && end == text.data() + text.size() && length != tensor.raw_data().size()) return false;
    }
    return true;
  }

  static int64_t ContentBytes(const Tensor& t) {
    if (t.dtype() != DataType::kString) return static_cast<int64_t>(t.byte_size());
    int64_t bytes = 0;
    for (const auto& s : t.strings()) bytes += static_cast<int64_t>(s.size());
    return bytes;
  }

  static bool SameContents(const Tensor& a, const Tensor& b) {
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
    if (a.dtype() == DataType::kString) return a.strings() == b.strings();
    return a.byte_size() == b.byte_size() &&
           (a.byte_size() == 0 || std::memcmp(a.raw_bytes(), b.raw_bytes(), a.byte_size()) == 0);
  }

  const ModelFacts& facts_;
  const VariantEntry& entry_;
  const onnx::EquivalentSubgraphProto& proto_;
  const GraphIndex& index_;
  std::vector<Status>* problems_;
};

}  // namespace

bool WellFormedHash(std::string_view hash) {
  constexpr std::string_view kPrefix = "sha256:";
  if (hash.size() != kPrefix.size() + 64 || hash.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : hash.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

const onnx::AttributeProto* FindAttribute(const onnx::EquivalentSubgraphProto& entry, std::string_view name) {
  for (const auto& a : entry.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

ModelFacts ReadModelFacts(const LoadedModel& model) {
  ModelFacts facts;
  facts.base_dir = model.base_dir;
  for (const auto& o : model.proto->opset_import()) facts.opsets[std::string(CanonicalDomain(o.domain()))] = o.version();
  for (const auto& f : model.proto->functions()) {
    facts.functions.emplace(std::make_tuple(std::string(CanonicalDomain(f.domain())), f.name(), f.overload()), &f);
  }
  return facts;
}

void CheckEntryAlone(const ModelFacts& facts, const VariantEntry& entry, const GraphIndex& index,
                     std::vector<Status>* problems) {
  EntryChecker(facts, entry, index, problems).Run();
}

Status EntryProblem(const char* rule, const VariantEntry& entry, const std::string& detail) {
  return InvalidModel(rule, ": entry ", entry.id, " (", entry.call, ") of graph '", entry.graph_path, "': ", detail);
}

}  // namespace parity::variants_internal
