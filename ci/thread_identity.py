"""Checks that the reference computes the same bits whatever its thread count
(reference/core/parallel.h, "Determinism"): runs `parity eval` on each corpus
with --threads 1 and with --threads N (default 2), and compares the digest of
every output of every data set ("output_sha256" in results.jsonl,
spec/results.md).

  thread_identity.py CORPUS... [--parity PATH] [--threads N] [--jobs J] [--keep DIR]

Prints each case whose outputs differ (the data set, the output, both
digests) or whose state differs. Exit status: 0 every digest agrees, 1 some
differ (or no data set produced a digest, so nothing was compared), 2 bad
arguments or a run that could not be made.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_journal(path: str) -> dict:
    """(suite, case) -> the result line."""
    lines = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                j = json.loads(line)
                lines[(j["suite"], j["case"])] = j
    return lines


def compare_journals(one: dict, many: dict, threads: int) -> tuple[list, int]:
    """The differences between the journals of --threads 1 and --threads
    `threads`, one line each, and the number of data sets compared."""
    differences = []
    compared = 0
    other = f"--threads {threads}"
    for key in sorted(set(one) | set(many)):
        name = f"{key[0]}/{key[1]}"
        if key not in one or key not in many:
            differences.append(f"{name}: ran only with {'--threads 1' if key in one else other}")
            continue
        a, b = one[key], many[key]
        if a["state"] != b["state"]:
            differences.append(f"{name}: {a['state']} with --threads 1, {b['state']} with {other}")
        sets_a, sets_b = a.get("output_sha256", {}), b.get("output_sha256", {})
        for data_set in sorted(set(sets_a) | set(sets_b)):
            if data_set not in sets_a or data_set not in sets_b:
                differences.append(f"{name} {data_set}: outputs computed only with "
                                   f"{'--threads 1' if data_set in sets_a else other}")
                continue
            compared += 1
            da, db = sets_a[data_set], sets_b[data_set]
            if len(da) != len(db):
                differences.append(f"{name} {data_set}: {len(da)} outputs with --threads 1, {len(db)} with {other}")
                continue
            for k, (x, y) in enumerate(zip(da, db)):
                if x != y:
                    differences.append(f"{name} {data_set} output {k}: sha256 {x} with --threads 1, {y} with {other}")
    return differences, compared


def run_eval(parity: str, corpus: str, threads: int, jobs: int, out: str) -> None:
    command = [parity, "eval", corpus, "--out", out, "--quiet", "--jobs", str(jobs), "--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    # 0 and 1 (a case failed the gate) and 3 (cases in ERROR) all leave a
    # complete journal; the gate is not this check's business.
    if done.returncode not in (0, 1, 3) or not os.path.isfile(os.path.join(out, "results.jsonl")):
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", help="case folders or folders of them")
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"), help="the parity binary")
    parser.add_argument("--threads", type=int, default=2, help="the thread count compared with 1 (default 2)")
    parser.add_argument("--jobs", type=int, default=1, help="cases side by side in each run (default 1)")
    parser.add_argument("--keep", default=None, help="write the runs' folders here instead of a temporary folder")
    args = parser.parse_args(argv)
    if args.threads < 2:
        print("thread_identity: --threads must be 2 or more (it is compared with 1)", file=sys.stderr)
        return 2
    if not os.access(args.parity, os.X_OK):
        print(f"thread_identity: {args.parity} is not an executable parity binary (see --parity)", file=sys.stderr)
        return 2
    for corpus in args.corpora:
        if not os.path.exists(corpus):
            print(f"thread_identity: {corpus} does not exist", file=sys.stderr)
            return 2

    failed = False
    with tempfile.TemporaryDirectory(prefix="parity-threads-") as scratch:
        work = args.keep or scratch
        for index, corpus in enumerate(args.corpora):
            start = time.perf_counter()
            outs = {t: os.path.join(work, f"{index}-{os.path.basename(os.path.normpath(corpus))}-threads{t}")
                    for t in (1, args.threads)}
            try:
                for t, out in outs.items():
                    run_eval(args.parity, corpus, t, args.jobs, out)
            except RuntimeError as error:
                print(f"thread_identity: {error}", file=sys.stderr)
                return 2
            one = read_journal(os.path.join(outs[1], "results.jsonl"))
            many = read_journal(os.path.join(outs[args.threads], "results.jsonl"))
            differences, compared = compare_journals(one, many, args.threads)
            seconds = time.perf_counter() - start
            for line in differences:
                print(f"DIFFERS {line}")
            if compared == 0:
                print(f"{corpus}: no data set produced outputs: nothing was compared")
                failed = True
            print(f"{corpus}: {len(one)} cases, {compared} data sets compared, --threads 1 against "
                  f"--threads {args.threads}: {len(differences)} differences ({seconds:.0f} s)")
            failed = failed or bool(differences)
    print("thread identity: " + ("FAILED" if failed else "every output the same bits"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
