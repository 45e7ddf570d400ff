#!/usr/bin/env python3
"""Session creation on the NPU from a precompiled blob against compiling
from IR: what the RFC's Compiled entries buy (spec/variants.md). For each
pair of cases (a model, and the same model with a Compiled entry for the
NPU over its whole graph, written by write_blob_cases.py) it runs `parity
run --adapter level_zero` once per case in a fresh worker and prints the
cold creation and the median of the warm ones, whole and the backend's
compile step alone (compile_ms_*: the layer query and the driver's
compilation, or the blob's loading), with where the nodes ran.

  load_time.py [--pair IR_CASE BLOB_CASE]... [--parity build/parity] [--work DIR] [--warm-repeats N]

Without --pair: the exported decoders of cases/models/ against their _npu
copies in build/corpus/variants_npu. The NPU must be reachable
(ZE_ENABLE_ALT_DRIVERS naming the test driver, or a real one). Exit status:
0 printed, 1 a run had no creation time, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODELS = ["llama_decoder_opset24", "llama_decoder_opset23"]


def run_case(parity: str, case_dir: str, out: str, warm_repeats: int) -> dict:
    subprocess.run([parity, "run", "--adapter", "level_zero", "--cases", case_dir, "--out", out, "--fresh",
                    "--jobs", "1", "--warm-repeats", str(warm_repeats), "--progress", "quiet"],
                   check=False, stdout=subprocess.DEVNULL)
    journal = os.path.join(out, "results.jsonl")
    if not os.path.isfile(journal):
        raise RuntimeError(f"{case_dir}: parity run wrote no results (see {out})")
    with open(journal) as f:
        lines = [json.loads(t) for t in f if t.strip()]
    if len(lines) != 1:
        raise RuntimeError(f"{case_dir}: expected one result, got {len(lines)}")
    return lines[0]


def median(stats):
    return stats.get("median") if isinstance(stats, dict) else stats


def ms(value) -> str:
    return "–" if value is None else f"{value:.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", nargs=2, action="append", metavar=("IR_CASE", "BLOB_CASE"))
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "npu-load-time"))
    parser.add_argument("--warm-repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.warm_repeats < 1:
        print("load_time: --warm-repeats must be at least 1", file=sys.stderr)
        return 2
    pairs = args.pair or [(os.path.join(ROOT, "cases", "models", m),
                           os.path.join(ROOT, "build", "corpus", "variants_npu", m + "_npu")) for m in DEFAULT_MODELS]
    for pair in pairs:
        for case in pair:
            if not os.path.isfile(os.path.join(case, "model.onnx")):
                print(f"load_time: {case}: no model.onnx (write_blob_cases.py writes the _npu cases)", file=sys.stderr)
                return 2
    rows = [["case", "from", "state", "placement", "cold", "warm", "compile cold", "compile warm"]]
    missing = False
    try:
        for ir_case, blob_case in pairs:
            for label, case in (("IR", ir_case), ("blob", blob_case)):
                name = os.path.basename(os.path.normpath(case))
                r = run_case(args.parity, case, os.path.join(args.work, name), args.warm_repeats)
                missing |= r.get("load_ms_cold") is None
                placement = ", ".join(f"{k} {v}" for k, v in sorted(r.get("placement", {}).items()))
                rows.append([name, label, r["state"], placement, ms(r.get("load_ms_cold")),
                             ms(median(r.get("load_ms_warm"))), ms(r.get("compile_ms_cold")),
                             ms(median(r.get("compile_ms_warm")))])
    except RuntimeError as error:
        print(f"load_time: {error}", file=sys.stderr)
        return 1
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"NPU session creation, ms (warm: median of {args.warm_repeats}; each case in a fresh worker)")
    for n, r in enumerate(rows):
        print("  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
