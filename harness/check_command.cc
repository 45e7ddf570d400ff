// `parity check`: load and validate one model, print every problem.
#include "harness/check_command.h"

#include <iostream>

#include "reference/model/loader.h"
#include "reference/model/validator.h"

namespace parity {

int RunCheckCommand(const std::string& path) {
  StatusOr<LoadedModel> model = LoadModelFile(path);
  if (!model.ok()) {
    std::cout << "ERROR " << model.status().ToString() << "\n";
    return 2;
  }
  std::vector<Status> problems = ValidateModel(*model);
  for (const Status& p : problems) std::cout << "PROBLEM " << p.ToString() << "\n";
  if (problems.empty()) {
    std::cout << "OK " << path << "\n";
    return 0;
  }
  std::cout << problems.size() << " problem(s) in " << path << "\n";
  return 1;
}

}  // namespace parity
