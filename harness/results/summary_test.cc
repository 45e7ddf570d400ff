// Tests of summary.json (spec/results.md): counts, the gate, the timing
// statistics, the plan's fields, and the file that WriteSummary writes.
#include "harness/results/summary.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace parity {
namespace {

using nlohmann::json;

CaseResult SummaryVariantResult(double cold, double warm, double stripped_cold, double stripped_warm) {
  CaseResult r;
  r.name = "test_variant";
  r.suite = "variants";
  r.op = "Add";
  r.state = CaseState::kPass;
  r.load_ms_cold = cold;
  r.load_ms_warm = {warm, warm + 1, warm - 1};
  r.load_ms_stripped_cold = stripped_cold;
  r.load_ms_stripped_warm = {stripped_warm, stripped_warm + 1, stripped_warm - 1};
  return r;
}

CaseResult Plain(const std::string& op, CaseState state, double cold) {
  CaseResult r;
  r.name = "case_" + op;
  r.suite = "s";
  r.op = op;
  r.state = state;
  r.load_ms_cold = cold;
  return r;
}

// A case of `suite` on device "cpu" with its placement and FLOPs.
CaseResult Placed(const std::string& suite, const std::string& name, int on_cpu, int on_reference, double cpu_flops,
                  double reference_flops, int64_t unknown) {
  CaseResult r;
  r.name = name;
  r.suite = suite;
  r.op = "MatMul";
  r.device = "cpu";
  r.state = CaseState::kPass;
  if (on_cpu) r.placement["cpu"] = on_cpu;
  if (on_reference) r.placement["reference"] = on_reference;
  if (cpu_flops) r.placement_flops["cpu"] = cpu_flops;
  if (reference_flops) r.placement_flops["reference"] = reference_flops;
  r.placement_flops_unknown = unknown;
  return r;
}

TEST(SummaryPlacement, SharesOnTheDeviceOverallPerSuiteAndPerModel) {
  Summary s;
  s.Add(Placed("onnx_node", "test_matmul_2d", 1, 0, 24, 0, 0));
  s.Add(Placed("onnx_node", "test_sigmoid", 0, 1, 0, 60, 0));
  s.Add(Placed(kModelSuite, "llama", 15, 45, 900, 100, 2));
  CaseResult none = Plain("Add", CaseState::kUnsupported, 1);  // no session: no placement, not counted
  s.Add(none);
  const json p = s.ToJson()["placement"];
  EXPECT_EQ(p["cases"], 3);
  EXPECT_EQ(p["nodes"]["cpu"], 16);
  EXPECT_EQ(p["nodes"]["reference"], 46);
  EXPECT_EQ(p["flops_unknown_nodes"], 2);
  EXPECT_DOUBLE_EQ(p["flops"]["cpu"].get<double>(), 924);
  EXPECT_DOUBLE_EQ(p["on_device"]["nodes"].get<double>(), 16.0 / 62);
  EXPECT_DOUBLE_EQ(p["on_device"]["flops"].get<double>(), 924.0 / 1084);
  EXPECT_DOUBLE_EQ(p["by_suite"]["onnx_node"]["on_device"]["nodes"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(p["by_suite"]["onnx_node"]["on_device"]["flops"].get<double>(), 24.0 / 84);
  // Only the model suite's cases are listed one by one.
  ASSERT_EQ(p["by_model"].size(), 1u);
  EXPECT_DOUBLE_EQ(p["by_model"]["llama"]["on_device"]["flops"].get<double>(), 0.9);
  EXPECT_EQ(p["by_model"]["llama"]["flops_unknown_nodes"], 2);
  EXPECT_FALSE(p.contains("copies"));  // no adapter counted its copies
  CaseResult counted = Placed("onnx_node", "test_gemm", 1, 0, 24, 0, 0);
  counted.run_cost = RunCost{.runs = 2, .to_device_copies = 3, .to_device_bytes = 300, .to_host_copies = 1,
                             .to_host_bytes = 40, .device_bytes = 0, .device_peak_bytes = 0};
  s.Add(counted);
  const json copies = s.ToJson()["placement"]["copies"];
  EXPECT_EQ(copies["cases"], 1);
  EXPECT_EQ(copies["to_device_copies"], 3);
  EXPECT_EQ(copies["to_device_bytes"], 300);
  EXPECT_EQ(copies["to_host_copies"], 1);
  EXPECT_EQ(copies["to_host_bytes"], 40);
  EXPECT_EQ(s.ToJson()["placement"]["by_suite"]["onnx_node"]["copies"]["to_device_bytes"], 300);
}

TEST(SummaryPlacement, NoKnownFlopsIsNoShareAndNoPlacementIsNoField) {
  Summary s;
  s.Add(Placed("s", "all_unknown", 2, 1, 0, 0, 3));
  const json p = s.ToJson()["placement"];
  EXPECT_TRUE(p["on_device"]["flops"].is_null());
  EXPECT_DOUBLE_EQ(p["on_device"]["nodes"].get<double>(), 2.0 / 3);
  // A line from before FLOPs were counted: every node of it is unknown.
  CaseResult old = Placed("s", "old_line", 4, 0, 0, 0, 0);
  old.placement_flops_unknown.reset();
  Summary with_old;
  with_old.Add(old);
  EXPECT_EQ(with_old.ToJson()["placement"]["flops_unknown_nodes"], 4);
  Summary empty;
  empty.Add(Plain("Add", CaseState::kPass, 1));
  EXPECT_FALSE(empty.ToJson().contains("placement"));
  // A refreshed summary drops the placement of earlier results.
  EXPECT_FALSE(SummaryJson(empty, {{"placement", {{"cases", 9}}}}).contains("placement"));
}

TEST(SummaryTest, SummaryComparesVariantModelsWithTheirStrippedTwins) {
  Summary plain;
  CaseResult other = SummaryVariantResult(5, 5, 5, 5);
  other.load_ms_stripped_cold.reset();
  other.load_ms_stripped_warm.clear();
  plain.Add(other);
  EXPECT_FALSE(plain.ToJson().contains("variant_load_ms"));

  Summary s;
  s.Add(other);  // no twin: not counted
  s.Add(SummaryVariantResult(12, 4, 10, 2));  // ratios 1.2 and 2
  s.Add(SummaryVariantResult(30, 9, 10, 3));  // ratios 3 and 3
  s.Add(SummaryVariantResult(20, 6, 10, 6));  // ratios 2 and 1
  const json v = s.ToJson()["variant_load_ms"];
  EXPECT_EQ(v["cases"], 3);
  EXPECT_EQ(v["cold"]["median"], 20);
  EXPECT_EQ(v["stripped_cold"]["median"], 10);
  EXPECT_EQ(v["warm_median"]["median"], 6);
  EXPECT_EQ(v["stripped_warm_median"]["median"], 3);
  EXPECT_DOUBLE_EQ(v["cold_ratio"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(v["warm_ratio"].get<double>(), 2.0);
}

TEST(SummaryTest, RatiosNeedBothTimes) {
  const json v = VariantLoadStats({{1.0, std::nullopt, 0.0, std::nullopt}});
  EXPECT_EQ(v["cases"], 1);
  EXPECT_TRUE(v["cold_ratio"].is_null());  // a stripped time of 0 gives no ratio
  EXPECT_TRUE(v["warm_ratio"].is_null());
  EXPECT_TRUE(VariantLoadStats({}).is_null());
}

TEST(SummaryTest, CountsStatesOperatorsSuitesAndTheGate) {
  Summary s = Summarize({Plain("Add", CaseState::kPass, 1), Plain("Add", CaseState::kFail, 3),
                         Plain("", CaseState::kError, 2)});
  CaseResult unforeseen = Plain("Mul", CaseState::kSkip, 4);
  unforeseen.gate_failure = true;
  s.Add(unforeseen);
  s.Add(Plain("Mul", CaseState::kUnsupported, 5), /*counts_for_gate=*/true);  // the caller's own rule
  const json j = s.ToJson();
  EXPECT_EQ(j["total"], 5);
  EXPECT_EQ(j["gate_failures"], 3);  // the FAIL, the unforeseen SKIP, the one the caller counted
  EXPECT_EQ(j["by_state"]["PASS"], 1);
  EXPECT_EQ(j["by_operator"]["Add"]["FAIL"], 1);
  EXPECT_EQ(j["by_operator"][kUnknownOperator]["ERROR"], 1);
  EXPECT_EQ(j["by_suite"]["s"].size(), 5u);
  EXPECT_EQ(j["load_ms"]["cold"]["median"], 3);
  EXPECT_TRUE(j["load_ms"]["warm_median"].is_null());
  EXPECT_FALSE(j.contains("planned"));
  EXPECT_FALSE(j.contains("not_run"));
  s.planned = 7;
  s.not_run = 2;
  EXPECT_EQ(s.ToJson()["planned"], 7);
  EXPECT_EQ(s.ToJson()["not_run"], 2);
}

TEST(SummaryTest, ComputedFieldsWinOverTheWritersFieldsAndStaleOnesGo) {
  const json fields = {{"total", 999}, {"seconds", 1.5}, {"variant_load_ms", {{"cases", 9}}}, {"shard", nullptr}};
  const json j = SummaryJson(Summarize({Plain("Add", CaseState::kPass, 1)}), fields);
  EXPECT_EQ(j["total"], 1);
  EXPECT_EQ(j["seconds"], 1.5);
  EXPECT_TRUE(j.contains("shard"));
  EXPECT_FALSE(j.contains("variant_load_ms"));
  EXPECT_TRUE(SummaryJson(Summarize({SummaryVariantResult(2, 2, 1, 1)}), fields)["variant_load_ms"]["cases"] == 1);
}

TEST(SummaryTest, WriteSummaryWritesTheJsonWithANewline) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("parity_summary_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Summary s = Summarize({Plain("Add", CaseState::kFail, 1)});
  ASSERT_TRUE(WriteSummary(dir.string(), s, {{"adapter", {{"name", "x"}}}}).ok());
  std::ifstream in(dir / "summary.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, DumpJson(SummaryJson(s, {{"adapter", {{"name", "x"}}}}), 1) + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "summary.json.tmp"));
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(WriteSummary((dir / "missing" / "folder").string(), s, json::object()).ok());
}

}  // namespace
}  // namespace parity
