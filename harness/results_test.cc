// Tests of the result line's variant and stateful fields (spec/results.md):
// written only where they apply, read back, absent from older lines, and
// summarised.
#include "harness/results.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

using nlohmann::json;

CaseResult VariantResult(double cold, double warm, double stripped_cold, double stripped_warm) {
  CaseResult r;
  r.name = "test_variant";
  r.suite = "variants";
  r.dir = "cases/variants/test_variant";
  r.state = CaseState::kPass;
  r.load_ms_cold = cold;
  r.load_ms_warm = {warm, warm + 1, warm - 1};
  r.variant_targets = std::vector<std::string>{"org.onnxparity.reference", "portable"};
  r.variants_expected = std::vector<std::string>{"e0"};
  r.load_ms_stripped_cold = stripped_cold;
  r.load_ms_stripped_warm = {stripped_warm, stripped_warm + 1, stripped_warm - 1};
  return r;
}

TEST(ResultsTest, VariantFieldsAreWrittenAndReadBack) {
  const json j = ToJson(VariantResult(12, 4, 10, 2));
  EXPECT_EQ(j["variant_targets"], json({"org.onnxparity.reference", "portable"}));
  EXPECT_EQ(j["variants_expected"], json({"e0"}));
  EXPECT_EQ(j["load_ms_stripped_cold"], 10);
  EXPECT_EQ(j["load_ms_stripped_warm"]["median"], 2);
  EXPECT_EQ(j["load_ms_stripped_warm"]["repeats"], 3);

  StatusOr<CaseResult> back = CaseResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back->variant_targets, (std::vector<std::string>{"org.onnxparity.reference", "portable"}));
  EXPECT_EQ(*back->variants_expected, std::vector<std::string>{"e0"});
  EXPECT_EQ(*back->load_ms_stripped_cold, 10);
  EXPECT_EQ(back->load_ms_stripped_warm, std::vector<double>{2});
}

TEST(ResultsTest, AFailedStrippedMeasurementIsItsOwnFieldAndKeepsTheState) {
  CaseResult r = VariantResult(12, 4, 10, 2);
  r.load_ms_stripped_cold.reset();
  r.load_ms_stripped_warm.clear();
  r.load_ms_stripped_error = "session creation: no answer within 2 s; the worker was killed";
  const json j = ToJson(r);
  EXPECT_EQ(j["state"], "PASS");
  EXPECT_FALSE(j.contains("message"));
  EXPECT_EQ(j["load_ms_stripped_error"], r.load_ms_stripped_error);
  EXPECT_FALSE(j.contains("load_ms_stripped_cold"));
  StatusOr<CaseResult> back = CaseResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->load_ms_stripped_error, r.load_ms_stripped_error);
  EXPECT_FALSE(ToJson(VariantResult(12, 4, 10, 2)).contains("load_ms_stripped_error"));
}

TEST(ResultsTest, PlainCasesAndOldLinesHaveNoVariantFields) {
  CaseResult plain;
  plain.name = "test_abs";
  plain.suite = "onnx_node";
  plain.dir = "cases/onnx_node/test_abs";
  plain.state = CaseState::kPass;
  plain.variant_targets = std::vector<std::string>{};
  const json j = ToJson(plain);
  EXPECT_EQ(j["variant_targets"], json::array());  // sent, and empty
  EXPECT_FALSE(j.contains("variants_expected"));
  EXPECT_FALSE(j.contains("load_ms_stripped_cold"));
  EXPECT_FALSE(j.contains("load_ms_stripped_warm"));

  const json old = {{"case", "test_abs"}, {"suite", "onnx_node"}, {"dir", "d"}, {"state", "PASS"}};
  StatusOr<CaseResult> back = CaseResultFromJson(old);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->variant_targets.has_value());
  EXPECT_FALSE(back->variants_expected.has_value());
  EXPECT_FALSE(back->load_ms_stripped_cold.has_value());
  EXPECT_EQ(ToJson(*back).contains("variant_targets"), false);
}

TEST(ResultsTest, SummaryComparesVariantModelsWithTheirStrippedTwins) {
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

TEST(ResultsTest, RatiosNeedBothTimes) {
  const json v = VariantLoadStats({{1.0, std::nullopt, 0.0, std::nullopt}});
  EXPECT_EQ(v["cases"], 1);
  EXPECT_TRUE(v["cold_ratio"].is_null());  // a stripped time of 0 gives no ratio
  EXPECT_TRUE(v["warm_ratio"].is_null());
  EXPECT_TRUE(VariantLoadStats({}).is_null());
}

TEST(ResultsTest, StepsAndStateReadbackRoundTrip) {
  CaseResult r;
  r.name = "test_kv_cache";
  r.suite = "aliasing";
  r.dir = "cases/aliasing/test_kv_cache";
  r.state = CaseState::kPass;
  r.state_readback = "last";
  r.steps.push_back({0, 1.5, 20480, 18000, {"logits"}, 0.0});
  r.steps.push_back({1, 1.25, std::nullopt, std::nullopt, {"logits", "present_key"}, 3.0});
  const json j = ToJson(r);
  EXPECT_EQ(j["state_readback"], "last");
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][0], json({{"step", 0}, {"run_ms", 1.5}, {"run_peak_rss_kb", 20480}, {"rss_kb", 18000},
                                 {"compared", {"logits"}}, {"max_ulp_error", 0.0}}));
  EXPECT_TRUE(j["steps"][1]["run_peak_rss_kb"].is_null());

  StatusOr<CaseResult> back = CaseResultFromJson(json::parse(DumpJson(j)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->state_readback, "last");
  ASSERT_EQ(back->steps.size(), 2u);
  EXPECT_EQ(back->steps[0].run_peak_rss_kb, 20480);
  EXPECT_EQ(back->steps[0].rss_kb, 18000);
  EXPECT_FALSE(back->steps[1].rss_kb.has_value());
  EXPECT_EQ(back->steps[1].compared, (std::vector<std::string>{"logits", "present_key"}));
  EXPECT_EQ(back->steps[0].max_ulp_error, 0.0);
  EXPECT_EQ(back->steps[1].max_ulp_error, 3.0);
  // What `parity merge` writes is what it read.
  EXPECT_EQ(ToJson(*back), j);

  json bad = j;
  bad["steps"][1].erase("step");
  EXPECT_FALSE(CaseResultFromJson(bad).ok());
}

TEST(ResultsTest, PlainCasesHaveNoSteps) {
  CaseResult r;
  r.name = "test_abs";
  r.suite = "onnx_node";
  r.dir = "cases/onnx_node/test_abs";
  r.state = CaseState::kPass;
  const json j = ToJson(r);
  EXPECT_FALSE(j.contains("steps"));
  EXPECT_FALSE(j.contains("state_readback"));
  StatusOr<CaseResult> back = CaseResultFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->steps.empty());
  EXPECT_TRUE(back->state_readback.empty());
}

}  // namespace
}  // namespace parity
