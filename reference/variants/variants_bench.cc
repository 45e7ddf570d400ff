// Cost of variant validation and resolution on a large model, against the
// cost of parsing it: a million nodes and ten thousand entries (half
// Compiled, whose hash is checked; half local-function calls). Resolution
// should cost less than parsing the protobuf.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "reference/model/validator.h"
#include "reference/variants/analysis.h"
#include "reference/variants/variants.h"

namespace parity {
namespace {

constexpr int kBlocks = 10000;
constexpr int kNodesPerBlock = 100;  // 1,000,000 nodes

// Block b: a chain of Relu / Add-with-weight / Neg nodes from the previous
// block's last value; its entry replaces three nodes in the middle of it.
onnx::ModelProto MakeModel() {
  onnx::ModelProto model;
  model.set_ir_version(10);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(21);
  auto* vendor = model.add_opset_import();
  vendor->set_domain("com.example");
  vendor->set_version(1);
  onnx::FunctionProto& three = *model.add_functions();
  three.set_domain("com.example");
  three.set_name("Three");
  three.add_input("a");
  three.add_input("w");
  three.add_output("d");
  auto* f_import = three.add_opset_import();
  f_import->set_domain("");
  f_import->set_version(21);
  const char* function_ops[] = {"Relu", "Add", "Neg"};
  for (int k = 0; k < 3; ++k) {
    auto* node = three.add_node();
    node->set_op_type(function_ops[k]);
    node->add_input(k == 0 ? "a" : StrCat("f", k - 1));
    if (k == 1) node->add_input("w");
    node->add_output(k == 2 ? "d" : StrCat("f", k));
  }

  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("big");
  auto* input = graph.add_input();
  input->set_name("v0");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* weight = graph.add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_float_data(0.5f);
  const char* ops[] = {"Relu", "Add", "Neg"};
  int value = 0;
  for (int b = 0; b < kBlocks; ++b) {
    for (int k = 0; k < kNodesPerBlock; ++k) {
      auto* node = graph.add_node();
      const int op = k % 3;
      node->set_name(StrCat("n", value));
      node->set_op_type(ops[op]);
      node->add_input(StrCat("v", value));
      if (op == 1) node->add_input("w");
      node->add_output(StrCat("v", value + 1));
      ++value;
    }
    // Nodes 30..32 of the block (Relu, Add, Neg) read v<first+30> and make v<first+33>.
    const int first = b * kNodesPerBlock;
    auto* entry = graph.add_equivalent_subgraph();
    entry->add_input(StrCat("v", first + 30));
    entry->add_input("w");
    entry->add_output(StrCat("v", first + 33));
    entry->set_domain("com.example");
    auto* target = entry->add_metadata_props();
    target->set_key(kTargetKey);
    target->set_value(b % 2 ? "com.example.npu" : "com.example.gpu");
    if (b % 2) {
      entry->set_op_type(kCompiledOp);
      auto* hash = entry->add_attribute();
      hash->set_name(kHashAttr);
      hash->set_type(onnx::AttributeProto::STRING);
      hash->set_s("");
      auto* id = entry->add_attribute();
      id->set_name(kIdentifierAttr);
      id->set_type(onnx::AttributeProto::STRING);
      id->set_s("com.example.blob/1");
      auto* blob = entry->add_attribute();
      blob->set_name(kBinaryAttr);
      blob->set_type(onnx::AttributeProto::TENSOR);
      blob->mutable_t()->set_data_type(onnx::TensorProto::STRING);
      blob->mutable_t()->add_string_data("blob");
    } else {
      entry->set_op_type("Three");
    }
  }
  auto* output = graph.add_output();
  output->set_name(StrCat("v", value));
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  if (!StampCompiledHashes(model).ok()) model.Clear();
  return model;
}

const std::string& ModelBytes() {
  static const std::string bytes = MakeModel().SerializeAsString();
  return bytes;
}

// Built once, before the first timed loop asks for it.
const LoadedModel& Loaded() {
  static const LoadedModel loaded = *LoadModelBytes(ModelBytes(), "big.onnx");
  return loaded;
}

// --- The yardsticks: parsing, copying, and reading every name once. -----------

void BM_ParseModel(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    onnx::ModelProto model;
    benchmark::DoNotOptimize(model.ParseFromString(ModelBytes()));
  }
  state.counters["nodes"] = Loaded().proto->graph().node_size();
}

void BM_CopyModel(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    onnx::ModelProto copy = *Loaded().proto;
    benchmark::DoNotOptimize(copy.graph().node_size());
  }
}

// The floor of any index: each node's names read and hashed once.
void BM_TouchNames(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    size_t h = 0;
    for (const auto& node : Loaded().proto->graph().node()) {
      for (const auto& in : node.input()) h += std::hash<std::string_view>()(in);
      for (const auto& out : node.output()) h += std::hash<std::string_view>()(out);
    }
    benchmark::DoNotOptimize(h);
  }
}

// --- The parts. ------------------------------------------------------------------

void BM_CollectEntries(benchmark::State& state) {
  Loaded();
  for (auto _ : state) benchmark::DoNotOptimize(CollectEntries(*Loaded().proto).size());
}

void BM_IndexMainGraph(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    graph::GraphIndex index(Loaded().proto->graph());
    benchmark::DoNotOptimize(index.value_count());
  }
}

void BM_ValidateModel(benchmark::State& state) {
  Loaded();
  for (auto _ : state) benchmark::DoNotOptimize(ValidateModel(Loaded()).size());
}

void BM_ValidateVariants(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    const std::vector<Status> problems = ValidateVariants(Loaded());
    if (!problems.empty()) state.SkipWithError(problems[0].message().c_str());
  }
}

// --- Resolution. -----------------------------------------------------------------

ResolveOptions Targets() {
  ResolveOptions options;
  options.targets = {"com.example.npu", "com.example.gpu"};
  return options;
}

void CountSelected(benchmark::State& state, const ResolvedModel& resolved) {
  int selected = 0;
  for (const auto& d : resolved.decisions) selected += d.selected ? 1 : 0;
  state.counters["selected"] = selected;
}

// What a caller of ResolveVariants(const LoadedModel&) waits for: the IR
// rules, a copy, the variant rules, the choice and the rewrite.
void BM_ResolveVariants(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(), Targets());
    if (!resolved.ok()) state.SkipWithError(resolved.status().message().c_str());
    if (resolved.ok()) CountSelected(state, *resolved);
  }
}

// The overload that takes the model: no copy (the copy made for each
// iteration is not timed).
void BM_ResolveVariantsInPlace(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    state.PauseTiming();
    onnx::ModelProto copy = *Loaded().proto;
    state.ResumeTiming();
    StatusOr<ResolvedModel> resolved = ResolveVariants(std::move(copy), Targets(), "big.onnx");
    if (!resolved.ok()) state.SkipWithError(resolved.status().message().c_str());
  }
}

// What resolution adds to ValidateModel: the variant rules, the choice and
// the rewrite in place, freeing the result included (as parsing frees its model).
void BM_ResolveAfterValidation(benchmark::State& state) {
  Loaded();
  for (auto _ : state) {
    state.PauseTiming();
    auto copy = std::make_shared<onnx::ModelProto>(*Loaded().proto);
    state.ResumeTiming();
    StatusOr<ResolvedModel> resolved =
        variants_internal::ResolveOwned(std::move(copy), "big.onnx", "", Targets(), /*validate_ir=*/false);
    if (!resolved.ok()) state.SkipWithError(resolved.status().message().c_str());
    if (resolved.ok()) CountSelected(state, *resolved);
  }
}

// The figures the variant-graph work promises, side by side: per node and as
// a ratio to parsing the same bytes. Each step is timed three times and the
// fastest kept (the machine is shared; the fastest is the least disturbed).
void BM_VariantResolutionSummary(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const double nodes = Loaded().proto->graph().node_size();
  auto fastest = [](auto&& step) {
    double best = 1e300;
    for (int i = 0; i < 3; ++i) {
      const auto start = Clock::now();
      step();
      best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
  };
  double parse = 0, validate = 0, variants_only = 0, total = 0;
  for (auto _ : state) {
    parse = fastest([] {
      onnx::ModelProto model;
      benchmark::DoNotOptimize(model.ParseFromString(ModelBytes()));
    });
    validate = fastest([] { benchmark::DoNotOptimize(ValidateModel(Loaded()).size()); });
    // Copies are made outside the clock: a backend resolves the model it parsed.
    auto owned_run = [](bool validate_ir) {
      double best = 1e300;
      for (int i = 0; i < 3; ++i) {
        auto copy = std::make_shared<onnx::ModelProto>(*Loaded().proto);
        const auto start = Clock::now();
        StatusOr<ResolvedModel> resolved =
            variants_internal::ResolveOwned(std::move(copy), "big.onnx", "", Targets(), validate_ir);
        benchmark::DoNotOptimize(resolved.ok());
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
      }
      return best;
    };
    variants_only = owned_run(false);
    total = owned_run(true);
  }
  int selected = 0;
  if (StatusOr<ResolvedModel> resolved = ResolveVariants(Loaded(), Targets()); resolved.ok()) {
    for (const auto& d : resolved->decisions) selected += d.selected ? 1 : 0;
  }
  state.counters["parse_ns_per_node"] = parse * 1e9 / nodes;
  state.counters["resolve_ns_per_node"] = total * 1e9 / nodes;
  state.counters["resolve_over_parse"] = total / parse;
  std::printf(
      "variant resolution, %.0f nodes, %d entries (%d selected), %.1f MB: parse %.0f ms (%.0f ns/node); IR validation %.0f ms "
      "(%.0f ns/node); variant rules + choice + rewrite %.0f ms (%.0f ns/node); resolution in all (IR "
      "validation included) %.0f ms (%.0f ns/node) = %.2f x parse\n",
      nodes, Loaded().proto->graph().equivalent_subgraph_size(), selected, ModelBytes().size() / 1e6, parse * 1e3,
      parse * 1e9 / nodes, validate * 1e3, validate * 1e9 / nodes, variants_only * 1e3,
      variants_only * 1e9 / nodes, total * 1e3, total * 1e9 / nodes, total / parse);
}

BENCHMARK(BM_ParseModel)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_CopyModel)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_TouchNames)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_CollectEntries)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_IndexMainGraph)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ValidateModel)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ValidateVariants)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ResolveVariants)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ResolveVariantsInPlace)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ResolveAfterValidation)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_VariantResolutionSummary)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace parity
