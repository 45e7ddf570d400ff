// Result states and their JSON form.
#include "harness/results.h"

namespace parity {

const char* CaseStateName(CaseState state) {
  switch (state) {
    case CaseState::kPass: return "PASS";
    case CaseState::kFail: return "FAIL";
    case CaseState::kUnsupported: return "UNSUPPORTED";
    case CaseState::kSkip: return "SKIP";
    case CaseState::kXfail: return "XFAIL";
    case CaseState::kXpass: return "XPASS";
    case CaseState::kCrash: return "CRASH";
    case CaseState::kTimeout: return "TIMEOUT";
    case CaseState::kError: return "ERROR";
    case CaseState::kMistrusted: return "MISTRUSTED";
    case CaseState::kFellBack: return "FELL_BACK";
  }
  return "?";
}

bool FailsGate(CaseState state) {
  switch (state) {
    case CaseState::kFail:
    case CaseState::kCrash:
    case CaseState::kTimeout:
    case CaseState::kFellBack:
    case CaseState::kXpass: return true;
    default: return false;
  }
}

nlohmann::json ToJson(const CaseResult& r) {
  nlohmann::json j = {
      {"case", r.name},     {"suite", r.suite},     {"dir", r.dir},         {"operator", r.op},
      {"state", CaseStateName(r.state)},            {"load_ms", r.load_ms}, {"run_ms", r.run_ms},
      {"outputs", r.outputs}, {"repro", r.repro},
  };
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.expectation.empty()) j["expectation"] = r.expectation;
  return j;
}

void Summary::Add(const CaseResult& r) {
  ++total;
  ++by_state[CaseStateName(r.state)];
  ++by_operator[r.op][CaseStateName(r.state)];
}

nlohmann::json Summary::ToJson() const {
  return {{"total", total}, {"by_state", by_state}, {"by_operator", by_operator}};
}

}  // namespace parity
