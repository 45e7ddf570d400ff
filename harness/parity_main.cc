// The `parity` command line: corpus, eval, check, run, merge, report.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "harness/variant_commands.h"
#include "harness/eval_command.h"
#include "harness/expect_command.h"
#include "harness/run/merge_command.h"
#include "harness/run/run_command.h"
#include "harness/run/variant_check.h"
#include "reports/report_command.h"
#include "reference/core/status.h"
#include "reference/core/tensor.h"
#include "reference/model/malformed_models.h"

namespace {

constexpr const char* kUsage = R"(usage:
  parity corpus onnx-node --out DIR [--min-cases N]
      writes ONNX's node tests from the pinned onnx package in the backend-test layout
  parity corpus malformed --out DIR
      writes models that break one rule each, which every loader must refuse cleanly
  parity eval PATH... [--out DIR] [--filter GLOB] [--expect FILE] [--jobs N] [--timeout S] [--tolerance FILE] [--quiet]
             [--prefer-function-bodies] [--variant-targets T1,T2] [--check-aliasing]
      runs the reference evaluator in process on case folders (or folders of them);
      a run over S seconds (default 60) stops between two nodes and ends TIMEOUT.
      --prefer-function-bodies expands every operator with a body in spec/functions/
      from it even where a kernel exists, to check the bodies against the kernels.
      --variant-targets resolves each model's variant entries for those targets
      first ("" selects none) and runs what a backend with them would run.
      --check-aliasing also runs each data set with the model's aliasing annotations
      applied in place, writers first, and prints per data set whether that changed
      any output ("sharing changes nothing" or each difference); a change exits 1
  parity check MODEL... [--equivalence] [--tolerance FILE]
      validates models (the IR's rules and the variant entries' of spec/variants.md)
      and prints every problem found; --equivalence also runs every variant
      entry against the main graph on generated inputs and prints its largest errors
  parity check --cases CASE_DIR... [--equivalence]
      the gate of cases/variants/: a case whose case.json has "check" must be
      refused under that rule, with that text in the message, and under no
      other rule; every other case must be valid
  parity resolve MODEL --target T... | --entry ID... --out FILE
      writes the model a backend with targets T (preferred first; "portable"
      takes entries with no target) runs, and prints each entry's fate
  parity stamp MODEL [--out FILE] [--all]
      writes the region hash into the __hash__ of Compiled entries (empty ones, or all)
  parity expect CASE_DIR... [--force]
      writes each case's expected outputs (output_K.pb) with the reference
      evaluator; for case generators. Existing outputs are kept unless --force
  parity run --adapter NAME|PATH [--device D] --cases DIR... [--filter GLOB] [--filter-file FILE]
             [--shard I/N] [--out DIR] [--timeout S] [--expect FILE]... [--no-fallback] [--jobs N]
             [--warm-repeats N] [--worker-memory-limit MIB] [--fresh] [--progress bar|lines|quiet]
             [--variant-targets T1,T2] [--state-readback every|last]
      runs cases on an adapter, each in a worker process; a case over S seconds
      (default 60) is TIMEOUT, a worker that dies is CRASH and is restarted.
      --variant-targets sends these targets (preferred first; "" an empty list, which
      leaves the choice to the adapter) to every session instead of case.json's or
      those the adapter declares.
      A stateful case (case.json "steps") runs its data sets as steps of one
      session; --state-readback last sends its kept outputs back only at the
      last step (default every: compared at each step).
      Results are appended to DIR/results.jsonl (default out/run) as cases end;
      the same command again resumes an interrupted run. Exit status: 0 gate
      passed, 1 gate failed, 2 bad arguments, 3 cases ended in ERROR
  parity merge DIR... --out DIR
      joins the run folders of the shards of one run
  parity report DIR... [--out DIR] [--title TEXT]
      renders summary.json, junit.xml, report.md and report.html from run
      folders; several folders (adapters, devices) side by side need --out

  eval and check take --memory-limit MIB: the largest tensor, declared or
  computed, that may be allocated (default 16384 MiB); larger ones are refused
  before any allocation.
)";

int Usage(const std::string& error) {
  if (!error.empty()) std::cerr << "parity: " << error << "\n";
  std::cerr << kUsage;
  return 2;
}

// Reads the value of option `args[i]`, advancing i; empty on a missing value.
bool TakeValue(const std::vector<std::string>& args, size_t& i, std::string* value) {
  if (i + 1 >= args.size()) return false;
  *value = args[++i];
  return true;
}

std::string PythonExecutable() {
  if (const char* p = std::getenv("PARITY_PYTHON"); p && *p) return p;
  const std::string venv = std::string(PARITY_SOURCE_DIR) + "/.venv/bin/python";
  if (std::filesystem::exists(venv)) return venv;
  return "python3";
}

// `parity corpus malformed --out DIR`: the models a loader must refuse.
int RunMalformedCorpus(const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 1; i < args.size(); ++i) {
    if (!(args[i] == "--out" && TakeValue(args, i, &out))) return Usage("corpus: unknown argument '" + args[i] + "'");
  }
  if (out.empty()) return Usage("corpus: --out DIR is required");
  parity::StatusOr<std::vector<parity::MalformedModel>> models = parity::WriteMalformedModels(out);
  if (!models.ok()) {
    std::cerr << "parity corpus: " << models.status().ToString() << "\n";
    return 2;
  }
  for (const auto& m : *models) std::cout << m.name << ": " << m.description << "\n";
  std::cout << "corpus: wrote " << models->size() << " malformed models to " << out << "\n";
  return 0;
}

int RunCorpus(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "malformed") return RunMalformedCorpus(args);
  if (args.empty() || args[0] != "onnx-node") return Usage("corpus: choose 'onnx-node' or 'malformed'");
  std::vector<std::string> argv = {PythonExecutable(),
                                   std::string(PARITY_SOURCE_DIR) + "/cases/onnx_node/write_corpus.py"};
  bool has_out = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string v;
    if ((args[i] == "--out" || args[i] == "--min-cases" || args[i] == "--filter") && TakeValue(args, i, &v)) {
      has_out |= args[i - 1] == "--out";
      argv.push_back(args[i - 1]);
      argv.push_back(v);
    } else {
      return Usage("corpus: unknown argument '" + args[i] + "'");
    }
  }
  if (!has_out) return Usage("corpus: --out DIR is required");
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("parity corpus: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(c_argv[0], c_argv.data());
    std::cerr << "parity corpus: cannot run " << c_argv[0] << ": " << std::strerror(errno) << "\n";
    _exit(2);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int RunEval(const std::vector<std::string>& args) {
  parity::EvalCommandOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if (a == "--out" && TakeValue(args, i, &v)) options.out_dir = v;
    else if (a == "--filter" && TakeValue(args, i, &v)) options.filter = v;
    else if (a == "--expect" && TakeValue(args, i, &v)) options.expectations = v;
    else if (a == "--tolerance" && TakeValue(args, i, &v)) options.tolerance = v;
    else if (a == "--jobs" && TakeValue(args, i, &v)) options.jobs = std::atoi(v.c_str());
    else if (a == "--timeout" && TakeValue(args, i, &v)) options.timeout_seconds = std::atof(v.c_str());
    else if (a == "--quiet") options.quiet = true;
    else if (a == "--prefer-function-bodies") options.prefer_function_bodies = true;
    else if (a == "--check-aliasing") options.check_aliasing = true;
    else if (a == "--variant-targets" && TakeValue(args, i, &v)) options.variant_targets = parity::SplitTargets(v);
    else if (a.rfind("--", 0) == 0) return Usage("eval: unknown or incomplete option '" + a + "'");
    else options.paths.push_back(a);
  }
  if (options.paths.empty()) return Usage("eval: give at least one case folder");
  return parity::RunEvalCommand(options);
}

// The most warm repeats a worker accepts in one create_session.
constexpr int kMaxWarmRepeats = 1000;

bool ParseShard(const std::string& text, int* index, int* count) {
  char slash = 0;
  char rest = 0;
  return std::sscanf(text.c_str(), "%d%c%d%c", index, &slash, count, &rest) == 3 && slash == '/';
}

bool ParseNumber(const std::string& text, double* value) {
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

int RunRun(const std::vector<std::string>& args) {
  parity::RunCommandOptions options;
  bool taking_cases = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    double number = 0;
    if (a.rfind("--", 0) == 0) taking_cases = false;
    if (a == "--adapter" && TakeValue(args, i, &v)) options.adapter = v;
    else if (a == "--device" && TakeValue(args, i, &v)) options.device = v;
    else if (a == "--cases") taking_cases = true;
    else if (a == "--filter" && TakeValue(args, i, &v)) options.filter = v;
    else if (a == "--filter-file" && TakeValue(args, i, &v)) options.filter_file = v;
    else if (a == "--shard" && TakeValue(args, i, &v)) {
      if (!ParseShard(v, &options.shard_index, &options.shard_count)) return Usage("run: --shard takes I/N, e.g. 2/4");
    } else if (a == "--out" && TakeValue(args, i, &v)) options.out_dir = v;
    else if (a == "--timeout" && TakeValue(args, i, &v)) {
      if (!ParseNumber(v, &options.timeout_seconds) || !std::isfinite(options.timeout_seconds) ||
          options.timeout_seconds <= 0) {
        return Usage("run: --timeout takes a positive, finite number of seconds");
      }
    } else if (a == "--expect" && TakeValue(args, i, &v)) {
      options.expectations += (options.expectations.empty() ? "" : ",") + v;  // repeated: one list
    } else if (a == "--tolerance" && TakeValue(args, i, &v)) options.tolerance = v;
    else if (a == "--no-fallback") options.no_fallback = true;
    else if (a == "--variant-targets" && TakeValue(args, i, &v)) options.variant_targets = parity::SplitTargets(v);
    else if (a == "--state-readback" && TakeValue(args, i, &v)) {
      if (v != "every" && v != "last") return Usage("run: --state-readback takes every or last");
      options.state_readback = v;
    } else if (a == "--fresh") options.fresh = true;
    else if ((a == "--jobs" || a == "--warm-repeats" || a == "--worker-memory-limit") && TakeValue(args, i, &v)) {
      if (!ParseNumber(v, &number) || number < 0 || number != static_cast<int64_t>(number)) {
        return Usage("run: " + a + " takes a whole number");
      }
      if (a == "--jobs") options.jobs = static_cast<int>(std::min(number, 1024.0));
      else if (a == "--warm-repeats") {
        // Workers refuse more (spec/protocol/README.md): the case would end FAIL, not the option.
        if (number > kMaxWarmRepeats) return Usage(parity::StrCat("run: --warm-repeats takes at most ", kMaxWarmRepeats));
        options.warm_repeats = static_cast<int>(number);
      }
      else options.worker_memory_limit_mib = static_cast<int64_t>(number);
    } else if (a == "--progress" && TakeValue(args, i, &v)) {
      using P = parity::RunCommandOptions::Progress;
      if (v == "bar") options.progress = P::kBar;
      else if (v == "lines") options.progress = P::kLines;
      else if (v == "quiet") options.progress = P::kQuiet;
      else return Usage("run: --progress takes bar, lines or quiet");
    } else if (taking_cases && a.rfind("--", 0) != 0) options.cases.push_back(a);
    else return Usage("run: unknown or incomplete option '" + a + "'");
  }
  if (options.adapter.empty()) return Usage("run: --adapter is required");
  if (options.cases.empty()) return Usage("run: --cases DIR is required");
  return parity::RunRunCommand(options);
}

int RunMerge(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out") {
      if (!TakeValue(args, i, &out)) return Usage("merge: --out needs a folder");
    } else if (args[i].rfind("--", 0) == 0) {
      return Usage("merge: unknown option '" + args[i] + "'");
    } else {
      dirs.push_back(args[i]);
    }
  }
  if (dirs.empty() || out.empty()) return Usage("merge: give the shard folders and --out DIR");
  return parity::RunMergeCommand(dirs, out);
}


}  // namespace

// Takes --memory-limit MIB out of `args` and applies it; false on a bad value.
bool ApplyMemoryLimit(std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--memory-limit") continue;
    char* end = nullptr;
    const long long mib = i + 1 < args.size() ? std::strtoll(args[i + 1].c_str(), &end, 10) : -1;
    if (mib <= 0 || *end != '\0' || mib > (int64_t{1} << 43)) return false;
    parity::Tensor::SetAllocationLimit(static_cast<int64_t>(mib) << 20);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    return true;
  }
  return true;
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("");
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (!ApplyMemoryLimit(args)) return Usage("--memory-limit takes a positive number of MiB");
  if (command == "corpus") return RunCorpus(args);
  if (command == "eval") return RunEval(args);
  if (command == "check") return parity::RunCheckArgs(args);
  if (command == "resolve") return parity::RunResolveCommand(args);
  if (command == "stamp") return parity::RunStampCommand(args);
  if (command == "run") return RunRun(args);
  if (command == "merge") return RunMerge(args);
  if (command == "report") return parity::RunReportCommand(args);
  if (command == "expect") {
    std::vector<std::string> paths;
    bool force = false;
    for (const auto& a : args) {
      if (a == "--force") force = true;
      else if (a.rfind("--", 0) == 0) return Usage("expect: unknown option '" + a + "'");
      else paths.push_back(a);
    }
    if (paths.empty()) return Usage("expect: give at least one case folder");
    return parity::RunExpectCommand(paths, force);
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  return Usage("unknown command '" + command + "'");
}

// The one exception boundary of the command line (STYLE.md): an exception
// that escaped a command is a bug, reported as such rather than as an abort.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "parity: internal error (a bug in ONNX Parity; please report it): " << e.what() << "\n";
    return 2;
  }
}
