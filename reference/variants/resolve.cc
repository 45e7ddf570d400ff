// Resolution of variant entries (variants.h, ResolveVariants;
// spec/variants.md, "Resolution"): ranks the eligible entries, takes them
// greedily per graph, and rewrites the model where it lies (a copy of the
// caller's, or one the caller gave up), main graph first, then the
// subgraphs of the nodes that remain.
//
// The indexes know nodes by position and initializers by pointer, and the
// rewrite moves and deletes both. So each graph decides every edit before
// it recurses into its subgraphs or changes anything, and applies them last.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "reference/model/validator.h"
#include "reference/variants/analysis.h"
#include "reference/variants/rewrite_plan.h"
#include "reference/variants/variants.h"

namespace parity {
namespace variants_internal {
namespace {

constexpr char kEntryKey[] = "ai.onnx.variant.entry";  // metadata naming the entry a call came from

std::string Listed(const std::vector<Status>& problems) {
  std::string text;
  for (const Status& p : problems) text += "\n  " + p.message();
  return text;
}

template <typename T>
using Repeated = google::protobuf::RepeatedPtrField<T>;

// Puts element order[k] at position k and deletes the elements not in
// `order`, moving pointers only (no message is copied).
template <typename T>
void Permute(Repeated<T>* field, const std::vector<int32_t>& order) {
  const int size = field->size();
  std::vector<int32_t> position_of(static_cast<size_t>(size)), element_at(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) position_of[static_cast<size_t>(i)] = element_at[static_cast<size_t>(i)] = i;
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t element = order[k];
    const int32_t from = position_of[static_cast<size_t>(element)];
    const auto to = static_cast<int32_t>(k);
    if (from == to) continue;
    field->SwapElements(to, from);
    const int32_t displaced = element_at[k];
    element_at[k] = element;
    element_at[static_cast<size_t>(from)] = displaced;
    position_of[static_cast<size_t>(element)] = to;
    position_of[static_cast<size_t>(displaced)] = from;
  }
  field->DeleteSubrange(static_cast<int>(order.size()), size - static_cast<int>(order.size()));
}

// Deletes the elements at `positions` (ascending), keeping the others' order.
template <typename T>
void RemovePositions(Repeated<T>* field, const std::vector<int>& positions) {
  if (positions.empty()) return;
  int kept = 0;
  size_t next = 0;
  for (int i = 0; i < field->size(); ++i) {
    if (next < positions.size() && positions[next] == i) {
      ++next;
      continue;
    }
    if (i != kept) field->SwapElements(i, kept);
    ++kept;
  }
  field->DeleteSubrange(kept, field->size() - kept);
}

// Renames reads of `from` to `to` in a subgraph and those nested in it,
// except below a graph that defines `from` itself.
void RenameOuterReads(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  for (const auto& i : graph.input()) {
    if (i.name() == from) return;
  }
  for (const auto& t : graph.initializer()) {
    if (t.name() == from) return;
  }
  for (const auto& node : graph.node()) {
    for (const auto& o : node.output()) {
      if (o == from) return;
    }
  }
  for (auto& node : *graph.mutable_node()) {
    for (auto& in : *node.mutable_input()) {
      if (in == from) in = to;
    }
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) RenameOuterReads(*attr.mutable_g(), from, to);
      for (auto& g : *attr.mutable_graphs()) RenameOuterReads(g, from, to);
    }
  }
  for (auto& o : *graph.mutable_output()) {
    if (o.name() == from) o.set_name(to);
  }
  for (auto& entry : *graph.mutable_equivalent_subgraph()) {
    for (auto& in : *entry.mutable_input()) {
      if (in == from) in = to;
    }
  }
}

// Every value name of `graph` and the graphs nested in it.
void CollectNames(const onnx::GraphProto& graph, std::unordered_set<std::string>* names) {
  for (const auto& i : graph.input()) names->insert(i.name());
  for (const auto& t : graph.initializer()) names->insert(t.name());
  for (const auto& node : graph.node()) {
    names->insert(node.input().begin(), node.input().end());
    names->insert(node.output().begin(), node.output().end());
    ForEachSubgraph(node, [&](const onnx::GraphProto& g) { CollectNames(g, names); });
  }
}

// What one graph's rewrite changes by name, decided before anything changes.
struct GraphEdits {
  struct Rename {
    int32_t node;
    int slot;           // output or input position
    bool output;
    std::string name;
  };
  std::vector<Rename> renames;
  // Outer reads to rename in the subgraphs of node `node`: from -> to.
  std::vector<std::tuple<int32_t, std::string, std::string>> outer_renames;
  std::vector<int> gone_initializers, gone_value_infos;  // positions, ascending
};


class Resolver {
 public:
  // `model` is the proto behind `analysis`; the resolver rewrites it.
  Resolver(onnx::ModelProto& model, const std::string& name, const ResolveOptions& options, ModelAnalysis& analysis)
      : model_(model), name_(name), options_(options), analysis_(analysis), only_(!options.only_entries.empty()) {}

  StatusOr<std::vector<EntryDecision>> Run() {
    PARITY_RETURN_IF_ERROR(Rank());
    PARITY_RETURN_IF_ERROR(ResolveGraph(*model_.mutable_graph()));
    for (size_t i = 0; i < decisions_.size(); ++i) {
      if (!decisions_[i].selected && decisions_[i].reason.empty()) decisions_[i].reason = "not reached";
    }
    return std::move(decisions_);
  }

 private:
  const VariantEntry& Entry(int e) const { return analysis_.entries[static_cast<size_t>(e)]; }

  // Step 1: eligibility and rank, with a reason for each entry left out.
  Status Rank() {
    const size_t count = analysis_.entries.size();
    rank_.assign(count, -1);
    for (const VariantEntry& entry : analysis_.entries) decisions_.push_back({entry.id, entry.call, false, ""});
    if (only_) {
      std::unordered_map<std::string, size_t> by_id;
      for (size_t i = 0; i < count; ++i) {
        // VAR-ID refuses such a model before resolution; a duplicate here is a bug.
        auto [first, fresh] = by_id.emplace(Entry(static_cast<int>(i)).id, i);
        if (!fresh) {
          return Internal(name_, ": entries ", first->second, " and ", i, " have the same id '", first->first,
                          "'; VAR-ID should have refused the model");
        }
      }
      std::vector<bool> requested(count, false);
      for (const std::string& id : options_.only_entries) {
        auto it = by_id.find(id);
        if (it == by_id.end()) return InvalidArgument(name_, ": no entry has the requested id '", id, "'");
        requested[it->second] = true;
      }
      int next = 0;
      for (size_t i = 0; i < count; ++i) {
        if (!requested[i]) {
          decisions_[i].reason = "not requested";
        } else if (analysis_.analyses[i].stale) {
          return InvalidArgument(name_, ": requested entry ", decisions_[i].id, " is stale: ",
                                 analysis_.analyses[i].stale_detail);
        } else {
          rank_[i] = next++;
        }
      }
    } else {
      struct Candidate {
        size_t target;
        int32_t priority;
        size_t entry;
      };
      std::vector<Candidate> candidates;
      for (size_t i = 0; i < count; ++i) {
        const VariantEntry& entry = Entry(static_cast<int>(i));
        const std::string& wanted = entry.target.empty() ? std::string(kPortableTarget) : entry.target;
        auto it = std::find(options_.targets.begin(), options_.targets.end(), wanted);
        if (it == options_.targets.end()) {
          decisions_[i].reason = entry.target.empty() ? StrCat("no target and '", kPortableTarget, "' not listed")
                                                      : StrCat("target '", entry.target, "' not listed");
        } else if (analysis_.analyses[i].stale) {
          decisions_[i].reason = "stale: " + analysis_.analyses[i].stale_detail;
        } else if (std::string refused = options_.refuse ? options_.refuse(entry) : ""; !refused.empty()) {
          decisions_[i].reason = "refused by the backend: " + refused;
        } else {
          candidates.push_back({static_cast<size_t>(it - options_.targets.begin()), entry.priority, i});
        }
      }
      std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        if (a.target != b.target) return a.target < b.target;
        if (a.priority != b.priority) return a.priority > b.priority;
        return a.entry < b.entry;
      });
      for (size_t k = 0; k < candidates.size(); ++k) rank_[candidates[k].entry] = static_cast<int>(k);
    }
    for (size_t i = 0; i < count; ++i) {
      if (rank_[i] >= 0) by_graph_[Entry(static_cast<int>(i)).graph].push_back(static_cast<int>(i));
    }
    for (auto& [graph, entries] : by_graph_) {
      std::sort(entries.begin(), entries.end(), [&](int a, int b) { return rank_[a] < rank_[b]; });
    }
    return Status::Ok();
  }

  // Step 2 for one graph: greedy by rank, skipping overlaps; then drops
  // entries on cycles until the rewritten graph sorts.
  Status Select(const onnx::GraphProto& graph, GraphIndex& index, std::vector<TakenEntry>* taken,
                std::vector<int32_t>* owner) {
    auto it = by_graph_.find(&graph);
    if (it == by_graph_.end()) return Status::Ok();
    owner->assign(static_cast<size_t>(index.node_count()), -1);
    for (int e : it->second) {
      const EntryAnalysis& analysis = analysis_.analyses[static_cast<size_t>(e)];
      int32_t clash = -1, clash_node = -1;
      for (int32_t n : analysis.region) {
        if ((*owner)[static_cast<size_t>(n)] >= 0) {
          clash = (*owner)[static_cast<size_t>(n)];
          clash_node = n;
          break;
        }
      }
      if (clash >= 0) {
        const std::string& other = Entry((*taken)[static_cast<size_t>(clash)].entry).id;
        if (only_) {
          return InvalidArgument(name_, ": requested entries ", other, " and ", Entry(e).id,
                                 " overlap (both replace node '", NodeLabel(graph.node(clash_node), clash_node),
                                 "')");
        }
        decisions_[static_cast<size_t>(e)].reason = StrCat("overlaps ", other, " (selected first)");
        continue;
      }
      const auto slot = static_cast<int32_t>(taken->size());
      taken->push_back({e, rank_[static_cast<size_t>(e)], &analysis});
      for (int32_t n : analysis.region) (*owner)[static_cast<size_t>(n)] = slot;
    }
    return Status::Ok();
  }

  // Step 4: drops the lowest-ranked call of the cycle the plan found, and
  // with it those of the plan's independent two-call cycles (which later
  // rounds would drop alike, one rebuild each); the slots are compacted once.
  Status DropOnCycles(const RewritePlan& plan, std::vector<TakenEntry>* taken, std::vector<int32_t>* owner) {
    const std::vector<int32_t>& cycle_slots = plan.cycle_slots();
    if (cycle_slots.empty()) return Internal("a rewritten graph has a cycle through no call");
    int32_t drop = cycle_slots.front(), best = cycle_slots.front();
    for (int32_t s : cycle_slots) {
      if ((*taken)[static_cast<size_t>(s)].rank > (*taken)[static_cast<size_t>(drop)].rank) drop = s;
      if ((*taken)[static_cast<size_t>(s)].rank < (*taken)[static_cast<size_t>(best)].rank) best = s;
    }
    // A cycle passes through two calls at least (each cut is convex); one
    // alone is reported without a partner rather than trusted blindly.
    const std::string with = drop == best ? std::string() : Entry((*taken)[static_cast<size_t>(best)].entry).id;
    if (only_) {
      return InvalidArgument(name_, ": requested entries ", with.empty() ? "" : with + " and ",
                             Entry((*taken)[static_cast<size_t>(drop)].entry).id, " would form a cycle when substituted");
    }
    std::vector<uint8_t> dropped(taken->size(), 0);
    auto mark = [&](int32_t slot, const std::string& partner) {
      dropped[static_cast<size_t>(slot)] = 1;
      decisions_[static_cast<size_t>((*taken)[static_cast<size_t>(slot)].entry)].reason =
          partner.empty() ? std::string("would form a cycle") : StrCat("would form a cycle with ", partner);
    };
    mark(drop, with);
    for (const auto& [other, keep] : plan.IndependentPairCycles()) {
      mark(other, Entry((*taken)[static_cast<size_t>(keep)].entry).id);
    }
    size_t kept = 0;
    for (size_t s = 0; s < taken->size(); ++s) {
      const bool gone = dropped[s] != 0;
      for (int32_t n : (*taken)[s].analysis->region) {
        (*owner)[static_cast<size_t>(n)] = gone ? -1 : static_cast<int32_t>(kept);
      }
      if (!gone) (*taken)[kept++] = (*taken)[s];
    }
    taken->resize(kept);
    return Status::Ok();
  }

  Status ResolveGraph(onnx::GraphProto& graph) {
    GraphIndex* index = analysis_.IndexOf(graph);
    if (!index) return Status::Ok();  // no entry here or below
    std::vector<TakenEntry> taken;
    std::vector<int32_t> owner;
    PARITY_RETURN_IF_ERROR(Select(graph, *index, &taken, &owner));
    std::optional<RewritePlan> plan;
    while (!taken.empty()) {
      plan.emplace(*index, taken, owner);
      if (plan->Build()) break;
      PARITY_RETURN_IF_ERROR(DropOnCycles(*plan, &taken, &owner));
      plan.reset();
    }
    GraphEdits edits;
    if (plan) PlanEdits(graph, *index, taken, *plan, &edits);
    // Step 6: the subgraphs of the nodes that remain; entries under a removed node are not reached.
    for (int32_t n : index->subgraph_nodes()) {
      onnx::NodeProto& node = *graph.mutable_node(n);
      const bool kept = !plan || plan->keeps(n);
      for (auto& attr : *node.mutable_attribute()) {
        if (!HoldsGraphs(attr)) continue;
        if (kept) {
          if (attr.has_g()) PARITY_RETURN_IF_ERROR(ResolveGraph(*attr.mutable_g()));
          for (auto& g : *attr.mutable_graphs()) PARITY_RETURN_IF_ERROR(ResolveGraph(g));
        } else {
          const std::string label = NodeLabel(node, n);
          const int replaced_by = taken[static_cast<size_t>(owner[static_cast<size_t>(n)])].entry;
          if (attr.has_g()) PARITY_RETURN_IF_ERROR(MarkInside(attr.g(), label, replaced_by));
          for (const auto& g : attr.graphs()) PARITY_RETURN_IF_ERROR(MarkInside(g, label, replaced_by));
        }
      }
    }
    if (plan) Rewrite(graph, *index, taken, *plan, edits);
    graph.clear_equivalent_subgraph();
    return Status::Ok();
  }

  Status MarkInside(const onnx::GraphProto& original, const std::string& label, int replaced_by) {
    if (!analysis_.IndexOf(original)) return Status::Ok();
    auto it = by_graph_.find(&original);
    if (it != by_graph_.end()) {
      for (int e : it->second) {
        if (only_) {
          return InvalidArgument(name_, ": requested entry ", Entry(e).id, " is inside node '", label,
                                 "', which requested entry ", Entry(replaced_by).id, " replaces");
        }
        decisions_[static_cast<size_t>(e)].reason =
            StrCat("inside node '", label, "', which ", Entry(replaced_by).id, " replaced");
      }
    }
    Status marked;
    for (const auto& node : original.node()) {
      ForEachSubgraph(node, [&](const onnx::GraphProto& g) {
        if (marked.ok()) marked = MarkInside(g, label, replaced_by);
      });
      if (!marked.ok()) return marked;
    }
    return Status::Ok();
  }

  // A fresh value name: unused anywhere in the model, so that it neither
  // collides nor shadows. The names are collected once, when first needed.
  std::string FreshName(std::string_view base) {
    if (!names_known_) {
      CollectNames(model_.graph(), &used_names_);
      names_known_ = true;
    }
    for (int k = 0;; ++k) {
      std::string name = StrCat(base, "_variant_", k);
      if (used_names_.insert(name).second) return name;
    }
  }

  // Step 3, second half, and step 4, decided by name before anything
  // changes: a region node that stays makes its entry's outputs under fresh
  // names, which the kept region nodes of that entry read; initializers only
  // dead nodes read and value_info of values nothing makes any more go.
  void PlanEdits(const onnx::GraphProto& graph, const GraphIndex& index, const std::vector<TakenEntry>& taken,
                 const RewritePlan& plan, GraphEdits* edits) {
    std::unordered_map<int32_t, std::string> renamed;
    for (size_t s = 0; s < taken.size(); ++s) {
      for (int32_t n : taken[s].analysis->region) {
        if (!plan.keeps(n)) continue;
        std::span<const int32_t> outputs = index.outputs(n);
        for (size_t k = 0; k < outputs.size(); ++k) {
          const int32_t w = outputs[k];
          if (w < 0 || plan.provider(w) != static_cast<int32_t>(s)) continue;
          std::string name = FreshName(index.name(w));
          edits->renames.push_back({n, static_cast<int>(k), true, name});
          renamed.emplace(w, std::move(name));
        }
      }
    }
    if (!renamed.empty()) {
      for (size_t s = 0; s < taken.size(); ++s) {
        for (int32_t n : taken[s].analysis->region) {
          if (!plan.keeps(n)) continue;
          const onnx::NodeProto& node = graph.node(n);
          for (int k = 0; k < node.input_size(); ++k) {
            if (node.input(k).empty()) continue;
            const int32_t id = index.Find(node.input(k));
            auto it = renamed.find(id);
            if (it != renamed.end() && plan.provider(id) == static_cast<int32_t>(s)) {
              edits->renames.push_back({n, k, false, it->second});
            }
          }
          // Reads through subgraphs, by their nodes and by their entries.
          for (std::span<const int32_t> reads : {index.reads(n), index.entry_reads(n)}) {
            for (int32_t v : reads) {
              auto it = renamed.find(v);
              if (it != renamed.end() && plan.provider(v) == static_cast<int32_t>(s)) {
                edits->outer_renames.emplace_back(n, std::string(index.name(v)), it->second);
              }
            }
          }
        }
      }
    }
    // 0: untouched; 1: kept; 2: gone (an initializer removed, or a value no node makes any more).
    std::vector<uint8_t> state(static_cast<size_t>(index.value_count()), 0);
    std::vector<uint8_t> call_reads(static_cast<size_t>(index.value_count()), 0);
    for (const TakenEntry& t : taken) {
      for (int32_t x : t.analysis->inputs) {
        if (x >= 0) call_reads[static_cast<size_t>(x)] = 1;
      }
    }
    bool any_gone = false;
    for (int32_t n = 0; n < index.node_count(); ++n) {
      if (plan.keeps(n)) continue;
      for (int32_t w : index.outputs(n)) {
        if (w >= 0 && plan.provider(w) < 0) {
          state[static_cast<size_t>(w)] = 2;
          any_gone = true;
        }
      }
      for (int32_t v : index.reads(n)) {
        auto& st = state[static_cast<size_t>(v)];
        if (st != 0 || !index.initializer(v)) continue;
        bool needed = index.is_graph_input(v) || index.is_graph_output(v) || index.read_by_nested_entry(v) ||
                      call_reads[static_cast<size_t>(v)];
        for (int32_t c : index.consumers(v)) {
          if (needed) break;
          needed = plan.keeps(c);
        }
        st = needed ? 1 : 2;
        any_gone |= !needed;
      }
    }
    if (!any_gone) return;
    auto gone = [&](const std::string& name) {
      const int32_t id = index.Find(name);
      return id >= 0 && state[static_cast<size_t>(id)] == 2;
    };
    for (int i = 0; i < graph.initializer_size(); ++i) {
      if (gone(graph.initializer(i).name())) edits->gone_initializers.push_back(i);
    }
    for (int i = 0; i < graph.value_info_size(); ++i) {
      if (gone(graph.value_info(i).name())) edits->gone_value_infos.push_back(i);
    }
  }

  // Steps 3 to 5: add the calls, apply the planned edits, and put the
  // nodes in the planned order, dropping the dead region nodes. No lookup
  // by name here: the subgraphs are already rewritten.
  void Rewrite(onnx::GraphProto& graph, const GraphIndex& index, const std::vector<TakenEntry>& taken,
               const RewritePlan& plan, const GraphEdits& edits) {
    // Call names must differ from every node name; only names of the same
    // shape can collide, so only those are collected.
    std::unordered_set<std::string> node_names;
    for (const auto& node : graph.node()) {
      if (node.name().rfind("variant_", 0) == 0) node_names.insert(node.name());
    }
    for (const TakenEntry& t : taken) {
      const VariantEntry& entry = Entry(t.entry);
      onnx::EquivalentSubgraphProto& proto = *graph.mutable_equivalent_subgraph(entry.index);
      onnx::NodeProto& call = *graph.add_node();
      call.mutable_input()->Swap(proto.mutable_input());
      call.mutable_output()->Swap(proto.mutable_output());
      call.mutable_attribute()->Swap(proto.mutable_attribute());
      call.mutable_metadata_props()->Swap(proto.mutable_metadata_props());
      call.set_op_type(std::move(*proto.mutable_op_type()));
      if (proto.has_domain()) call.set_domain(std::move(*proto.mutable_domain()));
      if (proto.has_overload()) call.set_overload(std::move(*proto.mutable_overload()));
      if (proto.has_doc_string()) call.set_doc_string(std::move(*proto.mutable_doc_string()));
      std::string base = "variant_" + entry.id;
      std::replace(base.begin(), base.end(), '/', '_');
      std::string name = base;
      for (int k = 1; node_names.count(name); ++k) name = StrCat(base, "_", k);
      node_names.insert(name);
      call.set_name(std::move(name));
      auto* prop = call.add_metadata_props();
      prop->set_key(kEntryKey);
      prop->set_value(entry.id);
      decisions_[static_cast<size_t>(t.entry)].selected = true;
    }
    for (const GraphEdits::Rename& r : edits.renames) {
      onnx::NodeProto& node = *graph.mutable_node(r.node);
      if (r.output) {
        node.set_output(r.slot, r.name);
      } else {
        node.set_input(r.slot, r.name);
      }
    }
    for (const auto& [n, from, to] : edits.outer_renames) {
      for (auto& attr : *graph.mutable_node(n)->mutable_attribute()) {
        if (attr.has_g()) RenameOuterReads(*attr.mutable_g(), from, to);
        for (auto& g : *attr.mutable_graphs()) RenameOuterReads(g, from, to);
      }
    }
    RemovePositions(graph.mutable_initializer(), edits.gone_initializers);
    RemovePositions(graph.mutable_value_info(), edits.gone_value_infos);
    Permute(graph.mutable_node(), plan.order());
  }

  onnx::ModelProto& model_;
  const std::string& name_;
  const ResolveOptions& options_;
  ModelAnalysis& analysis_;
  const bool only_;
  std::vector<EntryDecision> decisions_;
  std::vector<int> rank_;  // by entry; -1 when not eligible
  // Eligible entries by graph, best rank first.
  std::unordered_map<const onnx::GraphProto*, std::vector<int>> by_graph_;
  std::unordered_set<std::string> used_names_;  // FreshName's, once known
  bool names_known_ = false;
};

}  // namespace

StatusOr<ResolvedModel> ResolveOwned(std::shared_ptr<onnx::ModelProto> model, const std::string& name,
                                     const std::string& base_dir, const ResolveOptions& options, bool validate_ir) {
  const LoadedModel loaded{model, name, base_dir};
  if (validate_ir) {
    std::vector<Status> problems = ValidateModel(loaded);
    if (!problems.empty()) {
      return InvalidModel(name, ": the model breaks ", problems.size(), " rule(s) of the IR:", Listed(problems));
    }
  }
  ModelAnalysis analysis = AnalyzeVariants(loaded);
  std::vector<Status> problems = analysis.Problems(/*with_stale=*/false);
  if (!problems.empty()) {
    return InvalidModel(name, ": ", problems.size(), " problem(s) with variant entries:", Listed(problems));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<EntryDecision> decisions,
                          Resolver(*model, name, options, analysis).Run());
  ResolvedModel resolved;
  resolved.model = std::move(*model);
  resolved.decisions = std::move(decisions);
  return resolved;
}

}  // namespace variants_internal

StatusOr<ResolvedModel> ResolveVariants(const LoadedModel& model, const ResolveOptions& options) {
  if (!model.proto) return Internal("ResolveVariants: no model");
  // The IR check runs on the caller's model, so a model it refuses is never copied.
  std::vector<Status> problems = ValidateModel(model);
  if (!problems.empty()) {
    return InvalidModel(model.name, ": the model breaks ", problems.size(), " rule(s) of the IR:",
                        variants_internal::Listed(problems));
  }
  return variants_internal::ResolveOwned(std::make_shared<onnx::ModelProto>(*model.proto), model.name,
                                         model.base_dir, options, /*validate_ir=*/false);
}

StatusOr<ResolvedModel> ResolveVariants(onnx::ModelProto&& model, const ResolveOptions& options,
                                        const std::string& name, const std::string& base_dir) {
  return variants_internal::ResolveOwned(std::make_shared<onnx::ModelProto>(std::move(model)), name, base_dir,
                                         options, /*validate_ir=*/true);
}

StatusOr<ResolvedModel> ResolveForReference(const LoadedModel& model, const ResolveOptions& options) {
  PARITY_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveVariants(model, options));
  PARITY_RETURN_IF_ERROR(LowerReferenceCompiled(resolved.model));
  return resolved;
}

}  // namespace parity
