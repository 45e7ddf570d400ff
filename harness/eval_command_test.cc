// End-to-end tests of `parity eval`: case folders on disk, the results
// journal, states, and the gate against an expectations file.
#include "harness/eval_command.h"
#include "harness/expect_command.h"
#include "harness/expectations.h"
#include "harness/results/output_digest.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reference/model/tensor_io.h"
#include "reference/model/text_syntax.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// Writes a case: model from text, one data set with the given values.
void WriteCase(const fs::path& dir, const std::string& model_text, const std::vector<Tensor>& inputs,
               const std::vector<Tensor>& outputs) {
  fs::create_directories(dir / "test_data_set_0");
  StatusOr<onnx::ModelProto> model = ParseModelText(model_text);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::ofstream(dir / "model.onnx", std::ios::binary) << model->SerializeAsString();
  for (size_t k = 0; k < inputs.size(); ++k) {
    ASSERT_TRUE(WriteValueFile((dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string(),
                               Value::FromTensor(inputs[k]), "in").ok());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    ASSERT_TRUE(WriteValueFile((dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")).string(),
                               Value::FromTensor(outputs[k]), "out").ok());
  }
}

Tensor Floats(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromDoubles(DataType::kFloat, {n}, v);
}

std::map<std::string, std::string> StatesOf(const fs::path& out) {
  std::map<std::string, std::string> states;
  std::ifstream in(out / "results.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    states[j["case"]] = j["state"];
  }
  return states;
}

class EvalCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("parity_eval_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    const std::string relu = R"(<ir_version: 10, opset_import: ["" : 21]>
      g (float[4] x) => (float[4] y) { y = Relu (x) })";
    WriteCase(root_ / "cases" / "relu_ok", relu, {Floats({-1, 2, -3, 4})}, {Floats({0, 2, 0, 4})});
    WriteCase(root_ / "cases" / "relu_wrong", relu, {Floats({-1, 2, -3, 4})}, {Floats({0, 2, 0, 5})});
    WriteCase(root_ / "cases" / "custom_op", R"(<ir_version: 10, opset_import: ["" : 21, "com.x" : 1]>
      g (float[4] x) => (float[4] y) { y = com.x.Unknown (x) })", {Floats({1, 2, 3, 4})}, {Floats({1, 2, 3, 4})});
  }
  void TearDown() override { fs::remove_all(root_); }

  int Run(const std::string& expectations_json) {
    EvalCommandOptions options;
    options.paths = {(root_ / "cases").string()};
    options.out_dir = (root_ / "out").string();
    options.quiet = true;
    options.per_operator = false;
    if (!expectations_json.empty()) {
      options.expectations = (root_ / "expect.json").string();
      std::ofstream(options.expectations) << expectations_json;
    }
    return RunEvalCommand(options);
  }

  fs::path root_;
};

TEST_F(EvalCommandTest, StatesAndJournalWithoutExpectations) {
  EXPECT_EQ(Run(""), 1);  // relu_wrong fails the gate
  auto states = StatesOf(root_ / "out");
  EXPECT_EQ(states["relu_ok"], "PASS");
  EXPECT_EQ(states["relu_wrong"], "FAIL");
  EXPECT_EQ(states["custom_op"], "UNSUPPORTED");
  auto summary = nlohmann::json::parse(std::ifstream(root_ / "out" / "summary.json"));
  EXPECT_EQ(summary["total"], 3);
  EXPECT_EQ(summary["by_state"]["PASS"], 1);
}

TEST_F(EvalCommandTest, ExpectationsCoverFailuresAndCatchStaleEntries) {
  EXPECT_EQ(Run(R"({"unsupported": [{"cases": "custom_op", "reason": "no kernel"}],
                    "xfail": [{"cases": "relu_wrong", "reason": "bad expected value"}]})"),
            0);
  auto states = StatesOf(root_ / "out");
  EXPECT_EQ(states["relu_wrong"], "XFAIL");
  EXPECT_EQ(states["custom_op"], "UNSUPPORTED");
  // A listed case that passes is an XPASS and fails the gate.
  EXPECT_EQ(Run(R"({"unsupported": [{"cases": "custom_op", "reason": "no kernel"}],
                    "xfail": [{"cases": "relu_*", "reason": "too wide"}]})"),
            1);
  EXPECT_EQ(StatesOf(root_ / "out")["relu_ok"], "XPASS");
}

TEST_F(EvalCommandTest, EntryExpectingAnotherStateDoesNotCover) {
  // custom_op is UNSUPPORTED, but the entry expects a numeric failure.
  EXPECT_EQ(Run(R"({"xfail": [{"cases": "custom_op", "reason": "x"}, {"cases": "relu_wrong", "reason": "y"}]})"), 1);
}

TEST_F(EvalCommandTest, ExpectationWithoutReasonIsRefused) {
  EXPECT_EQ(Run(R"({"xfail": [{"cases": "relu_wrong"}]})"), 2);
}

TEST_F(EvalCommandTest, NoCasesIsAnError) {
  EvalCommandOptions options;
  options.paths = {(root_ / "cases").string()};
  options.filter = "nothing_matches_*";
  EXPECT_EQ(RunEvalCommand(options), 2);
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// `parity expect` fills a generated case's outputs with the reference, and
// never rewrites existing ones unless told to.
TEST_F(EvalCommandTest, ExpectWritesTheReferenceOutputsOnce) {
  const fs::path dir = root_ / "generated" / "relu_new";
  WriteCase(dir, R"(<ir_version: 10, opset_import: ["" : 21]>
      g (float[4] x) => (float[4] y) { y = Relu (x) })", {Floats({-1, 2, -3, 4})}, {});
  ASSERT_EQ(RunExpectCommand({dir.string()}, /*force=*/false), 0);
  StatusOr<onnx::ModelProto> model = ParseModelText(R"(<ir_version: 10, opset_import: ["" : 21]>
      g (float[4] x) => (float[4] y) { y = Relu (x) })");
  ASSERT_TRUE(model.ok());
  StatusOr<Value> written = ReadValueFile((dir / "test_data_set_0/output_0.pb").string(), model->graph().output(0).type());
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(written->tensor().GetDouble(i), std::vector<double>({0, 2, 0, 4})[i]);
  EXPECT_EQ(RunExpectCommand({dir.string()}, /*force=*/false), 1);  // outputs exist: refused
  EXPECT_EQ(RunExpectCommand({dir.string()}, /*force=*/true), 0);
}

// Every data set that ran has the digest of each output it computed, in the
// journal, even when it failed the comparison; the digest of a case written
// by `parity expect` is that of the file it wrote.
TEST_F(EvalCommandTest, TheJournalHasTheDigestOfEachOutputComputed) {
  const fs::path dir = root_ / "cases" / "relu_expected";
  WriteCase(dir, R"(<ir_version: 10, opset_import: ["" : 21]>
      g (float[4] x) => (float[4] y) { y = Relu (x) })", {Floats({-1, 2, -3, 4})}, {});
  ASSERT_EQ(RunExpectCommand({dir.string()}, /*force=*/false), 0);
  Run("");
  std::map<std::string, nlohmann::json> lines;
  std::ifstream in(root_ / "out" / "results.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    lines[j["case"]] = j;
  }
  std::ifstream file(dir / "test_data_set_0" / "output_0.pb", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_EQ(lines["relu_expected"]["state"], "PASS");
  EXPECT_EQ(lines["relu_expected"]["output_sha256"], nlohmann::json({{"test_data_set_0", {*Sha256Hex(bytes)}}}));
  // relu_ok and relu_wrong compute the same output (their files name it "out", not "y").
  ASSERT_EQ(lines["relu_wrong"]["state"], "FAIL");
  EXPECT_EQ(lines["relu_wrong"]["output_sha256"], lines["relu_expected"]["output_sha256"]);
  EXPECT_EQ(lines["relu_ok"]["output_sha256"], lines["relu_expected"]["output_sha256"]);
  // Nothing ran: no digest.
  EXPECT_FALSE(lines["custom_op"].contains("output_sha256"));
  auto summary = nlohmann::json::parse(std::ifstream(root_ / "out" / "summary.json"));
  EXPECT_GE(summary["compute_threads"].get<int>(), 1);
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// Several expectations files (one per suite) given together make one list.
TEST(ExpectationsTest, CommaSeparatedFilesJoinTheirEntries) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("parity_expect_join_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.json") << R"({"unsupported": [{"cases": "test_a*", "reason": "no A"}]})";
  std::ofstream(dir / "b.json") << R"({"xfail": [{"cases": ["test_b1", "test_b2"], "reason": "B is off"}]})";
  StatusOr<Expectations> joined = Expectations::Load((dir / "a.json").string() + "," + (dir / "b.json").string());
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  ASSERT_NE(joined->Find("test_abs"), nullptr);
  EXPECT_TRUE(joined->Find("test_abs")->unsupported);
  ASSERT_NE(joined->Find("test_b2"), nullptr);
  EXPECT_EQ(joined->Find("test_b2")->reason, "B is off");
  EXPECT_EQ(joined->Find("test_c"), nullptr);
  EXPECT_FALSE(Expectations::Load((dir / "a.json").string() + "," + (dir / "missing.json").string()).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity
