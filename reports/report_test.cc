// Tests of `parity report`: synthetic run folders on disk (two adapters,
// every state, NOT RUN cases, hostile strings) rendered as JUnit, Markdown
// and HTML, and the loader's handling of bad and partial journal lines.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/format.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/matrix.h"
#include "harness/report_command.h"
#include "reports/run_data.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A message with everything a renderer must escape: markup, quotes, an
// ampersand, a control character (BEL) and a Markdown table pipe.
const std::string kHostile = "got <script>alert(1)</script> \"quotes\" & 'apostrophes' bell\x07 a|b\nsecond line";

json Line(const std::string& suite, const std::string& name, const std::string& op, const std::string& state,
          const std::string& adapter, const std::string& device, double cold, double warm) {
  json j = {{"case", name},       {"suite", suite},    {"dir", "cases/" + suite + "/" + name},
            {"operator", op},     {"adapter", adapter}, {"device", device},
            {"state", state},     {"load_ms_cold", cold},
            {"load_ms_warm", {{"median", warm}, {"min", warm}, {"max", warm}, {"repeats", 3}}},
            {"run_ms", 2.5},      {"outputs", json::array()},
            {"repro", "parity run --adapter " + adapter + " --cases cases/" + suite + " --filter " + name}};
  if (state != "PASS") j["message"] = state + " happened";
  return j;
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteRun(const fs::path& dir, const json& run, const std::vector<json>& lines, const json& summary) {
  fs::create_directories(dir);
  WriteFile(dir / "run.json", run.dump(1));
  std::string journal;
  for (const json& j : lines) journal += j.dump() + "\n";
  WriteFile(dir / "results.jsonl", journal);
  if (!summary.is_null()) WriteFile(dir / "summary.json", summary.dump(1));
}

json Plan(const std::vector<std::tuple<std::string, std::string, std::string>>& cases) {
  json planned = json::array();
  for (const auto& [suite, name, op] : cases) planned.push_back({{"case", name}, {"suite", suite}, {"operator", op}});
  return planned;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("parity_report_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    // alpha@cpu: every state; s1/Relu has one case that never ran.
    json fail = Line("s1", "add_fail", "Add", "FAIL", "alpha", "cpu", 12, 3);
    fail["message"] = kHostile;
    fail["outputs"] = json::array({{{"index", 0},
                                    {"verdict", "mismatch"},
                                    {"max_abs_error", 0.5},
                                    {"max_rel_error", "inf"},
                                    {"max_ulp_error", 4194304},
                                    {"mismatches", 1},
                                    {"elements", 4},
                                    {"first_mismatch_index", 3},
                                    {"first_mismatch", "at [3]: expected 4 (0x40800000), got 4.5 (0x40900000)"}}});
    // Its expectations entry names another state: the gate counts it.
    json skip_unforeseen = Line("s2", "mm_skip", "MatMul", "SKIP", "alpha", "cpu", 5, 1);
    skip_unforeseen["gate_failure"] = true;
    std::vector<json> alpha = {
        Line("s1", "add_ok", "Add", "PASS", "alpha", "cpu", 10, 2),
        fail,
        Line("s1", "relu_unsupported", "Relu", "UNSUPPORTED", "alpha", "cpu", 1, 0.5),
        Line("s2", "conv_error", "Conv", "ERROR", "alpha", "cpu", 20, 4),
        Line("s2", "conv_crash", "Conv", "CRASH", "alpha", "cpu", 30, 5),
        Line("s2", "conv_timeout", "Conv", "TIMEOUT", "alpha", "cpu", 40, 6),
        Line("s2", "mm_xfail", "MatMul", "XFAIL", "alpha", "cpu", 5, 1),
        Line("s2", "mm_xpass", "MatMul", "XPASS", "alpha", "cpu", 5, 1),
        skip_unforeseen,
        Line("s2", "mm_mistrusted", "MatMul", "MISTRUSTED", "alpha", "cpu", 5, 1),
        Line("s2", "mm_fell_back", "MatMul", "FELL_BACK", "alpha", "cpu", 5, 1),
    };
    json alpha_plan = Plan({{"s1", "add_ok", "Add"},
                            {"s1", "add_fail", "Add"},
                            {"s1", "relu_unsupported", "Relu"},
                            {"s1", "relu_never_ran", "Relu"},
                            {"s2", "conv_error", "Conv"},
                            {"s2", "conv_crash", "Conv"},
                            {"s2", "conv_timeout", "Conv"},
                            {"s2", "mm_xfail", "MatMul"},
                            {"s2", "mm_xpass", "MatMul"},
                            {"s2", "mm_skip", "MatMul"},
                            {"s2", "mm_mistrusted", "MatMul"},
                            {"s2", "mm_fell_back", "MatMul"}});
    // The lines in completion order, not plan order.
    std::reverse(alpha.begin(), alpha.end());
    WriteRun(alpha_dir(), {{"adapter", "alpha"}, {"device", "cpu"}, {"planned", alpha_plan}}, alpha,
             {{"adapter", {{"name", "alpha"}, {"version", "1.0"}, {"backend_version", "7.1"}}},
              {"device", {{"name", "cpu"}, {"kind", "cpu"}, {"description", "test <cpu>"}}},
              {"versions", {{"parity", "0.1"}, {"protocol", 1}, {"abi", 1}}},
              {"seconds", 41.25},
              {"shard", nullptr},
              {"expectations", "adapters/alpha/s1.json"},
              {"gate_failures", 99},
              {"total", 999}});
    // beta@gpu: planned s1/Add only, so s1/Relu is missing from its plan.
    WriteRun(beta_dir(),
             {{"adapter", "/opt/beta/libparity_adapter_beta.so"},
              {"device", "gpu"},
              {"planned", Plan({{"s1", "add_ok", "Add"}, {"s1", "add_fail", "Add"}})}},
             {Line("s1", "add_fail", "Add", "PASS", "beta", "gpu", 100, 20),
              Line("s1", "add_ok", "Add", "PASS", "beta", "gpu", 120, 25)},
             nullptr);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path alpha_dir() const { return root_ / "alpha"; }
  fs::path beta_dir() const { return root_ / "beta"; }

  std::vector<RunData> LoadBoth() {
    std::vector<RunData> runs;
    for (const fs::path& dir : {alpha_dir(), beta_dir()}) {
      StatusOr<RunData> run = LoadRunData(dir.string());
      EXPECT_TRUE(run.ok()) << run.status().ToString();
      if (run.ok()) runs.push_back(std::move(*run));
    }
    AssignLabels(runs);
    return runs;
  }

  fs::path root_;
};

TEST_F(ReportTest, LoadsRunsAndFindsNotRunCases) {
  std::vector<RunData> runs = LoadBoth();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].label, "alpha@cpu");
  EXPECT_EQ(runs[0].results.size(), 11u);
  ASSERT_EQ(runs[0].not_run.size(), 1u);
  EXPECT_EQ(runs[0].not_run[0].name, "relu_never_ran");
  // No summary.json: the adapter comes from the results, not run.json's path.
  EXPECT_EQ(runs[1].label, "beta@gpu");
  EXPECT_TRUE(runs[1].not_run.empty());
  EXPECT_EQ(runs[0].AdapterVersion(), "1.0 (backend 7.1)");
}

TEST_F(ReportTest, SummaryIsRecomputedAndCarriesRunFields) {
  std::vector<RunData> runs = LoadBoth();
  const json s = RefreshedSummary(runs[0]);
  EXPECT_EQ(s["total"], 11);  // recomputed, not the stale 999
  EXPECT_EQ(s["planned"], 12);
  EXPECT_EQ(s["not_run"], 1);
  EXPECT_EQ(s["by_state"]["FAIL"], 1);
  EXPECT_EQ(s["by_state"]["PASS"], 1);
  EXPECT_EQ(s["by_operator"]["MatMul"]["XFAIL"], 1);
  EXPECT_EQ(s["by_suite"]["s2"]["CRASH"], 1);
  EXPECT_EQ(s["by_suite"]["s1"].size(), 3u);
  // cold: 1 5 5 5 5 5 10 12 20 30 40 -> median 5; warm medians: median 1.
  EXPECT_EQ(s["load_ms"]["cold"]["median"], 5.0);
  EXPECT_EQ(s["load_ms"]["cold"]["min"], 1.0);
  EXPECT_EQ(s["load_ms"]["cold"]["max"], 40.0);
  EXPECT_EQ(s["load_ms"]["warm_median"]["median"], 1.0);
  EXPECT_EQ(s["seconds"], 41.25);
  EXPECT_EQ(s["versions"]["protocol"], 1);
  EXPECT_EQ(s["expectations"], "adapters/alpha/s1.json");
  // FAIL, CRASH, TIMEOUT, XPASS, FELL_BACK and the unforeseen SKIP.
  EXPECT_EQ(s["gate_failures"], 6);
  EXPECT_EQ(s["adapter"]["backend_version"], "7.1");

  const json b = RefreshedSummary(runs[1]);
  EXPECT_EQ(b["adapter"]["name"], "beta");
  EXPECT_EQ(b["device"]["name"], "gpu");
  EXPECT_EQ(b["load_ms"]["cold"]["median"], 110.0);  // even count: mean of the middle two
  EXPECT_EQ(b["gate_failures"], 0);
}

TEST_F(ReportTest, JunitCountsAndElements) {
  const std::string xml = RenderJunit(LoadBoth());
  // alpha s1: add_ok, add_fail, relu_unsupported, relu_never_ran.
  EXPECT_NE(xml.find("<testsuite name=\"alpha@cpu/s1\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"2\""),
            std::string::npos)
      << xml;
  // alpha s2: CRASH, TIMEOUT, XPASS, FELL_BACK and the unforeseen SKIP fail;
  // ERROR; XFAIL and MISTRUSTED skipped.
  EXPECT_NE(xml.find("<testsuite name=\"alpha@cpu/s2\" tests=\"8\" failures=\"5\" errors=\"1\" skipped=\"2\""),
            std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"SKIP (not the state its expectations entry names): SKIP happened\" "
                     "type=\"SKIP\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<testsuite name=\"beta@gpu/s1\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\""),
            std::string::npos);
  EXPECT_NE(xml.find("<testsuites name=\"ONNX Parity\" tests=\"14\" failures=\"6\" errors=\"1\" skipped=\"4\""),
            std::string::npos);
  EXPECT_NE(xml.find("classname=\"s1.Relu\" name=\"relu_never_ran\" time=\"0.000\">\n      <skipped "
                     "message=\"NOT RUN\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"XFAIL: XFAIL happened\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<error message=\"ERROR: ERROR happened\" type=\"ERROR\">"), std::string::npos);
  // (12 + 2.5) ms.
  EXPECT_NE(xml.find("classname=\"s1.Add\" name=\"add_fail\" time=\"0.015\">\n      <failure message=\"FAIL: got "
                     "&lt;script&gt;alert(1)&lt;/script&gt; &quot;quotes&quot; &amp; &apos;apostrophes&apos; "
                     "bell\\x07 a|b&#10;second line\" type=\"FAIL\">"),
            std::string::npos);
  // The body has the first mismatch, the error statistics and the repro line.
  EXPECT_NE(xml.find("first mismatch: output 0 at [3]: expected 4 (0x40800000), got 4.5 (0x40900000)"),
            std::string::npos);
  EXPECT_NE(xml.find("max abs error 0.5, max rel error inf, max ulp error 4194304"), std::string::npos);
  EXPECT_NE(xml.find("repro: parity run --adapter alpha --cases cases/s1 --filter add_fail"), std::string::npos);
  // Nothing XML 1.0 forbids, and no markup from the data.
  for (char c : xml) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_FALSE(u < 0x20 && c != '\n' && c != '\t' && c != '\r') << "control character " << int(u);
  }
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
  size_t testcases = 0;
  for (size_t at = xml.find("<testcase "); at != std::string::npos; at = xml.find("<testcase ", at + 1)) ++testcases;
  EXPECT_EQ(testcases, 14u);
}

TEST_F(ReportTest, MarkdownTablesEscapeAndShowNotRun) {
  const std::string md = RenderMarkdown(LoadBoth(), "Report | test");
  EXPECT_EQ(md.rfind("# Report \\| test\n", 0), 0u);
  // alpha's s1/Relu: one UNSUPPORTED, one never ran; beta never planned it.
  EXPECT_NE(md.find("| s1 | Relu | 0/2 ~ (UNSUPPORTED 1, NOT RUN 1) | NOT RUN |"), std::string::npos) << md;
  EXPECT_NE(md.find("| s1 | Add | 1/2 ✗ (FAIL 1) | 2/2 ✓ |"), std::string::npos);
  // The message: pipe escaped, newline gone, markup as entities.
  EXPECT_NE(md.find("got &lt;script&gt;alert(1)&lt;/script&gt; \"quotes\" &amp; 'apostrophes' bell\\x07 a\\|b "
                    "second line |"),
            std::string::npos);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_EQ(md.find('\x07'), std::string::npos);
  EXPECT_NE(md.find("| FAIL | s1 | add_fail |"), std::string::npos);
  EXPECT_NE(md.find("| 0.5 | inf | 4194304 | output 0 at [3]"), std::string::npos);
  EXPECT_NE(md.find("```sh\nparity run --adapter alpha --cases cases/s1 --filter add_fail\n"), std::string::npos);
  EXPECT_NE(md.find("| NOT RUN | 1 (8.3%) | 0 (0.0%) |"), std::string::npos);
  EXPECT_NE(md.find("| cold, median | 5.00 | 110.00 |"), std::string::npos);
  EXPECT_NE(md.find("| version | 1.0 (backend 7.1) | – |"), std::string::npos);
}

TEST_F(ReportTest, HtmlEscapesDataAndHasMatrixNotRunAndChart) {
  const std::string html = RenderHtml(LoadBoth(), "<b>title</b>");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &quot;quotes&quot; &amp; &#39;apostrophes&#39; "
                      "bell\\x07"),
            std::string::npos);
  EXPECT_NE(html.find("<title>&lt;b&gt;title&lt;/b&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("test &lt;cpu&gt;"), std::string::npos);
  EXPECT_EQ(html.find('\x07'), std::string::npos);
  EXPECT_NE(html.find("id=\"matrix\""), std::string::npos);
  // beta's Relu row: expected (alpha planned it) but absent.
  const size_t relu = html.find("<td class=\"name\">Relu</td>");
  ASSERT_NE(relu, std::string::npos);
  const std::string relu_row = html.substr(relu, html.find("</tr>", relu) - relu);
  EXPECT_NE(relu_row.find("title=\"UNSUPPORTED 1, NOT RUN 1\""), std::string::npos) << relu_row;
  EXPECT_NE(relu_row.find("<td class=\"cell notrun\""), std::string::npos) << relu_row;
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("session creation time (ms)"), std::string::npos);
  EXPECT_NE(html.find("<code>parity run --adapter alpha --cases cases/s1 --filter add_fail</code>"),
            std::string::npos);
  // No external resource: nothing is fetched from anywhere.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
}

TEST_F(ReportTest, MalformedLineIsAnErrorNamingTheLine) {
  const fs::path dir = root_ / "bad";
  fs::create_directories(dir);
  WriteFile(dir / "results.jsonl", Line("s", "a", "Add", "PASS", "x", "", 1, 1).dump() + "\n{not json\n" +
                                       Line("s", "b", "Add", "PASS", "x", "", 1, 1).dump() + "\n");
  StatusOr<RunData> run = LoadRunData(dir.string());
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("results.jsonl:2: not valid JSON"), std::string::npos)
      << run.status().ToString();

  // A whole line with an unknown state is an error too.
  json odd = Line("s", "c", "Add", "PASS", "x", "", 1, 1);
  odd["state"] = "MAYBE";
  WriteFile(dir / "results.jsonl", Line("s", "a", "Add", "PASS", "x", "", 1, 1).dump() + "\n" + odd.dump() + "\n");
  run = LoadRunData(dir.string());
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("results.jsonl:2: unknown state \"MAYBE\""), std::string::npos);

  // Even the last line, when it was written whole (it ends in a newline).
  WriteFile(dir / "results.jsonl", Line("s", "a", "Add", "PASS", "x", "", 1, 1).dump() + "\n{\"case\":\n");
  EXPECT_FALSE(LoadRunData(dir.string()).ok());
}

TEST_F(ReportTest, PartialLastLineIsDroppedWithAWarning) {
  const fs::path dir = root_ / "partial";
  fs::create_directories(dir);
  WriteFile(dir / "results.jsonl", Line("s", "a", "Add", "PASS", "x", "", 1, 1).dump() + "\n" +
                                       Line("s", "b", "Add", "FAIL", "x", "", 1, 1).dump() + "\n{\"case\": \"c\", \"sui");
  StatusOr<RunData> run = LoadRunData(dir.string());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->results.size(), 2u);
  ASSERT_EQ(run->warnings.size(), 1u);
  EXPECT_NE(run->warnings[0].find("results.jsonl:3: dropped a partial last line"), std::string::npos);
  // The report shows the warning.
  EXPECT_NE(RenderHtml({*run}, "t").find("dropped a partial last line"), std::string::npos);
}

TEST_F(ReportTest, CommandWritesFilesAndRejectsBadInput) {
  // One folder: everything, summary.json included, in place.
  ASSERT_EQ(RunReportCommand({alpha_dir().string()}), 0);
  for (const char* name : {"junit.xml", "report.md", "report.html", "summary.json"}) {
    EXPECT_TRUE(fs::exists(alpha_dir() / name)) << name;
  }
  const json summary = json::parse(ReadFile(alpha_dir() / "summary.json"));
  EXPECT_EQ(summary["total"], 11);
  EXPECT_EQ(summary["seconds"], 41.25);
  // Several folders: --out is required, and their summaries are left alone.
  EXPECT_EQ(RunReportCommand({alpha_dir().string(), beta_dir().string()}), 2);
  const fs::path out = root_ / "both";
  ASSERT_EQ(RunReportCommand({alpha_dir().string(), beta_dir().string(), "--out", out.string(), "--title", "T"}), 0);
  EXPECT_TRUE(fs::exists(out / "report.html"));
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  EXPECT_FALSE(fs::exists(beta_dir() / "summary.json"));
  EXPECT_NE(ReadFile(out / "report.html").find("<th class=\"col\">beta@gpu</th>"), std::string::npos);
  // Bad arguments and unreadable input.
  EXPECT_EQ(RunReportCommand({}), 2);
  EXPECT_EQ(RunReportCommand({"--bogus", alpha_dir().string()}), 2);
  EXPECT_EQ(RunReportCommand({alpha_dir().string(), "--out"}), 2);
  EXPECT_EQ(RunReportCommand({(root_ / "missing").string()}), 2);
  fs::create_directories(root_ / "empty");
  EXPECT_EQ(RunReportCommand({(root_ / "empty").string()}), 2);
  WriteFile(alpha_dir() / "run.json", "{oops");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunReportCommand({alpha_dir().string()}), 2);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("run.json: not valid JSON"), std::string::npos);
}

TEST_F(ReportTest, SameAdapterTwiceGetsDistinctLabels) {
  std::vector<RunData> runs = LoadBoth();
  runs.push_back(runs[0]);
  runs[2].dir = (root_ / "again").string();
  AssignLabels(runs);
  EXPECT_EQ(runs[0].label, "alpha@cpu (alpha)");
  EXPECT_EQ(runs[2].label, "alpha@cpu (again)");
}

TEST(ReportFormatTest, SanitizesAndEscapes) {
  EXPECT_EQ(SanitizeText("ok\tline\n"), "ok\tline\n");
  EXPECT_EQ(SanitizeText(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(SanitizeText("\x1b[31m"), "\\x1B[31m");
  EXPECT_EQ(SanitizeText("bad \xff byte"), "bad \xEF\xBF\xBD byte");         // U+FFFD
  EXPECT_EQ(SanitizeText("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");            // overlong '/'
  EXPECT_EQ(SanitizeText("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(SanitizeText("µ → 😀"), "µ → 😀");
  EXPECT_EQ(XmlEscape("a<b>&\"'", true), "a&lt;b&gt;&amp;&quot;&apos;");
  EXPECT_EQ(XmlEscape("x\ny", true), "x&#10;y");
  EXPECT_EQ(XmlEscape("x\ny", false), "x\ny");
  EXPECT_EQ(HtmlEscape("<img src=x onerror=\"f('1')\">"), "&lt;img src=x onerror=&quot;f(&#39;1&#39;)&quot;&gt;");
  EXPECT_EQ(MarkdownCell("  a|b\nc  "), "a\\|b c");
  EXPECT_EQ(Truncate("ab→cd", 3), "ab…");  // never cuts the arrow in half
  EXPECT_TRUE(NaturalLess("case_9", "case_10"));
  EXPECT_FALSE(NaturalLess("case_10", "case_9"));
  EXPECT_TRUE(NaturalLess("Op", "Op1"));
  EXPECT_NE(NaturalLess("Op01", "Op1"), NaturalLess("Op1", "Op01"));
  EXPECT_FALSE(NaturalLess("Add", "Add"));
  EXPECT_EQ(FormatPercent(1, 3), "33.3%");
  EXPECT_EQ(FormatPercent(0, 0), "–");
  EXPECT_EQ(FormatMs(3.14159), "3.14");
  EXPECT_EQ(FormatMs(2417.4), "2417");
  EXPECT_EQ(FormatError(json(1.25e-7)), "1.25e-07");
  EXPECT_EQ(FormatError(json("inf")), "inf");
  EXPECT_EQ(FormatError(json()), "–");
}

TEST(ReportMatrixTest, BigRunFoldsAndCapsFailures) {
  RunData run;
  run.dir = "/runs/big";
  run.adapter = "big";
  run.label = "big";
  for (int i = 0; i < 2000; ++i) {
    CaseResult r;
    r.name = "case_" + std::to_string(i);
    r.suite = "onnx_node";
    r.op = "Op" + std::to_string(i % 500);
    r.state = i % 10 == 0 ? CaseState::kFail : CaseState::kPass;
    r.load_ms_cold = 1 + i % 97;
    run.results.push_back(r);
  }
  const std::string html = RenderHtml({run}, "big");
  EXPECT_NE(html.find("100 more in <code>/runs/big/results.jsonl</code>"), std::string::npos);
  EXPECT_NE(html.find("<details><summary><b>onnx_node</b> · 500 operators"), std::string::npos);
  EXPECT_LT(html.size(), 2'000'000u);
  const std::string md = RenderMarkdown({run}, "big");
  EXPECT_NE(md.find("… and 150 more in /runs/big/results.jsonl."), std::string::npos);
  EXPECT_NE(md.find("<details><summary>By operator (500 rows)</summary>"), std::string::npos);
  // Failing cases in natural order: case_20 before case_100.
  const std::vector<const CaseResult*> failures = ListedFailures(run);
  ASSERT_EQ(failures.size(), 200u);
  EXPECT_EQ(failures[2]->name, "case_20");
  EXPECT_EQ(failures[199]->name, "case_1990");
  const Matrix m = BuildMatrix({run});
  ASSERT_EQ(m.suites.size(), 1u);
  EXPECT_EQ(m.suites[0].cells[0].Pass(), 1800);
  EXPECT_EQ(m.row_count[0], 500u);
}

}  // namespace
}  // namespace parity
