// The subcommands' usage texts (command_usage.h); README.md's Commands block
// is this table as `parity --help` prints it (harness/cli_help_test.py).
#include "harness/command_usage.h"

#include <algorithm>
#include <iostream>

namespace parity {
namespace {

constexpr CommandUsage kCommands[] = {
    {"corpus", "parity corpus onnx-node --out DIR [--min-cases N]",
     "writes ONNX's node tests from the pinned onnx package in the backend-test layout"},
    {"corpus", "parity corpus malformed --out DIR",
     "writes models that break one rule each, which every loader must refuse cleanly"},
    {"eval",
     "parity eval PATH... [--out DIR] [--filter GLOB] [--expect FILE] [--jobs N] [--timeout S] [--tolerance FILE] [--quiet]\n"
     "           [--prefer-function-bodies] [--variant-targets T1,T2] [--check-aliasing]",
     "runs the reference evaluator in process on case folders (or folders of them);\n"
     "a run over S seconds (default 60) stops between two nodes and ends TIMEOUT.\n"
     "--prefer-function-bodies expands every operator with a body in spec/functions/\n"
     "from it even where a kernel exists, to check the bodies against the kernels.\n"
     "--variant-targets resolves each model's variant entries for those targets\n"
     "first (\"\" selects none) and runs what a backend with them would run.\n"
     "--check-aliasing also runs each data set with the model's aliasing annotations\n"
     "applied in place, writers first, and prints per data set whether that changed\n"
     "any output (\"sharing changes nothing\" or each difference); a change exits 1"},
    {"check", "parity check MODEL... [--equivalence] [--tolerance FILE]",
     "validates models (the IR's rules and the variant entries' of spec/variants.md)\n"
     "and prints every problem found; --equivalence also runs every variant\n"
     "entry against the main graph on generated inputs and prints its largest errors"},
    {"check", "parity check --cases CASE_DIR... [--equivalence]",
     "the gate of cases/variants/: a case whose case.json has \"check\" must be\n"
     "refused under that rule, with that text in the message, and under no\n"
     "other rule; every other case must be valid"},
    {"resolve", "parity resolve MODEL --target T... | --entry ID... --out FILE",
     "writes the model a backend with targets T (preferred first; \"portable\"\n"
     "takes entries with no target) runs, and prints each entry's fate"},
    {"stamp", "parity stamp MODEL [--out FILE] [--all]",
     "writes the region hash into the __hash__ of Compiled entries (empty ones, or all)"},
    {"expect", "parity expect CASE_DIR... [--force]",
     "writes each case's expected outputs (output_K.pb) with the reference\n"
     "evaluator; for case generators. Existing outputs are kept unless --force"},
    {"run",
     "parity run --adapter NAME|PATH [--device D] --cases DIR... [--filter GLOB] [--filter-file FILE]\n"
     "           [--shard I/N] [--out DIR] [--timeout S] [--expect FILE]... [--no-fallback] [--jobs N]\n"
     "           [--warm-repeats N] [--worker-memory-limit MIB] [--fresh] [--progress bar|lines|quiet]\n"
     "           [--variant-targets T1,T2] [--state-readback every|last]",
     "runs cases on an adapter, each in a worker process; a case over S seconds\n"
     "(default 60) is TIMEOUT, a worker that dies is CRASH and is restarted.\n"
     "--variant-targets sends these targets (preferred first; \"\" an empty list, which\n"
     "leaves the choice to the adapter) to every session instead of case.json's or\n"
     "those the adapter declares.\n"
     "A stateful case (case.json \"steps\") runs its data sets as steps of one\n"
     "session; --state-readback last sends its kept outputs back only at the\n"
     "last step (default every: compared at each step).\n"
     "Results are appended to DIR/results.jsonl (default out/run) as cases end;\n"
     "the same command again resumes an interrupted run. Exit status: 0 gate\n"
     "passed, 1 gate failed, 2 bad arguments, 3 cases ended in ERROR"},
    {"merge", "parity merge DIR... --out DIR", "joins the run folders of the shards of one run"},
    {"report", "parity report DIR... [--out DIR] [--title TEXT]",
     "renders junit.xml, report.md and report.html from run folders (results.jsonl,\n"
     "run.json, summary.json); with one DIR, also refreshes its summary.json and\n"
     "writes into DIR unless --out is given; several DIRs (one per adapter or\n"
     "device) need --out and are shown side by side; runs of one adapter at\n"
     "several dates or versions also get a trend: pass counts and load-time\n"
     "medians over time, and the cases that changed state between consecutive runs"},
    {"spec-diff",
     "parity spec-diff --base ONNX --head ONNX [--out DIR] [--runs RUN_DIR...] [--acknowledge FILE]\n"
     "                 [--filter TEXT] [--work DIR]",
     "writes ONNX's node corpus from two onnx builds and classifies every case:\n"
     "added, removed, model changed, expected output changed (beyond the case's\n"
     "tolerance, or in its bits only), unchanged. ONNX is a wheel file, a pip\n"
     "requirement (onnx==1.22.0, onnx-weekly==VERSION), a virtual environment, a\n"
     "built onnx source checkout, or \"pinned\" (the project's own onnx).\n"
     "The reference runs the head's changed and added cases and sorts each:\n"
     "meaning changed (it disagrees with the head's data), work for the reference\n"
     "(no kernel for the operator or version), or test data moved.\n"
     "--runs re-judges earlier adapter runs (results.jsonl) against the head.\n"
     "Writes report.md, report.html, junit.xml and spec_diff.json to DIR (default\n"
     "out/spec-diff). Exit status: 0 gate passed, 1 a meaning change that\n"
     "--acknowledge FILE does not list, 2 bad arguments or an unusable build"},
    {"bundle", "parity bundle RUN_DIR... --out FILE [--note TEXT]",
     "packs run folders (results, reports, run settings) with their provenance:\n"
     "adapter, backend and device, the SHA-256 of every corpus, of the tolerance\n"
     "policy and of the expectations, the command lines and the machine; the\n"
     "manifest holds every file's SHA-256 and its own"},
    {"verify", "parity verify FILE [--corpus DIR]... [--policy FILE]",
     "checks a bundle as a submission checker does: every file against the\n"
     "manifest, the corpora and the tolerance policy against their recorded\n"
     "hashes (at the paths the bundle names, or those given), one result per\n"
     "planned case, and the gate passed. Exit status: 0 accepted, 1 refused\n"
     "(each reason printed), 2 bad arguments or an unreadable bundle"},
};

// Notes on options that several subcommands share, each with the subcommands
// whose own help repeats it.
struct SharedNote {
  std::vector<std::string_view> commands;
  std::string_view text;
};

const std::vector<SharedNote>& SharedNotes() {
  static const std::vector<SharedNote> notes = {
      {{"eval", "check"},
       "eval and check take --memory-limit MIB: the largest tensor, declared or\n"
       "computed, that may be allocated (default 16384 MiB); larger ones are refused\n"
       "before any allocation."},
      {{"eval", "check", "expect", "run"},
       "eval, check, expect and run take --threads N: the threads one operator may use\n"
       "(default: one per core; run passes it to its workers). Results are the same\n"
       "bits for every N."},
  };
  return notes;
}

// Appends `text` line by line, each line after `indent`.
void AppendIndented(std::string& out, std::string_view text, std::string_view indent) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    out.append(indent).append(text.substr(start, end - start)).append("\n");
    start = end + 1;
  }
}

void AppendForm(std::string& out, const CommandUsage& form) {
  AppendIndented(out, form.synopsis, "  ");
  AppendIndented(out, form.description, "      ");
}

}  // namespace

std::span<const CommandUsage> CommandUsages() { return kCommands; }

std::vector<std::string_view> CommandNames() {
  std::vector<std::string_view> names;
  for (const CommandUsage& form : kCommands) {
    if (names.empty() || names.back() != form.name) names.push_back(form.name);
  }
  return names;
}

std::string FullUsage() {
  std::string out = "usage:\n";
  for (const CommandUsage& form : kCommands) AppendForm(out, form);
  for (const SharedNote& note : SharedNotes()) {
    out += "\n";
    AppendIndented(out, note.text, "  ");
  }
  return out;
}

std::string CommandHelp(std::string_view name) {
  std::string out;
  for (const CommandUsage& form : kCommands) {
    if (form.name == name) AppendForm(out, form);
  }
  if (out.empty()) return out;
  out = "usage:\n" + out;
  for (const SharedNote& note : SharedNotes()) {
    for (std::string_view command : note.commands) {
      if (command != name) continue;
      out += "\n";
      AppendIndented(out, note.text, "  ");
    }
  }
  return out;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

int CommandUsageError(std::string_view name, std::string_view message) {
  std::cerr << "parity " << name << ": " << message << "\n" << CommandHelp(name);
  return 2;
}

}  // namespace parity
