"""Writes one stateful case step by step: each step's data set is complete
(every input file, so a runner can take any step alone), its carried inputs
hold what the reference computed for the previous step's carried outputs,
and its expected outputs come from `parity expect`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import onnx
from onnx import numpy_helper

from alias_model import StatefulCase


class StepFailed(Exception):
    """A step of writing the corpus failed; the message says which and why."""


def run(command: list, what: str) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise StepFailed(f"{what}: `{' '.join(command)}` exited {result.returncode}\n{result.stdout}{result.stderr}")
    return result


def write_tensor(path: str, array: np.ndarray, name: str) -> None:
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def read_tensor(path: str) -> np.ndarray:
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def write_data_set(set_dir: str, graph: onnx.GraphProto, values: dict) -> None:
    os.makedirs(set_dir)
    for k, value_info in enumerate(graph.input):
        if value_info.name not in values:
            raise StepFailed(f"{set_dir}: no value for input '{value_info.name}'")
        write_tensor(os.path.join(set_dir, f"input_{k}.pb"), values[value_info.name], value_info.name)


def expect_one(parity: str, model_path: str, set_dir: str, scratch: str) -> None:
    """Fills one data set's expected outputs: `parity expect` on a scratch case
    holding the model and this data set alone (it refuses to rewrite sets
    that already have outputs, and the next step's inputs depend on these)."""
    case_dir = os.path.join(scratch, "step")
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    os.symlink(os.path.abspath(model_path), os.path.join(case_dir, "model.onnx"))
    shutil.move(set_dir, os.path.join(case_dir, "test_data_set_0"))
    try:
        run([parity, "expect", case_dir], f"parity expect ({os.path.basename(set_dir)})")
    finally:
        shutil.move(os.path.join(case_dir, "test_data_set_0"), set_dir)


def carry_indices(case: StatefulCase) -> tuple:
    graph = case.model.graph
    inputs = [i.name for i in graph.input]
    outputs = [o.name for o in graph.output]
    for c in case.carry:
        if c.input not in inputs or c.output not in outputs:
            raise StepFailed(f"{case.name}: carry {c.output} -> {c.input} names a value the model lacks")
    return [inputs.index(c.input) for c in case.carry], [outputs.index(c.output) for c in case.carry]


def verify_chain(case: StatefulCase, case_dir: str) -> None:
    """Step k's carried input file equals step k-1's expected carried output, bit for bit."""
    in_idx, out_idx = carry_indices(case)
    n_out = len(case.model.graph.output)
    for k in range(len(case.steps)):
        set_dir = os.path.join(case_dir, f"test_data_set_{k}")
        missing = [j for j in range(n_out) if not os.path.isfile(os.path.join(set_dir, f"output_{j}.pb"))]
        if missing:
            raise StepFailed(f"{case.name}: step {k} lacks expected outputs {missing}")
        if k == 0:
            continue
        before = os.path.join(case_dir, f"test_data_set_{k - 1}")
        for c, i, j in zip(case.carry, in_idx, out_idx):
            got = read_tensor(os.path.join(set_dir, f"input_{i}.pb"))
            want = read_tensor(os.path.join(before, f"output_{j}.pb"))
            if not same_bits(got, want):
                raise StepFailed(f"{case.name}: step {k} input '{c.input}' is not step {k - 1}'s output "
                                 f"'{c.output}' bit for bit")


def prune_carried(case: StatefulCase, case_dir: str) -> None:
    """Leaves out carried inputs after step 0 and carried expected outputs
    before the last step. Carried values must be the last inputs and outputs,
    so that what is left is input_0..input_m without a hole."""
    in_idx, out_idx = carry_indices(case)
    graph = case.model.graph
    if sorted(in_idx) != list(range(len(graph.input) - len(in_idx), len(graph.input))) or \
            sorted(out_idx) != list(range(len(graph.output) - len(out_idx), len(graph.output))):
        raise StepFailed(f"{case.name}: carried inputs and outputs must come last to be left out")
    last = len(case.steps) - 1
    for k in range(len(case.steps)):
        set_dir = os.path.join(case_dir, f"test_data_set_{k}")
        if k > 0:
            for i in in_idx:
                os.remove(os.path.join(set_dir, f"input_{i}.pb"))
        if k < last:
            for j in out_idx:
                os.remove(os.path.join(set_dir, f"output_{j}.pb"))


def write_stateful(case: StatefulCase, case_dir: str, parity: str, scratch: str, meta: dict) -> None:
    os.makedirs(case_dir)
    model_path = os.path.join(case_dir, "model.onnx")
    onnx.save(case.model, model_path)
    graph = case.model.graph
    _, out_idx = carry_indices(case)
    carried = dict(case.initial)
    for k, fresh in enumerate(case.steps):
        overlap = set(fresh) & set(carried)
        if overlap:
            raise StepFailed(f"{case.name}: step {k} gives carried inputs {sorted(overlap)} itself")
        set_dir = os.path.join(case_dir, f"test_data_set_{k}")
        write_data_set(set_dir, graph, {**fresh, **carried})
        expect_one(parity, model_path, set_dir, scratch)
        carried = {c.input: read_tensor(os.path.join(set_dir, f"output_{j}.pb")) for c, j in zip(case.carry, out_idx)}
    verify_chain(case, case_dir)
    if case.prune_carried:
        prune_carried(case, case_dir)
    meta = dict(meta)
    meta["steps"] = {"carry": [{"output": c.output, "input": c.input} for c in case.carry]}
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
