"""Writes the variant-graph corpus (spec/variants.md): models whose graphs
carry equivalent_subgraph entries, valid ones with a data set and the
selection each target list must make, and invalid ones that break one rule.

  write_cases.py --out DIR [--parity PATH] [--filter TEXT] [--no-check]

  DIR/valid/<case>/    model.onnx, test_data_set_N/input_K.pb and output_K.pb, case.json
  DIR/invalid/<case>/  model.onnx, case.json (no data set)

Models and inputs are generated here; Compiled entries get their __hash__
from `parity stamp`, expected outputs (the main graph's) from `parity
expect`. Then, unless --no-check, the corpus gates itself: `parity check
--cases` must refuse every invalid case with its rule and accept every valid
one with every entry equivalent to the main graph, `parity resolve` must
select what each valid case.json pins, and `parity eval --variant-targets`
must pass each valid case for every target list it pins. Exit status: 0
written, 1 a step failed (DIR is left as it was), 2 bad arguments or no
parity binary.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from staged_corpus import StagedCorpus  # noqa: E402  (cases/)
import invalid_cases  # noqa: E402
import valid_cases  # noqa: E402
from variant_model import (NPU, REQUIRED_TARGET_LISTS, VariantCase, attach_entries, build_main_model,  # noqa: E402
                           data_set_inputs, entry_ids, needs_stamp)

GENERATOR = "cases/variants/write_cases.py"


class StepFailed(Exception):
    """A step of writing the corpus failed; the message says which and why."""


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def import_schema(parity: str):
    """parity_onnx.onnx_ml_pb2, the patched schema the build writes beside the binary."""
    for folder in (os.path.join(os.path.dirname(os.path.abspath(parity)), "python"),
                   os.path.join(repo_root(), "build", "python")):
        if os.path.isdir(os.path.join(folder, "parity_onnx")) and folder not in sys.path:
            sys.path.insert(0, folder)
    from parity_onnx import onnx_ml_pb2  # noqa: E402 - found through the build's python folder
    return onnx_ml_pb2


def problems_with(case: VariantCase) -> list:
    """Mistakes in a case description itself (the generator's bugs)."""
    problems = []
    ids = entry_ids(case)
    if case.check is None:
        for key in REQUIRED_TARGET_LISTS:
            # NPU may be left out where an NPU entry exists (its selection cannot run anywhere).
            if key not in case.select and not (key == NPU and any(e.domain == NPU for e in case.entries)):
                problems.append(f"no selection pinned for targets '{key}'")
        if any(e.domain == NPU for e in case.entries) and NPU in case.select:
            problems.append("pins com.example.npu although it has an NPU entry")
        for key, selected in case.select.items():
            unknown = [i for i in selected if i not in ids]
            if unknown:
                problems.append(f"targets '{key}' select unknown entries {unknown} (entries: {ids})")
    elif case.select:
        problems.append("an invalid case pins a selection")
    return problems


def run(command: list, what: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise StepFailed(f"{what}: `{' '.join(command)}` exited {result.returncode}\n{result.stdout}{result.stderr}")
    return result.stdout


def write_model(case: VariantCase, case_dir: str, schema, parity: str) -> None:
    main_model = build_main_model(case)
    patched = attach_entries(main_model, case.entries, schema)
    path = os.path.join(case_dir, "model.onnx")
    with open(path, "wb") as f:
        f.write(patched.SerializeToString())
    if needs_stamp(case, patched):
        run([parity, "stamp", path, "--out", path], f"{case.name}: parity stamp")
    if case.after_stamp is not None:
        with open(path, "rb") as f:
            patched = schema.ModelProto.FromString(f.read())
        case.after_stamp(patched)
        with open(path, "wb") as f:
            f.write(patched.SerializeToString())
    # onnx's own classes must read the file too (field 17 is unknown to them).
    onnx.load(path)
    if case.max_bytes and os.path.getsize(path) > case.max_bytes:
        raise StepFailed(f"{case.name}: model.onnx has {os.path.getsize(path)} bytes, over {case.max_bytes}: "
                         "a weight was copied")
    if case.check is None:
        for n, given in enumerate([case.inputs] + case.more_inputs):
            set_dir = os.path.join(case_dir, f"test_data_set_{n}")
            os.makedirs(set_dir)
            for k, (name, array) in enumerate(data_set_inputs(case, main_model, given)):
                with open(os.path.join(set_dir, f"input_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(array, name).SerializeToString())


def case_meta(case: VariantCase) -> dict:
    meta = {"feature": f"variants.{case.kind}", "why": case.why, "generator": GENERATOR}
    if case.operator:
        meta["operator"] = case.operator
    if case.tolerance:
        meta["tolerance"] = case.tolerance
    if case.check is None:
        meta["suite"] = "variants"
        meta["variants"] = {"select": case.select}
    else:
        meta["suite"] = "variants_invalid"
        meta["check"] = {"rule": case.check[0], "message": case.check[1]}
    return meta


def selected_by_resolver(parity: str, model: str, targets: str, scratch: str) -> list:
    out = run([parity, "resolve", model, "--target", targets, "--out", os.path.join(scratch, "resolved.onnx")],
              f"parity resolve --target '{targets}'")
    return sorted(m.group(1) for m in re.finditer(r"^selected (\S+) ", out, re.MULTILINE))


def check_corpus(root: str, cases: list, parity: str) -> None:
    """The corpus's own gate: rules, equivalence and the pinned selections."""
    if any(c.check for c in cases):
        run([parity, "check", "--cases", os.path.join(root, "invalid")], "invalid cases")
    valid = [c for c in cases if c.check is None]
    if not valid:
        return
    run([parity, "check", "--cases", "--equivalence", os.path.join(root, "valid")], "valid cases")
    mismatches = []
    with tempfile.TemporaryDirectory() as scratch:
        for case in valid:
            model = os.path.join(root, "valid", case.name, "model.onnx")
            for targets, expected in case.select.items():
                got = selected_by_resolver(parity, model, targets, scratch)
                if got != sorted(expected):
                    mismatches.append(f"{case.name}: targets '{targets}': resolver {got}, case.json {expected}")
    if mismatches:
        raise StepFailed("the resolver disagrees with the pinned selections:\n  " + "\n  ".join(mismatches))
    # The model each pinned list resolves to must still be valid and compute the main graph's outputs:
    # --equivalence takes each entry alone, and only some combinations break a rewrite.
    by_targets = {}
    for case in valid:
        for targets in case.select:
            by_targets.setdefault(targets, []).append(os.path.join(root, "valid", case.name))
    for targets, dirs in sorted(by_targets.items()):
        run([parity, "eval", *dirs, "--variant-targets", targets],
            f"parity eval --variant-targets '{targets}'")


def write_corpus(out: str, cases: list, parity: str, check: bool) -> None:
    schema = import_schema(parity)
    # Written beside --out and swapped in at the end (cases/staged_corpus.py).
    with StagedCorpus(out, ".variants-") as corpus:
        staging = corpus.path
        for case in cases:
            case_dir = os.path.join(staging, "valid" if case.check is None else "invalid", case.name)
            os.makedirs(case_dir)
            try:
                write_model(case, case_dir, schema, parity)
            except StepFailed:
                raise
            except Exception as error:  # noqa: BLE001 - name the case
                raise StepFailed(f"cannot write {case.name}: {type(error).__name__}: {error}") from error
            with open(os.path.join(case_dir, "case.json"), "w") as f:
                json.dump(case_meta(case), f, indent=1, sort_keys=True)
        if any(c.check is None for c in cases):
            run([parity, "expect", os.path.join(staging, "valid")], "parity expect")
        if check:
            check_corpus(staging, cases, parity)
        corpus.publish({"generator": GENERATOR, "onnx_version": onnx.__version__,
                        "valid": sorted(c.name for c in cases if c.check is None),
                        "invalid": {c.name: c.check[0] for c in cases if c.check is not None}})


def all_cases() -> list:
    return valid_cases.valid_cases() + invalid_cases.invalid_cases()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write the corpus into (valid/ and invalid/)")
    parser.add_argument("--parity", default=os.path.join(repo_root(), "build", "parity"),
                        help="the parity binary that stamps, fills expected outputs and checks")
    parser.add_argument("--filter", default=None, help="only cases whose name contains this")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the gate (parity check --cases, --equivalence, the resolver's selections, "
                             "parity eval of the resolved models)")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"write_cases: {args.parity} is not an executable parity binary (see --parity)", file=sys.stderr)
        return 2

    cases = [c for c in all_cases() if args.filter is None or args.filter in c.name]
    names = [c.name for c in cases]
    errors = [f"duplicate case name {n}" for n in sorted(set(n for n in names if names.count(n) > 1))]
    errors += [f"{c.name}: {p}" for c in cases for p in problems_with(c)]
    if errors:
        print("write_cases: " + "\nwrite_cases: ".join(errors), file=sys.stderr)
        return 1
    try:
        write_corpus(os.path.abspath(args.out), cases, args.parity, check=not args.no_check)
    except StepFailed as failure:
        print(f"write_cases: {failure}", file=sys.stderr)
        return 1
    valid = sum(c.check is None for c in cases)
    print(f"write_cases: wrote {valid} valid and {len(cases) - valid} invalid cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
