"""Prints a results table of README.md ("Results": one column per adapter,
one row per state) from run folders, so that a column can be added or
refreshed from a run instead of by hand.

    ci/readme_table.py out/reference out/onnxruntime out/onednn --suite onnx_node \\
        --label out/onnxruntime="ONNX Runtime 1.31.1, CPU EP" --label out/onednn="oneDNN 3.2, CPU"

Each folder is a `parity run --out` folder (results.jsonl, summary.json);
only the cases of the suites named by --suite are counted (all cases when
none is named). Rows: the count of each state some run has, in the reports'
order, with FAIL, CRASH, TIMEOUT and FELL_BACK on one row as README.md has
them; the run's wall time when the folder holds nothing but those suites
(else "–": a run of several suites has no wall time of one suite alone);
the medians of session creation (cold, and of each case's warm median);
and with --placement the share of nodes and of FLOPs that ran on the run's
device (results' placement and placement_flops). Cells README.md adds by
hand (the reasons after an UNSUPPORTED count, the findings after XFAIL)
are not printed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

# spec/results.md's states in the order report.md lists them.
STATE_ORDER = ["PASS", "MISTRUSTED", "UNSUPPORTED", "SKIP", "XFAIL", "XPASS", "FAIL", "CRASH", "TIMEOUT",
               "FELL_BACK", "ERROR"]
GATE_ROW = ("FAIL, CRASH, TIMEOUT, FELL_BACK", {"FAIL", "CRASH", "TIMEOUT", "FELL_BACK"})


class TableError(Exception):
    """A run folder that cannot be read, named in the message."""


def read_run(folder: str) -> tuple[list[dict], dict]:
    """The results of `folder` (a later line of a case replaces an earlier
    one, as the harness reads a journal) and its summary.json ({} if none)."""
    journal = os.path.join(folder, "results.jsonl")
    if not os.path.isfile(journal):
        raise TableError(f"{folder}: no results.jsonl: not a run folder")
    by_case: dict[tuple[str, str], dict] = {}
    with open(journal, encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as error:
                if not text.endswith("\n"):
                    continue  # a last line cut short by a kill, as the harness drops it
                raise TableError(f"{journal}:{number}: not JSON: {error}") from None
            if not isinstance(line, dict) or "case" not in line or "state" not in line:
                raise TableError(f"{journal}:{number}: a result line needs \"case\" and \"state\"")
            by_case[(line.get("suite", ""), line["case"])] = line
    summary_path = os.path.join(folder, "summary.json")
    summary = {}
    if os.path.isfile(summary_path):
        with open(summary_path, encoding="utf-8") as f:
            try:
                summary = json.load(f)
            except json.JSONDecodeError as error:
                raise TableError(f"{summary_path}: not JSON: {error}") from None
    return list(by_case.values()), summary


def default_label(folder: str, summary: dict) -> str:
    adapter = summary.get("adapter") or {}
    device = summary.get("device") or {}
    name = adapter.get("name") or os.path.basename(os.path.normpath(folder))
    # The backend's version up to its details ("oneDNN 3.2.0 (hash); ISA ..." -> "oneDNN 3.2.0").
    version = adapter.get("backend_version", "").split(" (")[0].split(";")[0].strip()
    label = name if not version or version.startswith("onnx-parity") else f"{name} {version}"
    return f"{label}, {device['name']}" if device.get("name") and name != "reference" else label


def significant(value: float) -> str:
    """Two significant digits as README.md writes times: 0.36, 0.0061, 2.4, 17."""
    if value >= 10:
        return f"{value:.0f}"
    text = f"{value:#.2g}"
    return text.rstrip(".")


def count(n: int) -> str:
    return f"{n:,}"


def median_or_none(values: list[float]):
    return statistics.median(values) if values else None


def creation_cell(lines: list[dict]) -> str:
    cold = [l["load_ms_cold"] for l in lines if isinstance(l.get("load_ms_cold"), (int, float))]
    warm = [l["load_ms_warm"]["median"] for l in lines
            if isinstance(l.get("load_ms_warm"), dict) and isinstance(l["load_ms_warm"].get("median"), (int, float))]
    cold_median, warm_median = median_or_none(cold), median_or_none(warm)
    if cold_median is None:
        return "–"
    warm_text = significant(warm_median) if warm_median is not None else "–"
    return f"{significant(cold_median)} / {warm_text} ms"


def placement_cell(lines: list[dict]) -> str:
    nodes_on = nodes = unknown = 0
    flops_on = flops = 0.0
    for line in lines:
        device = line.get("device")
        for where, n in (line.get("placement") or {}).items():
            nodes += n
            nodes_on += n if where == device else 0
        for where, f in (line.get("placement_flops") or {}).items():
            flops += f
            flops_on += f if where == device else 0
        if "placement_flops_unknown" in line:
            unknown += line["placement_flops_unknown"] or 0
        else:  # a line written before FLOPs were counted: none of its nodes' FLOPs is known
            unknown += sum((line.get("placement") or {}).values())
    if nodes == 0:
        return "–"
    text = f"{100 * nodes_on / nodes:.1f}% / " + (f"{100 * flops_on / flops:.1f}%" if flops > 0 else "–")
    return text + (f" ({count(unknown)} nodes' FLOPs unknown)" if unknown else "")


def wall_cell(all_lines: list[dict], lines: list[dict], summary: dict) -> str:
    seconds = summary.get("seconds")
    if not isinstance(seconds, (int, float)) or len(all_lines) != len(lines):
        return "–"
    return f"{significant(seconds)} s"


def build_table(runs: list[tuple[str, list[dict], dict]], suites: set[str], placement: bool) -> list[list[str]]:
    """Rows of cells, the header first; `runs` is (label, lines, summary)."""
    chosen = [[l for l in lines if not suites or l.get("suite") in suites] for _, lines, _ in runs]
    counts = []
    for lines in chosen:
        c: dict[str, int] = {}
        for line in lines:
            c[line["state"]] = c.get(line["state"], 0) + 1
        counts.append(c)
    known = set(STATE_ORDER)
    states = STATE_ORDER + sorted({s for c in counts for s in c if s not in known})
    rows = [["state"] + [label for label, _, _ in runs]]
    gate_added = False
    for state in states:
        if state in GATE_ROW[1]:
            if not gate_added:  # always shown, zeros included: it is the gate
                rows.append([GATE_ROW[0]] + [count(sum(c.get(s, 0) for s in GATE_ROW[1])) for c in counts])
                gate_added = True
            continue
        if any(c.get(state, 0) for c in counts):
            rows.append([state] + [count(c.get(state, 0)) for c in counts])
    rows.append(["whole corpus (wall)"] +
                [wall_cell(all_lines, lines, summary) for (_, all_lines, summary), lines in zip(runs, chosen)])
    rows.append(["session creation, median cold / warm"] + [creation_cell(lines) for lines in chosen])
    if placement:
        rows.append(["nodes / FLOPs on the device"] + [placement_cell(lines) for lines in chosen])
    return rows


def markdown(rows: list[list[str]]) -> str:
    def row(cells):
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return "\n".join([row(rows[0]), "|" + "---|" * len(rows[0])] + [row(r) for r in rows[1:]]) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders (parity run --out), one column each, in this order")
    parser.add_argument("--suite", action="append", default=[],
                        help="count only the cases of this suite (repeatable; default: every case)")
    parser.add_argument("--label", action="append", default=[], metavar="FOLDER=TEXT",
                        help="the column heading of a run folder (default: adapter, backend version, device)")
    parser.add_argument("--placement", action="store_true",
                        help="add a row: the share of nodes and of FLOPs on the run's device")
    args = parser.parse_args(argv)
    labels = {}
    for item in args.label:
        folder, sep, text = item.partition("=")
        if not sep or not text:
            parser.error(f"--label {item!r}: expected FOLDER=TEXT")
        labels[os.path.normpath(folder)] = text
    unknown = set(labels) - {os.path.normpath(f) for f in args.runs}
    if unknown:
        parser.error(f"--label names a folder that is not among the runs: {', '.join(sorted(unknown))}")
    runs = []
    try:
        for folder in args.runs:
            lines, summary = read_run(folder)
            runs.append((labels.get(os.path.normpath(folder)) or default_label(folder, summary), lines, summary))
    except TableError as error:
        print(f"readme_table: {error}", file=sys.stderr)
        return 1
    suites = set(args.suite)
    for label, lines, _ in runs:
        if suites and not any(l.get("suite") in suites for l in lines):
            print(f"readme_table: {label}: no case of suite {', '.join(sorted(suites))}", file=sys.stderr)
            return 1
    sys.stdout.write(markdown(build_table(runs, suites, args.placement)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
