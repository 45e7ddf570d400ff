#!/usr/bin/env python3
"""The decode benchmark of spec/aliasing.md: a grouped-query decoder layer
with a 4,096-position key/value cache, a prefill then 32 decode steps in one
session, run through `parity run` on the reference functionally
(`reference`) and in place (`reference_inplace`). Prints each step's time and
the worker's peak resident memory during the step, the two modes side by
side, then the medians and the growth from the first decode step to the
last.

  decode_bench.py [--parity build/parity] [--work DIR]

Exit status: 0 printed, 1 a run did not pass, 2 no parity binary.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = [("functional", "reference"), ("in place", "reference_inplace")]


def run_mode(parity: str, adapter: str, case_dir: str, out: str) -> list:
    subprocess.run([parity, "run", "--adapter", adapter, "--cases", case_dir, "--out", out, "--fresh",
                    "--jobs", "1", "--state-readback", "last", "--progress", "quiet"], check=False,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.jsonl")) as f:
        result = json.loads(f.readline())
    if result["state"] != "PASS":
        raise RuntimeError(f"{adapter}: {result['state']}: {result.get('message', '')}")
    return result["steps"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "aliasing-bench"))
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"decode_bench: no parity binary at {args.parity}", file=sys.stderr)
        return 2
    corpus = os.path.join(args.work, "corpus")
    subprocess.run([sys.executable, os.path.join(ROOT, "cases", "aliasing", "write_cases.py"), "--out", corpus,
                    "--parity", args.parity, "--bench", "--no-check"], check=True, stdout=subprocess.DEVNULL)
    case_dir = os.path.join(corpus, "bench", "gqa_decode_4096")
    try:
        steps = {mode: run_mode(args.parity, adapter, case_dir, os.path.join(args.work, adapter))
                 for mode, adapter in MODES}
    except RuntimeError as e:
        print(f"decode_bench: {e}", file=sys.stderr)
        return 1

    def mib(kb):
        return f"{kb / 1024:.1f}" if kb is not None else "n/a"

    names = [m for m, _ in MODES]
    print(f"{'step':>4}  " + "  ".join(f"{m + ' ms':>15}" for m in names) + "  " +
          "  ".join(f"{m + ' peak MiB':>20}" for m in names))
    for k in range(len(steps[names[0]])):
        row = [steps[m][k] for m in names]
        print(f"{k:>4}  " + "  ".join(f"{r['run_ms']:>15.2f}" for r in row) + "  " +
              "  ".join(f"{mib(r.get('run_peak_rss_kb')):>20}" for r in row))
    print()
    for m in names:
        decode = steps[m][1:]  # step 0 is the prefill
        peaks = [s.get("run_peak_rss_kb") for s in decode]
        growth = (f"{(peaks[-1] - peaks[0]) / 1024:+.1f} MiB" if None not in peaks else "n/a")
        print(f"{m:>10}: {len(decode)} decode steps, median {statistics.median(s['run_ms'] for s in decode):.2f} ms "
              f"per step, peak {mib(max(p for p in peaks if p is not None))} MiB, "
              f"growth first to last decode step {growth}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
