// A conformance case's case.json as a typed value, parsed and checked once
// when the case is read (schema: spec/case.schema.json).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/core/status.h"

namespace parity {

// case.json "fallback": whether a backend may run nodes off the device the
// run names. "forbidden" makes the case run as with --no-fallback.
enum class FallbackRule { kAllowed, kForbidden };

// case.json "check": the case is invalid on purpose; `parity check --cases`
// expects it refused under `rule` with a message containing `message`.
struct CaseCheck {
  std::string rule;
  std::string message;
};

// One entry of case.json "steps": {"carry": [...]}: after step k, graph
// output `output` is graph input `input` of step k+1.
struct CaseCarry {
  std::string output;
  std::string input;
};

struct CaseSteps {
  std::vector<CaseCarry> carry;
};

// case.json "variants": {"select": {"<targets joined by ','>": [entry ids]}}.
struct CaseVariants {
  std::map<std::string, std::vector<std::string>> select;
};

// Every key case.json may hold. Absent keys are empty or nullopt.
struct CaseFile {
  bool present = false;  // the case has a case.json (ReadCaseMeta)
  // Read by the harness.
  std::optional<std::string> operator_name;             // "operator": the tolerance family's operator
  std::map<std::string, std::string> output_operators;  // "output_operators": output name -> operator
  // "tolerance": the override, already checked by TolerancePolicy::ApplyOverride
  // at parse time; kept as JSON for the comparison to apply.
  std::optional<nlohmann::json> tolerance;
  std::optional<CaseSteps> steps;  // present: a stateful case
  FallbackRule fallback = FallbackRule::kAllowed;
  std::optional<std::vector<std::string>> variant_targets;
  std::optional<CaseVariants> variants;
  std::optional<CaseCheck> check;
  // Descriptive only: the generators write them for readers of the corpus.
  std::vector<std::string> tags;
  std::string feature;    // the feature a case shows ("variants.overlap")
  std::string generator;  // the script that wrote the case
  // Where the expected outputs come from: empty or "reference" for the
  // reference's own; anything else ("onnx-node", "pytorch-eager") is a
  // source whose values are judged as spec/tolerance.md, "Expected outputs
  // from elsewhere", says (ExpectedFromElsewhere).
  std::string source;
  std::string suite;      // the suite the generator meant it for
  std::string why;        // what the case is for, in words
};

// Checks `root` (the contents of the case.json at `path`) and returns it
// typed. Every error names `path` and the key path, e.g.
//   cases/x/case.json: "fallback": expected "allowed" or "forbidden", got "forbiden"
// An unknown key, a value of the wrong type, an unknown enum value and a
// tolerance override that TolerancePolicy::ApplyOverride refuses are errors.
StatusOr<CaseFile> ParseCaseFile(const nlohmann::json& root, const std::string& path);

// Reads and parses the case.json at `path`; a file that is not JSON is an error.
StatusOr<CaseFile> ReadCaseFile(const std::string& path);

// The key paths ParseCaseFile knows, sorted: top-level keys ("fallback"),
// keys of nested objects ("steps.carry"), and keys of the objects inside a
// list ("steps.carry[].output"). The keys of "tolerance" are the override's
// (TolerancePolicy::OverrideKeys), as "tolerance.ulp"; those of "mistrust"
// inside it as "tolerance.mistrust.min_elements". spec/case.schema.json must
// describe the same set (harness/case_file_test.cc checks it).
std::vector<std::string> CaseFileKeyPaths();

}  // namespace parity
