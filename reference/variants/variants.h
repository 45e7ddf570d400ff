// Variant graphs (spec/variants.md, RFC onnx/onnx#7301): the rules an
// `equivalent_subgraph` entry must follow, and resolution, the rewrite a
// backend with given targets performs at session creation. Entries are read
// from GraphProto.equivalent_subgraph (field 17 of the patched schema,
// spec/proto/variants.delta), in the main graph and in every subgraph.
//
// Every rule has an identifier (kRule* below). A problem's message starts
// with it, then names the entry and the offending value:
//   "VAR-CONVEX: entry e2 (org.onnxparity.test:FusedAddRelu) of graph 'main': ..."
// so that cases, tests and users can match on the rule.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/core/status.h"
#include "reference/model/loader.h"

namespace parity {

// --- Rules (spec/variants.md, "Validity"). ---------------------------------
inline constexpr char kRuleIrVersion[] = "VAR-IR";          // ir_version >= 10 when any entry exists
inline constexpr char kRuleCall[] = "VAR-CALL";             // op_type set; domain imported; the op or function exists
inline constexpr char kRuleArity[] = "VAR-ARITY";           // input/output counts fit the call; outputs unique, non-empty
inline constexpr char kRuleNames[] = "VAR-NAMES";           // inputs visible in the graph; outputs made by its nodes
inline constexpr char kRuleOpenCut[] = "VAR-OPEN-CUT";      // the region reads a graph input that is not an entry input
inline constexpr char kRuleConvex[] = "VAR-CONVEX";         // an entry input is computed from a value inside the region
inline constexpr char kRuleMetadata[] = "VAR-METADATA";     // keys reverse-DNS, unique; ai.onnx.variant.* keys known and well-formed
inline constexpr char kRuleCompiled[] = "VAR-COMPILED";     // Compiled: __hash__, __identifier__, __binary__, target present and typed
inline constexpr char kRuleStale[] = "VAR-STALE";           // Compiled: __hash__ differs from the hash of the region it replaces
inline constexpr char kRuleCopiedWeight[] = "VAR-COPIED-WEIGHT";  // an attribute tensor duplicates an initializer
inline constexpr char kRuleDuplicate[] = "VAR-DUPLICATE";   // two entries of one graph are identical
inline constexpr char kRuleId[] = "VAR-ID";                 // two entries get the same id (nodes named alike)
inline constexpr char kRulePlace[] = "VAR-PLACE";           // an entry inside a model-local function's body

// Metadata keys this spec defines (all other keys must be reverse-DNS and
// outside "ai.onnx.variant.").
inline constexpr char kTargetKey[] = "ai.onnx.variant.target";      // reverse-DNS target name
inline constexpr char kPriorityKey[] = "ai.onnx.variant.priority";  // decimal int32, higher first; default 0
// The target name a backend lists to accept entries that name no target.
inline constexpr char kPortableTarget[] = "portable";
// The attributes of a Compiled call.
inline constexpr char kCompiledOp[] = "Compiled";
inline constexpr char kHashAttr[] = "__hash__";              // STRING "sha256:<64 lowercase hex>"
inline constexpr char kIdentifierAttr[] = "__identifier__";  // STRING, non-empty
inline constexpr char kBinaryAttr[] = "__binary__";          // TENSOR of STRING, shape []
// Compiled calls the reference itself can run: __binary__ holds a
// serialized FunctionProto computing the region (LowerReferenceCompiled).
inline constexpr char kReferenceTarget[] = "org.onnxparity.reference";
inline constexpr char kReferenceIdentifier[] = "org.onnxparity.reference.function/1";

// --- Entries. ----------------------------------------------------------------

// Where an entry lives and what it says, as read from the model.
struct VariantEntry {
  // Stable, human-readable id: "e<index>" in the main graph; in a subgraph,
  // the path of the node and attribute that hold it, e.g. "loop_0.body/e1"
  // (a node without a name is written "<op_type>#<position>").
  std::string id;
  std::string graph_path;  // "main", or "main/loop_0.body"
  int index = 0;           // position in its graph's equivalent_subgraph list
  const onnx::GraphProto* graph = nullptr;             // the graph that holds it (points into the model)
  const onnx::EquivalentSubgraphProto* proto = nullptr;
  std::string target;  // kTargetKey, or "" (portable)
  int32_t priority = 0;
  bool compiled = false;  // op_type == "Compiled"
  // "domain:op_type" (domain "ai.onnx" for the empty one), as reported in
  // parity_variant_choice.chosen.
  std::string call;
};

// Every entry of the model, main graph first (in list order), then those of
// subgraphs depth-first in node order (attributes by name). Entries inside
// model-local function bodies are not entries (VAR-PLACE refuses them).
std::vector<VariantEntry> CollectEntries(const onnx::ModelProto& model);
bool HasVariants(const onnx::ModelProto& model);

// --- Validation. -------------------------------------------------------------

// Every rule above, for every entry; each problem a kInvalidModel Status
// whose message starts with its rule id. Empty: all entries valid. Assumes
// the model passed ValidateModel (the IR rules); run it first.
std::vector<Status> ValidateVariants(const LoadedModel& model);

// The hash a Compiled entry's __hash__ must carry: "sha256:" + 64 hex digits
// of a canonical form of the region the entry replaces (spec/variants.md,
// "Stale entries"): the region's nodes in graph order with op type, domain,
// overload and attributes (doc strings and node names left out), values
// renamed by role (entry inputs by position, inner values by first
// definition, entry outputs by position), initializers by the hash of their
// type, shape and bytes. Renaming values or nodes keeps it; any change to
// what the region computes changes it.
StatusOr<std::string> RegionHash(const onnx::ModelProto& model, const VariantEntry& entry);

// Writes RegionHash into __hash__ of every Compiled entry whose __hash__ is
// empty (all of them with `all`), as a compiler would when it emits the
// blob. Returns how many it wrote.
StatusOr<int> StampCompiledHashes(onnx::ModelProto& model, bool all = false);

// --- Resolution. -------------------------------------------------------------

struct ResolveOptions {
  // The backend's targets, preferred first. An entry is eligible when its
  // target is listed; an entry with no target when kPortableTarget is.
  std::vector<std::string> targets;
  // Instead of targets: exactly these entry ids (by VariantEntry::id), for
  // `parity check --equivalence` and tests. An id that does not exist, or
  // entries that cannot be taken together, is an error.
  std::vector<std::string> only_entries;
  // The backend's own veto, asked of each entry whose target is listed and
  // which is not stale: a reason when it cannot take the entry after all (a
  // blob its driver cannot load), or "" to accept it. A refused entry is not
  // eligible, and the region stays in the main graph.
  std::function<std::string(const VariantEntry&)> refuse;
};

struct EntryDecision {
  std::string id;
  std::string call;    // VariantEntry::call
  bool selected = false;
  // Why not, when not: "target 'x' not listed", "overlaps e1 (selected
  // first)", "would form a cycle with e3", "stale: __hash__ ...", "inside
  // node 'if_0', which e0 replaced".
  std::string reason;
};

struct ResolvedModel {
  onnx::ModelProto model;               // no equivalent_subgraph left anywhere
  std::vector<EntryDecision> decisions; // one per entry, in CollectEntries order
};

// The model a backend with `options.targets` runs (spec/variants.md,
// "Resolution"):
//  1. eligible entries ranked by (position of their target in the list,
//     priority descending, graph then entry order); stale Compiled entries
//     are never eligible;
//  2. taken greedily: an entry whose region shares a node with one already
//     taken is skipped; if the taken set would make the rewritten graph
//     cyclic, the lowest-ranked entry on the cycle is dropped and the check
//     repeats;
//  3. for each taken entry, one call node (name "variant_<id>" made unique,
//     the entry's inputs, outputs, op, attributes and metadata, plus
//     metadata "ai.onnx.variant.entry" = id) produces the entry's outputs
//     under their own names; region nodes whose other outputs are still read
//     outside the region stay, their entry outputs renamed to fresh names;
//  4. dead nodes of the replaced regions are removed, then initializers that
//     only they read, then value_info of values no longer defined;
//  5. nodes are sorted topologically, stable: each node keeps its original
//     position as its key, a call node takes the smallest position of its
//     region;
//  6. subgraphs are resolved the same way, inside nodes that remain.
// Refuses (kInvalidModel, the problems joined) a model that ValidateVariants
// rejects for any rule but VAR-STALE. Weights are never copied: calls read
// initializers by name.
StatusOr<ResolvedModel> ResolveVariants(const LoadedModel& model, const ResolveOptions& options);
// The same for a model the caller hands over (std::move): it is rewritten
// where it lies instead of copied, which on a large model saves about half
// the time of parsing it. `name` and `base_dir` play LoadedModel's parts.
StatusOr<ResolvedModel> ResolveVariants(onnx::ModelProto&& model, const ResolveOptions& options,
                                        const std::string& name = "model", const std::string& base_dir = "");

// ResolveVariants, then LowerReferenceCompiled on the result: the model the
// reference evaluator runs for those targets (or entries).
StatusOr<ResolvedModel> ResolveForReference(const LoadedModel& model, const ResolveOptions& options);

// The model with every equivalent_subgraph list removed (function bodies
// included) and nothing else changed: what a backend that knows nothing of
// variants runs.
onnx::ModelProto StripVariants(const onnx::ModelProto& model);

// Turns each Compiled node for kReferenceIdentifier into a call of a
// model-local function decoded from its __binary__ (added to
// model.functions under a unique name), so the evaluator runs it. Compiled
// nodes of other identifiers are left as they are (the evaluator reports
// them unsupported). A __binary__ that is not a FunctionProto is an error
// naming the node.
Status LowerReferenceCompiled(onnx::ModelProto& model);

}  // namespace parity
