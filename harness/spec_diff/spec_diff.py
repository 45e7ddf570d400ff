"""`parity spec-diff`: what a change to onnx does to the expected outputs, to
the reference and to earlier adapter runs (spec/spec_diff.md). Writes both
builds' node corpora, classifies every case, runs the reference on the
head's changed and added cases (and on the base's changed ones) to sort each
difference, re-judges earlier runs, and writes report.md, report.html,
junit.xml and spec_diff.json.

  spec_diff.py --base ONNX --head ONNX [--out DIR] [--runs RUN_DIR...] [--acknowledge FILE]
               [--filter TEXT] [--work DIR] [--jobs N]

Exit status: 0 gate passed, 1 a meaning change that the acknowledgements do
not list, 2 bad arguments, an unusable build or a failed reference run.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import builds  # noqa: E402
import classify  # noqa: E402
import render  # noqa: E402
import verdicts  # noqa: E402


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_args(argv):
    parser = Parser(prog="parity spec-diff", add_help=False)
    parser.add_argument("--base", required=True)
    parser.add_argument("--head", required=True)
    parser.add_argument("--out", default="out/spec-diff")
    parser.add_argument("--runs", nargs="+", default=[])
    parser.add_argument("--acknowledge", default=None)
    parser.add_argument("--filter", default=None)
    parser.add_argument("--work", default=None)
    parser.add_argument("--jobs", type=int, default=0)
    return parser.parse_args(argv)


def read_acknowledgements(path: str | None) -> list:
    """The acknowledged meaning changes: [{"case" or "operator", "reason"}]
    from a JSON file {"acknowledged": [...]} (spec/spec_diff.md)."""
    if not path:
        return []
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        raise UsageError(f"--acknowledge {path}: {error}") from None
    if not isinstance(data, dict) or set(data) != {"acknowledged"} or not isinstance(data["acknowledged"], list):
        raise UsageError(f'--acknowledge {path}: expected {{"acknowledged": [...]}} and no other key')
    entries = []
    for i, entry in enumerate(data["acknowledged"]):
        where = f"--acknowledge {path}: acknowledged[{i}]"
        if not isinstance(entry, dict) or not set(entry) <= {"case", "operator", "reason"}:
            raise UsageError(f"{where}: an object with \"case\" or \"operator\" and \"reason\"")
        if ("case" in entry) == ("operator" in entry):
            raise UsageError(f"{where}: give exactly one of \"case\" and \"operator\"")
        if not str(entry.get("reason", "")).strip():
            raise UsageError(f"{where}: every acknowledgement needs a reason")
        entries.append(entry)
    return entries


def _parity() -> str:
    parity = os.environ.get("PARITY_BINARY") or os.path.join(builds.ROOT, "build", "parity")
    if not os.access(parity, os.X_OK):
        raise UsageError(f"no parity binary at {parity} (set PARITY_BINARY)")
    return parity


def _bfloat16_rtol() -> float:
    with open(os.path.join(builds.ROOT, "spec", "tolerance.json")) as f:
        return float(json.load(f)["onnx_runner"]["bfloat16_rtol"])


def judge(diffs, base, head, work, jobs, parity) -> dict:
    """Sorts every difference; returns the case objects of spec_diff.json by name."""
    import onnx  # the project's: the reference pins the same release

    reference_table = builds.schema_table(sys.executable, None, "the reference's onnx " + onnx.__version__)
    head_table = builds.schema_table(head.python, head.env(), head.spec) if head.python else {}
    base_table = builds.schema_table(base.python, base.env(), base.spec) if base.python else {}
    touched = [d for d in diffs if d.kind not in (classify.UNCHANGED, classify.REMOVED)]
    head_results = verdicts.run_reference(parity, head.corpus, [d.case for d in touched],
                                          os.path.join(work, "judge-head"), jobs)
    # The base's side only where the head's run fails: did the reference agree with the base?
    failing = [d.case for d in touched if d.kind != classify.ADDED
               and head_results.get(d.case, {}).get("state") == "FAIL"]
    base_results = verdicts.run_reference(parity, base.corpus, failing, os.path.join(work, "judge-base"), jobs)
    cases = {}
    for d in diffs:
        if d.kind == classify.UNCHANGED:
            continue
        entry = d.to_json()
        new = verdicts.new_versions(os.path.join(head.corpus, d.case, "model.onnx"), head_table,
                                    reference_table) if d.kind != classify.REMOVED else []
        if new:
            entry["new_versions"] = new
        entry["sort"] = verdicts.sort_difference(d, head_results.get(d.case), base_results.get(d.case), new)
        for side, results in (("reference", head_results), ("reference_on_base", base_results)):
            r = results.get(d.case)
            if r:
                entry[side] = {"state": r["state"], **({"message": r["message"]} if r.get("message") else {})}
        cases[d.case] = entry
    tables = {"head": head_table, "base": base_table, "reference": reference_table}
    return cases, tables


def schema_changes(tables: dict) -> dict:
    """Operators and versions the head's onnx defines and the base's does not
    (empty when either side is a written corpus, whose schemas are unknown)."""
    head, base, reference = tables["head"], tables["base"], tables["reference"]
    if not head or not base:
        return {"operators_added": [], "versions_added": [], "operators_removed": []}
    label = lambda key: key.split(":", 1)[1] if key.startswith("ai.onnx:") else key.replace(":", ".")
    versions = sorted(f"{label(k)}-{v}" + ("" if v in reference.get(k, []) else " (no reference kernel)")
                      for k in head for v in head[k] if k in base and v not in base[k])
    return {"operators_added": sorted(label(k) + ("" if k in reference else " (no reference kernel)")
                                      for k in head if k not in base),
            "versions_added": versions,
            "operators_removed": sorted(label(k) for k in base if k not in head)}


def apply_acknowledgements(cases: dict, acknowledged: list) -> tuple:
    """Marks acknowledged meaning changes; returns (acknowledged names,
    unacknowledged names, entries that matched no meaning change)."""
    used = [False] * len(acknowledged)
    done, open_ = [], []
    for name, c in cases.items():
        if c["sort"] != verdicts.MEANING:
            continue
        for i, entry in enumerate(acknowledged):
            if entry.get("case") == name or (entry.get("operator") and entry["operator"] == c.get("operator")):
                c["acknowledged"] = entry["reason"]
                used[i] = True
        (done if c.get("acknowledged") else open_).append(name)
    stale = [e for e, u in zip(acknowledged, used) if not u]
    return done, open_, stale


def main(argv=None) -> int:
    started = time.monotonic()
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        acknowledged = read_acknowledgements(args.acknowledge)
        parity = _parity()
        for run in args.runs:
            if not os.path.isfile(os.path.join(run, "results.jsonl")):
                raise UsageError(f"--runs {run}: not a run folder (no results.jsonl)")
    except UsageError as error:
        print(f"parity spec-diff: {error}", file=sys.stderr)
        return 2
    work = os.path.abspath(args.work or os.path.join(args.out, "work"))
    classify.BFLOAT16_RTOL = _bfloat16_rtol()
    try:
        sides = {}
        for label, spec in (("base", args.base), ("head", args.head)):
            build = builds.resolve(spec, os.path.join(work, "builds"))
            builds.write_corpus(build, os.path.join(work, label + "-corpus"), args.filter)
            print(f"spec-diff: {label} {spec}: {render.build_words(build.describe())}, corpus {build.corpus}")
            sides[label] = build
    except builds.BuildError as error:
        print(f"parity spec-diff: {error}", file=sys.stderr)
        return 2
    base, head = sides["base"], sides["head"]
    if args.filter and "corpus" in (base.kind, head.kind):
        print("parity spec-diff: --filter applies to corpora it writes; a corpus given as a folder is used whole",
              file=sys.stderr)
    diffs = classify.diff_corpora(base.corpus, head.corpus)
    try:
        cases, tables = judge(diffs, base, head, work, args.jobs, parity)
        runs = [verdicts.rejudge_run(run, {d.case: d for d in diffs}) for run in args.runs]
    except (RuntimeError, builds.BuildError) as error:
        print(f"parity spec-diff: {error}", file=sys.stderr)
        return 2
    done, open_, stale = apply_acknowledgements(cases, acknowledged)
    counts = collections.Counter(d.kind for d in diffs)
    sorts = collections.Counter(c["sort"] for c in cases.values())
    work_items = collections.Counter(v for c in cases.values() for v in c.get("new_versions", []))
    for c in cases.values():  # an operator the reference lacks entirely, seen only through eval's message
        if c["sort"] == verdicts.NEW_OP and not c.get("new_versions"):
            work_items[f"{c.get('operator') or c['case']} (no kernel: {c.get('reference', {}).get('state', '')})"] += 1
    # Operators that had cases before the change (in the base's corpus).
    head_ops = {d.operator for d in diffs if d.kind != classify.ADDED}
    result = {
        "base": base.describe(), "head": head.describe(),
        "counts": {k: counts.get(k, 0) for k in classify.KINDS},
        "sorts": {k: sorts[k] for k in verdicts.SORTS if sorts.get(k)},
        **schema_changes(tables),
        "operators_with_first_cases": sorted({d.operator for d in diffs if d.kind == classify.ADDED and d.operator}
                                             - head_ops),
        "work_for_reference": dict(sorted(work_items.items())),
        "cases": [cases[n] for n in sorted(cases)],
        "runs": runs,
        "gate": {"passed": not open_, "unacknowledged": open_, "acknowledged": done,
                 "stale_acknowledgements": stale},
        "seconds": time.monotonic() - started,
    }
    os.makedirs(args.out, exist_ok=True)
    files = {"spec_diff.json": json.dumps(result, indent=1, sort_keys=True) + "\n",
             "report.md": render.markdown(result), "report.html": render.page(result), "junit.xml": render.junit(result)}
    for name, text in files.items():
        path = os.path.join(args.out, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    summary = ", ".join(f"{k} {v}" for k, v in result["counts"].items() if v)
    print(f"spec-diff: {summary}")
    print("spec-diff: the reference: " + (", ".join(f"{k} {v}" for k, v in result["sorts"].items()) or "nothing to judge"))
    for entry in stale:
        print(f"spec-diff: warning: acknowledgement {json.dumps(entry)} matches no meaning change", file=sys.stderr)
    for name in open_:
        c = cases[name]
        print(f"spec-diff: meaning changed: {name} ({c.get('operator', '')}): {c.get('detail', '')}; "
              f"the reference: {c.get('reference', {}).get('message', '')[:200]}")
    print(f"spec-diff: gate {'passed' if not open_ else 'failed'}; wrote report.md, report.html, junit.xml, "
          f"spec_diff.json to {args.out} in {result['seconds']:.1f} s")
    return 0 if not open_ else 1


if __name__ == "__main__":
    sys.exit(main())
