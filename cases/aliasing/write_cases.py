"""Writes the aliasing corpus (reference/aliasing/aliasing.h): stateful
key/value-cache and running-state models whose steps run in one session,
models whose alias annotations break one rule each, and hazards whose
in-place run changes a result.

  write_cases.py --out DIR [--parity PATH] [--filter TEXT] [--no-check] [--bench]
                 [--compare-onnx-reference]

  DIR/valid/<case>/    model.onnx, case.json with "steps": {"carry": [...]},
                       test_data_set_N = step N, each complete
  DIR/invalid/<case>/  model.onnx, case.json with "check" (no data set)
  DIR/hazard/<case>/   model.onnx, case.json with "check", test_data_set_0
  DIR/bench/<case>/    with --bench: a 4,096-position decoder layer, carried
                       values left out where the harness fills them in

Models and inputs are generated here; expected outputs come from `parity
expect`, one step at a time, each step's carried inputs being the previous
step's expected carried outputs. Then, unless --no-check, the corpus gates
itself (corpus_checks.py). Exit status: 0 written, 1 a step failed (DIR is
left as it was), 2 bad arguments or no parity binary.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from staged_corpus import StagedCorpus  # noqa: E402  (cases/)
import corpus_checks  # noqa: E402
import invalid_cases  # noqa: E402
import valid_cases  # noqa: E402
from alias_model import CheckCase, StatefulCase  # noqa: E402
from stateful_writer import StepFailed, run, write_data_set, write_stateful  # noqa: E402

GENERATOR = "cases/aliasing/write_cases.py"


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stateful_meta(case: StatefulCase, suite: str) -> dict:
    meta = {"operator": case.operator, "feature": case.feature, "tags": case.tags, "generator": GENERATOR,
            "suite": suite}
    # A cache written by TensorScatter is compared exactly; an output that an
    # Attention node computes beside it takes Attention's tolerance.
    producers = {o: n.op_type for n in case.model.graph.node for o in n.output}
    numeric = {o.name: "Attention" for o in case.model.graph.output
               if producers.get(o.name) == "Attention" and case.operator != "Attention"}
    if numeric:
        meta["output_operators"] = numeric
    return meta


def write_check_case(case: CheckCase, case_dir: str) -> None:
    os.makedirs(case_dir)
    onnx.save(case.model, os.path.join(case_dir, "model.onnx"))
    if case.inputs is not None:
        write_data_set(os.path.join(case_dir, "test_data_set_0"), case.model.graph, case.inputs)
    meta = {"check": {"rule": case.rule, "message": case.message}, "feature": case.why,
            "tags": ["aliasing", "invalid"] + case.tags, "generator": GENERATOR,
            "suite": "aliasing_hazard" if case.inputs is not None else "aliasing_invalid"}
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


def write_corpus(out: str, groups: dict, parity: str, check: bool) -> None:
    # Written beside --out and swapped in at the end (cases/staged_corpus.py).
    with StagedCorpus(out, ".aliasing-") as corpus:
        staging = corpus.path
        scratch = tempfile.mkdtemp(prefix=".aliasing-scratch-", dir=os.path.dirname(corpus.out))
        try:
            for group, cases in groups.items():
                for case in cases:
                    case_dir = os.path.join(staging, group, case.name)
                    try:
                        if isinstance(case, StatefulCase):
                            write_stateful(case, case_dir, parity, scratch, stateful_meta(case, f"aliasing_{group}"))
                        else:
                            write_check_case(case, case_dir)
                    except StepFailed as failure:
                        raise StepFailed(f"{case.name}: {failure}") from failure
                    except Exception as error:  # noqa: BLE001 - name the case
                        raise StepFailed(f"cannot write {case.name}: {type(error).__name__}: {error}") from error
            if groups.get("hazard"):
                run([parity, "expect", os.path.join(staging, "hazard")], "parity expect hazard/")
            if check:
                corpus_checks.self_check(staging, parity)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        corpus.publish({"generator": GENERATOR, "onnx_version": onnx.__version__,
                        "valid": sorted(c.name for c in groups.get("valid", [])),
                        "bench": sorted(c.name for c in groups.get("bench", [])),
                        "invalid": {c.name: c.rule for c in groups.get("invalid", [])},
                        "hazard": {c.name: c.rule for c in groups.get("hazard", [])}})


def all_groups(bench: bool) -> dict:
    groups = {"valid": valid_cases.valid_cases(), "invalid": invalid_cases.invalid_cases(),
              "hazard": invalid_cases.hazard_cases()}
    if bench:
        groups["bench"] = valid_cases.bench_cases()
    return groups


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write the corpus into")
    parser.add_argument("--parity", default=os.path.join(repo_root(), "build", "parity"),
                        help="the parity binary that writes expected outputs and checks")
    parser.add_argument("--filter", default=None, help="only cases whose name contains this")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the gate (parity check --cases, parity eval, parity eval --check-aliasing)")
    parser.add_argument("--bench", action="store_true", help="also write bench/gqa_decode_4096")
    parser.add_argument("--compare-onnx-reference", action="store_true",
                        help="after writing, run ONNX's ReferenceEvaluator on every step of every valid case and "
                             "print the largest absolute difference per case and output (no verdict)")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"write_cases: {args.parity} is not an executable parity binary (see --parity)", file=sys.stderr)
        return 2
    try:
        groups = all_groups(args.bench)
    except Exception as error:  # noqa: BLE001 - a builder or onnx.checker refused a model
        print(f"write_cases: cannot build the cases: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    groups = {g: [c for c in cases if args.filter is None or args.filter in c.name] for g, cases in groups.items()}
    names = [c.name for cases in groups.values() for c in cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        print(f"write_cases: duplicate case names: {', '.join(duplicates)}", file=sys.stderr)
        return 1
    out = os.path.abspath(args.out)
    try:
        write_corpus(out, groups, args.parity, check=not args.no_check)
    except StepFailed as failure:
        print(f"write_cases: {failure}", file=sys.stderr)
        return 1
    counts = ", ".join(f"{len(cases)} {group}" for group, cases in groups.items())
    print(f"write_cases: wrote {counts} cases to {args.out}")
    if args.compare_onnx_reference:
        corpus_checks.compare_onnx_reference(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
