// The run: select and shard cases, resume a journal, drive workers, report.
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
#include <set>
#include <thread>

#include "harness/case_outcome.h"
#include "harness/expectations.h"
#include "harness/run/adapter_manifest.h"
#include "harness/run/case_runner.h"
#include "harness/run/journal.h"
#include "harness/run/progress.h"
#include "harness/run/variant_check.h"
#include "reports/report_command.h"
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

int RunRunCommand(const RunCommandOptions& options) {
  const auto start = Clock::now();
  ::signal(SIGPIPE, SIG_IGN);  // a worker that dies must not take the harness with it
  if (options.shard_count < 1 || options.shard_index < 1 || options.shard_index > options.shard_count) {
    return Fail(StrCat("--shard ", options.shard_index, "/", options.shard_count, ": I must be between 1 and N"));
  }
  if (options.timeout_seconds <= 0) return Fail("--timeout must be a positive number of seconds");
  if (options.jobs < 1) return Fail("--jobs must be at least 1");
  if (options.cases.empty()) return Fail("give at least one --cases folder");
  if (!options.state_readback.empty() && options.state_readback != "every" && options.state_readback != "last") {
    return Fail("--state-readback takes every or last, not '" + options.state_readback + "'");
  }

  const std::string tolerance_path =
      options.tolerance.empty() ? std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json" : options.tolerance;
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Load(tolerance_path);
  if (!policy.ok()) return Fail(policy.status().ToString());
  std::unique_ptr<Expectations> expectations;
  if (!options.expectations.empty()) {
    StatusOr<Expectations> loaded = Expectations::Load(options.expectations);
    if (!loaded.ok()) return Fail(loaded.status().ToString());
    expectations = std::make_unique<Expectations>(std::move(loaded).value());
  }
  StatusOr<std::vector<CaseInfo>> cases = SelectCases(options);
  if (!cases.ok()) return Fail(cases.status().ToString());
  if (cases->empty()) return Fail("no cases selected (check --cases, --filter, --filter-file and --shard)");

  const std::string binary_dir = ExecutableDir();
  StatusOr<ResolvedAdapter> adapter = ResolveAdapter(options.adapter, binary_dir);
  if (!adapter.ok()) return Fail(adapter.status().ToString());

  std::vector<std::string> roots;
  for (const auto& c : options.cases) roots.push_back(fs::absolute(c).lexically_normal().string());
  const nlohmann::json settings = {
      {"adapter", adapter->spec},
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
  StatusOr<std::unique_ptr<Journal>> journal = Journal::Open(options.out_dir, settings, options.fresh);
  if (!journal.ok()) return Fail(journal.status().ToString());
  std::set<std::string> done;
  for (const auto& r : (*journal)->previous()) done.insert(r.dir);

  // A resumed run keeps its plan, which must still name the cases on disk.
  nlohmann::json planned = (*journal)->previous_plan();
  if (!planned.empty()) {
    std::vector<std::string> planned_dirs, found_dirs;
    for (const auto& p : planned) planned_dirs.push_back(p.value("dir", ""));
    for (const auto& c : *cases) found_dirs.push_back(c.dir);
    if (planned_dirs != found_dirs) {
      return Fail(StrCat(options.out_dir, "/run.json plans ", planned_dirs.size(), " cases, but the selection now finds ",
                         found_dirs.size(), " other ones: the case folders changed since that run; use --fresh"));
    }
  } else {
    for (const auto& c : *cases) {
      planned.push_back({{"case", c.name}, {"suite", c.suite}, {"dir", c.dir}, {"operator", PlannedOperator(c)}});
    }
  }
  if (Status s = (*journal)->WritePlan(planned); !s.ok()) return Fail(s.ToString());
  std::vector<CaseInfo> todo;
  for (const auto& c : *cases) {
    if (!done.count(c.dir)) todo.push_back(c);
  }

  // Workers: one slot per job; the first is started now to learn the
  // adapter's devices and capabilities.
  fs::create_directories(fs::path(options.out_dir) / "logs");
  std::vector<std::unique_ptr<WorkerSlot>> slots;
  for (int j = 0; j < options.jobs; ++j) {
    WorkerLaunch launch = adapter->launch;
    launch.log_path = (fs::path(options.out_dir) / "logs" / StrCat("worker-", j + 1, ".log")).string();
    launch.memory_limit_kb = options.worker_memory_limit_mib * 1024;
    slots.push_back(std::make_unique<WorkerSlot>(launch));
  }
  StatusOr<WorkerProcess*> probe = slots[0]->Get(kWorkerStartMs);
  if (!probe.ok()) return Fail(probe.status().ToString());
  const protocol::AdapterInfo info = slots[0]->info();
  std::string device = options.device;
  const protocol::Device* device_info = nullptr;
  for (const auto& d : info.devices()) {
    if (device.empty()) device = d.name();
    if (d.name() == device) device_info = &d;
  }
  std::string absent;
  if (!device_info) {
    std::string offered;
    for (const auto& d : info.devices()) offered += (offered.empty() ? "" : ", ") + d.name();
    absent = StrCat("device '", device, "' is absent: adapter '", info.name(), "' offers ", offered.empty() ? "none" : offered);
  }
  protocol::Capabilities capabilities;
  if (device_info) {
    protocol::Request request;
    request.mutable_get_capabilities()->set_device(device);
    StatusOr<protocol::Response> answer = (*probe)->Call(request, kWorkerStartMs);
    if (!answer.ok()) return Fail(StrCat("the adapter's worker failed when asked for capabilities: ", answer.status().message()));
    if (answer->has_status() && answer->status().code() == protocol::DEVICE_UNAVAILABLE) {
      absent = StrCat("device '", device, "' is unavailable: ", answer->status().message());
    } else if (answer->has_status() && answer->status().code() != protocol::OK) {
      return Fail(StrCat("the adapter refused to state its capabilities: ", answer->status().message()));
    }
    capabilities = answer->capabilities();
  }

  CaseRunSettings run_settings;
  run_settings.adapter = info.name();
  run_settings.device = device;
  run_settings.allow_fallback = !options.no_fallback;
  run_settings.warm_repeats = options.warm_repeats;
  run_settings.timeout_seconds = options.timeout_seconds;
  run_settings.policy = &*policy;
  run_settings.capabilities = &capabilities;
  run_settings.variant_targets = options.variant_targets;
  run_settings.repro_prefix = ReproPrefix(options, adapter->spec, device);
  run_settings.state_readback = options.state_readback == "last" ? StateReadback::kLast : StateReadback::kEvery;

  Progress::Mode mode = Progress::Mode::kLines;
  switch (options.progress) {
    case RunCommandOptions::Progress::kAuto: mode = ::isatty(1) ? Progress::Mode::kBar : Progress::Mode::kLines; break;
    case RunCommandOptions::Progress::kBar: mode = Progress::Mode::kBar; break;
    case RunCommandOptions::Progress::kLines: mode = Progress::Mode::kLines; break;
    case RunCommandOptions::Progress::kQuiet: mode = Progress::Mode::kQuiet; break;
  }
  std::cout << "parity run: adapter " << info.name() << " " << info.version() << " (" << info.backend_version()
            << "), device " << device << ", " << cases->size() << " cases"
            << (done.empty() ? "" : StrCat(", ", cases->size() - todo.size(), " already in the journal")) << ", "
            << options.jobs << " worker(s)\n";
  Progress progress(mode, cases->size(), cases->size() - todo.size());

  std::atomic<size_t> next{0};
  std::atomic<bool> journal_failed{false};
  std::atomic<int> memory_restarts{0};
  std::mutex expectations_mutex;
  auto drive = [&](WorkerSlot& slot) {
    for (size_t i = next++; i < todo.size() && !journal_failed; i = next++) {
      CaseResult r;
      if (!absent.empty()) {
        r.name = todo[i].name, r.suite = todo[i].suite, r.dir = todo[i].dir, r.adapter = info.name(), r.device = device;
        r.op = PlannedOperator(todo[i]);
        r.state = CaseState::kSkip;
        r.message = absent;
      } else {
        try {
          r = RunCase(todo[i], slot, run_settings);
        } catch (const std::exception& e) {  // a bug of ours: the case is ERROR, the run goes on
          r.name = todo[i].name, r.suite = todo[i].suite, r.dir = todo[i].dir, r.adapter = info.name();
          r.device = device;
          r.state = CaseState::kError;
          r.message = StrCat("internal error in the harness: ", e.what());
          slot.Discard();
        }
      }
      {
        std::lock_guard<std::mutex> lock(expectations_mutex);  // entries count their matches
        r.gate_failure = !ApplyExpectation(r, expectations.get());
      }
      if (Status s = (*journal)->Append(r); !s.ok()) {
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
  for (auto& slot : slots) threads.emplace_back(drive, std::ref(*slot));
  for (auto& t : threads) t.join();
  int restarts = 0;
  for (auto& slot : slots) restarts += slot->replaced();
  progress.Finish();
  if (journal_failed) return Fail("the journal could not be written; the run stopped", 2);

  // The summary covers the whole journal: this session's cases and any an
  // earlier, interrupted session finished.
  StatusOr<std::vector<CaseResult>> all = ReadJournal((fs::path(options.out_dir) / "results.jsonl").string(), false);
  if (!all.ok()) return Fail(all.status().ToString());
  Summary summary;
  int gate_failures = 0;
  for (const auto& r : *all) {
    summary.Add(r);
    gate_failures += r.gate_failure;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  nlohmann::json j = summary.ToJson();
  j["planned"] = planned.size();
  j["adapter"] = {{"name", info.name()},
                  {"version", info.version()},
                  {"backend_version", info.backend_version()},
                  {"spec", adapter->spec}};
  if (info.abi_version()) j["adapter"]["abi_version"] = info.abi_version();
  // The adapter's own declaration (spec/aliasing.md): whether it updates
  // aliased inputs in place. Absent when it gave no capabilities.
  if (device_info && capabilities.has_honours_aliasing()) {
    j["adapter"]["honours_aliasing"] = capabilities.honours_aliasing();
  }
  j["device"] = {{"name", device},
                 {"kind", device_info ? device_info->kind() : ""},
                 {"description", device_info ? device_info->description() : absent}};
  j["versions"] = {{"parity", kParityVersion}, {"protocol", static_cast<int>(protocol::PROTOCOL_VERSION)},
                   {"abi", PARITY_ABI_VERSION}};
  j["seconds"] = seconds;
  {
    const std::time_t now = std::time(nullptr);
    char finished[32];
    std::strftime(finished, sizeof finished, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    j["finished"] = finished;
  }
  j["jobs"] = options.jobs;
  j["worker_restarts"] = restarts;
  j["memory_restarts"] = memory_restarts.load();
  j["gate_failures"] = gate_failures;
  j["expectations"] = options.expectations;
  j["shard"] = options.shard_count > 1 ? nlohmann::json(StrCat(options.shard_index, "/", options.shard_count))
                                       : nlohmann::json(nullptr);
  if (Status s = WriteFileAtomically((fs::path(options.out_dir) / "summary.json").string(), DumpJson(j, 1) + "\n");
      !s.ok()) {
    return Fail(s.ToString());
  }

  // The folder also gets its reports (junit.xml, report.md, report.html).
  ReportOptions report;
  report.dirs = {options.out_dir};
  StatusOr<std::vector<RunData>> runs = LoadRuns(report);
  Status rendered = runs.ok() ? WriteReports(*runs, report) : runs.status();
  if (!rendered.ok()) std::cerr << "parity run: the reports could not be written: " << rendered.ToString() << "\n";

  std::cout << "cases by state:";
  for (const auto& [state, n] : summary.by_state) std::cout << " " << state << "=" << n;
  std::printf("\n%d of %zu planned cases in %.1f s (%d worker restart%s); results in %s\n", summary.total,
              planned.size(), seconds, restarts, restarts == 1 ? "" : "s", options.out_dir.c_str());
  if (expectations && options.shard_count == 1 && options.filter.empty() && options.filter_file.empty()) {
    for (const auto& e : expectations->entries()) {
      if (e.matched == 0 && done.empty()) std::cout << "note: expectation '" << e.pattern << "' matched no case\n";
    }
  }
  const int errors = summary.by_state.count("ERROR") ? summary.by_state.at("ERROR") : 0;
  std::cout << (gate_failures ? "gate: FAILED, " : "gate: passed, ") << gate_failures << " case(s) fail it"
            << (expectations ? " under " + expectations->path() : std::string()) << "\n";
  if (errors) std::cout << "note: " << errors << " case(s) ended in ERROR (the harness or the infrastructure failed)\n";
  return gate_failures ? 1 : errors ? 3 : 0;
}

}  // namespace parity
