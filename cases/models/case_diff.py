"""Compares two case folders of the backend-test layout and says what
differs: the graph (opsets, inputs and outputs, nodes with their attributes,
initializers byte for byte, model-local functions), the data sets (inputs and
expected outputs, with the largest difference of a float tensor) and
case.json. export_models.py --check uses it; it needs onnx and numpy only,
so that models_test.py can test it where torch is not installed."""
from __future__ import annotations

import glob
import json
import os

import numpy as np
import onnx
from onnx import numpy_helper


def _type_text(value: onnx.ValueInfoProto) -> str:
    return onnx.helper.printable_type(value.type)


def _attribute_text(attr: onnx.AttributeProto) -> str:
    # The attribute as ONNX prints it ("epsilon=1e-06"); a graph-valued one
    # as its whole protobuf text, so that any change in the body shows.
    copy = onnx.AttributeProto()
    copy.CopyFrom(attr)
    copy.ClearField("doc_string")
    if copy.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        return str(copy)
    return onnx.helper.printable_attribute(copy)


def _diff_nodes(where: str, expected, actual) -> list[str]:
    problems = []
    if len(expected) != len(actual):
        problems.append(f"{where}: {len(expected)} nodes committed, {len(actual)} re-exported")
    for i, (e, a) in enumerate(zip(expected, actual)):
        label = f"{where} node {i} ({e.op_type} '{e.name}')"
        if (e.domain, e.op_type, e.overload) != (a.domain, a.op_type, a.overload):
            problems.append(f"{label}: re-exported as {a.domain}:{a.op_type} '{a.name}'")
            continue
        if list(e.input) != list(a.input):
            problems.append(f"{label}: inputs {list(e.input)} became {list(a.input)}")
        if list(e.output) != list(a.output):
            problems.append(f"{label}: outputs {list(e.output)} became {list(a.output)}")
        e_attrs = {x.name: _attribute_text(x) for x in e.attribute}
        a_attrs = {x.name: _attribute_text(x) for x in a.attribute}
        for name in sorted(set(e_attrs) | set(a_attrs)):
            if e_attrs.get(name) != a_attrs.get(name):
                problems.append(f"{label}: attribute '{name}' differs "
                                f"(committed {e_attrs.get(name, 'absent')}, re-exported {a_attrs.get(name, 'absent')})")
    return problems


def _diff_values(where: str, kind: str, expected, actual) -> list[str]:
    e = [(v.name, _type_text(v)) for v in expected]
    a = [(v.name, _type_text(v)) for v in actual]
    return [] if e == a else [f"{where}: {kind} {e} became {a}"]


def _diff_initializers(where: str, expected, actual) -> list[str]:
    problems = []
    e = {t.name: t for t in expected}
    a = {t.name: t for t in actual}
    if list(e) != list(a):
        missing = sorted(set(e) - set(a))
        extra = sorted(set(a) - set(e))
        problems.append(f"{where}: initializers differ (only committed: {missing}; only re-exported: {extra}"
                        + ("; order differs" if not missing and not extra else "") + ")")
    for name in e:
        if name not in a:
            continue
        et, at = e[name], a[name]
        if et.data_type != at.data_type or list(et.dims) != list(at.dims):
            problems.append(f"{where}: initializer '{name}' is {et.data_type}{list(et.dims)} committed, "
                            f"{at.data_type}{list(at.dims)} re-exported")
        elif numpy_helper.to_array(et).tobytes() != numpy_helper.to_array(at).tobytes():
            problems.append(f"{where}: initializer '{name}' bytes differ ({_largest_difference(et, at)})")
    return problems


def _diff_graph(where: str, expected: onnx.GraphProto, actual: onnx.GraphProto) -> list[str]:
    return (_diff_values(where, "inputs", expected.input, actual.input)
            + _diff_values(where, "outputs", expected.output, actual.output)
            + _diff_initializers(where, expected.initializer, actual.initializer)
            + _diff_nodes(where, expected.node, actual.node))


def diff_models(expected: onnx.ModelProto, actual: onnx.ModelProto, where: str = "model.onnx") -> list[str]:
    """Every difference between two models that changes what they compute;
    producer strings, doc strings and metadata are not compared."""
    problems = []
    e_ops = sorted((o.domain, o.version) for o in expected.opset_import)
    a_ops = sorted((o.domain, o.version) for o in actual.opset_import)
    if e_ops != a_ops:
        problems.append(f"{where}: opset imports {e_ops} became {a_ops}")
    if expected.ir_version != actual.ir_version:
        problems.append(f"{where}: IR version {expected.ir_version} became {actual.ir_version}")
    problems += _diff_graph(where, expected.graph, actual.graph)
    e_funcs = {(f.domain, f.name, f.overload): f for f in expected.functions}
    a_funcs = {(f.domain, f.name, f.overload): f for f in actual.functions}
    if list(e_funcs) != list(a_funcs):
        problems.append(f"{where}: functions {list(e_funcs)} became {list(a_funcs)}")
    for key, f in e_funcs.items():
        if key in a_funcs:
            g = a_funcs[key]
            fwhere = f"{where} function {key[0]}:{key[1]}"
            if (list(f.input), list(f.output), list(f.attribute)) != (list(g.input), list(g.output), list(g.attribute)):
                problems.append(f"{fwhere}: signature differs")
            problems += _diff_nodes(fwhere, f.node, g.node)
    return problems


def _largest_difference(expected: onnx.TensorProto, actual: onnx.TensorProto) -> str:
    e = numpy_helper.to_array(expected)
    a = numpy_helper.to_array(actual)
    if e.shape != a.shape or e.dtype != a.dtype:
        return f"{e.dtype}{list(e.shape)} vs {a.dtype}{list(a.shape)}"
    if not np.issubdtype(e.dtype, np.floating):
        return f"{int(np.count_nonzero(e != a))} elements differ"
    diff = np.abs(e.astype(np.float64) - a.astype(np.float64))
    return f"{int(np.count_nonzero(e != a))} elements differ, largest by {float(np.nanmax(diff)):.3g}"


def _read_tensor(path: str) -> onnx.TensorProto:
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor


def _relative_files(case_dir: str) -> list[str]:
    return sorted(os.path.relpath(p, case_dir) for p in glob.glob(os.path.join(case_dir, "**", "*"), recursive=True)
                  if os.path.isfile(p))


def diff_cases(expected_dir: str, actual_dir: str) -> list[str]:
    """What differs between two case folders, one line each; [] if nothing."""
    problems = []
    e_files = _relative_files(expected_dir)
    a_files = _relative_files(actual_dir)
    if e_files != a_files:
        problems.append(f"files differ (only committed: {sorted(set(e_files) - set(a_files))}; "
                        f"only re-exported: {sorted(set(a_files) - set(e_files))})")
    for rel in e_files:
        if rel not in a_files:
            continue
        e_path, a_path = os.path.join(expected_dir, rel), os.path.join(actual_dir, rel)
        if rel.endswith(".onnx"):
            problems += diff_models(onnx.load(e_path), onnx.load(a_path), rel)
        elif rel.endswith(".pb"):
            e, a = _read_tensor(e_path), _read_tensor(a_path)
            if e.SerializeToString() != a.SerializeToString():
                detail = _largest_difference(e, a) if e.name == a.name else f"name '{e.name}' vs '{a.name}'"
                problems.append(f"{rel}: differs ({detail})")
        elif rel.endswith(".json"):
            with open(e_path) as f:
                e_json = json.load(f)
            with open(a_path) as f:
                a_json = json.load(f)
            if e_json != a_json:
                keys = sorted(k for k in set(e_json) | set(a_json) if e_json.get(k) != a_json.get(k))
                problems.append(f"{rel}: keys {keys} differ")
        else:
            with open(e_path, "rb") as f, open(a_path, "rb") as g:
                if f.read() != g.read():
                    problems.append(f"{rel}: bytes differ")
    return problems
