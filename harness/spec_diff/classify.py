"""Case by case, what changed between two node corpora (spec/spec_diff.md):
each case is added, removed, model changed, expected output changed (beyond
the case's tolerance, or in its bits only), inputs changed, or unchanged.
Values are read with the project's onnx (numpy_helper), whatever build wrote
them."""
from __future__ import annotations

import collections
import dataclasses
import json
import math
import os

import numpy as np
import onnx
from onnx import numpy_helper

ADDED, REMOVED, MODEL, BEYOND, BITS, INPUTS, UNCHANGED = (
    "added", "removed", "model changed", "expected output changed beyond tolerance",
    "expected output changed in bits only", "inputs changed", "unchanged")
# The smallest rtol of a bfloat16 output (tolerance.json onnx_runner.bfloat16_rtol).
BFLOAT16_RTOL = 2.0 ** -6
KINDS = [ADDED, REMOVED, MODEL, BEYOND, BITS, INPUTS, UNCHANGED]


@dataclasses.dataclass
class CaseDiff:
    case: str
    kind: str
    operator: str = ""
    detail: str = ""                       # what changed, in words
    model_change: str = ""                 # "graph" or "opset" for MODEL
    outputs: list = dataclasses.field(default_factory=list)  # per data set and output: the comparison
    rtol: float = 0.0
    atol: float = 0.0
    last_data_set: str = ""                # the head's last data set (the one a run's errors describe)
    inputs_changed: bool = False

    def to_json(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items() if v not in ("", [], None)}


def case_names(corpus: str) -> set:
    return {n for n in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, n, "model.onnx"))}


def read_meta(case_dir: str) -> dict:
    path = os.path.join(case_dir, "case.json")
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)


def _tolerance(meta: dict) -> tuple:
    tol = meta.get("tolerance") or {}
    return float(tol.get("rtol", 1e-3)), float(tol.get("atol", 1e-7))


def _data_sets(case_dir: str) -> list:
    sets = [d for d in os.listdir(case_dir) if d.startswith("test_data_set_")]
    return sorted(sets, key=lambda d: int(d.rsplit("_", 1)[1]) if d.rsplit("_", 1)[1].isdigit() else 1 << 30)


def _files(folder: str, prefix: str) -> list:
    names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".pb")]
    return sorted(names, key=lambda n: int(n[len(prefix):-3]) if n[len(prefix):-3].isdigit() else 1 << 30)


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _model_change(base_model: bytes, head_model: bytes) -> tuple:
    """("", "") when the models are the same; else ("graph" or "opset", words)."""
    if base_model == head_model:
        return "", ""
    base, head = onnx.ModelProto(), onnx.ModelProto()
    base.ParseFromString(base_model)
    head.ParseFromString(head_model)
    for m in (base, head):
        m.producer_name = m.producer_version = m.doc_string = ""
    if base.graph.SerializeToString(deterministic=True) == head.graph.SerializeToString(deterministic=True):
        b = {(o.domain or "ai.onnx"): o.version for o in base.opset_import}
        h = {(o.domain or "ai.onnx"): o.version for o in head.opset_import}
        if b == h and base.ir_version == head.ir_version:
            return "", ""
        words = [f"{d} opset {b.get(d, '-')} -> {h.get(d, '-')}" for d in sorted(set(b) | set(h))
                 if b.get(d) != h.get(d)]
        if base.ir_version != head.ir_version:
            words.append(f"IR version {base.ir_version} -> {head.ir_version}")
        return "opset", "same graph; " + ", ".join(words)
    base_ops = collections.Counter(n.op_type for n in base.graph.node)
    head_ops = collections.Counter(n.op_type for n in head.graph.node)
    if base_ops != head_ops:
        more, fewer = head_ops - base_ops, base_ops - head_ops
        words = [f"+{op}" + (f" x{n}" if n > 1 else "") for op, n in sorted(more.items())]
        words += [f"-{op}" + (f" x{n}" if n > 1 else "") for op, n in sorted(fewer.items())]
        return "graph", f"nodes {sum(base_ops.values())} -> {sum(head_ops.values())} ({' '.join(words)})"
    return "graph", "the graph changed (attributes, initializers, types or names)"


def _array(path: str):
    """A tensor file as a numpy array, or None when it is not a tensor."""
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(_read_bytes(path))
        if not tensor.HasField("data_type") or tensor.data_type == 0:
            return None
        return numpy_helper.to_array(tensor)
    except Exception:  # a sequence, an optional or a map: compared by bytes
        return None


def _as_float(a: np.ndarray):
    try:
        return a.astype(np.float64)
    except (TypeError, ValueError):
        return None


def compare_values(base_path: str, head_path: str, rtol: float, atol: float) -> dict:
    """How the head's expected value differs from the base's: "same" (bytes),
    "bits" (within the tolerance), or "beyond", with the largest error and the
    data that re-judging needs (spec_diff rejudge): for float tensors the
    largest margin by which |head - base| eats into the tolerance."""
    base_bytes, head_bytes = _read_bytes(base_path), _read_bytes(head_path)
    if base_bytes == head_bytes:
        return {"verdict": "same"}
    base, head = _array(base_path), _array(head_path)
    if base is None or head is None:
        return {"verdict": "beyond", "why": "a value that is not a tensor changed its bytes"}
    if base.shape != head.shape or base.dtype != head.dtype:
        return {"verdict": "beyond", "why": f"{base.dtype}{list(base.shape)} -> {head.dtype}{list(head.shape)}"}
    if base.size == 0:
        return {"verdict": "bits", "why": "empty tensors with other bytes"}
    if str(base.dtype) == "bfloat16":  # as the onnx runner and spec/tolerance.md: two bfloat16 ULPs at least
        rtol = max(rtol, BFLOAT16_RTOL)
    b, h = _as_float(base), _as_float(head)
    if b is None or h is None or base.dtype.kind in "biuOSU":
        equal = np.array_equal(base, head)
        return {"verdict": "bits" if equal else "beyond",
                "why": "exact values" + ("" if equal else f": {int(np.sum(base != head))} elements differ")}
    both_nan = np.isnan(b) & np.isnan(h)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(both_nan, 0.0, np.abs(h - b))
        diff = np.where(np.isinf(b) & np.isinf(h) & (b == h), 0.0, diff)
        allowed = atol + rtol * np.abs(h)
        slack = allowed - diff          # >= 0 where the head is within tolerance of the base
    finite = np.isfinite(slack)
    over = int(np.sum(~finite | (slack < 0)))
    result = {"verdict": "beyond" if over else "bits",
              "elements": int(b.size), "over_tolerance": over,
              "max_abs_change": float(np.max(np.where(np.isfinite(diff), diff, np.inf)))}
    # For re-judging: the smallest slack (how close the head's value comes to
    # leaving the tolerance of the base's), and the largest excess.
    result["min_slack"] = float(np.min(np.where(finite, slack, -np.inf)))
    result["max_excess"] = float(np.max(np.where(finite, -slack, np.inf)))
    for key in ("max_abs_change", "min_slack", "max_excess"):
        if not math.isfinite(result[key]):
            result[key] = "inf" if result[key] > 0 else "-inf"
    return result


def diff_case(name: str, base_dir: str, head_dir: str) -> CaseDiff:
    meta = read_meta(head_dir)
    rtol, atol = _tolerance(meta)
    diff = CaseDiff(name, UNCHANGED, operator=meta.get("operator", ""), rtol=rtol, atol=atol)
    change, words = _model_change(_read_bytes(os.path.join(base_dir, "model.onnx")),
                                  _read_bytes(os.path.join(head_dir, "model.onnx")))
    base_sets, head_sets = _data_sets(base_dir), _data_sets(head_dir)
    diff.last_data_set = head_sets[-1] if head_sets else ""
    inputs_changed = base_sets != head_sets
    beyond = bits = False
    notes = [f"data sets {len(base_sets)} -> {len(head_sets)}"] if base_sets != head_sets else []
    for data_set in head_sets:
        if data_set not in base_sets:
            beyond = True
            continue
        b_dir, h_dir = os.path.join(base_dir, data_set), os.path.join(head_dir, data_set)
        b_in, h_in = _files(b_dir, "input_"), _files(h_dir, "input_")
        if b_in != h_in or any(_read_bytes(os.path.join(b_dir, f)) != _read_bytes(os.path.join(h_dir, f))
                               for f in h_in):
            inputs_changed = True
        b_out, h_out = _files(b_dir, "output_"), _files(h_dir, "output_")
        if b_out != h_out:
            beyond = True
            notes.append(f"{data_set}: outputs {len(b_out)} -> {len(h_out)}")
            continue
        for index, f in enumerate(h_out):
            result = compare_values(os.path.join(b_dir, f), os.path.join(h_dir, f), rtol, atol)
            if result["verdict"] == "same":
                continue
            result.update({"data_set": data_set, "index": index})
            diff.outputs.append(result)
            beyond |= result["verdict"] == "beyond"
            bits |= result["verdict"] == "bits"
    if change:
        diff.kind, diff.model_change = MODEL, change
        notes.insert(0, words)
    elif beyond:
        diff.kind = BEYOND
    elif bits:
        diff.kind = BITS
    elif inputs_changed:
        diff.kind = INPUTS
    diff.inputs_changed = inputs_changed
    if inputs_changed and diff.kind != INPUTS:
        notes.append("inputs changed too")
    if diff.outputs:
        worst = [o for o in diff.outputs if o["verdict"] == "beyond"]
        if worst:
            notes.append(f"{len(worst)} output(s) beyond rtol {rtol:g} atol {atol:g}"
                         + "".join(f"; {o['data_set']} output {o['index']}: "
                                   + (o.get("why") or f"{o['over_tolerance']} of {o['elements']} elements, "
                                      f"largest change {o['max_abs_change']}") for o in worst[:2]))
        else:
            notes.append(f"{len(diff.outputs)} output(s) changed within rtol {rtol:g} atol {atol:g}")
    diff.detail = "; ".join(notes)
    return diff


def diff_corpora(base: str, head: str) -> list:
    """Every case of either corpus, sorted by name."""
    base_names, head_names = case_names(base), case_names(head)
    diffs = []
    for name in sorted(base_names | head_names):
        if name not in base_names:
            diffs.append(CaseDiff(name, ADDED, operator=read_meta(os.path.join(head, name)).get("operator", "")))
        elif name not in head_names:
            diffs.append(CaseDiff(name, REMOVED, operator=read_meta(os.path.join(base, name)).get("operator", "")))
        else:
            diffs.append(diff_case(name, os.path.join(base, name), os.path.join(head, name)))
    return diffs
