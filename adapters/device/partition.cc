// PartitionModel: one pass over the top-level nodes in graph order.
#include "adapters/device/partition.h"

#include <chrono>

#include "reference/model/graph.h"

namespace parity::adapters {

std::string Partition::FallbackList(size_t limit) const {
  std::string out;
  size_t listed = 0, total = 0;
  for (const PlacedNode& n : nodes) {
    if (n.reason.empty()) continue;
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
  Partition partition;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    PlacedNode& placed = partition.nodes.emplace_back();
    placed.name = node.name().empty() ? StrCat(node.op_type(), "#", i) : node.name();
    const std::string domain(CanonicalDomain(node.domain()));
    const auto opset = opsets.find(domain);
    const LowerFn* lower = lowering.Find(domain, node.op_type());
    if (local_functions.count(domain + ":" + node.op_type() + ":" + node.overload())) {
      placed.reason = "a model-local function";
    } else if (!lower || opset == opsets.end()) {
      placed.reason = StrCat("no lowering for ", domain.empty() ? "" : domain + ".", node.op_type());
    } else {
      StatusOr<std::unique_ptr<LoweredNode>> made = (*lower)(NodeView(node, opset->second, facts));
      if (made.ok()) {
        LoweredNode* runner = made->get();
        partition.kernels.kernels[&node] = [runner](const KernelContext& ctx) { return runner->Run(ctx); };
        if (runner->in_place()) {
          partition.kernels.in_place[&node] = [runner](const KernelContext& ctx, Tensor& buffer) {
            return runner->RunInPlace(ctx, buffer);
          };
        }
        partition.lowered.push_back(std::move(made).value());
      } else if (made.status().code() == StatusCode::kUnimplemented) {
        placed.reason = made.status().message();
      } else {
        return made.status().WithContext(StrCat(model.name, ": lowering ", graph::DescribeNode(node, i)));
      }
    }
    placed.device = placed.reason.empty() ? device : kFallbackDevice;
  }
  partition.lower_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return partition;
}

}  // namespace parity::adapters
