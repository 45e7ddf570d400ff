#!/usr/bin/env python3
"""The --no-fallback gate of the oneDNN adapter (issue: fallback forbidden
gives FALLBACK_REQUIRED exactly for the cases with a node the adapter does
not lower, and FELL_BACK for none).

  fallback_check.py RUN_WITH_FALLBACK RUN_WITHOUT_FALLBACK [--device cpu]

Both are `parity run` folders over the same cases, the second made with
--no-fallback. A case whose first run placed any node off the device must
end UNSUPPORTED with FALLBACK_REQUIRED in the second; a case whose nodes all
ran on the device must not, and must end in the same state; no case may be
FELL_BACK, and none CRASH, TIMEOUT or ERROR in either run. Cases whose session was never created in the first run (no
placement) are counted apart. Prints the counts; exit status 1 on any
breach, 2 on unreadable input.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def read_run(folder: str) -> dict:
    results = {}
    with open(os.path.join(folder, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            results[(r.get("suite", ""), r["case"])] = r
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("with_fallback")
    parser.add_argument("without_fallback")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    try:
        allowed, forbidden = read_run(args.with_fallback), read_run(args.without_fallback)
    except (OSError, ValueError, KeyError) as e:
        print(f"fallback_check: {e}", file=sys.stderr)
        return 2
    breaches = []
    counts = {"fallback required": 0, "all on the device": 0, "no placement": 0}
    for key, first in sorted(allowed.items()):
        second = forbidden.get(key)
        name = "/".join(k for k in key if k)
        if second is None:
            breaches.append(f"{name}: missing from the run without fallback")
            continue
        required = "FALLBACK_REQUIRED" in second.get("message", "")
        for run, r in (("with", first), ("without", second)):
            if r["state"] in ("CRASH", "TIMEOUT", "ERROR"):
                breaches.append(f"{name}: {r['state']} {run} fallback: {r.get('message', '')[:200]}")
        if second["state"] == "FELL_BACK":
            breaches.append(f"{name}: FELL_BACK with fallback forbidden")
        placement = first.get("placement") or {}
        if not placement:
            counts["no placement"] += 1
            if required:
                breaches.append(f"{name}: FALLBACK_REQUIRED, but the run with fallback created no session")
            continue
        off_device = {d: n for d, n in placement.items() if d != args.device}
        if off_device:
            counts["fallback required"] += 1
            if second["state"] != "UNSUPPORTED" or not required:
                breaches.append(f"{name}: nodes ran on {off_device} with fallback allowed, but without it the case "
                                f"ended {second['state']}: {second.get('message', '')[:200]}")
        else:
            counts["all on the device"] += 1
            if required or second["state"] != first["state"]:
                breaches.append(f"{name}: every node ran on {args.device}, yet without fallback it ended "
                                f"{second['state']} (with fallback {first['state']}): {second.get('message', '')[:200]}")
    for key in sorted(set(forbidden) - set(allowed)):
        breaches.append(f"{'/'.join(k for k in key if k)}: missing from the run with fallback")
    print("fallback_check: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + f"; {len(breaches)} breach(es)")
    for b in breaches[:50]:
        print("  " + b)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
