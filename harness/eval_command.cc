// The in-process reference run over a corpus.
#include "harness/eval_command.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <new>
#include <thread>

#include "harness/case_outcome.h"
#include "harness/case_reader.h"
#include "harness/compare.h"
#include "harness/expectations.h"
#include "harness/results/output_digest.h"
#include "harness/results/results.h"
#include "harness/results/summary.h"
#include "harness/run/journal.h"
#include "harness/shape_facts.h"
#include "reference/aliasing/aliasing.h"
#include "reference/core/parallel.h"
#include "reference/eval/evaluator.h"
#include "reference/eval/function_library.h"
#include "reference/model/loader.h"
#include "reference/variants/variants.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Whether a top-level node of the model (or of a model-local function it
// calls) is an operator with a body in the standard function library.
StatusOr<bool> UsesAFunctionBody(const onnx::ModelProto& model) {
  PARITY_ASSIGN_OR_RETURN(const FunctionLibrary* library, FunctionLibrary::Standard());
  auto any = [&](const auto& nodes) {
    for (const auto& node : nodes) {
      if (library->Find(node.domain(), node.op_type(), node.overload())) return true;
    }
    return false;
  };
  if (any(model.graph().node())) return true;
  for (const auto& f : model.functions()) {
    if (any(f.node())) return true;
  }
  return false;
}

// The checking mode of aliasing on every data set of a case: one line per
// data set into `lines`; returns whether each was checked and changed nothing.
bool CheckSharing(const CaseInfo& info, const LoadedModel& model, const std::vector<DataSet>& sets,
                  std::vector<std::string>* lines) {
  if (!HasAliases(*model.proto)) {
    lines->push_back(info.name + ": no aliasing annotations, nothing to check");
    return true;
  }
  if (sets.empty()) {
    lines->push_back(info.name + ": no data set to check sharing with");
    return true;
  }
  bool unchanged = true;
  for (const DataSet& set : sets) {
    const std::string label = info.name + " " + fs::path(set.dir).filename().string() + ": ";
    StatusOr<AliasCheck> check = CheckAliasSharing(model, set.inputs, WithReferenceKernels());
    if (!check.ok()) {
      lines->push_back(label + "cannot check sharing: " + check.status().ToString());
      unchanged = false;
    } else if (check->differences.empty()) {
      lines->push_back(label + "sharing changes nothing");
    } else {
      for (const std::string& d : check->differences) lines->push_back(label + d);
      unchanged = false;
    }
  }
  return unchanged;
}

// A result that names the case, the reference and the repro line of `options`.
CaseResult NamedResult(const CaseInfo& info, const EvalCommandOptions& options) {
  CaseResult r;
  r.name = info.name;
  r.suite = info.suite;
  r.dir = info.dir;
  r.adapter = "reference";
  r.device = "cpu";
  r.repro = "parity eval " + ShellQuote(info.dir) + (options.prefer_function_bodies ? " --prefer-function-bodies" : "");
  if (options.variant_targets) {
    std::string joined;
    for (const auto& t : *options.variant_targets) joined += (joined.empty() ? "" : ",") + t;
    r.repro += " --variant-targets " + ShellQuote(joined);
  }
  return r;
}

// Runs one case on the reference and compares every data set. With
// options.check_aliasing, also checks sharing: its lines go to `alias_lines`
// and `alias_unchanged` says whether sharing changed nothing.
CaseResult EvaluateCase(CaseInfo info, const TolerancePolicy& policy, const EvalCommandOptions& options,
                        std::vector<std::string>* alias_lines, bool* alias_unchanged) {
  const double timeout_seconds = options.timeout_seconds;
  const bool prefer_bodies = options.prefer_function_bodies;
  CaseResult r = NamedResult(info, options);
  if (Status meta = ReadCaseMeta(info); !meta.ok()) {
    r.state = CaseState::kError;
    r.message = meta.ToString();
    return r;
  }
  const auto load_start = Clock::now();
  StatusOr<LoadedModel> model = LoadModelFile((fs::path(info.dir) / "model.onnx").string());
  if (!model.ok()) {
    r.state = CaseState::kError;
    r.message = model.status().ToString();
    return r;
  }
  // External data that leaves the case's folder is a broken case, as under
  // parity run (spec/protocol/README.md, "External data"): ERROR, not FAIL.
  if (Status external = CheckModelExternalData(*model); !external.ok()) {
    r.state = CaseState::kError;
    r.message = external.ToString();
    return r;
  }
  r.op = CaseOperator(info, *model->proto);
  if (options.variant_targets && HasVariants(*model->proto)) {
    // The model a backend with these targets runs (spec/variants.md, "Resolution").
    ResolveOptions resolve;
    resolve.targets = *options.variant_targets;
    StatusOr<ResolvedModel> resolved = ResolveForReference(*model, resolve);
    if (!resolved.ok()) {
      r.state = CaseState::kFail;
      r.message = resolved.status().ToString();
      return r;
    }
    for (const EntryDecision& d : resolved->decisions) {
      r.variants.push_back({{"entry", d.id}, {"chosen", d.selected ? d.call : "main"}});
    }
    model->proto = std::make_shared<onnx::ModelProto>(std::move(resolved->model));
  }
  StatusOr<std::vector<DataSet>> sets = ReadDataSets(info, *model->proto);
  if (!sets.ok()) {
    r.state = CaseState::kError;
    r.message = sets.status().ToString();
    return r;
  }
  // eval runs each data set alone; a stateful case may leave carried values
  // out of its files (spec/aliasing.md, "Stateful cases"), which only a
  // session that keeps them can fill in.
  for (const DataSet& set : *sets) {
    if (!IsStateful(info)) break;
    if (set.inputs.size() < static_cast<size_t>(model->proto->graph().input_size()) ||
        set.outputs.size() < static_cast<size_t>(model->proto->graph().output_size())) {
      r.state = CaseState::kError;
      r.message = StrCat(fs::path(set.dir).filename().string(), " leaves carried values out (",
                         set.inputs.size(), " of ", model->proto->graph().input_size(), " inputs, ",
                         set.outputs.size(), " of ", model->proto->graph().output_size(),
                         " outputs): its steps run only in one session; use parity run");
      return r;
    }
  }
  EvalOptions eval_options;
  eval_options.time_limit_seconds = timeout_seconds;
  eval_options.prefer_function_bodies = prefer_bodies;
  if (prefer_bodies) {
    StatusOr<bool> uses_a_body = UsesAFunctionBody(*model->proto);
    if (!uses_a_body.ok()) {
      r.state = CaseState::kError;
      r.message = uses_a_body.status().ToString();
      return r;
    }
    if (!*uses_a_body) {
      // Nothing to check: the kernels would run and compare with themselves.
      r.state = CaseState::kUnsupported;
      r.message = StrCat("no node of the model has a body in spec/functions/ (", r.op, ")");
      return r;
    }
  }
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(*model, WithReferenceKernels(eval_options));
  r.load_ms_cold = MillisecondsSince(load_start);
  if (!evaluator.ok()) {
    r.state = evaluator.status().code() == StatusCode::kUnimplemented ? CaseState::kUnsupported : CaseState::kFail;
    r.message = evaluator.status().ToString();
    return r;
  }
  r.state = CaseState::kPass;
  std::vector<std::string> output_names;
  for (const auto& o : model->proto->graph().output()) output_names.push_back(o.name());
  const auto run_start = Clock::now();
  for (const DataSet& set : *sets) {
    StatusOr<std::vector<Value>> actual = (*evaluator)->Run(set.inputs);
    if (!actual.ok()) {
      switch (actual.status().code()) {
        case StatusCode::kUnimplemented: r.state = CaseState::kUnsupported; break;
        case StatusCode::kDeadlineExceeded: r.state = CaseState::kTimeout; break;
        default: r.state = CaseState::kFail;
      }
      r.message = actual.status().ToString();
      break;
    }
    // The bits computed, before any comparison can stop the loop: two runs
    // (--threads 1 and 2) must agree on them (spec/results.md, "output_sha256").
    // A wrong output count is the comparison's FAIL, below.
    if (actual->size() == output_names.size()) {
      StatusOr<std::vector<std::string>> digests = OutputDigests(*actual, output_names);
      if (!digests.ok()) {
        r.state = CaseState::kError;
        r.message = digests.status().ToString();
        break;
      }
      r.output_sha256[fs::path(set.dir).filename().string()] = *digests;
    }
    KnownDims dims;
    KnownInts ints;
    for (int i = 0; i < model->proto->graph().input_size() && i < static_cast<int>(set.inputs.size()); ++i) {
      NoteKnownValue(model->proto->graph().input(i).name(), set.inputs[static_cast<size_t>(i)], dims, ints);
    }
    const ShapeFacts facts = ShapeFactsFor(*model->proto, r.op, dims, ints);
    const OutputFacts output_facts = OutputOperatorFacts(info, *model->proto, dims, ints);
    // The reference's own outputs are the budget's reference run, except
    // when bodies ran in place of the kernels: then they are what is judged.
    ReferenceRuns runs(*model, set.inputs, timeout_seconds);
    if (!prefer_bodies) runs.SetReference(*actual);
    if (!CompareDataSet(set, *actual, output_names, policy, facts, info, "reference", r, output_facts, &runs)) break;
  }
  r.run_ms = MillisecondsSince(run_start);
  if (options.check_aliasing) *alias_unchanged = CheckSharing(info, *model, *sets, alias_lines);
  return r;
}

// A case that threw: ERROR, with its names for the journal.
CaseResult ErrorWithoutResult(const CaseInfo& info, const EvalCommandOptions& options, std::string message) {
  CaseResult r = NamedResult(info, options);
  r.state = CaseState::kError;
  r.message = std::move(message);
  return r;
}

}  // namespace

int RunEvalCommand(const EvalCommandOptions& options) {
  const auto start = Clock::now();
  const std::string tolerance_path =
      options.tolerance.empty() ? std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json" : options.tolerance;
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Load(tolerance_path);
  if (!policy.ok()) {
    std::cerr << "parity eval: " << policy.status().ToString() << "\n";
    return 2;
  }
  std::unique_ptr<Expectations> expectations;
  if (!options.expectations.empty()) {
    StatusOr<Expectations> loaded = Expectations::Load(options.expectations);
    if (!loaded.ok()) {
      std::cerr << "parity eval: " << loaded.status().ToString() << "\n";
      return 2;
    }
    expectations = std::make_unique<Expectations>(std::move(loaded).value());
  }
  StatusOr<std::vector<CaseInfo>> found = DiscoverCases(options.paths);
  if (!found.ok()) {
    std::cerr << "parity eval: " << found.status().ToString() << "\n";
    return 2;
  }
  std::vector<CaseInfo> cases;
  for (auto& c : *found) {
    if (options.filter.empty() || fnmatch(options.filter.c_str(), c.name.c_str(), 0) == 0) {
      cases.push_back(std::move(c));
    }
  }
  if (cases.empty()) {
    std::cerr << "parity eval: no cases found under the given paths"
              << (options.filter.empty() ? "" : " matching '" + options.filter + "'") << "\n";
    return 2;
  }

  std::ofstream journal;
  std::unique_ptr<FolderLock> out_lock;
  if (!options.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.out_dir, ec);
    StatusOr<std::unique_ptr<FolderLock>> locked = FolderLock::Acquire(options.out_dir, "parity eval");
    if (!locked.ok()) {
      std::cerr << "parity eval: " << locked.status().message() << "\n";
      return 2;
    }
    out_lock = std::move(locked).value();
    journal.open(fs::path(options.out_dir) / "results.jsonl", std::ios::trunc);
    if (!journal) {
      std::cerr << "parity eval: cannot write " << options.out_dir << "/results.jsonl\n";
      return 2;
    }
  }

  std::vector<CaseResult> results(cases.size());
  std::vector<char> covered(cases.size(), 1);  // false: a state the expectations did not foresee
  std::vector<std::vector<std::string>> alias_lines(cases.size());
  std::vector<char> alias_unchanged(cases.size(), 1);
  std::atomic<size_t> next{0};
  std::mutex journal_mutex;
  const int jobs = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  auto worker = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      bool unchanged = true;
      CaseResult r;
      // The one boundary for exceptions: whatever a case throws (bad_alloc
      // under a memory cap, a filesystem error) ends that case ERROR, named,
      // and the other cases go on.
      try {
        r = EvaluateCase(cases[i], *policy, options, &alias_lines[i], &unchanged);
      } catch (const std::bad_alloc&) {
        r = ErrorWithoutResult(cases[i], options, "out of memory while evaluating the case (std::bad_alloc)");
      } catch (const std::exception& e) {
        r = ErrorWithoutResult(cases[i], options, StrCat("internal error in the evaluator: ", e.what()));
      }
      alias_unchanged[i] = unchanged;
      covered[i] = ApplyExpectation(r, expectations.get());
      if (journal.is_open()) {
        std::lock_guard<std::mutex> lock(journal_mutex);
        journal << ResultLine(r);
        journal.flush();
      }
      results[i] = std::move(r);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  // The lines of eval carry no "gate_failure": whether the expectations
  // foresaw a case is kept beside them, in `covered`.
  Summary summary;
  for (size_t i = 0; i < results.size(); ++i) {
    const CaseResult& r = results[i];
    const bool counts_for_gate = FailsGate(r.state) || !covered[i];
    summary.Add(r, counts_for_gate);
    // ERROR is never the evaluator's verdict on a backend, but it is never
    // silent either: even --quiet prints each one with its message.
    if ((counts_for_gate && !options.quiet) || r.state == CaseState::kError) {
      std::cout << CaseStateName(r.state) << " " << r.name << ": " << r.message << "\n";
    }
  }
  const double seconds = MillisecondsSince(start) / 1000.0;
  int sharing_changes = 0;
  if (options.check_aliasing) {
    std::cout << "\naliasing check (functional run against in-place, writers first):\n";
    for (size_t i = 0; i < results.size(); ++i) {
      for (const std::string& line : alias_lines[i]) std::cout << "  " << line << "\n";
      if (!alias_unchanged[i]) ++sharing_changes;
    }
  }

  if (options.per_operator) {
    std::cout << "\npass count per operator (pass/total):\n";
    for (const auto& [op, states] : summary.by_operator) {
      int total = 0;
      for (const auto& [s, n] : states) total += n;
      const int pass = states.count("PASS") ? states.at("PASS") : 0;
      std::printf("  %-36s %4d/%-4d\n", op.c_str(), pass, total);
    }
  }
  std::cout << "\ncases by state:";
  for (const auto& [state, n] : summary.by_state) std::cout << " " << state << "=" << n;
  std::printf("\n%d cases in %.1f s, %d at a time, %d threads per operator\n", summary.total, seconds, jobs, ThreadCount());
  if (expectations) {
    for (const auto& e : expectations->entries()) {
      if (e.matched == 0) std::cout << "note: expectation '" << e.pattern << "' matched no case\n";
    }
    std::cout << (summary.gate_failures ? "gate: FAILED, " : "gate: passed, ") << summary.gate_failures
              << " cases not covered by " << expectations->path() << "\n";
  }

  if (!options.out_dir.empty()) {
    const nlohmann::json fields = {
        {"adapter",
         {{"name", "reference"}, {"mode", options.prefer_function_bodies ? "in-process, function bodies" : "in-process"}}},
        {"seconds", seconds},
        {"threads", jobs},
        {"compute_threads", ThreadCount()},
        {"paths", options.paths},
        {"expectations", options.expectations}};
    if (Status s = WriteSummary(options.out_dir, summary, fields); !s.ok()) {
      std::cerr << "parity eval: " << s.ToString() << "\n";
      return 2;
    }
  }
  if (sharing_changes) {
    std::cout << "aliasing: sharing changed outputs (or could not be checked) in " << sharing_changes << " cases\n";
  }
  const int errors = summary.by_state.count("ERROR") ? summary.by_state.at("ERROR") : 0;
  if (errors) std::cout << "note: " << errors << " case(s) ended in ERROR (unreadable or broken cases)\n";
  return summary.gate_failures || sharing_changes ? 1 : errors ? 3 : 0;
}

}  // namespace parity
