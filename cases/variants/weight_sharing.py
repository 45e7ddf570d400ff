"""Measures what alternatives cost in file size when they share a weight by
name (spec/variants.md, "Weights by reference"): a model with one 16 MiB
weight and N = 0, 1, 2, 4, 8, 16 entries, each calling its own model-local
function that takes the weight as an input. Prints the sizes, the growth
over N = 0 and per alternative, and, for contrast, the same N alternatives
each carrying its own copy of the weight as a TENSOR attribute (the form
VAR-COPIED-WEIGHT refuses).

  weight_sharing.py [--parity PATH] [--weight-mib 16] [--counts 0,1,2,4,8,16] [--check]

Exit status: 0 when sharing adds less than the weight's size for every N,
1 when some N grows by the weight's size or more (a copy), 2 on bad use.
With --check, `parity check` must also accept the largest shared model and
refuse the one-copy model with VAR-COPIED-WEIGHT.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.parser
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from variant_model import LOCAL, OPSET, PRIORITY_KEY, function  # noqa: E402
from write_cases import import_schema, repo_root  # noqa: E402


def alternative_function(k: int, copied: bool) -> onnx.FunctionProto:
    """Alternative k: MatMul then Relu, the weight an input (shared) or an attribute (copied)."""
    if copied:
        text = f"""Alt{k} <weight> (X) => (Y) {{
          W = Constant <value: tensor = @weight> ()
          T = MatMul(X, W)
          Y = Relu(T)
        }}"""
    else:
        text = f"""Alt{k} (X, W) => (Y) {{
          T = MatMul(X, W)
          Y = Relu(T)
        }}"""
    return onnx.parser.parse_function(function(text))


def build(weight: np.ndarray, count: int, copied: bool, schema):
    """The model with `count` alternatives of its MatMul-Relu block."""
    rows, cols = weight.shape
    graph = onnx.parser.parse_graph(f"""main (float[1,{rows}] x) => (float[1,{cols}] y) {{
      [matmul_0] h = MatMul(x, W)
      [relu_0] y = Relu(h)
    }}""")
    graph.initializer.append(numpy_helper.from_array(weight, "W"))
    functions = [alternative_function(k, copied) for k in range(count)]
    model = helper.make_model(graph, functions=functions, producer_name="onnx-parity-weight-sharing",
                              opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(LOCAL, 1)])
    model.ir_version = 10
    patched = schema.ModelProto.FromString(model.SerializeToString())
    # Serialized once: each copied entry parses the same bytes.
    weight_attribute = (helper.make_attribute("weight", numpy_helper.from_array(weight)).SerializeToString()
                        if copied else b"")
    for k in range(count):
        entry = patched.graph.equivalent_subgraph.add()
        entry.input.extend(["x"] if copied else ["x", "W"])
        entry.output.append("y")
        entry.op_type, entry.domain = f"Alt{k}", LOCAL
        prop = entry.metadata_props.add()
        prop.key, prop.value = PRIORITY_KEY, str(k)
        if copied:
            entry.attribute.add().ParseFromString(weight_attribute)
    return patched


def check_with_parity(parity: str, shared, copied) -> list:
    """Problems found when `parity check` reads the two forms (empty: as expected)."""
    problems = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, model, want_ok in (("shared", shared, True), ("copied", copied, False)):
            path = os.path.join(scratch, f"{name}.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            result = subprocess.run([parity, "check", path], capture_output=True, text=True)
            if want_ok and result.returncode != 0:
                problems.append(f"parity check refused the shared form:\n{result.stdout}{result.stderr}")
            if not want_ok and "VAR-COPIED-WEIGHT" not in result.stdout:
                problems.append(f"parity check did not report VAR-COPIED-WEIGHT for the copied form:\n"
                                f"{result.stdout}{result.stderr}")
    return problems


def mib(n: int) -> str:
    return f"{n / (1024 * 1024):.3f} MiB"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parity", default=os.path.join(repo_root(), "build", "parity"),
                        help="the parity binary (its python/ folder holds the patched schema)")
    parser.add_argument("--weight-mib", type=int, default=16, help="size of the shared weight")
    parser.add_argument("--counts", default="0,1,2,4,8,16", help="numbers of alternatives, comma-separated")
    parser.add_argument("--check", action="store_true", help="also run `parity check` on both forms")
    args = parser.parse_args(argv)
    try:
        counts = sorted({int(c) for c in args.counts.split(",")})
    except ValueError:
        print(f"weight_sharing: --counts takes integers, not '{args.counts}'", file=sys.stderr)
        return 2
    if counts[0] != 0 or args.weight_mib <= 0:
        print("weight_sharing: --counts must include 0 and --weight-mib be positive", file=sys.stderr)
        return 2
    schema = import_schema(args.parity)

    # A [rows, rows] float32 weight of exactly weight_mib MiB (rows = 2048 for 16).
    rows = int(np.sqrt(args.weight_mib * 1024 * 1024 / 4))
    weight = np.random.default_rng(7301).standard_normal((rows, rows), dtype=np.float32) / np.float32(np.sqrt(rows))
    weight_bytes = weight.nbytes
    print(f"weight W: float32[{rows}, {rows}], {weight_bytes} bytes ({mib(weight_bytes)})")
    print()
    print("| N | shared: file bytes | growth over N=0 | per alternative | "
          "copied: file bytes | growth over N=0 | per alternative |")
    print("|---|---|---|---|---|---|---|")
    base_shared = base_copied = 0
    failed = []
    for n in counts:
        shared = build(weight, n, copied=False, schema=schema).ByteSize()
        copied = build(weight, n, copied=True, schema=schema).ByteSize()  # measured, not extrapolated
        if n == 0:
            base_shared, base_copied = shared, copied
        grow_shared, grow_copied = shared - base_shared, copied - base_copied
        per_shared = f"{grow_shared / n:.0f} B" if n else "-"
        per_copied = mib(grow_copied // n) if n else "-"
        print(f"| {n} | {shared} | {grow_shared} B | {per_shared} | {copied} | {mib(grow_copied)} | {per_copied} |")
        if grow_shared >= weight_bytes:
            failed.append(f"N={n}: sharing grew the file by {grow_shared} bytes, at least the weight's {weight_bytes}")
    if args.check:
        if not os.access(args.parity, os.X_OK):
            print(f"weight_sharing: {args.parity} is not an executable parity binary", file=sys.stderr)
            return 2
        failed += check_with_parity(args.parity, build(weight, counts[-1], False, schema),
                                    build(weight, 1, True, schema))
    print()
    if failed:
        print("weight_sharing: FAILED\n  " + "\n  ".join(failed))
        return 1
    print(f"weight_sharing: OK: {counts[-1]} alternatives share the weight; none copies it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
