// The run folder's journal (spec/results.md): run.json holds the settings
// and the plan, results.jsonl one line per finished case. Lines are appended
// with one write each, so a run killed at any moment leaves whole lines and
// at most one partial last line, which reopening drops; a run started again
// with the same settings runs only what has no line yet. The lines are those
// of the results library (harness/results/results.h).
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace parity {

// An exclusive lock on an output folder, held while one command writes it:
// DIR/.parity.lock, locked with flock(2) and holding the writer's pid and
// command. The kernel drops the lock when the process ends however it ends
// (SIGKILL included), so a killed run's folder resumes; a second writer
// while the first lives is refused, before it touches anything.
class FolderLock {
 public:
  // Locks `dir` (which must exist) for `command` ("parity run"). Busy: an
  // error naming the folder and the holder's pid and command.
  static StatusOr<std::unique_ptr<FolderLock>> Acquire(const std::string& dir, const std::string& command);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  FolderLock() = default;
  int fd_ = -1;
};

class Journal {
 public:
  // Opens (creating) `dir` for a run with `settings`, holding its
  // FolderLock until the journal is destroyed. When the folder already
  // holds a run: with `fresh` its files are removed; otherwise its settings
  // must equal `settings` (else an error names the keys that differ) and its
  // results are kept.
  static StatusOr<std::unique_ptr<Journal>> Open(const std::string& dir, const nlohmann::json& settings, bool fresh);
  ~Journal();

  // The plan of the run being resumed (empty for a new run).
  const nlohmann::json& previous_plan() const { return previous_plan_; }
  // Results already in the journal when it was opened.
  const std::vector<CaseResult>& previous() const { return previous_; }
  // Writes run.json: the settings and the plan [{"case", "suite", "operator", "dir"}],
  // then opens results.jsonl for appending.
  Status WritePlan(const nlohmann::json& planned);
  // Appends one result line. Thread-safe.
  Status Append(const CaseResult& result);
  const std::string& dir() const { return dir_; }

 private:
  Journal() = default;
  std::unique_ptr<FolderLock> lock_;
  std::string dir_;
  nlohmann::json settings_;
  nlohmann::json previous_plan_ = nlohmann::json::array();
  std::vector<CaseResult> previous_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace parity
