// `parity expect CASE_DIR... [--force]`: writes the expected outputs of
// generated cases with the reference evaluator (DESIGN.md: expected outputs
// are written by the reference, never by hand). Each test_data_set_N's
// inputs are run and output_K.pb written, named after the graph's outputs.
#pragma once

#include <string>
#include <vector>

namespace parity {

// Returns 0 when every case got its outputs; 1 when a case failed (each
// named with why; the others are still written); 2 on bad arguments. An
// existing output_K.pb is kept unless `force`: a case is never silently
// rewritten.
int RunExpectCommand(const std::vector<std::string>& paths, bool force);

}  // namespace parity
