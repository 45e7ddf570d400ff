// Tests of the reports' trends: runs of one adapter ordered by time, the
// cases that changed between neighbours, the figures per run, and the
// Markdown and HTML that show them.
#include "reports/trend.h"

#include <cmath>

#include <gtest/gtest.h>

#include "reports/html.h"
#include "reports/markdown.h"

namespace parity {
namespace {

CaseResult Result(const std::string& suite, const std::string& name, CaseState state,
                  std::optional<double> cold = std::nullopt, std::vector<double> warm = {}) {
  CaseResult r;
  r.suite = suite;
  r.name = name;
  r.op = "Add";
  r.state = state;
  r.load_ms_cold = cold;
  r.load_ms_warm = std::move(warm);
  return r;
}

RunData MakeRun(const std::string& adapter, const std::string& label, const std::string& when,
            const std::string& version, std::vector<CaseResult> results, std::vector<PlannedCase> not_run = {}) {
  RunData run;
  run.adapter = adapter;
  run.label = label;
  run.dir = "/runs/" + label;
  run.when = when;
  run.summary = {{"adapter", {{"name", adapter}, {"version", version}}}};
  run.results = std::move(results);
  run.not_run = std::move(not_run);
  return run;
}

std::vector<std::string> Labels(const Trend& trend) {
  std::vector<std::string> labels;
  for (const TrendPoint& p : trend.points) labels.push_back(p.label);
  return labels;
}

TEST(TrendTest, ReadsRunTimesInEitherFormatAndRefusesOthers) {
  const std::optional<double> iso = ParseRunTime("2026-11-22T06:30:16Z");
  ASSERT_TRUE(iso.has_value());
  EXPECT_EQ(*iso, 1795329016.0);
  EXPECT_EQ(ParseRunTime("2026-11-22 06:30:16 UTC"), iso);  // the journal's modification time
  EXPECT_EQ(ParseRunTime("2026-11-22T08:30:16+02:00"), iso);
  EXPECT_EQ(ParseRunTime("2026-11-22T06:30:16.5Z"), *iso + 0.5);
  EXPECT_FALSE(ParseRunTime("").has_value());
  EXPECT_FALSE(ParseRunTime("yesterday").has_value());
  EXPECT_FALSE(ParseRunTime("2026-13-01T00:00:00Z").has_value());
  EXPECT_FALSE(ParseRunTime("2026-11-22T06:30:16 CEST").has_value());
}

TEST(TrendTest, RunsOnAnotherDeviceAreAnotherSeries) {
  std::vector<RunData> runs = {
      MakeRun("alpha", "a_cpu_jan", "2026-01-01T00:00:00Z", "1", {}),
      MakeRun("alpha", "a_gpu_feb", "2026-02-01T00:00:00Z", "1", {}),
      MakeRun("alpha", "a_cpu_mar", "2026-03-01T00:00:00Z", "2", {}),
  };
  runs[0].device = runs[2].device = "cpu";
  runs[1].device = "gpu";
  const std::vector<Trend> trends = BuildTrends(runs);
  ASSERT_EQ(trends.size(), 1u);  // one run on the GPU is no trend
  EXPECT_EQ(trends[0].adapter, "alpha@cpu");
  EXPECT_EQ(Labels(trends[0]), (std::vector<std::string>{"a_cpu_jan", "a_cpu_mar"}));
}

TEST(TrendTest, OrdersRunsByTimeThenVersion) {
  // Given newest first, in both time formats a report meets; two runs at the
  // same second differ in version, "1.10" after "1.9".
  std::vector<RunData> runs = {
      MakeRun("alpha", "r_mar", "2026-03-01 09:00:00 UTC", "2.0", {}),
      MakeRun("alpha", "r_feb_110", "2026-02-01T09:00:00Z", "1.10", {}),
      MakeRun("alpha", "r_jan", "2026-01-15T23:59:59Z", "1.8", {}),
      MakeRun("alpha", "r_feb_19", "2026-02-01T09:00:00Z", "1.9", {}),
  };
  const std::vector<Trend> trends = BuildTrends(runs);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(trends[0].adapter, "alpha");
  EXPECT_EQ(Labels(trends[0]), (std::vector<std::string>{"r_jan", "r_feb_19", "r_feb_110", "r_mar"}));
  EXPECT_TRUE(trends[0].notes.empty());
  ASSERT_EQ(trends[0].steps.size(), 3u);
  EXPECT_EQ(trends[0].steps[2].index, 3u);
}

TEST(TrendTest, RunWithoutTimeKeepsItsPlaceAndIsNoted) {
  std::vector<RunData> runs = {
      MakeRun("alpha", "late", "2026-05-02T00:00:00Z", "1", {}),
      MakeRun("alpha", "untimed", "", "1", {}),
      MakeRun("alpha", "early", "2026-05-01T00:00:00Z", "1", {}),
      MakeRun("alpha", "garbled", "last tuesday", "1", {}),
  };
  const std::vector<Trend> trends = BuildTrends(runs);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(Labels(trends[0]), (std::vector<std::string>{"early", "untimed", "late", "garbled"}));
  ASSERT_EQ(trends[0].notes.size(), 2u);
  EXPECT_NE(trends[0].notes[0].find("untimed has no time"), std::string::npos);
  EXPECT_NE(trends[0].notes[1].find("\"last tuesday\" cannot be read"), std::string::npos);
}

TEST(TrendTest, ListsChangedAddedAndRemovedCasesBetweenNeighbours) {
  std::vector<RunData> runs = {
      MakeRun("alpha", "before", "2026-01-01T00:00:00Z", "1",
          {Result("s1", "case_10", CaseState::kPass), Result("s1", "case_9", CaseState::kFail),
           Result("s1", "gone", CaseState::kPass), Result("s2", "same", CaseState::kXfail)},
          {{"waiting", "s1", "Add"}}),
      MakeRun("alpha", "after", "2026-01-02T00:00:00Z", "1",
          {Result("s1", "case_10", CaseState::kFail), Result("s1", "case_9", CaseState::kPass),
           Result("s1", "waiting", CaseState::kPass), Result("s2", "same", CaseState::kXfail),
           Result("s0", "new", CaseState::kUnsupported)}),
  };
  const std::vector<Trend> trends = BuildTrends(runs);
  ASSERT_EQ(trends.size(), 1u);
  ASSERT_EQ(trends[0].steps.size(), 1u);
  const TrendStep& step = trends[0].steps[0];
  EXPECT_EQ(step.changed, 3);
  EXPECT_EQ(step.added, 1);
  EXPECT_EQ(step.removed, 1);
  // State changes first, in natural order (case_9 before case_10), then
  // added, then removed; a planned case without a result was NOT RUN.
  const std::vector<std::vector<std::string>> expected = {
      {"s1", "case_9", "FAIL", "PASS"}, {"s1", "case_10", "PASS", "FAIL"}, {"s1", "waiting", kNotRun, "PASS"},
      {"s0", "new", "", "UNSUPPORTED"}, {"s1", "gone", "PASS", ""}};
  ASSERT_EQ(step.changes.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const CaseChange& c = step.changes[i];
    EXPECT_EQ((std::vector<std::string>{c.suite, c.name, c.from, c.to}), expected[i]) << "change " << i;
  }
  EXPECT_EQ(StepTitle(trends[0], step), "before → after: 3 changed state, 1 added, 1 removed");
  EXPECT_EQ(TrendRows(trends[0])[1].back(), "3 changed, 1 added, 1 removed");
}

TEST(TrendTest, PointHasCountsGateFailuresAndLoadMedians) {
  CaseResult unforeseen = Result("s", "skip", CaseState::kSkip);
  unforeseen.gate_failure = true;  // its expectations entry named another state
  std::vector<RunData> runs = {
      MakeRun("alpha", "one", "2026-01-01T00:00:00Z", "1",
          {Result("s", "a", CaseState::kPass, 1.0, {2, 4, 6}), Result("s", "b", CaseState::kPass, 10.0, {8}),
           Result("s", "c", CaseState::kFail, 3.0), Result("s", "d", CaseState::kCrash), unforeseen},
          {{"e", "s", "Add"}}),
      MakeRun("alpha", "two", "2026-01-02T00:00:00Z", "1", {Result("s", "a", CaseState::kPass)}),
  };
  const Trend trend = BuildTrends(runs).at(0);
  const TrendPoint& p = trend.points[0];
  EXPECT_EQ(p.pass, 2);
  EXPECT_EQ(p.total, 6);
  EXPECT_EQ(p.gate_failures, 3);  // FAIL, CRASH and the unforeseen SKIP
  EXPECT_EQ(p.by_state.at("FAIL"), 1);
  EXPECT_EQ(p.by_state.at(kNotRun), 1);
  EXPECT_DOUBLE_EQ(p.cold_median_ms, 3.0);  // of 1, 3, 10
  EXPECT_DOUBLE_EQ(p.warm_median_ms, 6.0);  // of the per-case medians 4 and 8
  EXPECT_TRUE(std::isnan(trend.points[1].cold_median_ms));
  const std::vector<std::string> row = TrendRows(trend)[0];
  ASSERT_EQ(row.size(), TrendColumns().size());
  EXPECT_EQ(row[3], "2");
  EXPECT_EQ(row[4], "33.3%");
  EXPECT_EQ(row[5], "3");
  EXPECT_EQ(row[6], "3.00");
  EXPECT_EQ(row[7], "6.00");
  EXPECT_EQ(row[8], "PASS 2 · FAIL 1 · CRASH 1 · SKIP 1 · NOT RUN 1");
  EXPECT_EQ(row[9], "–");
  EXPECT_EQ(TrendRows(trend)[1][6], "–");
}

TEST(TrendTest, RunsOfDifferentAdaptersOrOneRunTwiceHaveNoTrend) {
  const std::vector<RunData> different = {
      MakeRun("alpha", "alpha@cpu", "2026-01-01T00:00:00Z", "1", {Result("s", "a", CaseState::kPass)}),
      MakeRun("beta", "beta@cpu", "2026-01-02T00:00:00Z", "1", {Result("s", "a", CaseState::kFail)}),
  };
  EXPECT_TRUE(BuildTrends(different).empty());
  EXPECT_EQ(RenderMarkdown(different, "t").find("## Trends"), std::string::npos);
  const std::string html = RenderHtml(different, "t");
  EXPECT_EQ(html.find("id=\"trends\""), std::string::npos);
  EXPECT_EQ(html.find("trend-chart"), std::string::npos);
  const std::vector<RunData> twice = {different[0], different[0]};
  EXPECT_TRUE(BuildTrends(twice).empty());
  // Two adapters with two runs each: a trend each, in the order they appear.
  const std::vector<RunData> both = {different[1], different[0],
                                     MakeRun("alpha", "alpha2", "2026-02-01T00:00:00Z", "1", {}),
                                     MakeRun("beta", "beta2", "2025-12-01T00:00:00Z", "1", {})};
  const std::vector<Trend> trends = BuildTrends(both);
  ASSERT_EQ(trends.size(), 2u);
  EXPECT_EQ(trends[0].adapter, "beta");
  EXPECT_EQ(Labels(trends[0]), (std::vector<std::string>{"beta2", "beta@cpu"}));
  EXPECT_EQ(trends[1].adapter, "alpha");
}

TEST(TrendTest, ReportsShowTheTrendAndCapLongChangeLists) {
  std::vector<CaseResult> before, after;
  for (int i = 0; i < 260; ++i) {
    before.push_back(Result("s", "case_" + std::to_string(i), CaseState::kPass, 2.0));
    after.push_back(Result("s", "case_" + std::to_string(i), CaseState::kFail, 4.0));
  }
  const std::vector<RunData> runs = {MakeRun("alpha", "old", "2026-01-01T00:00:00Z", "1", before),
                                     MakeRun("alpha", "new", "2026-01-02T00:00:00Z", "2", after)};
  const std::string md = RenderMarkdown(runs, "t");
  EXPECT_NE(md.find("## Trends"), std::string::npos);
  EXPECT_NE(md.find("### alpha over 2 runs"), std::string::npos);
  EXPECT_NE(md.find("| old | 2026-01-01T00:00:00Z | 1 | 260 | 100.0% | 0 | 2.00 | – | PASS 260 | – |"),
            std::string::npos);
  EXPECT_NE(md.find("| s | case_0 | PASS | FAIL |"), std::string::npos);
  EXPECT_NE(md.find("… and 210 more."), std::string::npos);
  EXPECT_EQ(md.find("| s | case_50 |"), std::string::npos);
  const std::string html = RenderHtml(runs, "t");
  EXPECT_NE(html.find("<table class=\"trend\" id=\"trend-1\">"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"chart trend-chart\""), std::string::npos);
  EXPECT_NE(html.find("<td class=\"state state-FAIL\">FAIL</td>"), std::string::npos);
  EXPECT_NE(html.find("<p class=\"muted\">60 more</p>"), std::string::npos);
  // A long list starts folded.
  EXPECT_NE(html.find("<details class=\"trend-step\"><summary>old → new: 260 changed state"), std::string::npos);
}

TEST(TrendTest, EscapesEveryStringFromTheRuns) {
  const std::string markup = "<img src=x onerror=\"alert('x')\">|pipe";
  std::vector<RunData> runs = {
      MakeRun(markup, markup + " one", "2026-01-01T00:00:00Z", "<v1>", {Result(markup, markup, CaseState::kPass)}),
      MakeRun(markup, markup + " two", "<when>", "<v2>", {Result(markup, markup, CaseState::kFail)}),
  };
  const std::string html = RenderHtml(runs, "t");
  const std::string svg = TrendSvg(BuildTrends(runs).at(0));
  ASSERT_FALSE(svg.empty());
  for (const std::string& text : {html, svg}) {
    EXPECT_EQ(text.find("<img"), std::string::npos);
    EXPECT_EQ(text.find("<v1>"), std::string::npos);
    EXPECT_EQ(text.find("<when>"), std::string::npos);
  }
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;|pipe over 2 runs</h3>"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;when&gt;"), std::string::npos);
  const std::string md = RenderMarkdown(runs, "t");
  EXPECT_EQ(md.find("<img"), std::string::npos);
  EXPECT_NE(md.find("&lt;img src=x onerror=\"alert('x')\"&gt;\\|pipe | PASS | FAIL |"), std::string::npos);
}

}  // namespace
}  // namespace parity
