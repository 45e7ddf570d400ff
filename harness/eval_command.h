// `parity eval PATH... [--out DIR]`: the reference evaluator, in process, on
// case folders, compared with their expected outputs under the tolerance
// policy; prints counts by state and per operator, writes results.jsonl and
// summary.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace parity {

struct EvalCommandOptions {
  std::vector<std::string> paths;  // case folders, folders of cases, or model files
  std::string out_dir;             // empty: no files written
  std::string filter;              // shell glob on case names; empty: all
  std::string expectations;        // expectations file; empty: none
  std::string tolerance = "";      // spec/tolerance.json of the source tree when empty
  int jobs = 0;                    // worker threads; 0: one per core
  double timeout_seconds = 60;     // per data set run; a case over it is TIMEOUT
  bool per_operator = true;        // print the per-operator table
  bool quiet = false;               // no per-case lines for failures
  // Expand every operator that has a body in spec/functions/ from that body,
  // even where a kernel exists: checks the bodies against expected outputs
  // that the kernels wrote (the new-functions issue's body consistency).
  bool prefer_function_bodies = false;
  // Resolve each model's variant entries for these targets first
  // (spec/variants.md); unset: run the main graph, entries ignored.
  std::optional<std::vector<std::string>> variant_targets;
  // Also run each data set through CheckAliasSharing (spec/aliasing.md,
  // "Checking"): one line per data set says whether sharing the annotated
  // buffers changes any output; a change makes the exit status 1.
  bool check_aliasing = false;
};

// Returns the process exit status: 0 when no case fails the gate, 1 when
// some do (or, with check_aliasing, sharing changed an output or could not be
// checked), 2 on bad arguments or an unreadable corpus.
int RunEvalCommand(const EvalCommandOptions& options);

}  // namespace parity
