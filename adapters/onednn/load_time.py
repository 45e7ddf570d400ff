#!/usr/bin/env python3
"""Session creation on the oneDNN adapter with its primitive cache on and
off. oneDNN keeps one primitive cache per process: a second session of the
same shapes in the same worker may take its primitives from it instead of
generating their code again (JIT). This runs `parity run --adapter onednn`
on each case twice, once as oneDNN starts by default (cache on) and once
with ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 (no cache), each case in a run of its
own so that every cold creation is the first of a fresh worker, and prints
per case:

  cold            the first creation in a fresh worker: every primitive is
                  generated (JIT), with or without the cache;
  warm, cache on  the median of --warm-repeats later creations of the same
                  model while the cold session stays open: primitives come
                  from the cache;
  warm, cache off the same with no cache: every primitive is generated again.

and the same three for the backend's compile step alone (compile_ms_*: the
lowering's kernel creation within session creation, spec/results.md), with
the kernels the cold creation made and those it deferred to the first run.

  load_time.py [CASE_DIR...] [--parity build/parity] [--work DIR] [--warm-repeats N]

Without CASE_DIR: the exported models of cases/models/ and the decoder
layer of cases/aliasing/decode_bench.py (bench/gqa_decode_4096, written
under --work when missing). Exit status: 0 printed, 1 a run had no
creation time to show, 2 bad arguments or no parity binary.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE_VARIABLE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
# (name, the variable's value; None: unset, oneDNN's default capacity)
SETTINGS = [("cache on", None), ("cache off", "0")]
DECODE_CASE = "gqa_decode_4096"


def default_cases(parity: str, work: str) -> list[str]:
    models = os.path.join(ROOT, "cases", "models")
    cases = sorted(os.path.join(models, d) for d in os.listdir(models)
                   if os.path.isfile(os.path.join(models, d, "model.onnx")))
    corpus = os.path.join(work, "aliasing")
    decode = os.path.join(corpus, "bench", DECODE_CASE)
    if not os.path.isfile(os.path.join(decode, "model.onnx")):
        # decode_bench.py's case, written the way it writes it, alone.
        subprocess.run([sys.executable, os.path.join(ROOT, "cases", "aliasing", "write_cases.py"), "--out", corpus,
                        "--parity", parity, "--bench", "--no-check", "--filter", DECODE_CASE],
                       check=True, stdout=subprocess.DEVNULL)
    return cases + [decode]


def run_case(parity: str, case_dir: str, out: str, capacity: str | None, warm_repeats: int) -> dict:
    """The result line of one `parity run` of `case_dir` with the cache variable set to `capacity`."""
    env = dict(os.environ)
    env.pop(CACHE_VARIABLE, None)
    env.pop("DNNL_PRIMITIVE_CACHE_CAPACITY", None)  # oneDNN's older name for it would also be read
    if capacity is not None:
        env[CACHE_VARIABLE] = capacity
    subprocess.run([parity, "run", "--adapter", "onednn", "--cases", case_dir, "--out", out, "--fresh", "--jobs", "1",
                    "--warm-repeats", str(warm_repeats), "--progress", "quiet"],
                   env=env, check=False, stdout=subprocess.DEVNULL)
    journal = os.path.join(out, "results.jsonl")
    if not os.path.isfile(journal):
        raise RuntimeError(f"{case_dir}: parity run wrote no results (see {out})")
    with open(journal) as f:
        lines = [json.loads(t) for t in f if t.strip()]
    if len(lines) != 1:
        raise RuntimeError(f"{case_dir}: expected one result, got {len(lines)} (is it one case folder?)")
    return lines[0]


def median(stats) -> float | None:
    """The median of a results.jsonl timing object, or the number itself."""
    if isinstance(stats, dict):
        return stats.get("median")
    return stats if isinstance(stats, (int, float)) else None


def ms(value) -> str:
    return "–" if value is None else (f"{value:.3f}" if value < 10 else f"{value:.1f}")


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case folders (default: cases/models/* and the decode layer)")
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "onednn-load-time"))
    parser.add_argument("--warm-repeats", type=int, default=10,
                        help="warm creations per case and setting (parity run --warm-repeats; default 10)")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"load_time: no parity binary at {args.parity}", file=sys.stderr)
        return 2
    if args.warm_repeats < 1:
        print("load_time: --warm-repeats must be at least 1: a warm figure needs a warm creation", file=sys.stderr)
        return 2
    for case in args.cases:
        if not os.path.isfile(os.path.join(case, "model.onnx")):
            print(f"load_time: {case}: no model.onnx: not a case folder", file=sys.stderr)
            return 2
    cases = args.cases or default_cases(args.parity, args.work)

    results: dict[str, dict[str, dict]] = {}
    try:
        for case in cases:
            name = os.path.basename(os.path.normpath(case))
            results[name] = {setting: run_case(args.parity, case,
                                               os.path.join(args.work, setting.replace(" ", "_"), name), capacity,
                                               args.warm_repeats)
                             for setting, capacity in SETTINGS}
    except (RuntimeError, subprocess.CalledProcessError) as error:
        print(f"load_time: {error}", file=sys.stderr)
        return 1

    print(f"oneDNN session creation, ms (medians of {args.warm_repeats} warm repeats; each case in a fresh worker)")
    print("  cold:            first creation in a fresh worker, every primitive generated (JIT)")
    print("  warm, cache on:  later creations of the same model, primitives from oneDNN's primitive cache")
    print(f"  warm, cache off: the same with {CACHE_VARIABLE}=0, every primitive generated again (JIT)")
    print("  compile: the backend's compile step within those creations (compile_ms_*)\n")
    rows = [["case", "state", "cold (on / off)", "warm, cache on", "warm, cache off",
             "compile cold", "compile warm on", "compile warm off", "kernels made / deferred"]]
    missing = False
    for name, by_setting in results.items():
        on, off = by_setting["cache on"], by_setting["cache off"]
        missing |= on.get("load_ms_cold") is None or off.get("load_ms_cold") is None
        states = {on["state"], off["state"]}
        rows.append([
            name, "/".join(sorted(states)),
            f"{ms(on.get('load_ms_cold'))} / {ms(off.get('load_ms_cold'))}",
            ms(median(on.get("load_ms_warm"))), ms(median(off.get("load_ms_warm"))),
            ms(on.get("compile_ms_cold")), ms(median(on.get("compile_ms_warm"))),
            ms(median(off.get("compile_ms_warm"))),
            f"{on.get('kernels_compiled', '–')} / {on.get('kernels_deferred', '–')}",
        ])
    print(table(rows))
    ratios = [median(r["cache off"].get("load_ms_warm")) / median(r["cache on"].get("load_ms_warm"))
              for r in results.values()
              if median(r["cache on"].get("load_ms_warm")) and median(r["cache off"].get("load_ms_warm"))]
    if ratios:
        print(f"\nwarm creation without the cache / with it: median {statistics.median(ratios):.2f}x "
              f"over {len(ratios)} cases")
    for name, by_setting in results.items():
        for setting, line in by_setting.items():
            if line.get("load_ms_cold") is None:
                print(f"{name}, {setting}: no session: {line['state']}: {line.get('message', '')}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
