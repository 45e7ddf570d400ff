// Tests of the reports' view of variant models: the stripped load times read
// from results.jsonl, summary.json's "variant_load_ms", and the table in
// report.md and report.html, shown only when some run measured a twin.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/run_data.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kTitle[] = "Variant models: session creation against the same model without entries";

json Line(const std::string& name, double cold, double warm) {
  return {{"case", name},       {"suite", "variants"},        {"dir", "cases/variants/" + name},
          {"operator", "Add"},  {"adapter", "reference"},     {"device", "cpu"},
          {"state", "PASS"},    {"load_ms_cold", cold},
          {"load_ms_warm", {{"median", warm}, {"min", warm}, {"max", warm}, {"repeats", 2}}},
          {"run_ms", 1.0},      {"outputs", json::array()}};
}

json WithTwin(json line, double cold, double warm) {
  line["variant_targets"] = {"org.onnxparity.reference", "portable"};
  line["variants_expected"] = {"e0"};
  line["load_ms_stripped_cold"] = cold;
  line["load_ms_stripped_warm"] = {{"median", warm}, {"min", warm}, {"max", warm}, {"repeats", 2}};
  return line;
}

class VariantLoadReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("parity_variant_load_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  RunData Write(const std::string& folder, const std::vector<json>& lines, const json& summary = nullptr) {
    const fs::path dir = root_ / folder;
    fs::create_directories(dir);
    std::ofstream(dir / "run.json") << json{{"settings", {{"adapter", "reference"}}}}.dump();
    std::ofstream journal(dir / "results.jsonl");
    for (const json& j : lines) journal << j.dump() << "\n";
    journal.close();
    if (!summary.is_null()) std::ofstream(dir / "summary.json") << summary.dump();
    StatusOr<RunData> run = LoadRunData(dir.string());
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : RunData{};
  }

  fs::path root_;
};

TEST_F(VariantLoadReportTest, SummaryAndTablesCompareWithTheStrippedTwin) {
  const RunData run = Write("with", {Line("plain", 1, 1), WithTwin(Line("v1", 12, 4), 10, 2),
                                     WithTwin(Line("v2", 30, 9), 10, 3)});
  ASSERT_EQ(run.results.size(), 3u);
  EXPECT_EQ(*run.results[1].load_ms_stripped_cold, 10);
  EXPECT_EQ(run.results[1].load_ms_stripped_warm, std::vector<double>{2});
  EXPECT_FALSE(run.results[0].load_ms_stripped_cold.has_value());

  const json v = RefreshedSummary(run)["variant_load_ms"];
  EXPECT_EQ(v["cases"], 2);
  EXPECT_EQ(v["cold"]["median"], 21);
  EXPECT_EQ(v["stripped_cold"]["median"], 10);
  EXPECT_DOUBLE_EQ(v["cold_ratio"].get<double>(), 2.1);  // median of 1.2 and 3
  EXPECT_DOUBLE_EQ(v["warm_ratio"].get<double>(), 2.5);  // median of 2 and 3

  const std::string md = RenderMarkdown({run}, "t");
  ASSERT_NE(md.find(std::string("## ") + kTitle), std::string::npos) << md;
  EXPECT_NE(md.find("| models with entries measured | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| cold, median: with entries / stripped | 21.00 / 10.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| cold, ratio (median per model) | 2.10× |"), std::string::npos) << md;
  const std::string html = RenderHtml({run}, "t");
  EXPECT_NE(html.find(kTitle), std::string::npos);
  EXPECT_NE(html.find("id=\"variant-load\""), std::string::npos);
}

TEST_F(VariantLoadReportTest, RunsWithoutTwinsHaveNoTableAndLoseAStaleSummaryField) {
  const json stale = {{"variant_load_ms", {{"cases", 9}}}, {"adapter", {{"name", "reference"}}}};
  const RunData run = Write("without", {Line("plain", 1, 1)}, stale);
  EXPECT_FALSE(RefreshedSummary(run).contains("variant_load_ms"));
  EXPECT_EQ(RenderMarkdown({run}, "t").find(kTitle), std::string::npos);
  EXPECT_EQ(RenderHtml({run}, "t").find(kTitle), std::string::npos);
}

TEST_F(VariantLoadReportTest, ARunWithoutTwinsShowsDashesBesideOneWithThem) {
  std::vector<RunData> runs = {Write("a", {WithTwin(Line("v1", 12, 4), 10, 2)}), Write("b", {Line("plain", 1, 1)})};
  runs[1].label = "other@cpu";
  const std::string md = RenderMarkdown(runs, "t");
  EXPECT_NE(md.find("| models with entries measured | 1 | – |"), std::string::npos) << md;
}

TEST_F(VariantLoadReportTest, AMalformedStrippedWarmFieldIsAnErrorNamingIt) {
  json bad = WithTwin(Line("v1", 12, 4), 10, 2);
  bad["load_ms_stripped_warm"] = 3;
  const Status s = ParseResultsJournal(bad.dump() + "\n", "results.jsonl").status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("load_ms_stripped_warm"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace parity
