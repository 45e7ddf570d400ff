// One case through one worker: prepare the case's files, ask the worker for a
// session and runs, compare, and map every way it can go wrong to a state
// (spec/results.md). The worker slot restarts its worker after a crash, a
// hang or a protocol breach, so the next case starts clean.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/case_reader.h"
#include "harness/compare.h"
#include "harness/results/results.h"
#include "harness/run/worker_client.h"
#include "parity_worker.pb.h"

namespace parity {

// How long a new worker may take to start and answer its handshake: a
// Python adapter imports its runtime first. Not charged to any case.
inline constexpr int64_t kWorkerStartMs = 60000;
// The least time given to release a session, even when the case's own time
// is spent (the answer is usually immediate; a hang here is still a TIMEOUT).
inline constexpr int64_t kReleaseMinMs = 1000;

// An output value as a worker returned it (parity.protocol.Value): exactly
// one of tensor, sequence and optional, never external data. The error's
// message completes "output K 'name' ..." in the case's FAIL message.
StatusOr<Value> ValueFromProtocol(const protocol::Value& v);

// A worker process started on demand, with its handshake done.
class WorkerSlot {
 public:
  explicit WorkerSlot(WorkerLaunch launch) : launch_(std::move(launch)) {}
  // The running worker, started (and greeted) when there is none.
  StatusOr<WorkerProcess*> Get(int64_t deadline_ms);
  // Drops a worker that failed a call; the next Get starts a new one.
  void Discard() {
    worker_.reset();
    ++replaced_;
  }
  void Shutdown();
  // Between cases: shuts a worker whose resident memory has grown past the
  // launch's limit (a leaking backend), so the next case starts a fresh one.
  // Returns the resident KiB it had when it did, else 0.
  int64_t RetireIfOverMemory();
  const protocol::AdapterInfo& info() const { return info_; }
  // Workers this slot has given up: killed after a crash, hang or protocol
  // breach, or retired over their memory limit.
  int replaced() const { return replaced_; }

 private:
  WorkerLaunch launch_;
  std::unique_ptr<WorkerProcess> worker_;
  protocol::AdapterInfo info_;
  int replaced_ = 0;
};

// Which steps of a stateful case get the kept outputs back (Run.return_kept):
// every step, so that the state is compared at each, or only the last, so
// that the state never crosses the pipe before the end (what a benchmark of
// in-place updates wants).
enum class StateReadback { kEvery, kLast };
const char* StateReadbackName(StateReadback readback);  // "every", "last"

struct CaseRunSettings {
  std::string adapter;  // the adapter's name, for results and tolerance rules
  std::string device;
  bool allow_fallback = true;
  int warm_repeats = 3;
  double timeout_seconds = 60;  // the worker's time for the whole case
  const TolerancePolicy* policy = nullptr;
  const protocol::Capabilities* capabilities = nullptr;  // null or undeclared: try every case
  // --variant-targets: sent to every case instead of case.json's or the
  // capabilities' targets; unset when not given.
  std::optional<std::vector<std::string>> variant_targets;
  std::string repro_prefix;  // the command line up to " --cases DIR"
  StateReadback state_readback = StateReadback::kEvery;  // stateful cases only
};

// Runs one case; never fails, every outcome is a state. Expectations are
// applied by the caller. A stateful case (case.json "steps") runs its data
// sets as steps of its one session and records each step in r.steps. For a model with variant entries it also checks the
// selection the adapter reports (harness/run/variant_check.h) and, once the
// verdict is settled, times the creation of a session of the model with its
// entries stripped (its own budget of `timeout_seconds`; a failure there is
// load_ms_stripped_error and never changes the state).
CaseResult RunCase(CaseInfo info, WorkerSlot& slot, const CaseRunSettings& settings);

// The operator a case is about, read from its model (empty when unreadable).
std::string PlannedOperator(CaseInfo info);

}  // namespace parity
