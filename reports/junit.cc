// Rendering runs as JUnit XML.
#include "reports/junit.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "reports/format.h"
#include "reports/matrix.h"

namespace parity {
namespace {

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

// One <testcase>, rendered, with what it adds to its suite's counts.
struct TestCase {
  std::string op, name;  // sort keys
  std::string xml;
  double seconds = 0;
  bool failure = false, error = false, skipped = false;
};

std::string ClassName(const std::string& suite, const std::string& op) {
  return suite + "." + (op.empty() ? std::string(kUnknownOperator) : op);
}

// The body of a <failure> or <error>: everything a reader needs to act.
std::string FailureBody(const CaseResult& r) {
  std::ostringstream body;
  body << CaseStateName(r.state) << ": " << r.message << "\n";
  if (!r.expectation.empty()) body << "expectation: " << r.expectation << "\n";
  const ErrorSummary errors = SummarizeErrors(r);
  if (errors.max_abs != "–" || errors.max_rel != "–" || errors.max_ulp != "–") {
    body << "max abs error " << errors.max_abs << ", max rel error " << errors.max_rel << ", max ulp error "
         << errors.max_ulp << "\n";
  }
  if (!errors.first_mismatch.empty()) body << "first mismatch: " << errors.first_mismatch << "\n";
  if (!r.dir.empty()) body << "case: " << r.dir << "\n";
  if (!r.repro.empty()) body << "repro: " << r.repro << "\n";
  return body.str();
}

TestCase RenderCase(const CaseResult& r) {
  TestCase t{r.op, r.name, "", 0};
  t.seconds = (r.load_ms_cold.value_or(0) + r.run_ms) / 1000.0;
  std::ostringstream x;
  x << "    <testcase classname=\"" << XmlEscape(ClassName(r.suite, r.op), true) << "\" name=\""
    << XmlEscape(r.name, true) << "\" time=\"" << Seconds(t.seconds) << "\"";
  // The message attribute is a one-line headline; the body has the rest.
  std::string state = CaseStateName(r.state);
  if (r.gate_failure && !FailsGate(r.state)) state += " (not the state its expectations entry names)";
  const std::string headline = XmlEscape(Truncate(state + ": " + r.message, 500), true);
  if (CountsForGate(r) && r.state != CaseState::kError) {
    t.failure = true;
    x << ">\n      <failure message=\"" << headline << "\" type=\"" << CaseStateName(r.state) << "\">"
      << XmlEscape(FailureBody(r)) << "</failure>\n    </testcase>\n";
  } else if (r.state == CaseState::kError) {
    t.error = true;
    x << ">\n      <error message=\"" << headline << "\" type=\"ERROR\">" << XmlEscape(FailureBody(r))
      << "</error>\n    </testcase>\n";
  } else if (r.state != CaseState::kPass) {
    t.skipped = true;
    x << ">\n      <skipped message=\"" << headline << "\"/>\n    </testcase>\n";
  } else {
    x << "/>\n";
  }
  t.xml = x.str();
  return t;
}

TestCase RenderNotRun(const PlannedCase& p) {
  TestCase t{p.op, p.name, "", 0};
  t.skipped = true;
  t.xml = "    <testcase classname=\"" + XmlEscape(ClassName(p.suite, p.op), true) + "\" name=\"" +
          XmlEscape(p.name, true) + "\" time=\"0.000\">\n      <skipped message=\"" + kNotRun +
          "\"/>\n    </testcase>\n";
  return t;
}

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  void Add(const TestCase& t) {
    ++tests;
    failures += t.failure;
    errors += t.error;
    skipped += t.skipped;
    seconds += t.seconds;
  }
  std::string Attributes() const {
    return "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
           std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + Seconds(seconds) +
           "\"";
  }
};

std::string Property(const std::string& name, const std::string& value) {
  return "      <property name=\"" + XmlEscape(name, true) + "\" value=\"" + XmlEscape(value, true) + "\"/>\n";
}

}  // namespace

std::string RenderJunit(const std::vector<RunData>& runs) {
  std::ostringstream suites;
  Counts all;
  for (const RunData& run : runs) {
    std::map<std::string, std::vector<TestCase>> by_suite;
    for (const CaseResult& r : run.results) by_suite[r.suite].push_back(RenderCase(r));
    for (const PlannedCase& p : run.not_run) by_suite[p.suite].push_back(RenderNotRun(p));
    for (auto& [suite, cases] : by_suite) {
      std::sort(cases.begin(), cases.end(), [](const TestCase& a, const TestCase& b) {
        return a.op != b.op ? NaturalLess(a.op, b.op) : NaturalLess(a.name, b.name);
      });
      Counts counts;
      for (const TestCase& t : cases) counts.Add(t);
      for (const TestCase& t : cases) all.Add(t);
      // No timestamp attribute: readers want ISO 8601 local time, and a run
      // only knows when its journal was last written; it goes in a property.
      suites << "  <testsuite name=\"" << XmlEscape(run.label + "/" + suite, true) << "\" " << counts.Attributes()
             << ">\n    <properties>\n"
             << Property("adapter", run.adapter) << Property("device", run.device)
             << Property("adapter_version", run.AdapterVersion()) << Property("finished", run.when)
             << Property("results", run.dir) << "    </properties>\n";
      for (const TestCase& t : cases) suites << t.xml;
      suites << "  </testsuite>\n";
    }
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ONNX Parity\" " + all.Attributes() +
         ">\n" + suites.str() + "</testsuites>\n";
}

Status WriteJunit(const std::vector<RunData>& runs, const std::string& path) {
  return WriteFileAtomically(path, RenderJunit(runs));
}

}  // namespace parity
