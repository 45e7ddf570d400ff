// Runs the ONNX node-test cases of the elementwise family's operators on the
// reference evaluator when PARITY_ELEMENTWISE_CORPUS names a corpus folder
// (written by cases/onnx_node/write_corpus.py); skipped otherwise. A
// development aid until `parity eval` covers it. Floats pass within a loose
// 1e-5 + 1e-4*|want| (ONNX computes many float32 cases in float32, we in
// double), and cases that match only within it are listed as "CLOSE".
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "reference/eval/evaluator.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// The cases of this family's operators, with their _expanded forms.
const std::regex kMine(
    "test_(add|sub|mul|div|pow|mod|bitshift|bitwise|and|or|xor|not|equal|less|greater|where|max|min|sum|mean|"
    "clip|abs|neg|sign|ceil|floor|round|reciprocal|sqrt|exp|log|sin|cos|tan|asin|acos|atan|sinh|cosh|tanh|"
    "asinh|acosh|atanh|erf|isnan|isinf|relu|leakyrelu|prelu|elu|selu|celu|sigmoid|hardsigmoid|hardswish|"
    "softplus|softsign|mish|gelu|thresholdedrelu|shrink|swish)(_.*)?|test_(and|or|xor)[0-9].*");

bool IsMine(const std::string& name) { return std::regex_match(name, kMine); }

// "" when equal, "~ ..." when equal only within the loose float tolerance, else the first difference.
std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) return StrCat("dtype ", got.Description(), " vs ", want.Description());
  if (got.shape() != want.shape()) return StrCat("shape ", got.Description(), " vs ", want.Description());
  if (got.dtype() == DataType::kString) return got.strings() == want.strings() ? "" : "strings differ";
  bool close = false;
  double worst_relative = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got.GetDouble(i);
    const double w = want.GetDouble(i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (g == w) continue;
    if (IsFloatingPoint(got.dtype()) && std::fabs(g - w) <= 1e-5 + 1e-4 * std::fabs(w)) {
      close = true;
      worst_relative = std::max(worst_relative, std::fabs(g - w) / std::max(std::fabs(w), 1e-30));
      continue;
    }
    if (!IsFloatingPoint(got.dtype()) && got.GetUint64(i) == want.GetUint64(i)) continue;
    return StrCat("element ", i, ": got ", g, " want ", w);
  }
  return close ? StrCat("~ largest relative difference ", worst_relative) : "";
}

std::string RunCase(const fs::path& dir) {
  auto model = LoadModelFile((dir / "model.onnx").string());
  if (!model.ok()) return model.status().ToString();
  auto proto = model->proto;
  auto evaluator = Evaluator::Create(*model, EvalOptions{&ReferenceRegistry()});
  if (!evaluator.ok()) return evaluator.status().ToString();
  const auto& graph = proto->graph();
  std::vector<Value> inputs;
  for (int i = 0; i < graph.input_size(); ++i) {
    const fs::path p = dir / "test_data_set_0" / StrCat("input_", i, ".pb");
    if (!fs::exists(p)) break;
    auto v = ReadValueFile(p.string(), graph.input(i).type());
    if (!v.ok()) return v.status().ToString();
    inputs.push_back(*v);
  }
  auto out = (*evaluator)->Run(inputs);
  if (!out.ok()) return out.status().ToString();
  std::string verdict;
  for (int i = 0; i < graph.output_size(); ++i) {
    const fs::path p = dir / "test_data_set_0" / StrCat("output_", i, ".pb");
    auto want = ReadValueFile(p.string(), graph.output(i).type());
    if (!want.ok()) return want.status().ToString();
    if (static_cast<size_t>(i) >= out->size()) return "missing output";
    const std::string problem = Compare((*out)[static_cast<size_t>(i)].tensor(), want->tensor());
    if (problem.rfind("~", 0) == 0) {
      verdict = problem;
    } else if (!problem.empty()) {
      return StrCat("output ", i, ": ", problem);
    }
  }
  return verdict;
}

TEST(ElementwiseCorpus, CasesMatchExpectedOutputs) {
  const char* root = std::getenv("PARITY_ELEMENTWISE_CORPUS");
  if (root == nullptr) GTEST_SKIP() << "PARITY_ELEMENTWISE_CORPUS not set";
  const char* filter = std::getenv("PARITY_ELEMENTWISE_FILTER");
  int passed = 0, close = 0, failed = 0;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    if (!IsMine(name) || (filter && name.find(filter) == std::string::npos)) continue;
    const std::string problem = RunCase(dir);
    if (problem.empty()) {
      ++passed;
    } else if (problem.rfind("~", 0) == 0) {
      ++close;
      std::cout << "CLOSE " << name << problem.substr(1) << "\n";
    } else {
      ++failed;
      std::cout << "FAIL " << name << ": " << problem << "\n";
    }
  }
  std::cout << "exact " << passed << ", close " << close << ", failed " << failed << "\n";
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace parity
