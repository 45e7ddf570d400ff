// Result states and the per-case record of the results journal
// (results.jsonl, one JSON object per line) and its summary (summary.json).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity {

// DESIGN.md, "Result states".
enum class CaseState { kPass, kFail, kUnsupported, kSkip, kXfail, kXpass, kCrash, kTimeout, kError, kMistrusted, kFellBack };
const char* CaseStateName(CaseState state);
// States that make a backend non-conformant, or that signal a stale
// expectation (XPASS); ERROR is infrastructure and never counts against it.
bool FailsGate(CaseState state);

struct CaseResult {
  std::string name;
  std::string suite;
  std::string dir;
  std::string op;  // the operator the case is about
  CaseState state = CaseState::kError;
  std::string message;       // why it is not a PASS; empty for a PASS
  std::string expectation;   // the reason of the matching expectations entry, if any
  double load_ms = 0;        // model loading and session (evaluator) creation
  double run_ms = 0;         // all data sets
  nlohmann::json outputs = nlohmann::json::array();  // per output: verdict and error statistics
  std::string repro;         // one command that reproduces this case
};

nlohmann::json ToJson(const CaseResult& result);

// Counts by state, overall and per operator.
struct Summary {
  std::map<std::string, int> by_state;
  std::map<std::string, std::map<std::string, int>> by_operator;  // op -> state -> count
  int total = 0;
  void Add(const CaseResult& result);
  nlohmann::json ToJson() const;
};

}  // namespace parity
