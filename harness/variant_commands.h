// The variant-graph commands (spec/variants.md): `parity resolve`, `parity
// stamp`, and what `parity check` adds for entries: the equivalence of every
// entry with the main graph, and the gate over the corpus of cases/variants/.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/core/status.h"
#include "reference/core/value.h"
#include "reference/model/loader.h"

namespace parity {

// `parity resolve MODEL --target T... [--entry ID...] --out M`: writes the
// model a backend with those targets runs and prints one line per entry
// (selected, or why not). 0 written, 1 refused (invalid model), 2 bad use.
int RunResolveCommand(const std::vector<std::string>& args);

// `parity stamp MODEL [--out M] [--all]`: fills the __hash__ of Compiled
// entries (empty ones, or all), as a compiler does when it emits a blob.
int RunStampCommand(const std::vector<std::string>& args);

struct EntryEquivalence {
  std::string id;
  std::string call;
  bool checked = false;  // false: the reference cannot run it (reason says why)
  bool ran = false;      // false when checked: the resolved model failed to run (reason says why)
  bool equivalent = false;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double max_ulp_error = 0;
  std::string reason;  // a mismatch's first element, or why it was not run
};

struct EquivalenceOptions {
  std::string tolerance_path;  // empty: spec/tolerance.json of the source tree
  // A call the policy does not list (a model-local function, a Compiled
  // blob) takes the tolerance of this operator (a case's "operator") when set.
  std::string operator_hint;
  // A case.json "tolerance" object applied on top (null: none).
  nlohmann::json tolerance_override;
};

// Runs the main graph and, for every entry alone, the model resolved to that
// entry, on `inputs` (the graph's inputs in order; empty: generated from the
// declared types with a fixed seed, symbolic dimensions taken as 2), and
// compares every output under the tolerance policy for the entry's operator;
// the errors are the largest over all outputs. Compiled entries for another
// target than the reference's are not checked.
StatusOr<std::vector<EntryEquivalence>> CheckEquivalence(const LoadedModel& model, std::vector<Value> inputs,
                                                         const EquivalenceOptions& options = {});

// The body of `parity check MODEL... [--equivalence] [--cases]`. With
// --cases, each argument is a case folder or a folder of them: a case whose
// case.json has "check": {"rule", "message"} must be refused with a problem
// that starts with the rule and contains the message, and with no problem
// under another rule; any other case must be
// valid (and equivalent, with --equivalence, on its first data set's inputs).
int RunCheckArgs(const std::vector<std::string>& args);

}  // namespace parity
