// `parity run`: every selected case on one adapter and device, each adapter
// call in a worker process, results journaled as they finish (spec/results.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace parity {

struct RunCommandOptions {
  std::string adapter;              // NAME or PATH (harness/run/adapter_manifest.h)
  std::string device;               // empty: the adapter's default device
  std::vector<std::string> cases;   // case folders or folders of them
  std::string filter;               // shell glob on case names
  std::string filter_file;          // a file of case names, one per line ('#' comments)
  int shard_index = 1, shard_count = 1;  // --shard I/N, 1-based
  std::string out_dir = "out/run";
  double timeout_seconds = 60;      // per case, in the worker
  std::string expectations;         // expectations file; empty: none
  std::string tolerance;            // tolerance policy; empty: spec/tolerance.json
  bool no_fallback = false;
  // --variant-targets T1,T2: the targets every case's session gets,
  // preferred first (empty list: the adapter's own choice); unset: each
  // case's case.json "variant_targets", else the adapter's declared ones.
  std::optional<std::vector<std::string>> variant_targets;
  // --state-readback every|last: which steps of a stateful case get the kept
  // outputs back (harness/run/case_runner.h); empty: not given, "every".
  std::string state_readback;
  int jobs = 1;                     // workers run side by side
  int warm_repeats = 3;             // session creations timed after the cold one
  int64_t worker_memory_limit_mib = 8192;
  bool fresh = false;               // discard what --out holds instead of resuming
  enum class Progress { kAuto, kBar, kLines, kQuiet } progress = Progress::kAuto;
};

// Exit status: 0 when no case fails the gate, 1 when some do, 2 on bad
// arguments or unusable input, 3 when the gate passes but cases ended in
// ERROR (the harness or infrastructure failed; never the backend's fault).
int RunRunCommand(const RunCommandOptions& options);

// Case k (0-based, in sorted order) of `count` cases belongs to shard
// k mod N: deterministic, and shard sizes differ by at most one.
bool InShard(size_t k, int shard_index, int shard_count);

}  // namespace parity
