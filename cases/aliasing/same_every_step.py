#!/usr/bin/env python3
"""Checks that every stateful case passed in each of the given `parity run`
folders with every compared output equal to the functional reference's
expected value bit for bit at every step (results.jsonl `steps[].max_ulp_error`
0, spec/results.md): the functional and in-place modes then give identical
outputs at every step.

  same_every_step.py RUN_DIR [RUN_DIR ...]

Exit status: 0 all identical, 1 a case or step that is not, 2 bad arguments.
"""
from __future__ import annotations

import json
import os
import sys


def problems_in(run_dir: str) -> tuple[list, int]:
    problems, steps = [], 0
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if "steps" not in r:
                continue
            if r["state"] != "PASS":
                problems.append(f"{run_dir}: {r['case']}: {r['state']}: {r.get('message', '')}")
                continue
            for s in r["steps"]:
                steps += 1
                if s.get("max_ulp_error") != 0:
                    problems.append(f"{run_dir}: {r['case']}: step {s['step']}: largest ULP error "
                                    f"{s.get('max_ulp_error')} (compared {', '.join(s.get('compared', []))})")
    return problems, steps


def main(argv: list) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    failed = False
    for run_dir in argv:
        if not os.path.isfile(os.path.join(run_dir, "results.jsonl")):
            print(f"same_every_step: no results.jsonl in {run_dir}", file=sys.stderr)
            return 2
        problems, steps = problems_in(run_dir)
        for p in problems:
            print(p, file=sys.stderr)
        failed |= bool(problems) or steps == 0
        print(f"same_every_step: {run_dir}: {steps} steps, {len(problems)} not bit-identical"
              + ("; no stateful step at all" if steps == 0 else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
