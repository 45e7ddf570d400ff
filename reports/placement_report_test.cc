// Tests of the reports' "Placement" section: the shares of nodes and FLOPs
// on each run's device, over all cases, per suite and per model, in both
// renderers, and no section where no run reported a placement.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/placement.h"
#include "reports/run_data.h"

namespace parity {
namespace {

using nlohmann::json;

json Line(const std::string& suite, const std::string& name, const json& placement, const json& flops,
          int unknown) {
  json j = {{"case", name}, {"suite", suite}, {"operator", "MatMul"}, {"adapter", "onednn"},
            {"device", "cpu"}, {"state", "PASS"}, {"placement", placement}};
  if (!flops.is_null()) {
    j["placement_flops"] = flops;
    j["placement_flops_unknown"] = unknown;
  }
  return j;
}

RunData MakeRun(const std::string& adapter, const std::vector<json>& lines) {
  RunData run;
  run.dir = "runs/" + adapter;
  run.adapter = adapter;
  run.device = "cpu";
  run.label = adapter + "@cpu";
  std::string text;
  for (const json& j : lines) text += j.dump() + "\n";
  StatusOr<ResultsJournal> parsed = ParseResultsJournal(text, run.dir + "/results.jsonl");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (parsed.ok()) run.results = std::move(parsed->results);
  return run;
}

// A device run (a MatMul lowered, a Sigmoid fallen back, a model mostly
// fallen back by node count but not by FLOPs) and the reference, all on "cpu".
std::vector<RunData> TwoRuns() {
  return {MakeRun("onednn", {Line("onnx_node", "test_matmul", {{"cpu", 1}}, {{"cpu", 72}}, 0),
                             Line("onnx_node", "test_sigmoid", {{"reference", 1}}, {{"reference", 60}}, 0),
                             Line("models", "vit", {{"cpu", 9}, {"reference", 47}},
                                  {{"cpu", 2.0e6}, {"reference", 5.0e5}}, 1)}),
          MakeRun("reference", {Line("onnx_node", "test_matmul", {{"cpu", 1}}, {{"cpu", 72}}, 0)})};
}

TEST(PlacementReportTest, RowsOverAllSuitesAndModels) {
  const std::vector<PlacementRow> rows = BuildPlacementRows(TwoRuns());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].scope, "all cases");
  // 10 of 58 nodes; 2,000,072 of 2,500,132 FLOPs.
  EXPECT_EQ(rows[0].cells[0], "17.2% of 58 nodes · 80.0% of 2.5 M FLOP · 1 nodes' FLOPs unknown");
  EXPECT_EQ(rows[0].cells[1], "100.0% of 1 nodes · 100.0% of 72 FLOP");
  EXPECT_EQ(rows[1].scope, "suite models");
  EXPECT_EQ(rows[1].cells[1], "–");  // the reference did not run the models
  EXPECT_EQ(rows[2].scope, "suite onnx_node");
  EXPECT_EQ(rows[2].cells[0], "50.0% of 2 nodes · 54.5% of 132 FLOP");
  EXPECT_EQ(rows[3].scope, "model vit");
  EXPECT_EQ(rows[3].cells[0], "16.1% of 56 nodes · 80.0% of 2.5 M FLOP · 1 nodes' FLOPs unknown");
}

TEST(PlacementReportTest, NoKnownFlopsShowsNoFlopShare) {
  const std::vector<PlacementRow> rows =
      BuildPlacementRows({MakeRun("x", {Line("s", "c", {{"cpu", 2}}, json::object(), 2)})});
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].cells[0], "100.0% of 2 nodes · – of 0 FLOP · 2 nodes' FLOPs unknown");
}

TEST(PlacementReportTest, ADevicesCopiesFollowItsShareWhereItCountsThem) {
  json counted = Line("onnx_node", "test_matmul", {{"cuda", 1}, {"reference", 1}}, {{"cuda", 72}}, 1);
  counted["device"] = "cuda";
  counted["run_cost"] = {{"runs", 2}, {"to_device_copies", 3}, {"to_device_bytes", 3072},
                         {"to_host_copies", 2}, {"to_host_bytes", 512}};
  json uncounted = Line("onnx_node", "test_relu", {{"cuda", 1}}, {{"cuda", 8}}, 0);
  uncounted["device"] = "cuda";
  const std::vector<PlacementRow> rows = BuildPlacementRows({MakeRun("cuda", {counted, uncounted})});
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].cells[0],
            "66.7% of 3 nodes · 100.0% of 80 FLOP · 1 nodes' FLOPs unknown · copied 3.0 KiB to the device and 512 B "
            "back (1 cases counted)");
}

TEST(PlacementReportTest, FlopsTakeAnSiPrefix) {
  EXPECT_EQ(FormatFlops(766), "766");
  EXPECT_EQ(FormatFlops(2113536), "2.11 M");
  EXPECT_EQ(FormatFlops(1.0e9), "1 G");
}

TEST(PlacementReportTest, MarkdownAndHtmlShowTheSectionOnlyWithAPlacement) {
  const std::vector<RunData> runs = TwoRuns();
  const std::string md = RenderMarkdown(runs, "t");
  EXPECT_NE(md.find("## Placement"), std::string::npos);
  EXPECT_NE(md.find("| model vit | 16.1% of 56 nodes · 80.0% of 2.5 M FLOP · 1 nodes' FLOPs unknown | – |"),
            std::string::npos)
      << md;
  const std::string html = RenderHtml(runs, "t");
  EXPECT_NE(html.find("<table id=\"placement\">"), std::string::npos);
  EXPECT_NE(html.find("<th>suite onnx_node</th><td class=\"num\">50.0% of 2 nodes"), std::string::npos);
  const std::vector<RunData> bare = {MakeRun("x", {Line("s", "c", json::object(), nullptr, 0)})};
  EXPECT_EQ(RenderMarkdown(bare, "t").find("## Placement"), std::string::npos);
  EXPECT_EQ(RenderHtml(bare, "t").find("id=\"placement\""), std::string::npos);
}

}  // namespace
}  // namespace parity
