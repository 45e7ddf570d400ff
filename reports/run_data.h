// One run folder as the reports show it: the folder as the results library
// reads it (harness/results/run_folder.h), with the label and time a report
// gives it.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/results/run_folder.h"
#include "reference/core/status.h"

namespace parity {

// The state a report gives a planned case that has no line in results.jsonl.
inline constexpr const char* kNotRun = "NOT RUN";

struct RunData : RunFolder {
  std::string label;    // "adapter@device", unique among the runs of one report
  std::string when;     // when the run ended: summary.json "finished", else the journal's
                        // modification time, UTC; empty when neither is known

  std::string AdapterVersion() const;  // "version (backend backend_version)" or ""
  std::string DeviceDescription() const;
};

// LoadRunFolder, with the label "adapter@device" and the time.
StatusOr<RunData> LoadRunData(const std::string& dir);

// Gives every run a distinct label: the folder name is added where two runs
// share adapter@device.
void AssignLabels(std::vector<RunData>& runs);

// Cases that a report lists among failing ones: the gate failures
// (CountsForGate), ERROR and MISTRUSTED.
bool IsListedFailure(const CaseResult& result);

}  // namespace parity
