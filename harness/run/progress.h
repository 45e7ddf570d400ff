// What a run prints while it goes: a progress bar on a terminal, plain lines
// in CI logs (one per case that does not pass, and a count every ten
// seconds), or nothing. Thread-safe: workers report as their cases end.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "harness/results/results.h"

namespace parity {

class Progress {
 public:
  enum class Mode { kBar, kLines, kQuiet };
  Progress(Mode mode, size_t total, size_t already_done);
  void Done(const CaseResult& result);
  void Note(const std::string& line);  // a line worth a reader's eye, in every mode but quiet
  void Finish();  // ends the bar's line

 private:
  void DrawBar();
  std::string Counts() const;

  Mode mode_;
  size_t total_, done_;
  std::map<std::string, int> by_state_;
  std::chrono::steady_clock::time_point start_, last_print_;
  std::mutex mutex_;
};

}  // namespace parity
