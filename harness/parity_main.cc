// The `parity` command line: argument parsing and dispatch of every subcommand
// (their usage texts are in command_usage.cc).
#include <malloc.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/command_usage.h"
#include "harness/variant_commands.h"
#include "harness/eval_command.h"
#include "harness/expect_command.h"
#include "harness/run/merge_command.h"
#include "harness/run/run_command.h"
#include "harness/run/variant_check.h"
#include "harness/report_command.h"
#include "reference/core/parallel.h"
#include "reference/core/status.h"
#include "reference/core/tensor.h"
#include "reference/model/malformed_models.h"

namespace {

// A usage error of `command`: its message and the command's own usage on
// stderr, exit status 2.
int Usage(std::string_view command, const std::string& error) {
  return parity::CommandUsageError(command, error);
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
    if (!(args[i] == "--out" && TakeValue(args, i, &out))) return Usage("corpus", "unknown argument '" + args[i] + "'");
  }
  if (out.empty()) return Usage("corpus", "--out DIR is required");
  parity::StatusOr<std::vector<parity::MalformedModel>> models = parity::WriteMalformedModels(out);
  if (!models.ok()) {
    std::cerr << "parity corpus: " << models.status().ToString() << "\n";
    return 2;
  }
  for (const auto& m : *models) std::cout << m.name << ": " << m.description << "\n";
  std::cout << "corpus: wrote " << models->size() << " malformed models to " << out << "\n";
  return 0;
}

// Runs a tool of the harness written in Python (`script`, relative to the
// source tree) with `args` and returns its exit status. The tool finds this
// binary through PARITY_BINARY, so that it drives the same build.
int RunPythonTool(std::string_view command, const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {PythonExecutable(), std::string(PARITY_SOURCE_DIR) + "/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror(("parity " + std::string(command) + ": fork").c_str());
    return 2;
  }
  if (pid == 0) {
    if (!ec && std::getenv("PARITY_BINARY") == nullptr) setenv("PARITY_BINARY", self.c_str(), 1);
    execvp(c_argv[0], c_argv.data());
    std::cerr << "parity " << command << ": cannot run " << c_argv[0] << ": " << std::strerror(errno) << "\n";
    _exit(2);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int RunCorpus(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "malformed") return RunMalformedCorpus(args);
  if (args.empty() || args[0] != "onnx-node") return Usage("corpus", "choose 'onnx-node' or 'malformed'");
  std::vector<std::string> passed;
  bool has_out = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string v;
    if ((args[i] == "--out" || args[i] == "--min-cases" || args[i] == "--filter") && TakeValue(args, i, &v)) {
      has_out |= args[i - 1] == "--out";
      passed.push_back(args[i - 1]);
      passed.push_back(v);
    } else {
      return Usage("corpus", "unknown argument '" + args[i] + "'");
    }
  }
  if (!has_out) return Usage("corpus", "--out DIR is required");
  return RunPythonTool("corpus", "cases/onnx_node/write_corpus.py", passed);
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
    else if (a.rfind("--", 0) == 0) return Usage("eval", "unknown or incomplete option '" + a + "'");
    else options.paths.push_back(a);
  }
  if (options.paths.empty()) return Usage("eval", "give at least one case folder");
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
      if (!ParseShard(v, &options.shard_index, &options.shard_count)) return Usage("run", "--shard takes I/N, e.g. 2/4");
    } else if (a == "--out" && TakeValue(args, i, &v)) options.out_dir = v;
    else if (a == "--timeout" && TakeValue(args, i, &v)) {
      if (!ParseNumber(v, &options.timeout_seconds) || !std::isfinite(options.timeout_seconds) ||
          options.timeout_seconds <= 0) {
        return Usage("run", "--timeout takes a positive, finite number of seconds");
      }
    } else if (a == "--expect" && TakeValue(args, i, &v)) {
      options.expectations += (options.expectations.empty() ? "" : ",") + v;  // repeated: one list
    } else if (a == "--tolerance" && TakeValue(args, i, &v)) options.tolerance = v;
    else if (a == "--no-fallback") options.no_fallback = true;
    else if (a == "--variant-targets" && TakeValue(args, i, &v)) options.variant_targets = parity::SplitTargets(v);
    else if (a == "--state-readback" && TakeValue(args, i, &v)) {
      if (v != "every" && v != "last") return Usage("run", "--state-readback takes every or last");
      options.state_readback = v;
    } else if (a == "--fresh") options.fresh = true;
    else if ((a == "--jobs" || a == "--warm-repeats" || a == "--worker-memory-limit") && TakeValue(args, i, &v)) {
      if (!ParseNumber(v, &number) || number < 0 || number != static_cast<int64_t>(number)) {
        return Usage("run", a + " takes a whole number");
      }
      if (a == "--jobs") options.jobs = static_cast<int>(std::min(number, 1024.0));
      else if (a == "--warm-repeats") {
        // Workers refuse more (spec/protocol/README.md): the case would end FAIL, not the option.
        if (number > kMaxWarmRepeats) return Usage("run", parity::StrCat("--warm-repeats takes at most ", kMaxWarmRepeats));
        options.warm_repeats = static_cast<int>(number);
      }
      else options.worker_memory_limit_mib = static_cast<int64_t>(number);
    } else if (a == "--progress" && TakeValue(args, i, &v)) {
      using P = parity::RunCommandOptions::Progress;
      if (v == "bar") options.progress = P::kBar;
      else if (v == "lines") options.progress = P::kLines;
      else if (v == "quiet") options.progress = P::kQuiet;
      else return Usage("run", "--progress takes bar, lines or quiet");
    } else if (taking_cases && a.rfind("--", 0) != 0) options.cases.push_back(a);
    else return Usage("run", "unknown or incomplete option '" + a + "'");
  }
  if (options.adapter.empty()) return Usage("run", "--adapter is required");
  if (options.cases.empty()) return Usage("run", "--cases DIR is required");
  return parity::RunRunCommand(options);
}

int RunMerge(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out") {
      if (!TakeValue(args, i, &out)) return Usage("merge", "--out needs a folder");
    } else if (args[i].rfind("--", 0) == 0) {
      return Usage("merge", "unknown option '" + args[i] + "'");
    } else {
      dirs.push_back(args[i]);
    }
  }
  if (dirs.empty() || out.empty()) return Usage("merge", "give the shard folders and --out DIR");
  return parity::RunMergeCommand(dirs, out);
}


}  // namespace

// Takes `flag N` out of `args` wherever it stands, N a whole number from 1
// to `max`: into *value, true. An absent flag leaves *value at 0 and returns
// true; a bad or missing N returns false.
bool TakeNumberOption(std::vector<std::string>& args, const char* flag, long long max, long long* value) {
  *value = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != flag) continue;
    char* end = nullptr;
    const long long n = i + 1 < args.size() ? std::strtoll(args[i + 1].c_str(), &end, 10) : -1;
    if (n <= 0 || *end != '\0' || n > max) return false;
    *value = n;
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    return true;
  }
  return true;
}

// Takes --memory-limit MIB out of `args` and applies it; false on a bad value.
bool ApplyMemoryLimit(std::vector<std::string>& args) {
  long long mib = 0;
  if (!TakeNumberOption(args, "--memory-limit", int64_t{1} << 43, &mib)) return false;
  if (mib > 0) parity::Tensor::SetAllocationLimit(static_cast<int64_t>(mib) << 20);
  return true;
}

// Takes --threads N out of `args` and applies it (reference/core/parallel.h) to
// this process and, through PARITY_THREADS, to the workers it starts; false
// on a bad value.
bool ApplyThreads(std::vector<std::string>& args) {
  long long threads = 0;
  if (!TakeNumberOption(args, "--threads", 1024, &threads)) return false;
  if (threads > 0) {
    parity::SetThreadCount(static_cast<int>(threads));
    setenv("PARITY_THREADS", std::to_string(threads).c_str(), 1);
  }
  return true;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << parity::FullUsage();
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    // `parity help NAME` is `parity NAME --help`.
    const std::string help = args.empty() ? parity::FullUsage() : parity::CommandHelp(args[0]);
    if (help.empty()) {
      std::cerr << "parity: unknown command '" << args[0] << "'\n" << parity::FullUsage();
      return 2;
    }
    std::cout << help;
    return 0;
  }
  if (parity::CommandHelp(command).empty()) {
    std::cerr << "parity: unknown command '" << command << "'\n" << parity::FullUsage();
    return 2;
  }
  if (parity::WantsHelp(args)) {
    std::cout << parity::CommandHelp(command);
    return 0;
  }
  if (!ApplyMemoryLimit(args)) return Usage(command, "--memory-limit takes a positive number of MiB");
  if (!ApplyThreads(args)) return Usage(command, "--threads takes a number of threads from 1 to 1024");
  if (command == "corpus") return RunCorpus(args);
  if (command == "eval") return RunEval(args);
  if (command == "check") return parity::RunCheckArgs(args);
  if (command == "resolve") return parity::RunResolveCommand(args);
  if (command == "stamp") return parity::RunStampCommand(args);
  if (command == "run") return RunRun(args);
  if (command == "merge") return RunMerge(args);
  if (command == "report") return parity::RunReportCommand(args);
  if (command == "spec-diff") return RunPythonTool(command, "harness/spec_diff/spec_diff.py", args);
  if (command == "bundle" || command == "verify") {
    std::vector<std::string> passed = {command};
    passed.insert(passed.end(), args.begin(), args.end());
    return RunPythonTool(command, "harness/submission/submission.py", passed);
  }
  if (command == "expect") {
    std::vector<std::string> paths;
    bool force = false;
    for (const auto& a : args) {
      if (a == "--force") force = true;
      else if (a.rfind("--", 0) == 0) return Usage("expect", "unknown option '" + a + "'");
      else paths.push_back(a);
    }
    if (paths.empty()) return Usage("expect", "give at least one case folder");
    return parity::RunExpectCommand(paths, force);
  }
  // Every name of the usage table is dispatched above (cli_help_test.py runs each).
  return Usage(command, "has no implementation (a bug in ONNX Parity)");
}

// The one exception boundary of the command line (STYLE.md): an exception
// that escaped a command is a bug, reported as such rather than as an abort.
int main(int argc, char** argv) {
  // Buffers of 4 MiB and more are mapped on their own and given back when
  // freed. glibc would otherwise raise this threshold after each large free
  // and serve later tensors of nearly the same size from its arenas, which
  // keep freed memory: the peak of a real-size case then grows by a few of
  // its tensors (spec/reference.md, "Memory").
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "parity: internal error (a bug in ONNX Parity; please report it): " << e.what() << "\n";
    return 2;
  }
}
