// parity-npu-compile: what a vendor's compiler does ahead of time for the
// RFC's compiled subgraphs (spec/variants.md): compiles one cut of a
// model's main graph with the NPU's driver, exports the driver's native
// blob, and adds it to the model as a Compiled entry for the NPU's target,
// its __hash__ stamped from the region. The cut defaults to the whole
// graph (its inputs to its outputs).
//
//   parity-npu-compile MODEL --out FILE [--cut IN,IN:OUT,OUT] [--priority N]
//
// The region must have static shapes (the NPU compiles static graphs). The
// entry's outputs get value_info with their shapes, from which the adapter
// reads the blob's outputs. Prints the compile time and the blob's size.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/level_zero/npu_device.h"
#include "adapters/level_zero/npu_lowering.h"
#include "reference/model/graph.h"
#include "reference/model/graph_index.h"
#include "reference/model/loader.h"
#include "reference/model/static_facts.h"
#include "reference/variants/variants.h"

namespace parity::adapters::level_zero {
namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    if (c == sep) {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

// The nodes that compute `cut.outputs` from `cut.inputs` and the graph's
// constants (the variant rules' region, GraphIndex::FindRegion), in graph
// order; an error when the walk reaches a graph input the cut does not list.
Status FindRegion(const onnx::GraphProto& graph, RegionCut& cut) {
  graph::GraphIndex index(graph);
  std::vector<int32_t> inputs, outputs;
  for (const std::string& in : cut.inputs) inputs.push_back(index.Find(in));
  for (const std::string& out : cut.outputs) {
    const int32_t id = index.Find(out);
    if (id < 0 || index.producer(id) < 0) return InvalidArgument("no node of the graph makes '", out, "'");
    outputs.push_back(id);
  }
  const graph::GraphIndex::Region region = index.FindRegion(inputs, outputs);
  if (region.open_value >= 0) {
    return InvalidArgument("the cut reads '", index.name(region.open_value), "', which is not among its inputs");
  }
  for (int32_t n : region.nodes) {
    if (graph::HasGraphAttribute(graph.node(n))) {
      return InvalidArgument("the cut holds ", graph::DescribeNode(graph.node(n), n),
                             ", a node with a subgraph, which the NPU does not compile");
    }
  }
  cut.nodes.assign(region.nodes.begin(), region.nodes.end());
  return Status::Ok();
}

Status Main(int argc, char** argv) {
  std::string model_path, out_path, cut_text;
  int priority = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) return "";
      return argv[++i];
    };
    if (arg == "--out") {
      out_path = value();
    } else if (arg == "--cut") {
      cut_text = value();
    } else if (arg == "--priority") {
      priority = std::atoi(value().c_str());
    } else if (arg == "--help" || arg == "-h") {
      std::puts("usage: parity-npu-compile MODEL --out FILE [--cut IN,IN:OUT,OUT] [--priority N]");
      return Status::Ok();
    } else if (!arg.empty() && arg[0] == '-') {
      return InvalidArgument("unknown option '", arg, "'");
    } else if (model_path.empty()) {
      model_path = arg;
    } else {
      return InvalidArgument("more than one MODEL ('", model_path, "', '", arg, "')");
    }
  }
  if (model_path.empty() || out_path.empty()) return InvalidArgument("MODEL and --out FILE are required");
  PARITY_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModelFile(model_path));
  onnx::ModelProto model = *loaded.proto;
  const onnx::GraphProto& graph = model.graph();
  RegionCut cut;
  if (cut_text.empty()) {
    std::set<std::string> constants;
    for (const auto& init : graph.initializer()) constants.insert(init.name());
    for (const auto& in : graph.input()) {
      if (!constants.count(in.name())) cut.inputs.push_back(in.name());
    }
    for (const auto& out : graph.output()) cut.outputs.push_back(out.name());
  } else {
    const size_t colon = cut_text.find(':');
    if (colon == std::string::npos) return InvalidArgument("--cut '", cut_text, "' has no ':' between inputs and outputs");
    cut.inputs = Split(cut_text.substr(0, colon), ',');
    cut.outputs = Split(cut_text.substr(colon + 1), ',');
  }
  if (cut.outputs.empty()) return InvalidArgument("the cut has no outputs");
  PARITY_RETURN_IF_ERROR(FindRegion(graph, cut));
  const StaticFacts facts = StaticFacts::Infer(graph);
  std::vector<std::vector<int64_t>> dims;
  for (const std::string& in : cut.inputs) {
    const std::vector<int64_t>* known = facts.StaticDims(in);
    if (!known) return InvalidArgument("input '", in, "' of the cut has no static shape; the NPU compiles static graphs");
    dims.push_back(*known);
  }
  PARITY_ASSIGN_OR_RETURN(NpuDevice * npu, NpuDevice::Get());
  const NpuDescription& d = npu->description();
  if (d.target.empty()) return InvalidArgument("the NPU '", d.device_name, "' has no variant target the project knows");
  const std::string name = StrCat(graph.name().empty() ? "model" : graph.name(), "/compiled");
  PARITY_ASSIGN_OR_RETURN(std::string bytes, RegionModelBytes(model, cut, facts, name, &dims));
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(CompiledRegion region, CompileRegion(*npu, bytes, name));
  const double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  PARITY_ASSIGN_OR_RETURN(std::string blob, region.graph->ExportBlob());

  onnx::GraphProto* g = model.mutable_graph();
  onnx::EquivalentSubgraphProto* entry = g->add_equivalent_subgraph();
  for (const std::string& in : cut.inputs) entry->add_input(in);
  for (const std::string& out : cut.outputs) entry->add_output(out);
  entry->set_domain(d.target);
  entry->set_op_type(kCompiledOp);
  onnx::AttributeProto* hash = entry->add_attribute();
  hash->set_name(kHashAttr);
  hash->set_type(onnx::AttributeProto::STRING);
  onnx::AttributeProto* identifier = entry->add_attribute();
  identifier->set_name(kIdentifierAttr);
  identifier->set_type(onnx::AttributeProto::STRING);
  identifier->set_s(d.blob_identifier);
  onnx::AttributeProto* binary = entry->add_attribute();
  binary->set_name(kBinaryAttr);
  binary->set_type(onnx::AttributeProto::TENSOR);
  binary->mutable_t()->set_data_type(onnx::TensorProto::STRING);
  binary->mutable_t()->add_string_data(blob);
  auto* target = entry->add_metadata_props();
  target->set_key(kTargetKey);
  target->set_value(d.target);
  auto* rank = entry->add_metadata_props();
  rank->set_key(kPriorityKey);
  rank->set_value(std::to_string(priority));
  bool imported = false;
  for (const auto& import : model.opset_import()) imported |= import.domain() == d.target;
  if (!imported) {
    auto* import = model.add_opset_import();
    import->set_domain(d.target);
    import->set_version(1);
  }
  if (model.ir_version() < 10) model.set_ir_version(10);
  // The entry's outputs with their shapes, unless declared already.
  for (size_t k = 0; k < cut.outputs.size(); ++k) {
    bool declared = false;
    for (const auto& vi : g->value_info()) declared |= vi.name() == cut.outputs[k];
    for (const auto& go : g->output()) declared |= go.name() == cut.outputs[k] && go.type().tensor_type().has_shape();
    if (declared) continue;
    onnx::ValueInfoProto* vi = g->add_value_info();
    vi->set_name(cut.outputs[k]);
    auto* tensor = vi->mutable_type()->mutable_tensor_type();
    if (const std::optional<DataType> type = facts.TypeOf(cut.outputs[k])) tensor->set_elem_type(static_cast<int32_t>(*type));
    for (int64_t dim : region.output_shapes[k]) tensor->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  PARITY_ASSIGN_OR_RETURN(int stamped, StampCompiledHashes(model));
  (void)stamped;
  std::string out_bytes;
  if (!model.SerializeToString(&out_bytes)) return Internal("the model with its entry does not serialize");
  std::ofstream out(out_path, std::ios::binary);
  out.write(out_bytes.data(), static_cast<std::streamsize>(out_bytes.size()));
  if (!out) return Status(StatusCode::kIoError, StrCat("cannot write '", out_path, "'"));
  std::printf("%s: %zu nodes compiled for %s in %.1f ms; blob %s, %zu bytes; written to %s\n", model_path.c_str(),
              cut.nodes.size(), d.device_name.c_str(), compile_ms, d.blob_identifier.c_str(), blob.size(),
              out_path.c_str());
  return Status::Ok();
}

}  // namespace
}  // namespace parity::adapters::level_zero

int main(int argc, char** argv) {
  const parity::Status status = parity::adapters::level_zero::Main(argc, argv);
  if (!status.ok()) {
    std::fprintf(stderr, "parity-npu-compile: %s\n", status.message().c_str());
    return 2;
  }
  return 0;
}
