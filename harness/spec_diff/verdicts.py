"""The reference's verdict on each difference between two node corpora, what
it means for the spec (spec/spec_diff.md: "Sorting a difference"), and what
the change does to earlier adapter runs ("Re-judging earlier runs")."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess

import onnx

import classify

# How a difference is sorted.
MEANING = "meaning changed"            # the reference agreed with the base and disagrees with the head
NEW_OP = "work for the reference"      # an operator or version the reference has no kernel for
MOVED = "test data moved"              # the reference agrees with the head: only the data changed
AGREES = "new case, the reference agrees"
ALREADY = "the reference disagreed before"  # it failed the base's case too: not this change
KNOWN = "known to the reference's expectations"  # listed with its reason (a finding, an operator it lacks)
FIXED = "a known disagreement resolved"  # listed as failing, and passes the head's data
NOT_JUDGED = "not judged"              # the reference's run ended in ERROR or TIMEOUT
DROPPED = "case removed"
SORTS = [MEANING, NEW_OP, ALREADY, KNOWN, FIXED, NOT_JUDGED, MOVED, AGREES, DROPPED]
# The reference's own expectations on ONNX's node corpus: its known
# disagreements and the operators it does not run, each with its reason.
REFERENCE_EXPECTATIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                      "adapters", "reference", "expectations", "onnx_node.json")


def _nodes(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _nodes(g)


def new_versions(model_path: str, head_table: dict, reference_table: dict) -> list:
    """The operator versions of the model that the head's onnx defines and the
    reference's pinned onnx does not: ["GroupedMatMul-29 (new operator)",
    "Pad-29"]. Empty when the head's table is not known."""
    if not head_table:
        return []
    model = onnx.load(model_path, load_external_data=False)
    opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
    local = {((f.domain or "ai.onnx"), f.name) for f in model.functions}
    found = []
    for node in _nodes(model.graph):
        domain = node.domain or "ai.onnx"
        key = f"{domain}:{node.op_type}"
        if (domain, node.op_type) in local or key not in head_table or domain not in opsets:
            continue
        versions = [v for v in head_table[key] if v <= opsets[domain]]
        if not versions:
            continue
        since = max(versions)
        label = node.op_type if domain == "ai.onnx" else f"{domain}.{node.op_type}"
        if key not in reference_table:
            item = f"{label}-{since} (new operator)"
        elif since not in reference_table[key]:
            item = f"{label}-{since}"
        else:
            continue
        if item not in found:
            found.append(item)
    return found


def run_reference(parity: str, corpus: str, names: list, work: str, jobs: int) -> dict:
    """Runs `parity eval` on the named cases of `corpus` (through a folder of
    links, so that the corpus stays as written) and returns its results.jsonl
    lines by case name."""
    if not names:
        return {}
    links = os.path.join(work, "cases")
    out = os.path.join(work, "eval")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(links)
    for name in names:
        os.symlink(os.path.join(os.path.abspath(corpus), name), os.path.join(links, name))
    argv = [parity, "eval", links, "--out", out, "--quiet", "--expect", REFERENCE_EXPECTATIONS]
    argv += ["--jobs", str(jobs)] if jobs else []
    proc = subprocess.run(argv, capture_output=True, text=True)
    results = {}
    path = os.path.join(out, "results.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    results[r["case"]] = r
    if proc.returncode not in (0, 1, 3) or len(results) != len(names):
        missing = sorted(set(names) - set(results))
        raise RuntimeError(f"parity eval on {len(names)} cases of {corpus} exited {proc.returncode} with "
                           f"{len(results)} results (missing {missing[:5]}): {proc.stderr.strip()[-400:]}")
    return results


def _state(result) -> str:
    return result["state"] if result else ""


def sort_difference(diff, head_result, base_result, versions: list) -> str:
    """The sort of one difference (SORTS), from the reference's results on the
    head's case and on the base's."""
    if diff.kind == classify.REMOVED:
        return DROPPED
    head = _state(head_result)
    message = (head_result or {}).get("message", "")
    listed = bool((head_result or {}).get("expectation"))
    if versions or (not listed and (head == "UNSUPPORTED" or message.startswith("UNIMPLEMENTED"))):
        return NEW_OP
    if head in ("UNSUPPORTED", "XFAIL") and listed:
        return KNOWN
    if head == "XPASS":
        return FIXED
    if head in ("PASS", "MISTRUSTED"):
        return AGREES if diff.kind == classify.ADDED else MOVED
    if head != "FAIL":
        return NOT_JUDGED
    if diff.kind == classify.ADDED or _state(base_result) in ("PASS", "MISTRUSTED", "XPASS"):
        return MEANING
    if _state(base_result) in ("FAIL", "XFAIL"):
        return ALREADY
    return NOT_JUDGED


def _number(value):
    if value == "inf":
        return math.inf
    if value == "-inf":
        return -math.inf
    return float(value) if isinstance(value, (int, float)) else None


def rejudge(result: dict, diff) -> tuple:
    """(verdict, why) for one earlier result of an adapter on a case the change
    touches. Verdicts: "stays", "turns FAIL", "may turn" (only a rerun can
    tell), "dropped". A PASS is decided from its recorded largest absolute
    error e against the base's value and the head's change d per element:
    |adapter - head| <= e + d, so it stays a PASS when e + d is within the
    head's tolerance everywhere (e <= min slack), and turns FAIL when some
    element moved by more than e beyond it (e < max excess)."""
    state = result.get("state", "")
    if diff.kind == classify.REMOVED:
        return "dropped", "the case is gone from the head's corpus" + (
            "; its expectations entry is stale" if result.get("expectation") else "")
    if diff.kind == classify.MODEL:
        return "may turn", "the model changed: " + diff.detail.split(";")[0]
    if diff.inputs_changed:
        return "may turn", "the inputs changed: the run's recorded errors are for other inputs"
    if state == "UNSUPPORTED":
        return "stays", "the model is the same, so the adapter still does not support it"
    if state not in ("PASS", "MISTRUSTED"):
        return "may turn", f"a {state} against the base's data says nothing of the head's"
    changed = diff.outputs
    data_sets = {o["data_set"] for o in changed}
    recorded = {o.get("index"): o for o in result.get("outputs", [])}
    if data_sets and data_sets != {diff.last_data_set}:
        return "may turn", (f"{', '.join(sorted(data_sets))} changed; the run recorded errors for "
                            f"{diff.last_data_set} only")
    turns, unsure = [], []
    for change in changed:
        error = _number((recorded.get(change["index"]) or {}).get("max_abs_error"))
        slack, excess = _number(change.get("min_slack")), _number(change.get("max_excess"))
        if error is None or slack is None or excess is None or not math.isfinite(error):
            unsure.append(f"output {change['index']}: no usable recorded error")
        elif excess > error:
            turns.append(f"output {change['index']} moved {excess:.3g} beyond the tolerance, more than the "
                         f"adapter's error {error:.3g}")
        elif error > slack:
            unsure.append(f"output {change['index']}: the adapter's error {error:.3g} exceeds the head's "
                          f"slack {slack:.3g}")
    if turns:
        return "turns FAIL", "; ".join(turns) + f" ({diff.last_data_set})"
    if unsure:
        return "may turn", "; ".join(unsure)
    return "stays", "every changed output stays within the tolerance of the adapter's recorded error"


def rejudge_run(run_dir: str, diffs_by_case: dict) -> dict:
    """An earlier run folder's results re-judged: counts and the cases that
    turn or may turn."""
    path = os.path.join(run_dir, "results.jsonl")
    if not os.path.isfile(path):
        raise RuntimeError(f"{run_dir}: no results.jsonl (not a run folder)")
    summary = {}
    if os.path.isfile(os.path.join(run_dir, "summary.json")):
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
    adapter = (summary.get("adapter") or {}).get("name", "")
    verdicts, cases = {}, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                result = json.loads(line)
            except ValueError:
                raise RuntimeError(f"{path}:{number}: not a JSON line") from None
            adapter = adapter or result.get("adapter", "")
            diff = diffs_by_case.get(result.get("case"))
            if diff is None or diff.kind in (classify.UNCHANGED, classify.ADDED):
                continue
            verdict, why = rejudge(result, diff)
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
            cases.append({"case": result["case"], "state": result.get("state", ""), "change": diff.kind,
                          "verdict": verdict, "why": why,
                          **({"expectation": result["expectation"]} if result.get("expectation") else {})})
    return {"run": run_dir, "adapter": adapter, "counts": verdicts, "cases": cases}
