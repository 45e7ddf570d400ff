// The run: select and shard cases, resume a journal, drive workers, write
// the summary and the reports, and apply the gate.
#include "harness/run/run_command.h"

#include <fnmatch.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "harness/case_outcome.h"
#include "harness/expectations.h"
#include "harness/run/adapter_manifest.h"
#include "harness/run/case_runner.h"
#include "harness/run/journal.h"
#include "harness/run/progress.h"
#include "harness/run/variant_check.h"
#include "harness/results/results.h"
#include "harness/results/summary.h"
#include "harness/report_command.h"
#include "reference/core/tensor.h"
#include "spec/abi/parity_adapter.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int Fail(const std::string& message, int status = 2) {
  std::cerr << "parity run: " << message << "\n";
  return status;
}

StatusOr<std::set<std::string>> ReadNameFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read the case list '", path, "'");
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) names.insert(line);
  }
  return names;
}

// The selected cases in sorted order: filter, name file, then the shard.
StatusOr<std::vector<CaseInfo>> SelectCases(const RunCommandOptions& options) {
  PARITY_ASSIGN_OR_RETURN(std::vector<CaseInfo> found, DiscoverCases(options.cases));
  std::set<std::string> names;
  if (!options.filter_file.empty()) {
    PARITY_ASSIGN_OR_RETURN(names, ReadNameFile(options.filter_file));
    std::set<std::string> missing = names;
    for (const auto& c : found) missing.erase(c.name);
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      return NotFound(options.filter_file, " names ", missing.size(), " case(s) not found under the given folders: ", list);
    }
  }
  std::vector<CaseInfo> selected;
  for (auto& c : found) {
    if (!options.filter.empty() && fnmatch(options.filter.c_str(), c.name.c_str(), 0) != 0) continue;
    if (!options.filter_file.empty() && !names.count(c.name)) continue;
    selected.push_back(std::move(c));
  }
  std::vector<CaseInfo> shard;
  for (size_t k = 0; k < selected.size(); ++k) {
    if (InShard(k, options.shard_index, options.shard_count)) shard.push_back(std::move(selected[k]));
  }
  return shard;
}

// The command line of a repro up to its --cases (case_runner.cc adds the
// case and an output folder of its own): every option that changes a result.
std::string ReproPrefix(const RunCommandOptions& options, const std::string& adapter_spec, const std::string& device) {
  const RunCommandOptions defaults;
  std::string repro = ShellQuote((fs::path(ExecutableDir()) / "parity").string()) + " run --adapter " +
                      ShellQuote(adapter_spec) + " --device " + ShellQuote(device);
  if (options.timeout_seconds != defaults.timeout_seconds) repro += StrCat(" --timeout ", options.timeout_seconds);
  if (options.warm_repeats != defaults.warm_repeats) repro += StrCat(" --warm-repeats ", options.warm_repeats);
  if (!options.tolerance.empty()) repro += " --tolerance " + ShellQuote(fs::absolute(options.tolerance).string());
  if (options.no_fallback) repro += " --no-fallback";
  if (options.variant_targets) repro += " --variant-targets " + ShellQuote(JoinTargets(*options.variant_targets));
  if (!options.state_readback.empty()) repro += " --state-readback " + options.state_readback;
  return repro;
}

}  // namespace

bool InShard(size_t k, int shard_index, int shard_count) {
  return static_cast<int>(k % static_cast<size_t>(shard_count)) == shard_index - 1;
}

namespace {

// A failed step. Its message is printed as it is: steps put the status code
// name in front of errors that come from lower layers (Reported), not in
// front of their own words about the options or the plan.
Status Reported(const Status& s) { return Status(s.code(), s.ToString()); }
int Fail(const Status& s) { return Fail(s.message()); }

Status CheckOptions(const RunCommandOptions& options) {
  if (options.shard_count < 1 || options.shard_index < 1 || options.shard_index > options.shard_count) {
    return InvalidArgument("--shard ", options.shard_index, "/", options.shard_count, ": I must be between 1 and N");
  }
  if (options.timeout_seconds <= 0) return InvalidArgument("--timeout must be a positive number of seconds");
  if (options.jobs < 1) return InvalidArgument("--jobs must be at least 1");
  if (options.cases.empty()) return InvalidArgument("give at least one --cases folder");
  if (!options.state_readback.empty() && options.state_readback != "every" && options.state_readback != "last") {
    return InvalidArgument("--state-readback takes every or last, not '", options.state_readback, "'");
  }
  return Status::Ok();
}

// What the run reads before it starts a worker: the tolerance policy, the
// expectations, the selected cases and the adapter.
struct RunInputs {
  TolerancePolicy policy;
  std::unique_ptr<Expectations> expectations;  // null without --expect
  std::vector<CaseInfo> cases;
  ResolvedAdapter adapter;
};

StatusOr<RunInputs> LoadInputs(const RunCommandOptions& options) {
  RunInputs inputs;
  const std::string tolerance_path =
      options.tolerance.empty() ? std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json" : options.tolerance;
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Load(tolerance_path);
  if (!policy.ok()) return Reported(policy.status());
  inputs.policy = std::move(policy).value();
  if (!options.expectations.empty()) {
    StatusOr<Expectations> loaded = Expectations::Load(options.expectations);
    if (!loaded.ok()) return Reported(loaded.status());
    inputs.expectations = std::make_unique<Expectations>(std::move(loaded).value());
  }
  StatusOr<std::vector<CaseInfo>> cases = SelectCases(options);
  if (!cases.ok()) return Reported(cases.status());
  if (cases->empty()) return InvalidArgument("no cases selected (check --cases, --filter, --filter-file and --shard)");
  inputs.cases = std::move(cases).value();
  StatusOr<ResolvedAdapter> adapter = ResolveAdapter(options.adapter, ExecutableDir());
  if (!adapter.ok()) return Reported(adapter.status());
  inputs.adapter = std::move(adapter).value();
  return inputs;
}

// run.json's settings: every option that must match for a run to resume.
nlohmann::json RunSettings(const RunCommandOptions& options, const std::string& adapter_spec) {
  std::vector<std::string> roots;
  for (const auto& c : options.cases) roots.push_back(fs::absolute(c).lexically_normal().string());
  return {
      {"adapter", adapter_spec},
      {"device", options.device},
      {"cases", roots},
      {"filter", options.filter},
      {"filter_file", options.filter_file},
      {"shard", StrCat(options.shard_index, "/", options.shard_count)},
      {"timeout", options.timeout_seconds},
      {"no_fallback", options.no_fallback},
      {"expectations", options.expectations},
      {"warm_repeats", options.warm_repeats},
      {"tolerance", options.tolerance},
      // null when not given, so that a folder of a run before this option resumes.
      {"variant_targets", options.variant_targets ? nlohmann::json(*options.variant_targets) : nlohmann::json(nullptr)},
      // null when not given (every), likewise.
      {"state_readback", options.state_readback.empty() ? nlohmann::json(nullptr) : nlohmann::json(options.state_readback)},
  };
}

// The journal opened (or resumed) with its plan written, and the cases that
// still need a result.
struct PlannedRun {
  std::unique_ptr<Journal> journal;
  nlohmann::json planned;       // run.json's "planned"
  std::set<std::string> done;   // case folders already in the journal
  std::vector<CaseInfo> todo;
};

StatusOr<PlannedRun> OpenJournal(const RunCommandOptions& options, const RunInputs& inputs) {
  PlannedRun run;
  StatusOr<std::unique_ptr<Journal>> journal =
      Journal::Open(options.out_dir, RunSettings(options, inputs.adapter.spec), options.fresh);
  if (!journal.ok()) return Reported(journal.status());
  run.journal = std::move(journal).value();
  // Folders are matched in the form the journal holds them (AsJournalText):
  // a name that is not UTF-8 is stored with U+FFFD in place of its bad bytes.
  for (const auto& r : run.journal->previous()) run.done.insert(r.dir);
  std::map<std::string, std::string> by_journal_text;
  for (const auto& c : inputs.cases) {
    const auto [it, inserted] = by_journal_text.emplace(AsJournalText(c.dir), c.dir);
    if (!inserted) {
      return InvalidArgument("case folders '", it->second, "' and '", c.dir,
                             "' differ only in bytes that are not UTF-8: the journal cannot tell them apart; "
                             "rename one");
    }
  }

  // A resumed run keeps its plan, which must still name the cases on disk.
  run.planned = run.journal->previous_plan();
  if (!run.planned.empty()) {
    std::vector<std::string> planned_dirs, found_dirs;
    for (const auto& p : run.planned) planned_dirs.push_back(p.value("dir", ""));
    for (const auto& c : inputs.cases) found_dirs.push_back(AsJournalText(c.dir));
    if (planned_dirs != found_dirs) {
      return InvalidArgument(options.out_dir, "/run.json plans ", planned_dirs.size(),
                                " cases, but the selection now finds ", found_dirs.size(),
                                " other ones: the case folders changed since that run; use --fresh");
    }
  } else {
    for (const auto& c : inputs.cases) {
      run.planned.push_back({{"case", c.name}, {"suite", c.suite}, {"dir", c.dir}, {"operator", PlannedOperator(c)}});
    }
  }
  if (Status s = run.journal->WritePlan(run.planned); !s.ok()) return Reported(s);
  for (const auto& c : inputs.cases) {
    if (!run.done.count(AsJournalText(c.dir))) run.todo.push_back(c);
  }
  return run;
}

// The workers, one slot per job, and what the first one, started at once,
// told about the adapter, its devices and its capabilities.
struct Workers {
  std::vector<std::unique_ptr<WorkerSlot>> slots;
  protocol::AdapterInfo info;
  std::string device;
  std::optional<protocol::Device> device_info;  // unset when the device is absent
  std::string absent;  // why every case is SKIP; empty when the device is there
  protocol::Capabilities capabilities;
};

StatusOr<Workers> StartWorkers(const RunCommandOptions& options, const ResolvedAdapter& adapter) {
  Workers w;
  fs::create_directories(fs::path(options.out_dir) / "logs");
  for (int j = 0; j < options.jobs; ++j) {
    WorkerLaunch launch = adapter.launch;
    launch.log_path = (fs::path(options.out_dir) / "logs" / StrCat("worker-", j + 1, ".log")).string();
    launch.memory_limit_kb = options.worker_memory_limit_mib * 1024;
    // The same limit for what the adapter allocates, checked before it does
    // (spec/abi/README.md); adapters that do not read it are still watched.
    if (options.worker_memory_limit_mib > 0) {
      launch.env.emplace_back("PARITY_MEMORY_LIMIT_MIB", std::to_string(options.worker_memory_limit_mib));
    }
    w.slots.push_back(std::make_unique<WorkerSlot>(launch));
  }
  StatusOr<WorkerProcess*> probe = w.slots[0]->Get(kWorkerStartMs);
  if (!probe.ok()) return Reported(probe.status());
  w.info = w.slots[0]->info();
  w.device = options.device;
  for (const auto& d : w.info.devices()) {
    if (w.device.empty()) w.device = d.name();
    if (d.name() == w.device) w.device_info = d;
  }
  if (!w.device_info) {
    std::string offered;
    for (const auto& d : w.info.devices()) offered += (offered.empty() ? "" : ", ") + d.name();
    w.absent = StrCat("device '", w.device, "' is absent: adapter '", w.info.name(), "' offers ",
                      offered.empty() ? "none" : offered);
    return w;
  }
  protocol::Request request;
  request.mutable_get_capabilities()->set_device(w.device);
  StatusOr<protocol::Response> answer = (*probe)->Call(request, kWorkerStartMs);
  if (!answer.ok()) {
    return Status(StatusCode::kUnavailable, StrCat("the adapter's worker failed when asked for capabilities: ",
                                                      answer.status().message()));
  }
  if (answer->has_status() && answer->status().code() == protocol::DEVICE_UNAVAILABLE) {
    w.absent = StrCat("device '", w.device, "' is unavailable: ", answer->status().message());
  } else if (answer->has_status() && answer->status().code() != protocol::OK) {
    return InvalidArgument("the adapter refused to state its capabilities: ", answer->status().message());
  }
  w.capabilities = answer->capabilities();
  return w;
}

CaseRunSettings MakeCaseRunSettings(const RunCommandOptions& options, const RunInputs& inputs, const Workers& w) {
  CaseRunSettings settings;
  settings.adapter = w.info.name();
  settings.device = w.device;
  settings.allow_fallback = !options.no_fallback;
  settings.warm_repeats = options.warm_repeats;
  settings.timeout_seconds = options.timeout_seconds;
  settings.policy = &inputs.policy;
  settings.capabilities = &w.capabilities;
  settings.variant_targets = options.variant_targets;
  settings.repro_prefix = ReproPrefix(options, inputs.adapter.spec, w.device);
  settings.state_readback = options.state_readback == "last" ? StateReadback::kLast : StateReadback::kEvery;
  return settings;
}

Progress::Mode ProgressMode(RunCommandOptions::Progress progress) {
  switch (progress) {
    case RunCommandOptions::Progress::kAuto: return ::isatty(1) ? Progress::Mode::kBar : Progress::Mode::kLines;
    case RunCommandOptions::Progress::kBar: return Progress::Mode::kBar;
    case RunCommandOptions::Progress::kLines: return Progress::Mode::kLines;
    case RunCommandOptions::Progress::kQuiet: return Progress::Mode::kQuiet;
  }
  return Progress::Mode::kLines;
}

// One case's result when no worker runs it: the device is absent (SKIP), or
// the harness itself failed (ERROR).
CaseResult ResultWithoutWorker(const CaseInfo& c, const Workers& w, CaseState state, std::string message) {
  CaseResult r;
  r.name = c.name, r.suite = c.suite, r.dir = c.dir, r.adapter = w.info.name(), r.device = w.device;
  r.state = state;
  r.message = std::move(message);
  return r;
}

// How the cases went, beyond their lines in the journal.
struct RunTotals {
  int worker_restarts = 0;
  int memory_restarts = 0;
  bool journal_failed = false;
};

// Runs `plan.todo` on the workers, one thread per slot, journaling each
// result as it comes.
RunTotals RunCases(const RunCommandOptions& options, const RunInputs& inputs, PlannedRun& plan, Workers& w,
                   Progress& progress) {
  const CaseRunSettings run_settings = MakeCaseRunSettings(options, inputs, w);
  const std::vector<CaseInfo>& todo = plan.todo;
  std::atomic<size_t> next{0};
  std::atomic<bool> journal_failed{false};
  std::atomic<int> memory_restarts{0};
  std::mutex expectations_mutex;
  auto drive = [&](WorkerSlot& slot) {
    for (size_t i = next++; i < todo.size() && !journal_failed; i = next++) {
      CaseResult r;
      if (!w.absent.empty()) {
        r = ResultWithoutWorker(todo[i], w, CaseState::kSkip, w.absent);
        r.op = PlannedOperator(todo[i]);
      } else {
        try {
          r = RunCase(todo[i], slot, run_settings);
        } catch (const std::exception& e) {  // a bug of ours: the case is ERROR, the run goes on
          r = ResultWithoutWorker(todo[i], w, CaseState::kError, StrCat("internal error in the harness: ", e.what()));
          slot.Discard();
        }
      }
      {
        std::lock_guard<std::mutex> lock(expectations_mutex);  // entries count their matches
        r.gate_failure = !ApplyExpectation(r, inputs.expectations.get());
      }
      if (Status s = plan.journal->Append(r); !s.ok()) {
        std::cerr << "parity run: " << s.ToString() << "\n";
        journal_failed = true;
      }
      progress.Done(r);
      if (const int64_t resident = slot.RetireIfOverMemory(); resident > 0) {
        ++memory_restarts;
        progress.Note(StrCat("worker restarted after ", r.name, ": resident memory ", resident / 1024,
                             " MiB over the limit of ", options.worker_memory_limit_mib, " MiB"));
      }
    }
    // Shut the worker down in the thread that started it: the kernel kills
    // a worker when the thread that forked it ends (PR_SET_PDEATHSIG).
    slot.Shutdown();
  };
  std::vector<std::thread> threads;
  for (auto& slot : w.slots) threads.emplace_back(drive, std::ref(*slot));
  for (auto& t : threads) t.join();
  RunTotals totals;
  for (auto& slot : w.slots) totals.worker_restarts += slot->replaced();
  totals.memory_restarts = memory_restarts.load();
  totals.journal_failed = journal_failed;
  return totals;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  char finished[32];
  std::strftime(finished, sizeof finished, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return finished;
}

// Writes summary.json over the whole journal: this session's cases and any
// an earlier, interrupted session finished. Returns the summary.
StatusOr<Summary> WriteRunSummary(const RunCommandOptions& options, const RunInputs& inputs, const PlannedRun& plan,
                                  const Workers& w, const RunTotals& totals, double seconds) {
  StatusOr<ResultsJournal> journal =
      ReadResultsJournal((fs::path(options.out_dir) / "results.jsonl").string(), /*drop_partial_tail=*/false);
  if (!journal.ok()) return Reported(journal.status());
  Summary summary = Summarize(journal->results);
  std::set<std::pair<std::string, std::string>> finished;
  for (const CaseResult& r : journal->results) finished.emplace(r.suite, r.name);
  summary.planned = static_cast<int>(plan.planned.size());
  summary.not_run = 0;
  for (const auto& p : plan.planned) *summary.not_run += !finished.count({p.value("suite", ""), p.value("case", "")});

  nlohmann::json fields;
  fields["adapter"] = {{"name", w.info.name()},
                       {"version", w.info.version()},
                       {"backend_version", w.info.backend_version()},
                       {"spec", inputs.adapter.spec}};
  if (w.info.abi_version()) fields["adapter"]["abi_version"] = w.info.abi_version();
  // The adapter's own declaration (spec/aliasing.md): whether it updates
  // aliased inputs in place. Absent when it gave no capabilities.
  if (w.device_info && w.capabilities.has_honours_aliasing()) {
    fields["adapter"]["honours_aliasing"] = w.capabilities.honours_aliasing();
  }
  fields["device"] = {{"name", w.device},
                      {"kind", w.device_info ? w.device_info->kind() : ""},
                      {"description", w.device_info ? w.device_info->description() : w.absent}};
  fields["versions"] = {{"parity", kParityVersion}, {"protocol", static_cast<int>(protocol::PROTOCOL_VERSION)},
                        {"abi", PARITY_ABI_VERSION}};
  fields["seconds"] = seconds;
  fields["finished"] = UtcNow();
  fields["jobs"] = options.jobs;
  fields["worker_restarts"] = totals.worker_restarts;
  fields["memory_restarts"] = totals.memory_restarts;
  fields["expectations"] = options.expectations;
  fields["shard"] = options.shard_count > 1 ? nlohmann::json(StrCat(options.shard_index, "/", options.shard_count))
                                            : nlohmann::json(nullptr);
  if (Status s = WriteSummary(options.out_dir, summary, fields); !s.ok()) return Reported(s);
  return summary;
}

// The folder also gets its reports (junit.xml, report.md, report.html); a
// failure is told but does not fail the run.
void WriteRunReports(const std::string& out_dir) {
  ReportOptions report;
  report.dirs = {out_dir};
  StatusOr<std::vector<RunData>> runs = LoadRuns(report);
  Status rendered = runs.ok() ? WriteReports(*runs, report) : runs.status();
  if (!rendered.ok()) std::cerr << "parity run: the reports could not be written: " << rendered.ToString() << "\n";
}

// Prints the counts and the gate's verdict; returns the exit status.
int Gate(const RunCommandOptions& options, const RunInputs& inputs, const PlannedRun& plan, const Summary& summary,
         const RunTotals& totals, double seconds) {
  std::cout << "cases by state:";
  for (const auto& [state, n] : summary.by_state) std::cout << " " << state << "=" << n;
  std::printf("\n%d of %zu planned cases in %.1f s (%d worker restart%s); results in %s\n", summary.total,
              plan.planned.size(), seconds, totals.worker_restarts, totals.worker_restarts == 1 ? "" : "s",
              options.out_dir.c_str());
  const Expectations* expectations = inputs.expectations.get();
  if (expectations && options.shard_count == 1 && options.filter.empty() && options.filter_file.empty()) {
    for (const auto& e : expectations->entries()) {
      if (e.matched == 0 && plan.done.empty()) std::cout << "note: expectation '" << e.pattern << "' matched no case\n";
    }
  }
  const int errors = summary.by_state.count("ERROR") ? summary.by_state.at("ERROR") : 0;
  std::cout << (summary.gate_failures ? "gate: FAILED, " : "gate: passed, ") << summary.gate_failures
            << " case(s) fail it" << (expectations ? " under " + expectations->path() : std::string()) << "\n";
  if (errors) std::cout << "note: " << errors << " case(s) ended in ERROR (the harness or the infrastructure failed)\n";
  return summary.gate_failures ? 1 : errors ? 3 : 0;
}

}  // namespace

int RunRunCommand(const RunCommandOptions& options) {
  const auto start = Clock::now();
  ::signal(SIGPIPE, SIG_IGN);  // a worker that dies must not take the harness with it
  if (Status s = CheckOptions(options); !s.ok()) return Fail(s);
  // Expected outputs decode in this process: a file may not make it
  // allocate more than a worker may hold.
  if (options.worker_memory_limit_mib > 0) Tensor::SetAllocationLimit(options.worker_memory_limit_mib << 20);
  StatusOr<RunInputs> inputs = LoadInputs(options);
  if (!inputs.ok()) return Fail(inputs.status());
  StatusOr<PlannedRun> plan = OpenJournal(options, *inputs);
  if (!plan.ok()) return Fail(plan.status());
  StatusOr<Workers> workers = StartWorkers(options, inputs->adapter);
  if (!workers.ok()) return Fail(workers.status());

  const size_t planned = inputs->cases.size(), already_done = planned - plan->todo.size();
  std::cout << "parity run: adapter " << workers->info.name() << " " << workers->info.version() << " ("
            << workers->info.backend_version() << "), device " << workers->device << ", " << planned << " cases"
            << (plan->done.empty() ? "" : StrCat(", ", already_done, " already in the journal")) << ", "
            << options.jobs << " worker(s)\n";
  Progress progress(ProgressMode(options.progress), planned, already_done);
  const RunTotals totals = RunCases(options, *inputs, *plan, *workers, progress);
  progress.Finish();
  if (totals.journal_failed) return Fail("the journal could not be written; the run stopped", 2);

  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  StatusOr<Summary> summary = WriteRunSummary(options, *inputs, *plan, *workers, totals, seconds);
  if (!summary.ok()) return Fail(summary.status());
  WriteRunReports(options.out_dir);
  return Gate(options, *inputs, *plan, *summary, totals, seconds);
}

}  // namespace parity
