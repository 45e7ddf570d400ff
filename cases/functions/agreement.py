#!/usr/bin/env python3
"""Writes the agreement table of the function corpus: how each oracle (onnx's
Python reference, ONNX Runtime, the numpy oracle, ...) agrees with our
reference, per function, and its coverage: which cases at least one oracle
checks (agrees with the reference on), and why no oracle checks the others.

  agreement.py --runs NAME=DIR [NAME=DIR ...] --out spec/functions/agreement.md

Each DIR is the --out folder of one `parity run` over the corpus of
write_cases.py (its results.jsonl and run.json, spec/results.md). The corpus
is every case of the runs, and every case folder of the runs' --cases
folders that still exist. Prints how many cases are checked. Exit status:
0 on success, 2 on bad arguments or an unreadable run folder.
"""
from __future__ import annotations

import argparse
import collections
import fnmatch
import glob
import json
import os
import re
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MESSAGE_CHARS = 160
DEFAULT_TIMEOUT_S = 60  # parity run's --timeout default (harness/run/run_command.h)
# How result states (spec/results.md) count against an oracle. An XPASS is a
# pass the expectations did not foresee: the numbers agree.
COLUMNS = [("agree", "agreeing", {"PASS", "MISTRUSTED", "XPASS"}),
           ("disagree", "disagreeing", {"FAIL", "XFAIL"}),
           ("unsupported", "not implemented", {"UNSUPPORTED"}),
           ("broken", "crashed / timeout", {"CRASH", "TIMEOUT"})]
FINDING_LABEL = re.compile(r"\b(?:FN|ORT)-\d+\b")


class Failure(Exception):
    """A run folder or argument this script cannot use; the message says which."""


def read_run(directory: str) -> tuple:
    """(results, settings) of one run folder: its results.jsonl lines and run.json."""
    results_path = os.path.join(directory, "results.jsonl")
    if not os.path.isfile(results_path):
        raise Failure(f"{directory}: no results.jsonl (is it the --out folder of a `parity run`?)")
    results = []
    with open(results_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            results.append(json.loads(line))
        except json.JSONDecodeError as error:
            if number == len(lines):  # a run killed mid-write leaves one partial last line
                break
            raise Failure(f"{results_path}:{number}: not a JSON line: {error}") from error
    settings = {}
    run_json = os.path.join(directory, "run.json")
    if os.path.isfile(run_json):
        with open(run_json, encoding="utf-8") as f:
            settings = json.load(f)
        settings = settings.get("settings", settings)
    return results, settings


def load_expectations(adapter: str) -> list:
    """(globs, reason, path) of every entry of adapters/<adapter>/expectations/*.json."""
    entries = []
    for path in sorted(glob.glob(os.path.join(ROOT, "adapters", adapter, "expectations", "*.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for key in ("unsupported", "xfail"):
            for entry in doc.get(key, []):
                globs = entry.get("cases", [])
                entries.append(([globs] if isinstance(globs, str) else list(globs), entry.get("reason", ""),
                                os.path.relpath(path, ROOT)))
    return entries


def reason_for(case: str, result: dict, expectations: list) -> str:
    if result.get("expectation"):
        return result["expectation"]
    for globs, reason, _ in expectations:
        if any(fnmatch.fnmatchcase(case, g) for g in globs):
            return reason
    return ""


def column_of(state: str) -> str:
    for key, _, states in COLUMNS:
        if state in states:
            return key
    return "other"


def adapter_name(settings: dict, results: list, fallback: str) -> str:
    """The adapter's folder name under adapters/: run.json holds what --adapter said, made absolute."""
    given = settings.get("adapter") or (results[0].get("adapter") if results else "") or fallback
    return os.path.basename(os.path.normpath(given))


def shown_path(path: str) -> str:
    """A path inside the repository as the commands are typed there (relative to
    its root; run.json holds it absolute), any other path as it is."""
    if os.path.isabs(path) and os.path.commonpath([path, ROOT]) == ROOT:
        return os.path.relpath(path, ROOT)
    return path


def run_command(settings: dict, results: list, directory: str) -> str:
    """The `parity run` command a run folder was made with, from its run.json."""
    parts = ["build/parity", "run", "--adapter", adapter_name(settings, results, "?")]
    if settings.get("device"):
        parts += ["--device", settings["device"]]
    cases = settings.get("cases", [])
    for case_dir in cases if isinstance(cases, list) else [cases]:
        parts += ["--cases", shown_path(case_dir)]
    parts += ["--out", directory, "--fresh"]
    summary_path = os.path.join(directory, "summary.json")
    if os.path.isfile(summary_path):
        with open(summary_path, encoding="utf-8") as f:
            jobs = json.load(f).get("jobs", 1)
        if jobs and jobs > 1:
            parts += ["--jobs", str(jobs)]
    if settings.get("expectations"):
        parts += ["--expect", os.path.relpath(settings["expectations"], ROOT)
                  if os.path.isabs(settings["expectations"]) else settings["expectations"]]
    if settings.get("timeout") and settings["timeout"] != DEFAULT_TIMEOUT_S:
        parts += ["--timeout", f"{settings['timeout']:g}"]
    return " ".join(shlex.quote(p) for p in parts)


def one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def linked_findings(text: str) -> str:
    """Finding labels (FN-1, ORT-2) as links to the findings page."""
    return FINDING_LABEL.sub(lambda m: f"[{m.group(0)}](../findings.md)", text)


def corpus_cases(runs: list) -> dict:
    """case -> operator for every case the runs name, and every case folder
    (one holding model.onnx) of the runs' --cases folders that exist."""
    cases = {}
    for _, _, results, settings in runs:
        for result in results:
            if result.get("operator") or result["case"] not in cases:
                cases[result["case"]] = result.get("operator") or "?"
        for case_dir in settings.get("cases") or []:
            if not os.path.isdir(case_dir):
                continue
            for name in sorted(os.listdir(case_dir)):
                if os.path.isfile(os.path.join(case_dir, name, "model.onnx")):
                    cases.setdefault(name, _operator_of(os.path.join(case_dir, name)))
    return cases


def _operator_of(case_dir: str) -> str:
    try:
        with open(os.path.join(case_dir, "case.json"), encoding="utf-8") as f:
            return json.load(f).get("operator") or "?"
    except (OSError, json.JSONDecodeError):
        return "?"


def coverage(runs: list) -> tuple:
    """(cases, checkers, why_not): the corpus (case -> operator), the oracles
    agreeing on each case, and for a case none agrees on, what each oracle
    did with it (its state and the reason of its expectations entry or its
    message)."""
    cases = corpus_cases(runs)
    checkers = {case: [] for case in cases}
    outcome = {case: [] for case in cases}
    for name, _, results, settings in runs:
        expectations = load_expectations(adapter_name(settings, results, name))
        seen = set()
        for result in results:
            case, state = result["case"], result.get("state", "")
            seen.add(case)
            if column_of(state) == "agree":
                checkers[case].append(name)
            else:
                why = reason_for(case, result, expectations) or one_line(result.get("message", ""))[:MESSAGE_CHARS]
                outcome[case].append(f"{name}: {state}" + (f" ({why})" if why else ""))
        for case in cases:
            if case not in seen:
                outcome[case].append(f"{name}: no result")
    why_not = {case: outcome[case] for case in cases if not checkers[case]}
    return cases, checkers, why_not


def render_coverage(runs: list) -> list:
    cases, checkers, why_not = coverage(runs)
    names = [name for name, *_ in runs]
    out = ["## Coverage", "",
           "A case is *checked* when at least one oracle other than the reference agrees",
           "with the reference on it (the reference wrote its expected outputs, so it",
           "checks nothing by itself). "
           f"**{len(cases) - len(why_not)} of {len(cases)} cases are checked**; "
           f"{len(why_not)} are not.", ""]
    header = ["function", "cases", "checked", "by one oracle only"] + [f"by {n}" for n in names] + ["not checked"]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    operators = sorted(set(cases.values()))
    totals = collections.Counter()
    for operator in operators:
        mine = [c for c, op in cases.items() if op == operator]
        row = collections.Counter(cases=len(mine), checked=sum(1 for c in mine if checkers[c]),
                                  one=sum(1 for c in mine if len(checkers[c]) == 1),
                                  unchecked=sum(1 for c in mine if not checkers[c]))
        for n in names:
            row[n] = sum(1 for c in mine if n in checkers[c])
        totals.update(row)
        keys = ["cases", "checked", "one"] + names + ["unchecked"]
        out.append("| " + " | ".join([operator] + [str(row[k]) for k in keys]) + " |")
    keys = ["cases", "checked", "one"] + names + ["unchecked"]
    out.append("| **total** | " + " | ".join(f"**{totals[k]}**" for k in keys) + " |")
    out.append("")
    out += ["### Cases no oracle checks", ""]
    if not why_not:
        out += ["None.", ""]
    else:
        out += ["Each with what every oracle did with it: its state and the reason its expectations",
                "entry gives (or its message).", "", "| case | function | why no oracle checks it |",
                "|---|---|---|"]
        for case in sorted(why_not):
            reasons = linked_findings("; ".join(one_line(r) for r in why_not[case]))
            out.append(f"| `{case}` | {cases[case]} | {reasons} |")
        out.append("")
    return out


def render(runs: list, argv: list) -> str:
    """runs: [(name, directory, results, settings)] in the order given."""
    names = [name for name, *_ in runs]
    counts = {name: collections.defaultdict(collections.Counter) for name in names}
    operators = set()
    disagreements = []
    others = False
    for name, directory, results, settings in runs:
        expectations = load_expectations(adapter_name(settings, results, name))
        for result in results:
            operator = result.get("operator") or "?"
            operators.add(operator)
            column = column_of(result.get("state", ""))
            others |= column == "other"
            counts[name][operator][column] += 1
            if column == "disagree":
                disagreements.append((operator, result["case"], name, result.get("message", ""),
                                      reason_for(result["case"], result, expectations)))
    columns = [(key, title) for key, title, _ in COLUMNS] + ([("other", "other")] if others else [])

    cases_dirs = sorted({shown_path(c) for *_, settings in runs for c in (settings.get("cases") or [])})
    out = ["# Agreement of the oracles on the function corpus", ""]
    out += ["How often each oracle agrees with the reference on the generated function",
            "cases (`cases/functions/`), per function. *Agreeing*: `PASS` or",
            "`MISTRUSTED`; *disagreeing*: `FAIL` (and `XFAIL`, a `FAIL` that the",
            "oracle's expectations file lists); *not implemented*: `UNSUPPORTED`;",
            "*crashed / timeout*: `CRASH` or `TIMEOUT` (spec/results.md).", ""]
    out += ["**Every disagreement needs a finding in [spec/findings.md](../findings.md)**:",
            "which side is right by the operator's text, or why the text does not",
            "decide. A disagreement listed below without a finding is work left to do.", ""]
    out += ["## How it was made", "", "```"]
    for case_dir in cases_dirs:
        out.append(f".venv/bin/python cases/functions/write_cases.py --out {shlex.quote(case_dir)} --parity build/parity")
    for name, directory, results, settings in runs:
        out.append(run_command(settings, results, directory))
    out.append("cases/functions/agreement.py " + " ".join(shlex.quote(a) for a in argv))
    out += ["```", ""]
    versions = []
    for name, directory, results, settings in runs:
        summary_path = os.path.join(directory, "summary.json")
        if os.path.isfile(summary_path):
            with open(summary_path, encoding="utf-8") as f:
                summary = json.load(f)
            adapter = summary.get("adapter", {})
            versions.append(f"- `{name}`: adapter {adapter.get('name', '?')} {adapter.get('version', '?')}, backend "
                            f"{adapter.get('backend_version', '?')}, device {summary.get('device', {}).get('name', '?')}; "
                            f"{summary.get('total', len(results))} cases in {float(summary.get('seconds', 0)):.1f} s")
    out += versions + ([""] if versions else [])

    out += ["## Per function", ""]
    header = ["function"] + [f"{name}: {title}" for name in names for _, title in columns]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    totals = {name: collections.Counter() for name in names}
    for operator in sorted(operators):
        row = [operator]
        for name in names:
            for key, _ in columns:
                value = counts[name][operator][key]
                totals[name][key] += value
                row.append(str(value))
        out.append("| " + " | ".join(row) + " |")
    out.append("| **total** | " + " | ".join(f"**{totals[n][k]}**" for n in names for k, _ in columns) + " |")
    out.append("")

    out += render_coverage(runs)

    out += ["## Disagreements", ""]
    if not disagreements:
        out += ["None.", ""]
    else:
        out += [f"{len(disagreements)} cases. The finding is the reason of the oracle's expectations entry",
                "(`adapters/<oracle>/expectations/*.json`) that lists the case, where one does.", ""]
        out += ["| case | oracle | message (first 160 characters) | finding |", "|---|---|---|---|"]
        for operator, case, name, message, reason in sorted(disagreements):
            # Finding labels in the reason become links to the findings page.
            finding = linked_findings(one_line(reason)) if reason else "**none yet**"
            out.append(f"| `{case}` | {name} | {one_line(message)[:MESSAGE_CHARS]} | {finding} |")
        out.append("")
    return "\n".join(out)


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, metavar="NAME=DIR",
                        help="one `parity run` --out folder per oracle, named as the table's columns")
    parser.add_argument("--out", required=True, help="the Markdown file to write")
    args = parser.parse_args(argv)
    runs = []
    try:
        for spec in args.runs:
            name, sep, directory = spec.partition("=")
            if not sep or not name or not directory:
                raise Failure(f"--runs '{spec}': expected NAME=DIR")
            if name in [r[0] for r in runs]:
                raise Failure(f"--runs: the name '{name}' is given twice")
            results, settings = read_run(directory)
            runs.append((name, directory, results, settings))
    except (Failure, OSError, json.JSONDecodeError) as error:
        print(f"agreement: {error}", file=sys.stderr)
        return 2
    text = render(runs, argv)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    cases, _, why_not = coverage(runs)
    print(f"agreement: wrote {args.out} ({sum(len(r[2]) for r in runs)} results of {len(runs)} oracles); "
          f"{len(cases) - len(why_not)} of {len(cases)} cases checked by at least one oracle besides the "
          f"reference, {len(why_not)} by none")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
