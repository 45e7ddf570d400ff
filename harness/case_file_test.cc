// Tests of case.json parsing: every key read into its field, every refusal
// naming the file and the key path, and the schema in spec/ knowing the same
// keys as the reader.
#include "harness/case_file.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <gtest/gtest.h>

#include "harness/case_reader.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPath = "cases/x/case.json";

// The message of ParseCaseFile's refusal, or "(accepted)".
std::string Refusal(const json& root) {
  StatusOr<CaseFile> file = ParseCaseFile(root, kPath);
  return file.ok() ? "(accepted)" : file.status().message();
}

TEST(CaseFileTest, AnEmptyObjectIsThePlainDefault) {
  StatusOr<CaseFile> file = ParseCaseFile(json::object(), kPath);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_FALSE(file->operator_name);
  EXPECT_TRUE(file->output_operators.empty());
  EXPECT_FALSE(file->tolerance);
  EXPECT_FALSE(file->steps);
  EXPECT_EQ(file->fallback, FallbackRule::kAllowed);
  EXPECT_FALSE(file->variant_targets);
  EXPECT_FALSE(file->variants);
  EXPECT_FALSE(file->check);
  EXPECT_TRUE(file->tags.empty());
}

TEST(CaseFileTest, EveryKeyIsReadIntoItsField) {
  const json root = {
      {"operator", "Attention"},
      {"output_operators", {{"y", "Attention"}}},
      {"tolerance", {{"ulp", 8}, {"atol", 1e-3}, {"rtol", 0}, {"signed_zero", true}, {"mistrust", false},
                     {"reason", "inputs near the poles"}}},
      {"steps", {{"carry", {{{"output", "present_key"}, {"input", "past_key"}}}}}},
      {"fallback", "forbidden"},
      {"variant_targets", {"portable"}},
      {"variants", {{"select", {{"", json::array()}, {"portable", {"e2"}}}}}},
      {"check", {{"rule", "ALIAS-KEY"}, {"message", "past_key"}}},
      {"tags", {"aliasing", "invalid"}},
      {"feature", "variants.overlap"},
      {"generator", "cases/variants/write_cases.py"},
      {"source", "onnx-node"},
      {"suite", "variants"},
      {"why", "two entries overlap"},
  };
  StatusOr<CaseFile> file = ParseCaseFile(root, kPath);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->operator_name, "Attention");
  EXPECT_EQ(file->output_operators, (std::map<std::string, std::string>{{"y", "Attention"}}));
  ASSERT_TRUE(file->tolerance);
  EXPECT_EQ(*file->tolerance, root["tolerance"]);
  ASSERT_TRUE(file->steps);
  ASSERT_EQ(file->steps->carry.size(), 1u);
  EXPECT_EQ(file->steps->carry[0].output, "present_key");
  EXPECT_EQ(file->steps->carry[0].input, "past_key");
  EXPECT_EQ(file->fallback, FallbackRule::kForbidden);
  EXPECT_EQ(file->variant_targets, std::vector<std::string>{"portable"});
  ASSERT_TRUE(file->variants);
  EXPECT_EQ(file->variants->select,
            (std::map<std::string, std::vector<std::string>>{{"", {}}, {"portable", {"e2"}}}));
  ASSERT_TRUE(file->check);
  EXPECT_EQ(file->check->rule, "ALIAS-KEY");
  EXPECT_EQ(file->check->message, "past_key");
  EXPECT_EQ(file->tags, (std::vector<std::string>{"aliasing", "invalid"}));
  EXPECT_EQ(file->feature, "variants.overlap");
  EXPECT_EQ(file->generator, "cases/variants/write_cases.py");
  EXPECT_EQ(file->source, "onnx-node");
  EXPECT_EQ(file->suite, "variants");
  EXPECT_EQ(file->why, "two entries overlap");

  EXPECT_EQ(ParseCaseFile({{"fallback", "allowed"}}, kPath)->fallback, FallbackRule::kAllowed);
  // An empty operator is kept: the writer of ONNX's node tests may set one.
  EXPECT_EQ(ParseCaseFile({{"operator", ""}}, kPath)->operator_name, "");
  EXPECT_EQ(ParseCaseFile({{"steps", json::object()}}, kPath)->steps->carry.size(), 0u);
  EXPECT_TRUE(ParseCaseFile({{"variants", json::object()}}, kPath)->variants->select.empty());
}

TEST(CaseFileTest, AnUnknownEnumValueNamesTheFileTheKeyAndTheChoices) {
  EXPECT_EQ(Refusal({{"fallback", "forbiden"}}),
            "cases/x/case.json: \"fallback\": expected \"allowed\" or \"forbidden\", got \"forbiden\"");
  EXPECT_EQ(Refusal({{"fallback", false}}),
            "cases/x/case.json: \"fallback\": expected \"allowed\" or \"forbidden\", got false");
}

TEST(CaseFileTest, UnknownKeysAreRefusedByNameAtEveryLevel) {
  EXPECT_EQ(Refusal({{"fallbak", "forbidden"}}).rfind("cases/x/case.json: unknown key \"fallbak\" (known: ", 0), 0u)
      << Refusal({{"fallbak", "forbidden"}});
  EXPECT_EQ(Refusal({{"steps", {{"cary", json::array()}}}}),
            "cases/x/case.json: \"steps\": unknown key \"cary\" (known: \"carry\")");
  EXPECT_EQ(Refusal({{"steps", {{"carry", {{{"output", "a"}, {"input", "b"}, {"at", 1}}}}}}}),
            "cases/x/case.json: \"steps.carry[0]\": unknown key \"at\" (known: \"output\", \"input\")");
  EXPECT_EQ(Refusal({{"variants", {{"selct", json::object()}}}}),
            "cases/x/case.json: \"variants\": unknown key \"selct\" (known: \"select\")");
  EXPECT_EQ(Refusal({{"check", {{"rule", "R"}, {"message", "m"}, {"why", "w"}}}}),
            "cases/x/case.json: \"check\": unknown key \"why\" (known: \"rule\", \"message\")");
  const std::string tolerance = Refusal({{"tolerance", {{"ulps", 2}, {"reason", "r"}}}});
  EXPECT_EQ(tolerance.rfind("cases/x/case.json: tolerance.ulps: unknown key \"ulps\"", 0), 0u) << tolerance;
}

TEST(CaseFileTest, ValuesOfTheWrongTypeAreRefusedWithTheKeyPath) {
  EXPECT_EQ(Refusal(json::array()), "cases/x/case.json: expected an object, got []");
  EXPECT_EQ(Refusal({{"operator", 3}}), "cases/x/case.json: \"operator\": expected a string, got 3");
  EXPECT_EQ(Refusal({{"output_operators", {{"y", 1}}}}),
            "cases/x/case.json: \"output_operators.y\": expected a string, got 1");
  EXPECT_EQ(Refusal({{"output_operators", {{"y", ""}}}}),
            "cases/x/case.json: \"output_operators.y\": expected a non-empty string");
  EXPECT_EQ(Refusal({{"output_operators", "Attention"}}),
            "cases/x/case.json: \"output_operators\": expected an object of strings, got \"Attention\"");
  EXPECT_EQ(Refusal({{"steps", json::array()}}),
            "cases/x/case.json: \"steps\": expected an object, e.g. {\"carry\": [...]}, got []");
  EXPECT_EQ(Refusal({{"steps", {{"carry", "present"}}}}),
            "cases/x/case.json: \"steps.carry\": expected a list of {\"output\", \"input\"}, got \"present\"");
  EXPECT_EQ(Refusal({{"steps", {{"carry", {"present"}}}}}),
            "cases/x/case.json: \"steps.carry[0]\": expected {\"output\": NAME, \"input\": NAME}, got \"present\"");
  EXPECT_EQ(Refusal({{"steps", {{"carry", {{{"output", "present"}}}}}}}),
            "cases/x/case.json: \"steps.carry[0]\": missing the key \"input\"");
  EXPECT_EQ(Refusal({{"steps", {{"carry", {{{"output", "present"}, {"input", 2}}}}}}}),
            "cases/x/case.json: \"steps.carry[0].input\": expected a string, got 2");
  EXPECT_EQ(Refusal({{"variant_targets", "portable"}}),
            "cases/x/case.json: \"variant_targets\": expected a list of strings, got \"portable\"");
  EXPECT_EQ(Refusal({{"variant_targets", {"portable", 1}}}),
            "cases/x/case.json: \"variant_targets[1]\": expected a string, got 1");
  EXPECT_EQ(Refusal({{"variants", {"select"}}}),
            "cases/x/case.json: \"variants\": expected an object, e.g. {\"select\": {...}}, got [\"select\"]");
  EXPECT_EQ(Refusal({{"variants", {{"select", {"e0"}}}}}),
            "cases/x/case.json: \"variants.select\": expected an object of target lists (joined by ',') to entry "
            "ids, got [\"e0\"]");
  EXPECT_EQ(Refusal({{"variants", {{"select", {{"portable", "e0"}}}}}}),
            "cases/x/case.json: \"variants.select[\"portable\"]\": expected a list of strings, got \"e0\"");
  EXPECT_EQ(Refusal({{"check", "ALIAS-KEY"}}),
            "cases/x/case.json: \"check\": expected {\"rule\": STRING, \"message\": STRING}, got \"ALIAS-KEY\"");
  EXPECT_EQ(Refusal({{"check", {{"rule", "ALIAS-KEY"}}}}), "cases/x/case.json: \"check\": missing the key \"message\"");
  EXPECT_EQ(Refusal({{"check", {{"rule", 1}, {"message", "m"}}}}),
            "cases/x/case.json: \"check.rule\": expected a string, got 1");
  EXPECT_EQ(Refusal({{"tags", "onnx-node"}}),
            "cases/x/case.json: \"tags\": expected a list of strings, got \"onnx-node\"");
  for (const char* key : {"feature", "generator", "source", "suite", "why"}) {
    EXPECT_EQ(Refusal({{key, json::array()}}), StrCat("cases/x/case.json: \"", key, "\": expected a string, got []"));
  }
}

TEST(CaseFileTest, AnInputCarriedTwiceIsRefused) {
  const json carry = {{{"output", "k"}, {"input", "past"}}, {{"output", "v"}, {"input", "past"}}};
  EXPECT_EQ(Refusal({{"steps", {{"carry", carry}}}}),
            "cases/x/case.json: \"steps.carry[1]\": input 'past' is carried twice (from 'k' and 'v')");
}

// The override's rules are the policy's (TolerancePolicy::ApplyOverride), applied when the file is read.
TEST(CaseFileTest, ABadToleranceOverrideIsRefusedUpFront) {
  EXPECT_EQ(Refusal({{"tolerance", {{"ulp", 2}}}}), "cases/x/case.json: tolerance: missing required key \"reason\"");
  EXPECT_EQ(Refusal({{"tolerance", {{"ulp", -1}, {"reason", "r"}}}}),
            "cases/x/case.json: tolerance.ulp: must be >= 0, got -1");
  EXPECT_EQ(Refusal({{"tolerance", {{"atol", {{"u", 2}}}, {"reason", "r"}}}}),
            "cases/x/case.json: tolerance.atol: expected a number (formulas belong in spec/tolerance.json), got "
            "{\"u\":2}");
  EXPECT_EQ(Refusal({{"tolerance", {{"mistrust", true}, {"reason", "r"}}}}),
            "cases/x/case.json: tolerance.mistrust: expected false or {min_elements, zero_fraction}");
  EXPECT_EQ(Refusal({{"tolerance", "loose"}}), "cases/x/case.json: tolerance: expected an object, got string");
  EXPECT_EQ(Refusal({{"tolerance", {{"mistrust", {{"min_elements", 4}, {"zero_fraction", 0.5}}}, {"reason", "r"}}}}),
            "(accepted)");
}

// A case folder holding `text` as its case.json; removed at the end of the test.
class CaseFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("parity_case_file_" + std::to_string(::getpid())) / "test_x";
    fs::remove_all(dir_.parent_path());
    fs::create_directories(dir_);
    info_.name = "test_x";
    info_.dir = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }
  void Write(const std::string& text) { std::ofstream(dir_ / "case.json") << text; }

  fs::path dir_;
  CaseInfo info_;
};

TEST_F(CaseFolderTest, ReadCaseMetaParsesOnceAndRefusesWithThePath) {
  const std::string path = (dir_ / "case.json").string();
  Status status = ReadCaseMeta(info_);  // no case.json: the plain default
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_FALSE(IsStateful(info_));

  Write(R"({"operator": "Relu", "steps": {"carry": []}, "fallback": "forbidden"})");
  status = ReadCaseMeta(info_);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(info_.case_file.operator_name, "Relu");
  EXPECT_EQ(info_.case_file.fallback, FallbackRule::kForbidden);
  EXPECT_TRUE(IsStateful(info_));

  Write(R"({"fallback": "forbiden"})");
  status = ReadCaseMeta(info_);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), path + ": \"fallback\": expected \"allowed\" or \"forbidden\", got \"forbiden\"");

  Write(R"({"operator": )");
  status = ReadCaseMeta(info_);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind(path + ": not valid JSON: ", 0), 0u) << status.message();

  Write("[1]");
  status = ReadCaseMeta(info_);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), path + ": expected an object, got [1]");
}

// The key paths spec/case.schema.json describes, in CaseFileKeyPaths' form:
// "a", "a.b" for a nested object, "a[].b" for the objects of a list, and the
// object branch of a oneOf (tolerance.mistrust) under its own key.
void CollectSchemaKeys(const json& schema, const std::string& prefix, std::set<std::string>& keys) {
  if (schema.contains("properties")) {
    for (const auto& [key, sub] : schema["properties"].items()) {
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      keys.insert(path);
      CollectSchemaKeys(sub, path, keys);
      if (sub.contains("items")) CollectSchemaKeys(sub["items"], path + "[]", keys);
    }
  }
  if (schema.contains("oneOf")) {
    for (const json& branch : schema["oneOf"]) CollectSchemaKeys(branch, prefix, keys);
  }
}

json ReadSchema() {
  std::ifstream in(std::string(PARITY_SOURCE_DIR) + "/spec/case.schema.json");
  return json::parse(in);
}

TEST(CaseFileTest, TheSchemaAndTheReaderKnowTheSameKeys) {
  const json schema = ReadSchema();
  EXPECT_EQ(schema["additionalProperties"], false);
  std::set<std::string> in_schema;
  CollectSchemaKeys(schema, "", in_schema);
  const std::vector<std::string> reader = CaseFileKeyPaths();
  const std::set<std::string> in_reader(reader.begin(), reader.end());
  for (const std::string& key : in_schema) {
    EXPECT_TRUE(in_reader.count(key)) << "spec/case.schema.json has \"" << key
                                      << "\", which ParseCaseFile does not know";
  }
  for (const std::string& key : in_reader) {
    EXPECT_TRUE(in_schema.count(key)) << "ParseCaseFile knows \"" << key << "\", which spec/case.schema.json lacks";
  }
  // The closed set of "fallback" is the same on both sides.
  std::set<std::string> values;
  for (const json& v : schema["properties"]["fallback"]["enum"]) {
    values.insert(v.get<std::string>());
    EXPECT_TRUE(ParseCaseFile({{"fallback", v}}, kPath).ok()) << v;
  }
  EXPECT_EQ(values, (std::set<std::string>{"allowed", "forbidden"}));
}

// Every case.json under the folders in PARITY_CASE_CORPORA (':'-separated)
// parses. spec/case_schema_test.py sets it to freshly generated corpora; run
// alone, without it, there is nothing to read.
TEST(CaseFileCorpusTest, EveryGeneratedCaseJsonParses) {
  const char* corpora = std::getenv("PARITY_CASE_CORPORA");
  if (!corpora || !*corpora) GTEST_SKIP() << "PARITY_CASE_CORPORA is not set";
  std::string list = corpora;
  size_t parsed = 0;
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    const std::string root = list.substr(start, end - start);
    start = end + 1;
    if (root.empty()) continue;
    ASSERT_TRUE(fs::is_directory(root)) << root;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.path().filename() != "case.json") continue;
      StatusOr<CaseFile> file = ReadCaseFile(entry.path().string());
      EXPECT_TRUE(file.ok()) << file.status().ToString();
      ++parsed;
    }
  }
  EXPECT_GT(parsed, 0u);
  std::cout << "parsed " << parsed << " case.json files\n";
}

}  // namespace
}  // namespace parity
