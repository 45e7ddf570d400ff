// Validation of variant entries (spec/variants.md, "Validity"): indexes the
// graphs that hold entries once, then checks each entry's names, region
// (open cut, convexity), hash and duplicates; entry_rules.cc checks the rest.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <set>
#include <unordered_map>

#include "reference/variants/analysis.h"

namespace parity {
namespace variants_internal {
namespace {

// Indexes `graph` when it or a graph nested in it holds entries; returns
// whether it did. Children are indexed first, then told their parent.
bool BuildIndexes(const onnx::GraphProto& graph, ModelAnalysis& analysis) {
  bool any = graph.equivalent_subgraph_size() > 0;
  std::vector<std::pair<const onnx::GraphProto*, int32_t>> children;  // (graph, holding node)
  for (int32_t n = 0; n < graph.node_size(); ++n) {
    ForEachSubgraph(graph.node(n), [&](const onnx::GraphProto& g) {
      if (BuildIndexes(g, analysis)) children.emplace_back(&g, n);
    });
  }
  if (!any && children.empty()) return false;
  auto index = std::make_unique<GraphIndex>(graph);
  for (const auto& [child, holder] : children) analysis.indexes.at(child)->set_parent(index.get(), holder);
  analysis.indexes.emplace(&graph, std::move(index));
  return true;
}

// What a value the region reads without computing it is, for messages.
std::string DescribeOpenValue(const GraphIndex& index, int32_t value) {
  const std::string name(index.name(value));
  if (index.is_graph_input(value)) return StrCat("graph input '", name, "'");
  if (index.parent() && index.parent()->Visible(name)) return StrCat("'", name, "' of an enclosing graph");
  return StrCat("'", name, "'");
}

std::string DescribeNonProducer(const GraphIndex& index, int32_t value) {
  if (index.is_graph_input(value)) return "a graph input";
  if (index.initializer(value)) return "an initializer";
  if (index.parent() && index.parent()->Visible(index.name(value))) return "a value of an enclosing graph";
  return "not a value of this graph";
}

// VAR-PLACE: entries in the subgraphs of a function body's nodes. A
// function is expanded per call, so one entry would stand for many regions,
// and the body's values are not the model's; resolution never reaches them.
void FindPlacedInFunction(const onnx::GraphProto& graph, const std::string& function, const std::string& path,
                          std::vector<Status>* problems) {
  if (graph.equivalent_subgraph_size() > 0) {
    problems->push_back(InvalidModel(kRulePlace, ": function '", function, "' holds ", graph.equivalent_subgraph_size(),
                                     " entr", graph.equivalent_subgraph_size() == 1 ? "y" : "ies", " in graph '",
                                     path, "': entries may only sit in the main graph or in subgraphs of its nodes"));
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const auto& attr : graph.node(n).attribute()) {
      const std::string where = StrCat(path, "/", NodeLabel(graph.node(n), n), ".", attr.name());
      if (attr.has_g()) FindPlacedInFunction(attr.g(), function, where, problems);
      for (int g = 0; g < attr.graphs_size(); ++g) {
        FindPlacedInFunction(attr.graphs(g), function, StrCat(where, "[", g, "]"), problems);
      }
    }
  }
}

void CheckPlacement(const onnx::ModelProto& model, std::vector<Status>* problems) {
  for (const auto& f : model.functions()) {
    const std::string function = StrCat(f.domain().empty() ? "ai.onnx" : f.domain(), ":", f.name(),
                                        f.overload().empty() ? "" : ":", f.overload());
    for (int n = 0; n < f.node_size(); ++n) {
      for (const auto& attr : f.node(n).attribute()) {
        const std::string where = StrCat(f.name(), "/", NodeLabel(f.node(n), n), ".", attr.name());
        if (attr.has_g()) FindPlacedInFunction(attr.g(), function, where, problems);
        for (int g = 0; g < attr.graphs_size(); ++g) {
          FindPlacedInFunction(attr.graphs(g), function, StrCat(where, "[", g, "]"), problems);
        }
      }
    }
  }
}

// The nodes holding an entry's graph, outermost first: "node 'If#2' at
// position 0", joined by " > "; "the main graph" for an entry there.
std::string Holders(const GraphIndex& index) {
  std::vector<std::string> chain;
  for (const GraphIndex* g = &index; g->parent(); g = g->parent()) {
    chain.push_back(StrCat("node '", NodeLabel(g->parent()->graph().node(g->holder()), g->holder()),
                           "' at position ", g->holder()));
  }
  if (chain.empty()) return "the main graph";
  std::string text;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) text += (text.empty() ? "" : " > ") + *it;
  return text;
}

class EntryAnalyzer {
 public:
  EntryAnalyzer(const ModelFacts& facts, const VariantEntry& entry, EntryAnalysis& out)
      : facts_(facts), entry_(entry), proto_(*entry.proto), out_(out), index_(*out.index) {}

  void Run() {
    CheckEntryAlone(facts_, entry_, index_, &out_.problems);
    if (!CheckNames()) return;
    GraphIndex::Region region = index_.FindRegion(out_.inputs, out_.outputs);
    if (region.open_value >= 0) {
      Problem(kRuleOpenCut, "the region reads ", DescribeOpenValue(index_, region.open_value),
              ", which is not an entry input");
      return;
    }
    if (auto bad = index_.NonConvexInput(region.nodes, out_.inputs)) {
      const auto [input, source] = *bad;
      if (input == source) {
        Problem(kRuleConvex, "input '", index_.name(input),
                "' is computed inside the region; the call would have to read its own result");
      } else {
        Problem(kRuleConvex, "input '", index_.name(input), "' is computed from '", index_.name(source),
                "', a value of the region; the call would depend on itself (a cycle)");
      }
      return;
    }
    out_.region = std::move(region.nodes);
    out_.region_ok = true;
    if (entry_.compiled) CheckStale();
  }

 private:
  template <typename... Args>
  void Problem(const char* rule, const Args&... args) {
    out_.problems.push_back(EntryProblem(rule, entry_, StrCat(args...)));
  }

  // VAR-NAMES and the list rules of VAR-ARITY; false when the region
  // cannot be walked.
  bool CheckNames() {
    bool ok = true;
    for (const auto& in : proto_.input()) {
      out_.inputs.push_back(in.empty() ? -1 : index_.Find(in));
      if (in.empty()) continue;
      if (!index_.Visible(in)) {
        Problem(kRuleNames, "input '", in, "' is not a value of this graph or of an enclosing one");
        ok = false;
      } else if (auto late = index_.LateOuter(in)) {
        // The holder would have to run before the value exists: taking the
        // entry makes the holder read its own result (a cycle).
        const onnx::GraphProto& outer = late->graph->graph();
        const std::string holder = NodeLabel(outer.node(late->holder), late->holder);
        if (late->producer == late->holder) {
          Problem(kRuleNames, "input '", in, "' is an output of node '", holder,
                  "', which holds this graph; an outer value an entry reads must be defined before its holding node");
        } else {
          Problem(kRuleNames, "input '", in, "' of an enclosing graph is made by node '",
                  NodeLabel(outer.node(late->producer), late->producer), "', at or after node '", holder,
                  "', which holds this graph; an outer value an entry reads must be defined before its holding node");
        }
        ok = false;
      }
    }
    if (proto_.output_size() == 0) {
      Problem(kRuleArity, "the entry lists no outputs");
      ok = false;
    }
    std::set<std::string_view> seen;
    for (const auto& o : proto_.output()) {
      if (o.empty()) {
        Problem(kRuleNames, "an output name is empty");
        ok = false;
        continue;
      }
      if (!seen.insert(o).second) Problem(kRuleArity, "output '", o, "' is listed twice");
      const int32_t id = index_.Find(o);
      out_.outputs.push_back(id);
      if (index_.producer(id) < 0) {
        Problem(kRuleNames, "output '", o, "' is not computed by a node of this graph (it is ",
                DescribeNonProducer(index_, id), ")");
        ok = false;
      }
    }
    return ok;
  }

  void CheckStale() {
    const onnx::AttributeProto* hash = FindAttribute(proto_, kHashAttr);
    if (!hash || hash->type() != onnx::AttributeProto::STRING || !WellFormedHash(hash->s())) return;  // VAR-COMPILED
    StatusOr<std::string> current = HashRegion(index_, proto_, out_.inputs, out_.outputs, out_.region);
    if (!current.ok()) {
      out_.stale_detail = StrCat("the region cannot be hashed: ", current.status().message());
    } else if (*current != hash->s()) {
      out_.stale_detail = StrCat("__hash__ is ", hash->s(), " but the region it replaces hashes to ", *current,
                                 ": the graph changed after the entry was compiled");
    }
    if (!out_.stale_detail.empty()) out_.stale = EntryProblem(kRuleStale, entry_, out_.stale_detail);
  }

  const ModelFacts& facts_;
  const VariantEntry& entry_;
  const onnx::EquivalentSubgraphProto& proto_;
  EntryAnalysis& out_;
  GraphIndex& index_;
};

}  // namespace

std::string SerializeDeterministic(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    (void)message.SerializeToCodedStream(&coded);  // fails only on missing proto2 required fields; onnx has none
  }
  return bytes;
}

std::vector<Status> ModelAnalysis::Problems(bool with_stale) const {
  std::vector<Status> problems = model_problems;
  for (const auto& a : analyses) {
    problems.insert(problems.end(), a.problems.begin(), a.problems.end());
    if (with_stale && a.stale) problems.push_back(*a.stale);
  }
  return problems;
}

ModelAnalysis AnalyzeVariants(const LoadedModel& model) {
  ModelAnalysis analysis;
  const onnx::ModelProto& proto = *model.proto;
  analysis.entries = CollectEntries(proto);
  CheckPlacement(proto, &analysis.model_problems);
  if (analysis.entries.empty()) return analysis;
  BuildIndexes(proto.graph(), analysis);
  if (proto.ir_version() < 10) {
    analysis.model_problems.push_back(EntryProblem(
        kRuleIrVersion, analysis.entries.front(),
        StrCat("the model has ir_version ", proto.ir_version(), " and ", analysis.entries.size(),
               " entries; equivalent_subgraph needs ir_version 10 or later")));
  }
  const ModelFacts facts = ReadModelFacts(model);
  analysis.analyses.resize(analysis.entries.size());
  // Entries of one graph are consecutive in CollectEntries order.
  std::unordered_map<std::string, size_t> contents;
  std::unordered_map<std::string_view, size_t> by_id;
  const onnx::GraphProto* contents_graph = nullptr;
  for (size_t i = 0; i < analysis.entries.size(); ++i) {
    const VariantEntry& entry = analysis.entries[i];
    EntryAnalysis& out = analysis.analyses[i];
    out.index = analysis.IndexOf(*entry.graph);
    EntryAnalyzer(facts, entry, out).Run();
    if (entry.graph != contents_graph) {
      contents.clear();
      contents_graph = entry.graph;
    }
    // Ids name nodes by label; two nodes labelled alike (a node named
    // "If#2" and an unnamed If at position 2) give two entries one id, and
    // a backend's report or --only could not tell them apart.
    auto [same_id, fresh_id] = by_id.emplace(entry.id, i);
    if (!fresh_id) {
      const VariantEntry& other = analysis.entries[same_id->second];
      out.problems.push_back(EntryProblem(
          kRuleId, entry,
          StrCat("id '", entry.id, "' is also the id of an earlier entry (", other.call, ") held by ",
                 Holders(*analysis.analyses[same_id->second].index), "; this one is held by ", Holders(*out.index),
                 ": give the holding nodes unique names")));
    }
    auto [first, fresh] = contents.emplace(SerializeDeterministic(*entry.proto), i);
    if (!fresh) {
      out.problems.push_back(EntryProblem(kRuleDuplicate, entry,
                                          StrCat("it is identical to entry ", analysis.entries[first->second].id)));
    }
  }
  return analysis;
}

}  // namespace variants_internal

std::vector<Status> ValidateVariants(const LoadedModel& model) {
  if (!model.proto) return {Internal("ValidateVariants: no model")};
  return variants_internal::AnalyzeVariants(model).Problems(/*with_stale=*/true);
}

}  // namespace parity
