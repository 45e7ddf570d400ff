"""Writes the real-size cases (issue 12): MatMul 1024x1024x1024, Conv
X[1,64,112,112] W[128,64,3,3] pads 1, and causal Attention Q/K/V
[1,32,1024,128], all float32, one data set each, in the ONNX backend-test
layout; then fills the expected outputs with the reference (`parity expect`).

  write_cases.py [--out DIR] [--parity PATH] [--scale real|small]

--scale small writes the same three models at toy sizes, for the tests of
cases/real_size/. The cases are data, never committed: the default --out is
build/corpus/real_size. Exit status: 0 on success, 1 when a case cannot be
written or `parity expect` fails, 2 on bad arguments or a missing tool.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from staged_corpus import StagedCorpus  # noqa: E402  (cases/)

GENERATOR = "cases/real_size/write_cases.py"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Attention is an ONNX operator from opset 23; the other two take the same
# import so that every model reads alike. IR 10: what ONNX Runtime 1.31 reads.
OPSET = 23
IR_VERSION = 10


@dataclass
class RealSizeCase:
    """One model with one data set: `inputs` in graph order (name, array)."""
    name: str
    operator: str
    node: onnx.NodeProto
    inputs: list
    output_shape: list
    flops: float  # the operator's useful floating-point operations (see each builder)
    why: str


def random_floats(name: str, shape: list) -> np.ndarray:
    """Values in [-1, 1) from a seed made of the case and input names, so a
    case is the same wherever and whenever it is written."""
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).astype(np.float32)


def matmul_case(n: int) -> RealSizeCase:
    name = f"matmul_{n}x{n}x{n}_float32"
    a, b = random_floats(name + "/A", [n, n]), random_floats(name + "/B", [n, n])
    return RealSizeCase(name, "MatMul", helper.make_node("MatMul", ["A", "B"], ["Y"]), [("A", a), ("B", b)], [n, n],
                        flops=2.0 * n * n * n, why="a square float32 matrix product: 2*M*N*K FLOPs")


def conv_case(channels: int, size: int, maps: int) -> RealSizeCase:
    name = f"conv_1x{channels}x{size}x{size}_w{maps}x{channels}x3x3_pads1_float32"
    x = random_floats(name + "/X", [1, channels, size, size])
    w = random_floats(name + "/W", [maps, channels, 3, 3])
    node = helper.make_node("Conv", ["X", "W"], ["Y"], pads=[1, 1, 1, 1])
    # Stride 1 and pads 1 keep the 3x3 output the input's size: 2*N*M*(C/group)*kh*kw*OH*OW.
    flops = 2.0 * 1 * maps * channels * 3 * 3 * size * size
    return RealSizeCase(name, "Conv", node, [("X", x), ("W", w)], [1, maps, size, size], flops=flops,
                        why="a ResNet-sized 3x3 convolution, float32")


def attention_case(heads: int, length: int, head_size: int) -> RealSizeCase:
    name = f"attention_causal_1x{heads}x{length}x{head_size}_float32"
    shape = [1, heads, length, head_size]
    inputs = [(n, random_floats(f"{name}/{n}", shape)) for n in ("Q", "K", "V")]
    node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=1)
    # Q K^T and P V over the unmasked pairs (j <= i) only: 4*heads*head_size*(L*(L+1)/2).
    flops = 4.0 * heads * head_size * (length * (length + 1) / 2)
    return RealSizeCase(name, "Attention", node, inputs, shape, flops=flops,
                        why="causal self-attention of a 1024-token sequence, 32 heads of 128, float32")


def all_cases(scale: str = "real") -> list:
    if scale == "small":
        return [matmul_case(64), conv_case(4, 12, 8), attention_case(2, 16, 8)]
    return [matmul_case(1024), conv_case(64, 112, 128), attention_case(32, 1024, 128)]


def build_model(case: RealSizeCase) -> onnx.ModelProto:
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in case.inputs]
    graph_output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, case.output_shape)
    graph = helper.make_graph([case.node], case.name, graph_inputs, [graph_output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnx-parity-real-size")
    model.ir_version = IR_VERSION
    # A model ONNX's own checker refuses would be a generator bug, not a test.
    onnx.checker.check_model(model, full_check=True)
    return model


def write_case(case: RealSizeCase, root: str) -> None:
    case_dir = os.path.join(root, case.name)
    set_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(set_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(build_model(case).SerializeToString())
    meta = {"operator": case.operator, "generator": GENERATOR, "suite": "real_size", "tags": ["real-size"],
            "why": case.why}
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    for k, (name, array) in enumerate(case.inputs):
        with open(os.path.join(set_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "corpus", "real_size"),
                        help="folder to write the cases into (default build/corpus/real_size)")
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"),
                        help="the parity binary that writes expected outputs")
    parser.add_argument("--scale", choices=["real", "small"], default="real",
                        help="real: the sizes of issue 12; small: toy sizes for tests")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"write_cases: {args.parity} is not an executable parity binary (see --parity)", file=sys.stderr)
        return 2

    cases = all_cases(args.scale)
    # Written beside the target and swapped in at the end (cases/staged_corpus.py).
    with StagedCorpus(args.out, ".real_size-") as corpus:
        staging = corpus.path
        for case in cases:
            try:
                write_case(case, staging)
            except Exception as error:  # noqa: BLE001 - name the case, then stop
                print(f"write_cases: cannot write {case.name}: {type(error).__name__}: {error}", file=sys.stderr)
                return 1
        expect = subprocess.run([args.parity, "expect", staging], capture_output=True, text=True)
        missing = [c.name for c in cases
                   if not os.path.isfile(os.path.join(staging, c.name, "test_data_set_0", "output_0.pb"))]
        if expect.returncode != 0 or missing:
            sys.stderr.write(expect.stdout + expect.stderr)
            print(f"write_cases: `parity expect` failed (exit {expect.returncode}); "
                  f"without expected outputs: {', '.join(missing)}", file=sys.stderr)
            return 1
        corpus.publish({"generator": GENERATOR, "scale": args.scale, "onnx_version": onnx.__version__,
                        "cases": {c.name: {"operator": c.operator, "flops": c.flops} for c in cases}})
    out = corpus.out
    print(f"write_cases: wrote {len(cases)} cases ({args.scale} sizes) with expected outputs to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
