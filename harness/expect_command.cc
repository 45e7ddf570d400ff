// Expected outputs from the reference, for case generators.
#include "harness/expect_command.h"

#include <filesystem>
#include <iostream>

#include "harness/case_reader.h"
#include "reference/eval/evaluator.h"
#include "reference/model/tensor_io.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

Status WriteExpected(const CaseInfo& info, bool force) {
  PARITY_ASSIGN_OR_RETURN(LoadedModel model, LoadModelFile((fs::path(info.dir) / "model.onnx").string()));
  PARITY_ASSIGN_OR_RETURN(std::vector<DataSet> sets, ReadDataSets(info, *model.proto, /*read_inputs=*/true, /*outputs_required=*/false));
  if (sets.empty()) return InvalidArgument(info.dir, ": no test_data_set_N folder to fill");
  const auto& graph = model.proto->graph();
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(model, WithReferenceKernels()));
  for (const DataSet& set : sets) {
    if (!set.outputs.empty() && !force) {
      return InvalidArgument(set.dir, " already holds expected outputs; add --force to rewrite them");
    }
    StatusOr<std::vector<Value>> outputs = evaluator->Run(set.inputs);
    if (!outputs.ok()) return outputs.status().WithContext(set.dir);
    for (size_t k = 0; k < outputs->size(); ++k) {
      const std::string file = (fs::path(set.dir) / ("output_" + std::to_string(k) + ".pb")).string();
      PARITY_RETURN_IF_ERROR(WriteValueFile(file, (*outputs)[k], graph.output(static_cast<int>(k)).name()));
    }
  }
  return Status::Ok();
}

}  // namespace

int RunExpectCommand(const std::vector<std::string>& paths, bool force) {
  StatusOr<std::vector<CaseInfo>> cases = DiscoverCases(paths);
  if (!cases.ok()) {
    std::cerr << "parity expect: " << cases.status().ToString() << "\n";
    return 2;
  }
  int failed = 0;
  for (const CaseInfo& info : *cases) {
    if (Status s = WriteExpected(info, force); !s.ok()) {
      std::cerr << "parity expect: " << info.name << ": " << s.ToString() << "\n";
      ++failed;
    }
  }
  std::cout << "expect: wrote the expected outputs of " << cases->size() - failed << " of " << cases->size()
            << " cases\n";
  return failed ? 1 : 0;
}

}  // namespace parity
