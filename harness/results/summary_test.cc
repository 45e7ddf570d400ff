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

CaseResult VariantResult(double cold, double warm, double stripped_cold, double stripped_warm) {
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

TEST(SummaryTest, SummaryComparesVariantModelsWithTheirStrippedTwins) {
  Summary plain;
  CaseResult other = VariantResult(5, 5, 5, 5);
  other.load_ms_stripped_cold.reset();
  other.load_ms_stripped_warm.clear();
  plain.Add(other);
  EXPECT_FALSE(plain.ToJson().contains("variant_load_ms"));

  Summary s;
  s.Add(other);  // no twin: not counted
  s.Add(VariantResult(12, 4, 10, 2));  // ratios 1.2 and 2
  s.Add(VariantResult(30, 9, 10, 3));  // ratios 3 and 3
  s.Add(VariantResult(20, 6, 10, 6));  // ratios 2 and 1
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
  EXPECT_TRUE(SummaryJson(Summarize({VariantResult(2, 2, 1, 1)}), fields)["variant_load_ms"]["cases"] == 1);
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
