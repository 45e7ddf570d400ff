"""The aliasing corpus's own gate (`parity check --cases`, `parity eval`,
`parity eval --check-aliasing`) and the comparison with ONNX's Python
reference evaluator. Parts the parity binary cannot do yet are skipped with
a line that says why; everything it can do must hold."""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import numpy as np

from stateful_writer import StepFailed, read_tensor, run


def _usage(parity: str) -> str:
    result = subprocess.run([parity], capture_output=True, text=True)
    return result.stdout + result.stderr


def _say(text: str) -> None:
    print(f"write_cases: {text}")


def check_rules(root: str, parity: str) -> None:
    """Invalid and hazard cases refused under their rule; valid cases accepted."""
    valid = os.path.join(root, "valid")
    if os.path.isdir(valid):
        run([parity, "check", "--cases", valid], "valid cases (parity check --cases)")
        _say("check: every valid case accepted")
    refused = [os.path.join(root, d) for d in ("invalid", "hazard") if os.path.isdir(os.path.join(root, d))]
    if not refused:
        return
    result = subprocess.run([parity, "check", "--cases", *refused], capture_output=True, text=True)
    if result.returncode == 0:
        _say("check: every invalid and hazard case refused under its rule")
        return
    # A binary that validates no alias annotation reports no ALIAS- problem
    # for any case (its FAIL lines name the rule expected, not a problem
    # found); that is a binary from before aliasing, not a corpus problem.
    if not re.search(r"^\s+ALIAS-[A-Z-]+:|as expected: ALIAS-", result.stdout, re.MULTILINE):
        _say(f"skipped: parity check --cases on invalid/ and hazard/: {parity} reports no ALIAS-* problem for any "
             "case (it does not validate alias annotations yet)")
        return
    raise StepFailed(f"invalid cases: `parity check --cases` exited {result.returncode}\n"
                     f"{result.stdout}{result.stderr}")


def check_eval(root: str, parity: str) -> None:
    """The reference reproduces every expected output, functionally."""
    for part in ("valid", "hazard"):
        folder = os.path.join(root, part)
        if os.path.isdir(folder):
            run([parity, "eval", folder, "--quiet"], f"parity eval {part}/")
    _say("eval: the reference reproduces every expected output of valid/ and hazard/")


def check_sharing(root: str, parity: str) -> None:
    """In place, valid cases give their functional results; hazard cases do not."""
    if "--check-aliasing" not in _usage(parity):
        _say(f"skipped: parity eval --check-aliasing: {parity} does not know the flag yet")
        return
    valid = os.path.join(root, "valid")
    if os.path.isdir(valid):
        run([parity, "eval", valid, "--check-aliasing"], "parity eval --check-aliasing valid/ (no difference expected)")
        _say("check-aliasing: sharing changes no output of any valid case")
    silent = []
    for case_dir in sorted(glob.glob(os.path.join(root, "hazard", "*"))):
        result = subprocess.run([parity, "eval", case_dir, "--check-aliasing"], capture_output=True, text=True)
        # A difference fails the case; its line says what sharing changed.
        if result.returncode == 0:
            silent.append(os.path.basename(case_dir))
    if silent:
        raise StepFailed("parity eval --check-aliasing shows no difference for hazard cases: " + ", ".join(silent))
    _say("check-aliasing: sharing changes a result of every hazard case")


def self_check(root: str, parity: str) -> None:
    check_rules(root, parity)
    check_eval(root, parity)
    check_sharing(root, parity)


def _step_dirs(case_dir: str) -> list:
    dirs = glob.glob(os.path.join(case_dir, "test_data_set_*"))
    return sorted(dirs, key=lambda d: int(d.rsplit("_", 1)[1]))


def compare_onnx_reference(root: str, out=sys.stdout) -> None:
    """ONNX's ReferenceEvaluator on every step of every valid case: the largest
    absolute difference per case and output against our expected files,
    over all steps. Findings, not a verdict."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    for case_dir in sorted(glob.glob(os.path.join(root, "valid", "*"))):
        name = os.path.basename(case_dir)
        model = onnx.load(os.path.join(case_dir, "model.onnx"))
        inputs = [i.name for i in model.graph.input]
        outputs = [o.name for o in model.graph.output]
        worst = {o: (0.0, -1) for o in outputs}
        try:
            evaluator = ReferenceEvaluator(model)
            for step, set_dir in enumerate(_step_dirs(case_dir)):
                feeds = {n: read_tensor(os.path.join(set_dir, f"input_{k}.pb")) for k, n in enumerate(inputs)}
                got = evaluator.run(None, feeds)
                for k, o in enumerate(outputs):
                    want = read_tensor(os.path.join(set_dir, f"output_{k}.pb")).astype(np.float64)
                    diff = np.abs(np.asarray(got[k], dtype=np.float64) - want)
                    largest = float(np.nanmax(diff)) if diff.size else 0.0
                    if np.isnan(diff).any():
                        largest = float("nan")
                    if not np.isnan(worst[o][0]) and (np.isnan(largest) or largest > worst[o][0]):
                        worst[o] = (largest, step)
        except Exception as error:  # noqa: BLE001 - a finding to print, not a failure
            print(f"onnx-reference {name}: cannot run: {type(error).__name__}: {error}", file=out)
            continue
        for o in outputs:
            value, step = worst[o]
            where = f" (step {step})" if step >= 0 else ""
            print(f"onnx-reference {name} {o}: max abs difference {value:.3g}{where}", file=out)
