// Tests of the reports' "Stateful cases" section: per case and run the steps'
// median time and the peak memory at the first and last step, side by side
// where two runs ran the same case, and nothing for runs without such cases.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/matrix.h"
#include "reports/run_data.h"
#include "reports/stateful.h"

namespace parity {
namespace {

using nlohmann::json;

json Step(int step, double ms, json peak) {
  return {{"step", step}, {"run_ms", ms}, {"run_peak_rss_kb", peak}, {"rss_kb", nullptr}, {"compared", {"y"}}};
}

json Line(const std::string& name, const std::string& adapter, const std::string& state, const json& steps) {
  json j = {{"case", name}, {"suite", "aliasing"}, {"dir", "cases/aliasing/" + name}, {"operator", "TensorScatter"},
            {"adapter", adapter}, {"device", "cpu"}, {"state", state}, {"run_ms", 1.0}};
  if (!steps.is_null()) {
    j["steps"] = steps;
    j["state_readback"] = "every";
  }
  return j;
}

RunData MakeStatefulRun(const std::string& adapter, const std::vector<json>& lines,
                        const json& summary = json::object()) {
  RunData run;
  run.dir = "runs/" + adapter;
  run.adapter = adapter;
  run.device = "cpu";
  run.label = adapter + "@cpu";
  run.summary = summary;
  std::string text;
  for (const json& j : lines) text += j.dump() + "\n";
  StatusOr<ResultsJournal> parsed = ParseResultsJournal(text, run.dir + "/results.jsonl");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (parsed.ok()) run.results = std::move(parsed->results);
  return run;
}

// Run A copies its cache each step and grows by 1 MiB a step; run B updates
// in place and stays at 10 MiB.
std::vector<RunData> TwoStatefulRuns() {
  const json a_steps = {Step(0, 2, 10240), Step(1, 4, 11264), Step(2, 3, 12288)};
  const json b_steps = {Step(0, 1, 10240), Step(1, 1.5, 10240), Step(2, 2, 10240)};
  const std::vector<json> a_lines = {Line("test_kv", "reference", "PASS", a_steps),
                                     Line("test_abs", "reference", "PASS", nullptr),
                                     Line("test_kv_no_memory", "reference", "FAIL", json::array({Step(0, 5, nullptr)}))};
  return {MakeStatefulRun("reference", a_lines, {{"adapter", {{"name", "reference"}, {"honours_aliasing", false}}}}),
          MakeStatefulRun("reference_inplace", {Line("test_kv", "reference_inplace", "PASS", b_steps)},
                          {{"adapter", {{"name", "reference_inplace"}, {"honours_aliasing", true}}}})};
}

TEST(StatefulReportTest, TablesHoldMediansPeaksGrowthAndSavings) {
  const StatefulTables t = BuildStatefulTables(TwoStatefulRuns());
  ASSERT_EQ(t.per_case.size(), 3u);  // test_abs is not stateful
  // Medians 3 and 1.5 ms; A's peak goes 10 -> 12 MiB, B's stays at 10.
  EXPECT_EQ(t.per_case[0], (std::vector<std::string>{"aliasing", "test_kv", "reference@cpu", "PASS", "3", "every",
                                                     "3.00", "10.0 MiB", "12.0 MiB", "+2.0 MiB", "–", "–"}));
  EXPECT_EQ(t.per_case[1], (std::vector<std::string>{"aliasing", "test_kv", "reference_inplace@cpu", "PASS", "3",
                                                     "every", "1.50", "10.0 MiB", "10.0 MiB", "+0.0 MiB", "–", "–"}));
  // No peak where the worker could not measure it.
  EXPECT_EQ(t.per_case[2], (std::vector<std::string>{"aliasing", "test_kv_no_memory", "reference@cpu", "FAIL", "1",
                                                     "every", "5.00", "–", "–", "–", "–", "–"}));
  // B against A: half the time per step, 2 MiB (2 of 12) less at its peak.
  ASSERT_EQ(t.side_by_side.size(), 1u);
  EXPECT_EQ(t.side_by_side[0],
            (std::vector<std::string>{"aliasing", "test_kv", "reference@cpu", "reference_inplace@cpu", "3.00", "1.50",
                                      "0.50", "12.0 MiB", "10.0 MiB", "+2.0 MiB (+16.7%)"}));
}

// An adapter with device memory of its own reports each step's copies
// (run_cost): the memory it held after the first and the last step, and the
// median bytes a step copied back.
TEST(StatefulReportTest, DeviceMemoryAndCopiesBackComeFromEachStepsRunCost) {
  auto cost = [](int64_t held, int64_t to_host) {
    return json{{"runs", 1}, {"to_device_copies", 1}, {"to_device_bytes", 4096}, {"to_host_copies", 1},
                {"to_host_bytes", to_host}, {"device_bytes", held}, {"device_peak_bytes", held}};
  };
  json steps = {Step(0, 2, 10240), Step(1, 1, 10240), Step(2, 1, 10240)};
  steps[0]["cost"] = cost(64 << 20, 3 << 20);  // the first step brings its logits and more
  steps[1]["cost"] = cost(64 << 20, 1024);
  steps[2]["cost"] = cost(64 << 20, 1024);
  const StatefulTables t = BuildStatefulTables({MakeStatefulRun("cuda", {Line("test_kv", "cuda", "PASS", steps)})});
  ASSERT_EQ(t.per_case.size(), 1u);
  EXPECT_EQ(t.per_case[0][10], "64.0 MiB / 64.0 MiB");
  EXPECT_EQ(t.per_case[0][11], "1.0 KiB");  // the median
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
}

TEST(StatefulReportTest, MarkdownAndHtmlShowTheSection) {
  const std::vector<RunData> runs = TwoStatefulRuns();
  const std::string md = RenderMarkdown(runs, "t");
  EXPECT_NE(md.find("## Stateful cases"), std::string::npos) << md;
  EXPECT_NE(md.find("| aliasing | test_kv | reference_inplace@cpu | PASS | 3 | every | 1.50 | 10.0 MiB | 10.0 MiB | "
                    "+0.0 MiB |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| aliasing | test_kv | reference@cpu | reference_inplace@cpu | 3.00 | 1.50 | 0.50 | 12.0 MiB | "
                    "10.0 MiB | +2.0 MiB (+16.7%) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| honours aliasing | no | yes |"), std::string::npos) << md;

  const std::string html = RenderHtml(runs, "t");
  EXPECT_NE(html.find("<h2>Stateful cases</h2>"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"stateful\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"stateful-side-by-side\">"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">+2.0 MiB (+16.7%)</td>"), std::string::npos);
}

TEST(StatefulReportTest, RunsWithoutStatefulCasesHaveNoSection) {
  const std::vector<RunData> runs = {MakeStatefulRun("reference", {Line("test_abs", "reference", "PASS", nullptr)})};
  EXPECT_TRUE(BuildStatefulTables(runs).per_case.empty());
  EXPECT_EQ(RenderMarkdown(runs, "t").find("Stateful"), std::string::npos);
  EXPECT_EQ(RenderHtml(runs, "t").find("Stateful"), std::string::npos);
  // Nor a row for a declaration no run made.
  EXPECT_EQ(RenderMarkdown(runs, "t").find("honours aliasing"), std::string::npos);
}

TEST(StatefulReportTest, AStepsFieldThatIsNotAnArrayIsAnError) {
  json j = Line("test_kv", "reference", "PASS", json::array());
  j["steps"] = 3;
  const Status s = ParseResultsJournal(j.dump() + "\n", "r/results.jsonl").status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("\"steps\" is not an array"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("r/results.jsonl:1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace parity
