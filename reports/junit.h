// JUnit XML from one or more runs, in the attribute names that the JUnit
// readers of GitHub Actions, GitLab and Jenkins understand: one <testsuite>
// per (adapter@device, suite), one <testcase> per case.
#pragma once

#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

// FAIL, CRASH, TIMEOUT, FELL_BACK and XPASS become <failure>; ERROR becomes
// <error>; UNSUPPORTED, SKIP, XFAIL and MISTRUSTED become <skipped>, as do
// planned cases without a result ("NOT RUN") A case whose line says
// "gate_failure" (a state its expectations did not foresee) is a <failure>
// whatever its state, except ERROR, so that CI shows what the gate counts.
std::string RenderJunit(const std::vector<RunData>& runs);

Status WriteJunit(const std::vector<RunData>& runs, const std::string& path);

}  // namespace parity
