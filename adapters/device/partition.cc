// PartitionModel: claims in topological order, then the model the
// evaluator runs, with each fused region folded into one node.
#include "adapters/device/partition.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

#include "reference/model/graph.h"

namespace parity::adapters {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Why a claimed region cannot stand as one node: a value it makes that is
// read outside it, or is a graph output, is not among its outputs; or it
// reaches outside the graph.
Status CheckRegion(const onnx::GraphProto& graph, const RegionClaim& claim,
                   const std::map<std::string, std::vector<int>>& consumers) {
  std::set<int> members(claim.nodes.begin(), claim.nodes.end());
  std::set<std::string> outputs(claim.outputs.begin(), claim.outputs.end());
  std::set<std::string> graph_outputs;
  for (const auto& o : graph.output()) graph_outputs.insert(o.name());
  for (int n : claim.nodes) {
    if (n < 0 || n >= graph.node_size()) return Internal("a region names node ", n, " of ", graph.node_size());
    for (const std::string& value : graph.node(n).output()) {
      if (value.empty() || outputs.count(value)) continue;
      bool read_outside = graph_outputs.count(value) > 0;
      const auto it = consumers.find(value);
      for (int reader : it == consumers.end() ? std::vector<int>{} : it->second) {
        read_outside = read_outside || !members.count(reader);
      }
      if (read_outside) return Internal("region at ", graph::DescribeNode(graph.node(n), n), " hides '", value,
                                        "', which is read outside it");
    }
  }
  return Status::Ok();
}

}  // namespace

size_t Partition::fallback_count() const {
  size_t count = 0;
  for (const PlacedNode& n : nodes) count += n.device == kFallbackDevice ? 1 : 0;
  return count;
}

std::string Partition::FallbackList(size_t limit) const {
  std::string out;
  size_t listed = 0, total = 0;
  for (const PlacedNode& n : nodes) {
    if (n.device != kFallbackDevice) continue;
    ++total;
    if (listed == limit) continue;
    out += (out.empty() ? "" : "; ") + n.name + " (" + n.reason + ")";
    ++listed;
  }
  if (total > listed) out += StrCat("; and ", total - listed, " more");
  return out;
}

StatusOr<Partition> PartitionModel(const LoadedModel& model, const Lowering& lowering, const std::string& device) {
  const auto start = std::chrono::steady_clock::now();
  const onnx::ModelProto& proto = *model.proto;
  const onnx::GraphProto& graph = proto.graph();
  std::map<std::string, int64_t> opsets;
  for (const auto& import : proto.opset_import()) opsets[std::string(CanonicalDomain(import.domain()))] = import.version();
  const StaticFacts facts = StaticFacts::Infer(graph);
  std::set<std::string> local_functions;
  for (const auto& f : proto.functions()) {
    local_functions.insert(std::string(CanonicalDomain(f.domain())) + ":" + f.name() + ":" + f.overload());
  }
  // Producers and readers of each value (a subgraph's outer reads count as
  // its node's reads).
  std::map<std::string, int> producers;
  std::map<std::string, std::vector<int>> consumers;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    for (const std::string& out : node.output()) {
      if (!out.empty()) producers[out] = i;
    }
    std::set<std::string> reads(node.input().begin(), node.input().end());
    std::vector<std::string_view> outer;
    graph::CollectSubgraphOuterReads(node, &outer);
    reads.insert(outer.begin(), outer.end());
    for (const std::string& r : reads) {
      if (!r.empty()) consumers[r].push_back(i);
    }
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<const onnx::NodeProto*> order,
                          graph::TopologicalOrder(graph.node(), model.name));

  Partition partition;
  partition.kernels.host_wrote = lowering.host_wrote;
  partition.kernels.host_reads = lowering.host_reads;
  partition.kernels.copy_into = lowering.copy_into;
  partition.nodes.resize(static_cast<size_t>(graph.node_size()));
  std::vector<bool> taken(static_cast<size_t>(graph.node_size()), false);
  // Single lowered nodes by position, and the regions (kept until the
  // rewritten model gives their node an address).
  std::map<int, LoweredNode*> singles;
  std::vector<RegionClaim> regions;
  // Positions by node: a RepeatedPtrField's nodes do not lie in one array.
  std::unordered_map<const onnx::NodeProto*, int> position_of;
  for (int i = 0; i < graph.node_size(); ++i) position_of[&graph.node(i)] = i;
  for (const onnx::NodeProto* node_ptr : order) {
    const int i = position_of.at(node_ptr);
    const onnx::NodeProto& node = *node_ptr;
    PlacedNode& placed = partition.nodes[static_cast<size_t>(i)];
    placed.name = node.name().empty() ? StrCat(node.op_type(), "#", i) : node.name();
    if (taken[static_cast<size_t>(i)]) continue;
    const std::string domain(CanonicalDomain(node.domain()));
    const auto opset = opsets.find(domain);
    if (local_functions.count(domain + ":" + node.op_type() + ":" + node.overload())) {
      placed.reason = "a model-local function";
      continue;
    }
    if (opset == opsets.end()) {
      placed.reason = StrCat("domain '", node.domain(), "' is not imported");
      continue;
    }
    std::string region_reason;
    if (const std::vector<RegionFn>* fns = lowering.FindRegions(domain, node.op_type())) {
      const RegionView view(graph, i, opsets, facts, consumers, producers, taken);
      for (const RegionFn& fn : *fns) {
        const auto lowering_start = std::chrono::steady_clock::now();
        StatusOr<std::optional<RegionClaim>> claimed = fn(view);
        partition.compile_ms += MillisecondsSince(lowering_start);
        if (!claimed.ok() && claimed.status().code() == StatusCode::kUnimplemented) {
          region_reason = claimed.status().message();
          continue;
        }
        if (!claimed.ok()) {
          return claimed.status().WithContext(StrCat(model.name, ": lowering the region at ",
                                                     graph::DescribeNode(node, i)));
        }
        if (!*claimed) continue;
        RegionClaim& claim = **claimed;
        std::sort(claim.nodes.begin(), claim.nodes.end());  // a node named twice is one member
        claim.nodes.erase(std::unique(claim.nodes.begin(), claim.nodes.end()), claim.nodes.end());
        PARITY_RETURN_IF_ERROR(CheckRegion(graph, claim, consumers));
        bool free = true;
        for (int n : claim.nodes) free = free && !taken[static_cast<size_t>(n)];
        if (!free) continue;
        // Members visited before the anchor (a QDQ region's DequantizeLinear
        // nodes) were refused on their own; the region runs them now.
        for (int n : claim.nodes) {
          taken[static_cast<size_t>(n)] = true;
          partition.nodes[static_cast<size_t>(n)].reason.clear();
        }
        regions.push_back(std::move(claim));
        break;
      }
      if (taken[static_cast<size_t>(i)]) continue;
    }
    const LowerFn* lower = lowering.Find(domain, node.op_type());
    if (!lower) {
      placed.reason = region_reason.empty()
                          ? StrCat("no lowering for ", domain.empty() ? "" : domain + ".", node.op_type())
                          : region_reason;
      continue;
    }
    const auto lowering_start = std::chrono::steady_clock::now();
    StatusOr<std::unique_ptr<LoweredNode>> made = (*lower)(NodeView(node, opset->second, facts));
    partition.compile_ms += MillisecondsSince(lowering_start);
    if (made.ok()) {
      taken[static_cast<size_t>(i)] = true;
      singles[i] = made->get();
      partition.lowered.push_back(std::move(made).value());
    } else if (made.status().code() == StatusCode::kUnimplemented) {
      placed.reason = made.status().message();
    } else {
      return made.status().WithContext(StrCat(model.name, ": lowering ", graph::DescribeNode(node, i)));
    }
  }
  for (size_t i = 0; i < partition.nodes.size(); ++i) {
    partition.nodes[i].device = taken[i] ? device : kFallbackDevice;
  }

  // The model the evaluator runs. With no region it is the model itself.
  std::shared_ptr<onnx::ModelProto> rewritten;
  std::map<int, size_t> region_at;  // the position a region's node takes: its last member's
  if (!regions.empty()) {
    rewritten = std::make_shared<onnx::ModelProto>(proto);
    onnx::GraphProto* g = rewritten->mutable_graph();
    g->clear_node();
    for (size_t r = 0; r < regions.size(); ++r) {
      int last = -1;
      for (int n : regions[r].nodes) last = std::max(last, n);
      region_at[last] = r;
    }
    std::set<int> in_region;
    for (const RegionClaim& claim : regions) in_region.insert(claim.nodes.begin(), claim.nodes.end());
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto at = region_at.find(i);
      if (at != region_at.end()) {
        const RegionClaim& claim = regions[at->second];
        onnx::NodeProto* fused = g->add_node();
        fused->set_domain(kRegionDomain);
        fused->set_op_type("Region");
        fused->set_name(StrCat("region of ", partition.nodes[static_cast<size_t>(i)].name));
        for (const std::string& in : claim.inputs) fused->add_input(in);
        for (const std::string& out : claim.outputs) fused->add_output(out);
      } else if (!in_region.count(i)) {
        *g->add_node() = graph.node(i);
      }
    }
    onnx::OperatorSetIdProto* import = rewritten->add_opset_import();
    import->set_domain(kRegionDomain);
    import->set_version(1);
    partition.model = LoadedModel{rewritten, model.name, model.base_dir};
  } else {
    partition.model = model;
  }

  // Kernels by the address of the node the evaluator will meet.
  const onnx::GraphProto& run_graph = partition.model.proto->graph();
  int position = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto at = region_at.find(i);
    LoweredNode* runner = nullptr;
    if (at != region_at.end()) {
      runner = regions[at->second].runner.get();
    } else if (rewritten && taken[static_cast<size_t>(i)] && !singles.count(i)) {
      continue;  // folded into a region that comes later
    } else if (singles.count(i)) {
      runner = singles[i];
    }
    const onnx::NodeProto& run_node = run_graph.node(position++);
    if (!runner) continue;
    partition.kernels.kernels[&run_node] = [runner](const KernelContext& ctx) { return runner->Run(ctx); };
    if (runner->in_place()) {
      partition.kernels.in_place[&run_node] = [runner](const KernelContext& ctx, Tensor& buffer) {
        return runner->RunInPlace(ctx, buffer);
      };
    }
  }
  for (RegionClaim& claim : regions) partition.lowered.push_back(std::move(claim.runner));
  for (const auto& lowered : partition.lowered) partition.deferred_count += lowered->deferred() ? 1 : 0;
  partition.lower_ms = MillisecondsSince(start);
  return partition;
}

}  // namespace parity::adapters
