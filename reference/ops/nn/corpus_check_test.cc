// Runs the ONNX node-test cases of the nn family's operators on the
// reference evaluator when PARITY_NN_CORPUS names a corpus folder (written by
// cases/onnx_node/write_corpus.py); skipped otherwise. A development aid
// until `parity eval` covers it.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "reference/eval/evaluator.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

const char* const kPrefixes[] = {
    "test_conv", "test_averagepool", "test_maxpool", "test_lppool", "test_globalaveragepool",
    "test_globalmaxpool", "test_maxunpool", "test_quantizelinear", "test_dequantizelinear",
    "test_dynamicquantizelinear", "test_qlinearmatmul", "test_qlinearconv", "test_matmulinteger",
    "test_gridsample", "test_affine_grid", "test_col2im", "test_deform_conv", "test_roialign",
    "test_nonmaxsuppression", "test_basic_conv", "test_basic_deform_conv", "test_globallppool", "test_maxroipool"};

std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) return StrCat("dtype ", got.Description(), " vs ", want.Description());
  if (got.shape() != want.shape()) return StrCat("shape ", got.Description(), " vs ", want.Description());
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got.GetDouble(i);
    const double w = want.GetDouble(i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (g == w) continue;
    // ONNX's backend-test tolerance (some expected values are written to 4 decimals).
    if (IsFloatingPoint(got.dtype()) && std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w)) continue;
    return StrCat("element ", i, ": got ", g, " want ", w);
  }
  return "";
}

TEST(NnCorpus, CasesMatchExpectedOutputs) {
  const char* root = std::getenv("PARITY_NN_CORPUS");
  if (root == nullptr) GTEST_SKIP() << "PARITY_NN_CORPUS not set";
  const char* filter = std::getenv("PARITY_NN_FILTER");
  int passed = 0, failed = 0;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    bool mine = false;
    for (const char* p : kPrefixes) mine = mine || name.rfind(p, 0) == 0;
    if (!mine || (filter && name.find(filter) == std::string::npos)) continue;
    std::string problem;
    auto model = LoadModelFile((dir / "model.onnx").string());
    if (!model.ok()) {
      problem = model.status().ToString();
    } else {
      auto proto = model->proto;
      auto evaluator = Evaluator::Create(*model, EvalOptions{&ReferenceRegistry()});
      if (!evaluator.ok()) {
        problem = evaluator.status().ToString();
      } else {
        const auto& graph = proto->graph();
        std::vector<Value> inputs;
        for (int i = 0;; ++i) {
          const fs::path p = dir / "test_data_set_0" / StrCat("input_", i, ".pb");
          if (!fs::exists(p)) break;
          auto v = ReadValueFile(p.string(), graph.input(i).type());
          if (!v.ok()) problem = v.status().ToString();
          inputs.push_back(v.ok() ? *v : Value());
        }
        auto out = problem.empty() ? (*evaluator)->Run(inputs) : StatusOr<std::vector<Value>>(Internal(problem));
        if (!out.ok()) {
          problem = out.status().ToString();
        } else {
          for (int i = 0; i < graph.output_size() && problem.empty(); ++i) {
            const fs::path p = dir / "test_data_set_0" / StrCat("output_", i, ".pb");
            auto want = ReadValueFile(p.string(), graph.output(i).type());
            if (!want.ok()) {
              problem = want.status().ToString();
            } else if (static_cast<size_t>(i) >= out->size()) {
              problem = "missing output";
            } else {
              problem = Compare((*out)[static_cast<size_t>(i)].tensor(), want->tensor());
              if (!problem.empty()) problem = StrCat("output ", i, ": ", problem);
            }
          }
        }
      }
    }
    if (problem.empty()) {
      ++passed;
    } else {
      ++failed;
      std::cout << "FAIL " << name << ": " << problem << "\n";
    }
  }
  std::cout << "passed " << passed << ", failed " << failed << "\n";
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace parity
