// `parity resolve`, `parity stamp` and `parity check` (variant_commands.h):
// the IR's, the variants' and the aliasing rules, and the corpus gate.
#include "harness/variant_commands.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>
#include <set>

#include "harness/case_reader.h"
#include "harness/command_usage.h"
#include "harness/compare.h"
#include "harness/run/journal.h"
#include "harness/run/variant_check.h"
#include "reference/aliasing/aliasing.h"
#include "reference/eval/evaluator.h"
#include "reference/model/validator.h"
#include "reference/variants/variants.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

int UsageError(const std::string& command, const std::string& message) {
  return CommandUsageError(command, message);
}

Status WriteModel(const onnx::ModelProto& model, const std::string& path) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return Internal("cannot serialize the model for ", path);
  return WriteFileAtomically(path, bytes);
}

// Values for the graph's inputs (those without an initializer), from their
// declared types: floats uniform in [-1, 1), integers in [0, 3], bools fair
// coins; symbolic or unknown dimensions are 2. Seeded, so reruns agree.
StatusOr<std::vector<Value>> GenerateInputs(const onnx::GraphProto& graph) {
  std::set<std::string> initialized;
  for (const auto& init : graph.initializer()) initialized.insert(init.name());
  std::vector<Value> inputs;
  std::mt19937_64 engine(20261122);
  for (const auto& input : graph.input()) {
    if (initialized.count(input.name())) break;  // the rest take their initializers
    if (!input.type().has_tensor_type()) {
      return Unimplemented("input '", input.name(), "' is not a tensor: give the inputs of a data set");
    }
    const auto& tensor_type = input.type().tensor_type();
    const int32_t elem = tensor_type.elem_type();
    if (!IsKnownDataType(elem)) return InvalidModel("input '", input.name(), "' has unknown element type ", elem);
    const auto dtype = static_cast<DataType>(elem);
    Shape shape;
    for (const auto& d : tensor_type.shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : 2);
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    std::vector<double> values(static_cast<size_t>(count));
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, 3);
    for (double& v : values) {
      if (IsFloatingPoint(dtype)) v = real(engine);
      else if (dtype == DataType::kBool) v = small(engine) & 1;
      else if (IsInteger(dtype)) v = small(engine);
      else return Unimplemented("cannot generate input '", input.name(), "' of type ", DataTypeName(dtype));
    }
    PARITY_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromDoubles(dtype, shape, values));
    inputs.push_back(Value::FromTensor(std::move(tensor)));
  }
  return inputs;
}

StatusOr<std::vector<Value>> RunModel(const LoadedModel& model, const std::vector<Value>& inputs) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(model, WithReferenceKernels()));
  return evaluator->Run(inputs);
}

std::string CallOpType(const std::string& call) {
  const size_t colon = call.rfind(':');
  return colon == std::string::npos ? call : call.substr(colon + 1);
}

// Problems of a model: the IR's rules, then the entries' and the aliasing
// annotations' (only when the IR's hold, since both read the graph as a
// valid one).
std::vector<Status> AllProblems(const LoadedModel& model) {
  std::vector<Status> problems = ValidateModel(model);
  if (!problems.empty()) return problems;
  problems = ValidateVariants(model);
  for (Status& p : ValidateAliases(model)) problems.push_back(std::move(p));
  return problems;
}

void PrintEquivalence(const std::vector<EntryEquivalence>& results) {
  for (const EntryEquivalence& e : results) {
    if (!e.checked) {
      std::cout << "  entry " << e.id << " (" << e.call << "): not checked: " << e.reason << "\n";
      continue;
    }
    if (!e.ran) {
      std::cout << "  entry " << e.id << " (" << e.call << "): FAILED TO RUN: " << e.reason << "\n";
      continue;
    }
    std::cout << "  entry " << e.id << " (" << e.call << "): " << (e.equivalent ? "equivalent" : "DIFFERS")
              << std::setprecision(3) << " max_abs_error " << e.max_abs_error << " max_rel_error "
              << e.max_rel_error << " max_ulp_error " << e.max_ulp_error
              << (e.reason.empty() ? "" : " -- " + e.reason) << "\n";
  }
}

// One case of `parity check --cases`: true when it ends as its case.json says.
bool CheckCase(CaseInfo info, bool equivalence, const std::string& tolerance_path) {
  if (Status meta = ReadCaseMeta(info); !meta.ok()) {
    std::cout << "ERROR " << info.name << ": " << meta.ToString() << "\n";
    return false;
  }
  StatusOr<LoadedModel> model = LoadModelFile((fs::path(info.dir) / "model.onnx").string());
  if (!model.ok()) {
    std::cout << "ERROR " << info.name << ": " << model.status().ToString() << "\n";
    return false;
  }
  const std::vector<Status> problems = AllProblems(*model);
  if (const std::optional<CaseCheck>& check = info.case_file.check) {
    const std::string& rule = check->rule;
    const std::string& needle = check->message;
    // The case must break its rule, and only its rule: a problem under
    // another rule means the case does not show what it claims to.
    const Status* match = nullptr;
    const Status* other = nullptr;
    for (const Status& p : problems) {
      if (p.message().rfind(rule + ":", 0) != 0) {
        if (!other) other = &p;
      } else if (!match && p.message().find(needle) != std::string::npos) {
        match = &p;
      }
    }
    if (match && !other) {
      std::cout << "REFUSED " << info.name << " as expected: " << match->message() << "\n";
      return true;
    }
    if (match) {
      std::cout << "FAIL " << info.name << ": refused under " << rule << " but also under another rule: "
                << other->message() << "\n";
      return false;
    }
    std::cout << "FAIL " << info.name << ": expected a " << rule << " problem naming '" << needle << "', got "
              << (problems.empty() ? "none" : "these") << "\n";
    for (const Status& p : problems) std::cout << "  " << p.message() << "\n";
    return false;
  }
  if (!problems.empty()) {
    std::cout << "FAIL " << info.name << ": a valid case was refused\n";
    for (const Status& p : problems) std::cout << "  " << p.message() << "\n";
    return false;
  }
  if (!equivalence) {
    std::cout << "OK " << info.name << "\n";
    return true;
  }
  std::vector<Value> inputs;
  if (StatusOr<std::vector<DataSet>> sets = ReadDataSets(info, *model->proto); sets.ok() && !sets->empty()) {
    inputs = (*sets)[0].inputs;
  }
  EquivalenceOptions options;
  options.tolerance_path = tolerance_path;
  options.operator_hint = info.case_file.operator_name.value_or("");
  if (info.case_file.tolerance) options.tolerance_override = *info.case_file.tolerance;
  StatusOr<std::vector<EntryEquivalence>> results = CheckEquivalence(*model, std::move(inputs), options);
  if (!results.ok()) {
    std::cout << "FAIL " << info.name << ": " << results.status().ToString() << "\n";
    return false;
  }
  const bool all = std::all_of(results->begin(), results->end(),
                               [](const EntryEquivalence& e) { return !e.checked || e.equivalent; });
  std::cout << (all ? "OK " : "FAIL ") << info.name << "\n";
  PrintEquivalence(*results);
  return all;
}

}  // namespace

StatusOr<std::vector<EntryEquivalence>> CheckEquivalence(const LoadedModel& model, std::vector<Value> inputs,
                                                         const EquivalenceOptions& options) {
  PARITY_ASSIGN_OR_RETURN(TolerancePolicy policy,
                          TolerancePolicy::Load(options.tolerance_path.empty()
                                                    ? std::string(PARITY_SOURCE_DIR) + "/spec/tolerance.json"
                                                    : options.tolerance_path));
  if (inputs.empty()) {
    PARITY_ASSIGN_OR_RETURN(inputs, GenerateInputs(model.proto->graph()));
  }
  LoadedModel main = model;
  main.proto = std::make_shared<onnx::ModelProto>(StripVariants(*model.proto));
  StatusOr<std::vector<Value>> main_outputs = RunModel(main, inputs);
  if (!main_outputs.ok()) return main_outputs.status().WithContext("the main graph");
  const std::vector<Value>& expected = *main_outputs;
  std::vector<EntryEquivalence> results;
  for (const VariantEntry& entry : CollectEntries(*model.proto)) {
    EntryEquivalence e;
    e.id = entry.id;
    e.call = entry.call;
    if (entry.compiled && entry.target != kReferenceTarget) {
      e.reason = StrCat("a Compiled blob for target '", entry.target, "', which the reference cannot run");
      results.push_back(std::move(e));
      continue;
    }
    ResolveOptions resolve;
    resolve.only_entries = {entry.id};
    StatusOr<ResolvedModel> resolved = ResolveForReference(model, resolve);
    if (!resolved.ok()) return resolved.status().WithContext(StrCat("entry ", entry.id));
    LoadedModel alternative = model;
    alternative.proto = std::make_shared<onnx::ModelProto>(std::move(resolved->model));
    alternative.name = StrCat(model.name, " resolved to ", entry.id);
    StatusOr<std::vector<Value>> actual = RunModel(alternative, inputs);
    e.checked = actual.ok() || actual.status().code() != StatusCode::kUnimplemented;
    if (!actual.ok()) {
      // Unimplemented: a kernel the reference lacks, not checked. Any other
      // failure: the alternative does not compute what the main graph does.
      e.reason = actual.status().ToString();
      results.push_back(std::move(e));
      continue;
    }
    e.ran = true;
    e.equivalent = actual->size() == expected.size();
    if (!e.equivalent) e.reason = StrCat(actual->size(), " outputs, the main graph has ", expected.size());
    for (size_t i = 0; i < expected.size() && i < actual->size(); ++i) {
      const Value& want = expected[i];
      const DataType dtype = want.is_tensor() ? want.tensor().dtype() : DataType::kFloat;
      std::string op = CallOpType(entry.call);
      if (!policy.IsListed(op) && !options.operator_hint.empty()) op = options.operator_hint;
      Tolerance tol = policy.For(op, dtype, ShapeFacts{});
      if (!options.tolerance_override.is_null()) {
        PARITY_ASSIGN_OR_RETURN(tol, TolerancePolicy::ApplyOverride(tol, options.tolerance_override));
      }
      const OutputComparison c = CompareValues(want, (*actual)[i], tol);
      e.max_abs_error = std::max(e.max_abs_error, c.stats.max_abs_error);
      e.max_rel_error = std::max(e.max_rel_error, c.stats.max_rel_error);
      e.max_ulp_error = std::max(e.max_ulp_error, c.stats.max_ulp_error);
      if (c.verdict == CompareVerdict::kMismatch && e.equivalent) {
        e.equivalent = false;
        e.reason = StrCat("output '", model.proto->graph().output(static_cast<int>(i)).name(), "': ", c.message);
      }
    }
    results.push_back(std::move(e));
  }
  return results;
}

int RunResolveCommand(const std::vector<std::string>& args) {
  std::string path, out;
  ResolveOptions options;
  bool targets_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if ((a == "--target" || a == "--targets") && has_value) {
      for (auto& t : SplitTargets(args[++i])) options.targets.push_back(std::move(t));
      targets_given = true;
    } else if (a == "--entry" && has_value) {
      for (auto& e : SplitTargets(args[++i])) options.only_entries.push_back(std::move(e));
    } else if (a == "--out" && has_value) {
      out = args[++i];
    } else if (a.rfind("--", 0) == 0) {
      return UsageError("resolve", "unknown or incomplete option '" + a + "'");
    } else if (path.empty()) {
      path = a;
    } else {
      return UsageError("resolve", "give one model ('" + a + "' is a second)");
    }
  }
  if (path.empty() || out.empty()) return UsageError("resolve", "give MODEL and --out FILE");
  if (targets_given && !options.only_entries.empty()) {
    return UsageError("resolve", "--target and --entry exclude each other");
  }
  StatusOr<LoadedModel> model = LoadModelFile(path);
  if (!model.ok()) {
    std::cout << "ERROR " << model.status().ToString() << "\n";
    return 2;
  }
  StatusOr<ResolvedModel> resolved = ResolveVariants(*model, options);
  if (!resolved.ok()) {
    std::cout << "REFUSED " << resolved.status().ToString() << "\n";
    return 1;
  }
  for (const EntryDecision& d : resolved->decisions) {
    std::cout << (d.selected ? "selected " : "main     ") << d.id << " (" << d.call << ")"
              << (d.selected ? "" : ": " + d.reason) << "\n";
  }
  // Resolution promises a model that passes the IR's rules (spec/variants.md,
  // 4.2 step 10); a file that does not is never written.
  LoadedModel result{std::make_shared<onnx::ModelProto>(std::move(resolved->model)), StrCat(path, " resolved"),
                     model->base_dir};
  if (std::vector<Status> broken = ValidateModel(result); !broken.empty()) {
    std::cout << "INTERNAL the resolved model breaks the IR's rules (a bug in resolution; nothing written):\n";
    for (const Status& p : broken) std::cout << "  " << p.ToString() << "\n";
    return 1;
  }
  if (Status written = WriteModel(*result.proto, out); !written.ok()) {
    std::cout << "ERROR " << written.ToString() << "\n";
    return 2;
  }
  std::cout << "wrote " << out << " (" << result.proto->graph().node_size() << " nodes in the main graph)\n";
  return 0;
}

int RunStampCommand(const std::vector<std::string>& args) {
  std::string path, out;
  bool all = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out" && i + 1 < args.size()) out = args[++i];
    else if (args[i] == "--all") all = true;
    else if (args[i].rfind("--", 0) == 0) return UsageError("stamp", "unknown or incomplete option '" + args[i] + "'");
    else if (path.empty()) path = args[i];
    else return UsageError("stamp", "give one model ('" + args[i] + "' is a second)");
  }
  if (path.empty()) return UsageError("stamp", "give MODEL [--out FILE] [--all]");
  if (out.empty()) out = path;
  StatusOr<LoadedModel> model = LoadModelFile(path);
  if (!model.ok()) {
    std::cout << "ERROR " << model.status().ToString() << "\n";
    return 2;
  }
  onnx::ModelProto proto = *model->proto;
  StatusOr<int> stamped = StampCompiledHashes(proto, all);
  if (!stamped.ok()) {
    std::cout << "REFUSED " << stamped.status().ToString() << "\n";
    return 1;
  }
  if (Status written = WriteModel(proto, out); !written.ok()) {
    std::cout << "ERROR " << written.ToString() << "\n";
    return 2;
  }
  std::cout << "stamped " << *stamped << " Compiled entr" << (*stamped == 1 ? "y" : "ies") << " into " << out << "\n";
  return 0;
}

int RunCheckArgs(const std::vector<std::string>& args) {
  bool equivalence = false, cases = false;
  std::string tolerance;
  std::vector<std::string> paths;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--equivalence") equivalence = true;
    else if (args[i] == "--cases") cases = true;
    else if (args[i] == "--tolerance" && i + 1 < args.size()) tolerance = args[++i];
    else if (args[i].rfind("--", 0) == 0) return UsageError("check", "unknown or incomplete option '" + args[i] + "'");
    else paths.push_back(args[i]);
  }
  if (paths.empty()) return UsageError("check", "give at least one model (or case folder, with --cases)");
  if (cases) {
    StatusOr<std::vector<CaseInfo>> found = DiscoverCases(paths);
    if (!found.ok()) return UsageError("check", found.status().ToString());
    int failed = 0;
    for (const CaseInfo& info : *found) failed += CheckCase(info, equivalence, tolerance) ? 0 : 1;
    std::cout << found->size() - static_cast<size_t>(failed) << " of " << found->size()
              << " cases as expected, " << failed << " not\n";
    return failed == 0 ? 0 : 1;
  }
  int worst = 0;
  for (const std::string& path : paths) {
    StatusOr<LoadedModel> model = LoadModelFile(path);
    if (!model.ok()) {
      std::cout << "ERROR " << model.status().ToString() << "\n";
      worst = 2;
      continue;
    }
    const std::vector<Status> problems = AllProblems(*model);
    for (const Status& p : problems) std::cout << "PROBLEM " << p.ToString() << "\n";
    if (!problems.empty()) {
      std::cout << problems.size() << " problem(s) in " << path << "\n";
      worst = std::max(worst, 1);
      continue;
    }
    std::cout << "OK " << path << "\n";
    if (!equivalence) continue;
    EquivalenceOptions options;
    options.tolerance_path = tolerance;
    StatusOr<std::vector<EntryEquivalence>> results = CheckEquivalence(*model, {}, options);
    if (!results.ok()) {
      std::cout << "ERROR " << results.status().ToString() << "\n";
      worst = std::max(worst, 1);
      continue;
    }
    PrintEquivalence(*results);
    for (const EntryEquivalence& e : *results) {
      if (e.checked && !e.equivalent) worst = std::max(worst, 1);
    }
  }
  return worst;
}

}  // namespace parity
