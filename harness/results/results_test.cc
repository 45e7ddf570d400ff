// Tests of the results model (spec/results.md): states and the gate rule,
// the line's variant and stateful fields (written only where they apply,
// read back, absent from older lines), and results.jsonl read back.
#include "harness/results/results.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

TEST(ResultsTest, ABackendsCompileStepIsWrittenAndReadBackAndAbsentOtherwise) {
  CaseResult r = VariantResult(12, 4, 10, 2);
  EXPECT_FALSE(ToJson(r).contains("compile_ms_cold"));  // the reference reports none
  r.compile_ms_cold = 7.5;
  r.compile_ms_warm = {0.5, 0.25, 0.75};
  r.kernels_compiled = 9;
  r.kernels_deferred = 2;
  const json j = ToJson(r);
  EXPECT_EQ(j["compile_ms_cold"], 7.5);
  EXPECT_EQ(j["compile_ms_warm"]["median"], 0.5);
  EXPECT_EQ(j["kernels_compiled"], 9);
  EXPECT_EQ(j["kernels_deferred"], 2);
  StatusOr<CaseResult> back = CaseResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back->compile_ms_cold, 7.5);
  EXPECT_EQ(back->compile_ms_warm, std::vector<double>{0.5});
  EXPECT_EQ(*back->kernels_compiled, 9);
  EXPECT_EQ(*back->kernels_deferred, 2);
}

TEST(ResultsTest, PlacementFlopsAreWrittenAndReadBackOnlyWithAPlacement) {
  CaseResult r = VariantResult(12, 4, 10, 2);
  EXPECT_FALSE(ToJson(r).contains("placement_flops"));  // no session report: no FLOPs
  r.placement = {{"cpu", 3}, {"reference", 2}};
  r.placement_flops = {{"cpu", 1.5e9}, {"reference", 40.0}};
  r.placement_flops_unknown = 1;
  const json j = ToJson(r);
  EXPECT_EQ(j["placement_flops"]["cpu"], 1.5e9);
  EXPECT_EQ(j["placement_flops_unknown"], 1);
  StatusOr<CaseResult> back = CaseResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->placement_flops, r.placement_flops);
  EXPECT_EQ(back->placement_flops_unknown, 1);
  json bad = j;
  bad["placement_flops"]["cpu"] = "many";
  back = CaseResultFromJson(bad);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("\"placement_flops\": \"cpu\" is not a number"), std::string::npos)
      << back.status().message();
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

TEST(ResultsTest, EveryStateHasANameAndAPlaceInTheReportOrder) {
  EXPECT_EQ(StateOrder().size(), static_cast<size_t>(CaseState::kFellBack) + 1);
  for (const std::string& name : StateOrder()) {
    const std::optional<CaseState> state = CaseStateFromName(name);
    ASSERT_TRUE(state.has_value()) << name;
    EXPECT_EQ(CaseStateName(*state), name);
    EXPECT_EQ(FailsGate(*state), FailsGate(std::string_view(name))) << name;
  }
  EXPECT_FALSE(FailsGate(std::string_view("MAYBE")));
  EXPECT_FALSE(CaseStateFromName("MAYBE").has_value());
}

TEST(ResultsTest, TheGateCountsFailingStatesAndUnforeseenOnes) {
  CaseResult r;
  r.state = CaseState::kFail;
  EXPECT_TRUE(CountsForGate(r));
  r.state = CaseState::kError;  // the harness's failure, never the backend's
  EXPECT_FALSE(CountsForGate(r));
  r.state = CaseState::kSkip;
  r.gate_failure = true;  // a state its expectations entry did not foresee
  EXPECT_TRUE(CountsForGate(r));
}

TEST(ResultsTest, AResultLineIsOneLineOfJson) {
  CaseResult r = VariantResult(12, 4, 10, 2);
  r.message = "two\nlines";
  const std::string line = ResultLine(r);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(json::parse(line), ToJson(r));
}

TEST(ResultsTest, AFieldOfTheWrongTypeIsAnErrorNamingIt) {
  json line = ToJson(VariantResult(12, 4, 10, 2));
  line["outputs"] = "none";
  StatusOr<CaseResult> back = CaseResultFromJson(line);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("\"outputs\" is not an array"), std::string::npos) << back.status().message();
  line = {{"case", "a"}, {"suite", "s"}, {"state", "PASS"}, {"load_ms_cold", "inf"}, {"load_ms", 3}};
  back = CaseResultFromJson(line);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->load_ms_cold.has_value());  // "inf" is no time; "load_ms" only stands in when absent
  line.erase("load_ms_cold");
  EXPECT_EQ(*CaseResultFromJson(line)->load_ms_cold, 3);  // an old eval line
  EXPECT_FALSE(CaseResultFromJson(json{{"case", "a"}, {"suite", "s"}}).ok());
}

TEST(ResultsTest, AJournalKeepsTheLaterLineOfACaseAndDropsAPartialTail) {
  const std::string a = ResultLine(VariantResult(1, 1, 1, 1));
  CaseResult again = VariantResult(2, 2, 2, 2);
  again.state = CaseState::kFail;
  StatusOr<ResultsJournal> journal = ParseResultsJournal(a + "\n" + ResultLine(again) + "{\"case\": \"b", "r.jsonl");
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  ASSERT_EQ(journal->results.size(), 1u);
  EXPECT_EQ(journal->results[0].state, CaseState::kFail);
  ASSERT_EQ(journal->warnings.size(), 2u);
  EXPECT_NE(journal->warnings[0].find("r.jsonl:3: case variants/test_variant also on line 1"), std::string::npos)
      << journal->warnings[0];
  EXPECT_NE(journal->warnings[1].find("r.jsonl:4: dropped a partial last line"), std::string::npos);

  StatusOr<ResultsJournal> bad = ParseResultsJournal(a + "{not json\n", "r.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("r.jsonl:2: not valid JSON"), std::string::npos) << bad.status().message();
}

TEST(ResultsTest, ReadingToResumeCutsThePartialTailOffTheFile) {
  const std::string path = ::testing::TempDir() + "/parity_results_" + std::to_string(::getpid()) + ".jsonl";
  const std::string whole = ResultLine(VariantResult(1, 1, 1, 1));
  // A partial tail that happens to parse: appending after it would join two lines.
  const std::string tail = DumpJson(ToJson(VariantResult(2, 2, 2, 2)));
  std::ofstream(path, std::ios::binary) << whole << tail;
  StatusOr<ResultsJournal> kept = ReadResultsJournal(path, /*drop_partial_tail=*/false);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->results.size(), 1u);  // the same case twice: the later line
  EXPECT_EQ(kept->results[0].load_ms_cold, 2);
  StatusOr<ResultsJournal> resumed = ReadResultsJournal(path, /*drop_partial_tail=*/true);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(resumed->results[0].load_ms_cold, 1);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), whole);
  std::filesystem::remove(path);
  EXPECT_TRUE(ReadResultsJournal(path, false)->results.empty());  // no file: no results
}

// A passing stateful case that read its state back at the last step, with no steps yet.
CaseResult StatefulCase() {
  CaseResult r;
  r.name = "test_kv_cache";
  r.suite = "aliasing";
  r.dir = "cases/aliasing/test_kv_cache";
  r.state = CaseState::kPass;
  r.state_readback = "last";
  return r;
}

// An adapter with device memory of its own: the case's runs added up, and
// each step's own run, read back as written.
TEST(ResultsTest, RunCostsRoundTripAndAddUp) {
  CaseResult r = StatefulCase();
  const RunCost first{1, 3, 3 << 20, 1, 64, 5 << 20, 6 << 20};
  const RunCost second{1, 1, 256, 1, 64, 5 << 20, (int64_t{5} << 20) + 512};
  r.run_cost.emplace();
  for (const RunCost& step : {first, second}) {
    StepRecord s;
    s.step = static_cast<int>(r.steps.size());
    s.cost = step;
    r.steps.push_back(s);
    r.run_cost->Add(step);
  }
  EXPECT_EQ(r.run_cost->runs, 2);
  EXPECT_EQ(r.run_cost->to_device_copies, 4);
  EXPECT_EQ(r.run_cost->to_device_bytes, (3 << 20) + 256);
  EXPECT_EQ(r.run_cost->to_host_bytes, 128);
  EXPECT_EQ(r.run_cost->device_bytes, 5 << 20);       // the last run's
  EXPECT_EQ(r.run_cost->device_peak_bytes, 6 << 20);  // the highest
  const json j = ToJson(r);
  EXPECT_EQ(j["run_cost"]["to_device_bytes"], (3 << 20) + 256);
  EXPECT_EQ(j["steps"][1]["cost"]["device_peak_bytes"], (int64_t{5} << 20) + 512);
  StatusOr<CaseResult> back = CaseResultFromJson(json::parse(DumpJson(j)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToJson(*back), j);
  // A line without the field (a CPU adapter's) has none.
  CaseResult plain = r;
  plain.run_cost.reset();
  plain.steps.clear();
  plain.state_readback.clear();
  EXPECT_FALSE(ToJson(plain).contains("run_cost"));
  json bad = j;
  bad["run_cost"]["to_host_bytes"] = "many";
  StatusOr<CaseResult> refused = CaseResultFromJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("\"to_host_bytes\""), std::string::npos) << refused.status().ToString();
}

TEST(ResultsTest, StepsAndStateReadbackRoundTrip) {
  CaseResult r = StatefulCase();
  r.steps.push_back({0, 1.5, 20480, 18000, {"logits"}, 0.0, std::nullopt});
  r.steps.push_back({1, 1.25, std::nullopt, std::nullopt, {"logits", "present_key"}, 3.0, std::nullopt});
  const json j = ToJson(r);
  EXPECT_EQ(j["state_readback"], "last");
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_EQ(j["steps"][0], json({{"step", 0}, {"run_ms", 1.5}, {"run_peak_rss_kb", 20480}, {"rss_kb", 18000},
                                 {"cost", nullptr}, {"compared", {"logits"}}, {"max_ulp_error", 0.0}}));
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

TEST(ResultsTest, OutputDigestsRoundTripAndOnlyEvalLinesHaveThem) {
  CaseResult r;
  r.name = "test_add";
  r.suite = "onnx_node";
  r.state = CaseState::kPass;
  EXPECT_FALSE(ToJson(r).contains("output_sha256"));
  const std::string a(64, 'a'), b(64, 'b');
  r.output_sha256 = {{"test_data_set_0", {a, b}}, {"test_data_set_1", {b, a}}};
  const json j = ToJson(r);
  EXPECT_EQ(j["output_sha256"]["test_data_set_1"], json({b, a}));
  StatusOr<CaseResult> back = CaseResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->output_sha256, r.output_sha256);
  // What `parity merge` writes is what it read.
  EXPECT_EQ(ToJson(*back), j);

  json bad = j;
  bad["output_sha256"]["test_data_set_0"] = json({a, 7});
  StatusOr<CaseResult> refused = CaseResultFromJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("\"output_sha256\" of \"test_data_set_0\""), std::string::npos)
      << refused.status().message();
  bad["output_sha256"] = json::array();
  EXPECT_FALSE(CaseResultFromJson(bad).ok());
}

}  // namespace
}  // namespace parity
