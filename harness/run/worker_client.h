// The harness's end of the worker protocol: starts a worker process (a
// native adapter inside parity-worker, or any program that speaks
// spec/protocol/), sends it requests, and turns a worker that hangs, dies,
// garbles its answers or outgrows its memory limit into a status, so that a
// broken backend costs one case and never the run.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "parity_worker.pb.h"
#include "reference/core/status.h"

namespace parity {

struct WorkerLaunch {
  std::string adapter;            // the adapter's name, for messages
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
  std::string cwd;                // empty: the harness's own
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the harness's environment
  std::string log_path;           // the worker's standard error is appended here
  int64_t memory_limit_kb = 0;    // resident memory that ends a call (0: none)
};

class WorkerProcess {
 public:
  // Starts the worker. Fails when the program cannot be started at all; a
  // worker that starts and then dies is seen by the first Call.
  static StatusOr<std::unique_ptr<WorkerProcess>> Start(const WorkerLaunch& launch);
  ~WorkerProcess();  // kills the worker if it is still running

  // Sends `request` and waits up to `deadline_ms` (negative: no limit) for
  // the answer. The worker is killed and the status says why when the call
  // fails: kDeadlineExceeded (no answer in time), kResourceExhausted (memory
  // limit passed, or a request too large for a frame: then nothing was sent
  // and the worker lives on), kUnavailable (the worker ended: see
  // EndDescription), or kIoError (it broke the protocol).
  StatusOr<protocol::Response> Call(const protocol::Request& request, int64_t deadline_ms);

  // How the worker ended ("killed by signal 11 (Segmentation fault)",
  // "exited with status 3"), with the last lines of its log written since
  // the last call began. Only meaningful after a failed Call.
  std::string EndDescription();

  // Asks the worker to shut down, and kills it after `grace_ms`.
  void Shutdown(int64_t grace_ms = 2000);

  bool alive() const { return pid_ > 0; }
  // Whether the worker still runs; one that ended while idle (the kernel's
  // OOM killer, a crash in a backend thread) is reaped and reported gone.
  bool CheckAlive();
  pid_t pid() const { return pid_; }
  // Current resident memory of the worker in KiB (0 when unknown).
  int64_t ResidentKb() const;

 private:
  WorkerProcess() = default;
  void Kill();
  void Reap(bool wait);
  // Reaps the worker if it ends within `ms` milliseconds by itself.
  void ReapWithin(int64_t ms);

  WorkerLaunch launch_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  int wait_status_ = 0;
  bool reaped_ = false;
  bool killed_by_harness_ = false;  // Kill() sent the SIGKILL (else it ended by itself)
  int64_t log_offset_ = 0;  // size of the log when the last answer arrived
};

}  // namespace parity
