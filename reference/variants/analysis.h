// Internal to reference/variants: one pass over a model's entries that
// indexes every graph holding entries, finds each entry's region and checks
// every rule, so that ValidateVariants and ResolveVariants share the work.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "reference/model/graph_index.h"
#include "reference/variants/variants.h"

namespace parity::variants_internal {

// The graph layer's index and walks (reference/model/graph*.h), by their short names.
using graph::ForEachSubgraph;
using graph::GraphIndex;
using graph::HoldsGraphs;
using graph::NodeLabel;

struct EntryAnalysis {
  GraphIndex* index = nullptr;             // of the entry's graph
  std::vector<int32_t> inputs, outputs;    // value ids in `index`; -1 for ""
  std::vector<int32_t> region;             // node indices in node order; valid when region_ok
  bool region_ok = false;                  // names resolved, cut open nowhere, convex
  std::vector<Status> problems;            // every rule but VAR-STALE
  std::optional<Status> stale;             // VAR-STALE, for a Compiled entry whose hash is out of date
  std::string stale_detail;                // what `stale` says after the entry's name
};

struct ModelAnalysis {
  std::vector<VariantEntry> entries;   // CollectEntries order
  std::vector<EntryAnalysis> analyses; // one per entry
  std::vector<Status> model_problems;  // rules about the model as a whole (VAR-IR)
  // Indexes of the graphs that hold entries and of the graphs enclosing them.
  std::unordered_map<const onnx::GraphProto*, std::unique_ptr<GraphIndex>> indexes;

  GraphIndex* IndexOf(const onnx::GraphProto& graph) const {
    auto it = indexes.find(&graph);
    return it == indexes.end() ? nullptr : it->second.get();
  }
  // The model's problems then each entry's, in entry order; VAR-STALE ones
  // only with `with_stale`.
  std::vector<Status> Problems(bool with_stale) const;
};

// Indexes, regions and every rule. Assumes the model passed ValidateModel.
ModelAnalysis AnalyzeVariants(const LoadedModel& model);

// ResolveVariants on a model nobody else holds, rewritten where it lies.
// The IR rules (ValidateModel) are checked only with `validate_ir`, for
// callers that have not checked them already.
StatusOr<ResolvedModel> ResolveOwned(std::shared_ptr<onnx::ModelProto> model, const std::string& name,
                                     const std::string& base_dir, const ResolveOptions& options, bool validate_ir);

// "<RULE>: entry <id> (<call>) of graph '<path>': <detail>", as kInvalidModel.
Status EntryProblem(const char* rule, const VariantEntry& entry, const std::string& detail);

// The model-wide facts the per-entry rules read: imported opsets and local functions.
struct ModelFacts {
  std::map<std::string, int64_t, std::less<>> opsets;  // canonical domain -> version
  std::map<std::tuple<std::string, std::string, std::string>, const onnx::FunctionProto*> functions;
  std::string base_dir;  // for initializers with external data
  // Initializers by "<data_type>:<dims>", per graph, built when an entry
  // first holds a tensor attribute (VAR-COPIED-WEIGHT).
  mutable std::unordered_map<const GraphIndex*,
                             std::unordered_multimap<std::string, const onnx::TensorProto*>>
      initializers_by_shape;
};
ModelFacts ReadModelFacts(const LoadedModel& model);

// The rules that look at an entry alone, not at its region: VAR-CALL,
// VAR-ARITY (counts), VAR-METADATA, VAR-COMPILED, VAR-COPIED-WEIGHT.
void CheckEntryAlone(const ModelFacts& facts, const VariantEntry& entry, const GraphIndex& index,
                     std::vector<Status>* problems);

// Whether `hash` reads "sha256:" and 64 lowercase hex digits.
bool WellFormedHash(std::string_view hash);

// RegionHash of a region already found in `index`.
StatusOr<std::string> HashRegion(const GraphIndex& index, const onnx::EquivalentSubgraphProto& entry,
                                 std::span<const int32_t> inputs, std::span<const int32_t> outputs,
                                 std::span<const int32_t> region);

// The message's bytes with map and unknown-field order fixed, for hashing and comparing.
std::string SerializeDeterministic(const google::protobuf::MessageLite& message);

// The attribute of an entry called `name`, or null.
const onnx::AttributeProto* FindAttribute(const onnx::EquivalentSubgraphProto& entry, std::string_view name);

}  // namespace parity::variants_internal
