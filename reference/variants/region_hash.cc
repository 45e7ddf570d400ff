// The hash of the region an entry replaces (spec/variants.md, "Stale
// entries"): SHA-256 over a canonical stream of the region's nodes in which
// values are named by role, so renaming keeps the hash and any change to
// what the region computes changes it. Every field is length-prefixed, so
// no two different streams concatenate to the same bytes.
#include <openssl/evp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include "reference/core/tensor.h"
#include "reference/model/graph.h"
#include "reference/model/tensor_io.h"
#include "reference/variants/analysis.h"

namespace parity {
namespace variants_internal {
namespace {

constexpr char kStreamVersion[] = "onnxparity.region-hash/1";

class Sha256 {
 public:
  Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (context_) EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
  }
  void Raw(const void* data, size_t size) {
    if (context_ && size > 0) EVP_DigestUpdate(context_.get(), data, size);
  }
  void Int(uint64_t value) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
    Raw(bytes, sizeof bytes);
  }
  void Field(std::string_view text) {
    Int(text.size());
    Raw(text.data(), text.size());
  }
  // Lowercase hex of the digest; the stream ends here.
  StatusOr<std::string> Hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (!context_ || EVP_DigestFinal_ex(context_.get(), digest, &size) != 1) {
      return Internal("SHA-256 from OpenSSL failed");
    }
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < size; ++i) {
      hex += kDigits[digest[i] >> 4];
      hex += kDigits[digest[i] & 15];
    }
    return hex;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

// "w:" and the hash of an initializer's type, shape and contents. Contents
// are read through TensorFromProto, so raw_data and the typed fields hash
// the same; external data is hashed by its reference (location, offset,
// length), since the hash must not depend on where the model is read from.
StatusOr<std::string> WeightName(const onnx::TensorProto& tensor) {
  Sha256 hash;
  hash.Int(static_cast<uint64_t>(tensor.data_type()));
  hash.Int(static_cast<uint64_t>(tensor.dims_size()));
  for (int64_t d : tensor.dims()) hash.Int(static_cast<uint64_t>(d));
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    hash.Field("external");
    std::vector<std::pair<std::string, std::string>> fields;
    for (const auto& kv : tensor.external_data()) fields.emplace_back(kv.key(), kv.value());
    std::sort(fields.begin(), fields.end());
    hash.Int(fields.size());
    for (const auto& [key, value] : fields) {
      hash.Field(key);
      hash.Field(value);
    }
  } else {
    StatusOr<Tensor> value = TensorFromProto(tensor);
    if (!value.ok()) return value.status().WithContext(StrCat("initializer '", tensor.name(), "'"));
    if (value->dtype() == DataType::kString) {
      hash.Int(value->strings().size());
      for (const auto& s : value->strings()) hash.Field(s);
    } else {
      hash.Int(value->byte_size());
      hash.Raw(value->raw_bytes(), value->byte_size());
    }
  }
  PARITY_ASSIGN_OR_RETURN(std::string hex, hash.Hex());
  return "w:" + hex;
}

using Lookup = std::function<std::optional<std::string>(std::string_view)>;

// Renames every value a subgraph defines by its place ("s<depth>_<k>") and
// every value it reads from outside through `outer`, and clears what does
// not change what it computes (names of the graph and its nodes, doc
// strings, value_info, metadata, entries). spec/variants.md ("Stale
// entries") lists exactly these fields; keep the two in step.
void CanonicalizeGraph(onnx::GraphProto& graph, const Lookup& outer, int depth) {
  std::unordered_map<std::string, std::string> local;
  int counter = 0;
  auto define = [&](std::string* name) {
    if (name->empty()) return;
    auto [it, fresh] = local.try_emplace(*name, StrCat("s", depth, "_", counter));
    if (fresh) ++counter;
    *name = it->second;
  };
  const Lookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = local.find(std::string(name));
    if (it != local.end()) return it->second;
    return outer(name);
  };
  auto read = [&](std::string* name) {
    if (name->empty()) return;
    if (std::optional<std::string> canonical = lookup(*name)) *name = *canonical;
  };
  graph.clear_name();
  graph.clear_doc_string();
  graph.clear_value_info();
  graph.clear_metadata_props();
  graph.clear_equivalent_subgraph();
  // Names are defined before any is read, so that a node list out of
  // topological order canonicalizes as its sorted form would name values.
  for (auto& input : *graph.mutable_input()) {
    input.clear_doc_string();
    input.clear_metadata_props();
    define(input.mutable_name());
  }
  for (auto& init : *graph.mutable_initializer()) {
    init.clear_doc_string();
    init.clear_metadata_props();
    define(init.mutable_name());
  }
  for (auto& node : *graph.mutable_node()) {
    for (auto& o : *node.mutable_output()) define(&o);
  }
  for (auto& node : *graph.mutable_node()) {
    node.clear_name();
    node.clear_doc_string();
    node.clear_metadata_props();
    for (auto& in : *node.mutable_input()) read(&in);
    for (auto& attr : *node.mutable_attribute()) {
      attr.clear_doc_string();
      if (attr.has_g()) CanonicalizeGraph(*attr.mutable_g(), lookup, depth + 1);
      for (auto& g : *attr.mutable_graphs()) CanonicalizeGraph(g, lookup, depth + 1);
    }
  }
  for (auto& output : *graph.mutable_output()) {
    output.clear_doc_string();
    output.clear_metadata_props();
    read(output.mutable_name());
  }
}

class RegionHasher {
 public:
  RegionHasher(const GraphIndex& index, std::span<const int32_t> inputs, std::span<const int32_t> outputs,
               std::span<const int32_t> region)
      : index_(index), inputs_(inputs), outputs_(outputs), region_(region) {}

  StatusOr<std::string> Run() {
    for (size_t k = 0; k < inputs_.size(); ++k) {
      if (inputs_[k] >= 0) names_.try_emplace(inputs_[k], StrCat("i", k));
    }
    for (size_t k = 0; k < outputs_.size(); ++k) names_.try_emplace(outputs_[k], StrCat("o", k));
    int counter = 0;
    for (int32_t n : region_) {
      for (int32_t w : index_.outputs(n)) {
        if (w >= 0 && names_.try_emplace(w, StrCat("v", counter)).second) ++counter;
      }
    }
    Sha256 hash;
    hash.Field(kStreamVersion);
    hash.Int(inputs_.size());
    hash.Int(outputs_.size());
    hash.Int(region_.size());
    const onnx::GraphProto& graph = index_.graph();
    for (int32_t n : region_) {
      const onnx::NodeProto& node = graph.node(n);
      hash.Field(CanonicalDomain(node.domain()));
      hash.Field(node.op_type());
      hash.Field(node.overload());
      hash.Int(static_cast<uint64_t>(node.input_size()));
      for (const auto& in : node.input()) {
        if (in.empty()) {
          hash.Field("");
          continue;
        }
        std::optional<std::string> canonical = Canonical(in);
        if (!status_.ok()) return status_;
        if (!canonical) return InvalidModel("the region reads '", in, "', which is neither an entry input nor made in it");
        hash.Field(*canonical);
      }
      hash.Int(static_cast<uint64_t>(node.output_size()));
      for (int32_t w : index_.outputs(n)) hash.Field(w < 0 ? std::string() : names_.at(w));
      std::vector<const onnx::AttributeProto*> attributes;
      for (const auto& a : node.attribute()) attributes.push_back(&a);
      std::sort(attributes.begin(), attributes.end(),
                [](const auto* a, const auto* b) { return a->name() < b->name(); });
      hash.Int(attributes.size());
      for (const onnx::AttributeProto* a : attributes) {
        hash.Field(a->name());
        if (a->doc_string().empty() && !a->has_g() && a->graphs_size() == 0) {
          hash.Field(SerializeDeterministic(*a));
          continue;
        }
        onnx::AttributeProto copy = *a;
        copy.clear_doc_string();
        const Lookup outer = [this](std::string_view name) { return Canonical(name); };
        if (copy.has_g()) CanonicalizeGraph(*copy.mutable_g(), outer, 1);
        for (auto& g : *copy.mutable_graphs()) CanonicalizeGraph(g, outer, 1);
        if (!status_.ok()) return status_;
        hash.Field(SerializeDeterministic(copy));
      }
    }
    PARITY_ASSIGN_OR_RETURN(std::string hex, hash.Hex());
    return "sha256:" + hex;
  }

 private:
  // The canonical name of a value of the region's graph; nullopt for a
  // name the region neither receives nor makes (the caller decides).
  std::optional<std::string> Canonical(std::string_view name) {
    const int32_t id = index_.Find(name);
    if (id < 0) return std::nullopt;
    auto it = names_.find(id);
    if (it != names_.end()) return it->second;
    const onnx::TensorProto* init = index_.initializer(id);
    if (!init || index_.is_graph_input(id)) return std::nullopt;
    StatusOr<std::string> weight = WeightName(*init);
    if (!weight.ok()) {
      status_ = weight.status();
      return std::nullopt;
    }
    return names_.emplace(id, *weight).first->second;
  }

  const GraphIndex& index_;
  std::span<const int32_t> inputs_, outputs_, region_;
  std::unordered_map<int32_t, std::string> names_;
  Status status_;
};

}  // namespace

StatusOr<std::string> HashRegion(const GraphIndex& index, const onnx::EquivalentSubgraphProto& entry,
                                 std::span<const int32_t> inputs, std::span<const int32_t> outputs,
                                 std::span<const int32_t> region) {
  return RegionHasher(index, inputs, outputs, region).Run();
}

namespace {

// The region of `entry` in `index` and its hash; an entry whose region
// cannot be found (a rule of ValidateVariants broken) is an error.
StatusOr<std::string> HashEntry(GraphIndex& index, const VariantEntry& entry) {
  const onnx::EquivalentSubgraphProto& proto = *entry.proto;
  const std::string where = StrCat("entry ", entry.id, " (", entry.call, ") of graph '", entry.graph_path, "'");
  std::vector<int32_t> inputs, outputs;
  for (const auto& in : proto.input()) inputs.push_back(in.empty() ? -1 : index.Find(in));
  for (const auto& o : proto.output()) {
    const int32_t id = o.empty() ? -1 : index.Find(o);
    if (id < 0 || index.producer(id) < 0) {
      return InvalidModel(kRuleNames, ": ", where, ": output '", o, "' is not computed by a node of the graph");
    }
    outputs.push_back(id);
  }
  if (outputs.empty()) return InvalidModel(kRuleArity, ": ", where, ": the entry lists no outputs");
  GraphIndex::Region region = index.FindRegion(inputs, outputs);
  if (region.open_value >= 0) {
    return InvalidModel(kRuleOpenCut, ": ", where, ": the region reads '", index.name(region.open_value),
                        "', which is not an entry input");
  }
  if (auto bad = index.NonConvexInput(region.nodes, inputs)) {
    return InvalidModel(kRuleConvex, ": ", where, ": input '", index.name(bad->first), "' is computed from '",
                        index.name(bad->second), "', a value of the region");
  }
  StatusOr<std::string> hash = HashRegion(index, proto, inputs, outputs, region.nodes);
  if (!hash.ok()) return hash.status().WithContext(where);
  return hash;
}

}  // namespace
}  // namespace variants_internal

StatusOr<std::string> RegionHash(const onnx::ModelProto& model, const VariantEntry& entry) {
  if (!entry.graph || !entry.proto) return InvalidArgument("RegionHash: the entry points into no graph");
  graph::GraphIndex index(*entry.graph);
  return variants_internal::HashEntry(index, entry);
}

StatusOr<int> StampCompiledHashes(onnx::ModelProto& model, bool all) {
  const std::vector<VariantEntry> entries = CollectEntries(model);
  std::unordered_map<const onnx::GraphProto*, std::unique_ptr<graph::GraphIndex>> indexes;
  // Every hash is computed before any is written: the indexes hold views
  // into the model's strings.
  std::vector<std::pair<const VariantEntry*, std::string>> writes;
  for (const VariantEntry& entry : entries) {
    if (!entry.compiled) continue;
    const onnx::AttributeProto* current = variants_internal::FindAttribute(*entry.proto, kHashAttr);
    if (!all && current && current->type() == onnx::AttributeProto::STRING && !current->s().empty()) continue;
    auto& index = indexes[entry.graph];
    if (!index) index = std::make_unique<graph::GraphIndex>(*entry.graph);
    PARITY_ASSIGN_OR_RETURN(std::string hash, variants_internal::HashEntry(*index, entry));
    writes.emplace_back(&entry, std::move(hash));
  }
  for (auto& [entry, hash] : writes) {
    // The entry points into `model`, which the caller gave us to change.
    auto* proto = const_cast<onnx::EquivalentSubgraphProto*>(entry->proto);
    onnx::AttributeProto* attr = nullptr;
    for (auto& a : *proto->mutable_attribute()) {
      if (a.name() == kHashAttr) attr = &a;
    }
    if (!attr) attr = proto->add_attribute();
    attr->Clear();
    attr->set_name(kHashAttr);
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(std::move(hash));
  }
  return static_cast<int>(writes.size());
}

}  // namespace parity
