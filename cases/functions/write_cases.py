"""Writes the conformance corpus of the attention-era functions (Swish, SwiGLU,
RMSNormalization, RotaryEmbedding, TensorScatter, Attention, the QDQ
MatMul pattern, the org.onnxparity.contrib normalisations, and the stress
cases: large logits, fully masked rows, long key sequences, 16-bit sums
that cancel) in the ONNX backend-test layout, then fills the expected
outputs with the reference evaluator (`parity expect`).

  write_cases.py --out DIR [--parity PATH] [--min-cases N] [--filter TEXT]

Models and inputs are generated here; expected outputs never are. Exit
status: 0 on success, 1 when `parity expect` fails for a case or fewer than
--min-cases cases were written, 2 on bad arguments or a missing tool.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from staged_corpus import StagedCorpus  # noqa: E402  (cases/)
# The case matrices, beside this file.
import attention_cases  # noqa: E402
import attention25_cases  # noqa: E402
import basic_cases  # noqa: E402
import cancel_cases  # noqa: E402
import contrib_attention_cases  # noqa: E402
import contrib_cases  # noqa: E402
import flex_cases  # noqa: E402
import quant_cases  # noqa: E402
import stress_cases  # noqa: E402
from case_common import Case, elem_type  # noqa: E402

GENERATOR = "cases/functions/write_cases.py"
# ONNX Runtime 1.31 reads models up to IR 10; onnx 1.23's make_model stamps 14.
IR_VERSION = 10


def all_cases() -> list:
    return (basic_cases.swish() + basic_cases.swiglu() + basic_cases.rms_normalization() +
            basic_cases.rotary_embedding() + basic_cases.tensor_scatter() + attention_cases.attention() +
            basic_cases.qdq_matmul() + contrib_cases.contrib() +
            attention25_cases.attention25() + quant_cases.quant() + flex_cases.flex() +
            contrib_attention_cases.contrib_attention() + stress_cases.stress() + cancel_cases.cancel())


def build_model(case: Case) -> onnx.ModelProto:
    graph_inputs = [helper.make_tensor_value_info(n, elem_type(a), list(a.shape)) for n, a in case.inputs]
    # An output of a domain ONNX has no schema for (org.onnxparity.contrib)
    # carries its shape, which the checker needs and inference cannot give.
    graph_outputs = [helper.make_tensor_value_info(o[0], o[1], o[2] if len(o) > 2 else None) for o in case.outputs]
    inits = [numpy_helper.from_array(a, n) for n, a in case.initializers]
    graph = helper.make_graph(case.nodes, case.name, graph_inputs, graph_outputs, initializer=inits)
    opsets = [helper.make_opsetid("", case.opset)] + [helper.make_opsetid(d, v) for d, v in case.domains]
    model = helper.make_model(graph, opset_imports=opsets,
                              producer_name="onnx-parity-functions")
    model.ir_version = IR_VERSION
    # Output types and shapes come from ONNX's own inference, in strict mode:
    # a case that ONNX's schema rejects is a generator bug, not a test.
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def write_case(case: Case, root: str) -> None:
    case_dir = os.path.join(root, case.name)
    os.makedirs(case_dir)
    model = build_model(case)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    meta = {"operator": case.operator, "feature": case.feature, "tags": case.tags, "generator": GENERATOR}
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    set_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(set_dir)
    for k, (name, array) in enumerate(case.inputs):
        with open(os.path.join(set_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())


def default_parity() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "build", "parity")


def missing_outputs(root: str, cases: list) -> list:
    """Cases whose data set lacks an output_K.pb for some graph output."""
    missing = []
    for case in cases:
        set_dir = os.path.join(root, case.name, "test_data_set_0")
        if any(not os.path.isfile(os.path.join(set_dir, f"output_{k}.pb")) for k in range(len(case.outputs))):
            missing.append(case.name)
    return missing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write the cases into (its name is the suite name)")
    parser.add_argument("--parity", default=default_parity(), help="the parity binary that writes expected outputs")
    parser.add_argument("--min-cases", type=int, default=250, help="fail when fewer cases than this are written")
    parser.add_argument("--filter", default=None, help="only cases whose name contains this (skips --min-cases)")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"write_cases: {args.parity} is not an executable parity binary (see --parity)", file=sys.stderr)
        return 2

    cases = [c for c in all_cases() if args.filter is None or args.filter in c.name]
    names = [c.name for c in cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        print(f"write_cases: duplicate case names: {', '.join(duplicates)}", file=sys.stderr)
        return 1

    # Written beside --out and swapped in at the end (staged_corpus.py).
    with StagedCorpus(args.out, ".functions-") as corpus:
        staging = corpus.path
        for case in cases:
            try:
                write_case(case, staging)
            except Exception as error:  # noqa: BLE001 - name the case, then stop
                print(f"write_cases: cannot write {case.name}: {type(error).__name__}: {error}", file=sys.stderr)
                return 1
        expect = subprocess.run([args.parity, "expect", staging], capture_output=True, text=True)
        missing = missing_outputs(staging, cases)
        if expect.returncode != 0 or missing:
            sys.stderr.write(expect.stderr)
            print(f"write_cases: `parity expect` failed (exit {expect.returncode}); "
                  f"{len(missing)} cases lack expected outputs: {', '.join(missing[:20])}", file=sys.stderr)
            return 1
        if args.filter is None and len(cases) < args.min_cases:
            print(f"write_cases: only {len(cases)} cases, fewer than the minimum {args.min_cases}", file=sys.stderr)
            return 1
        manifest = {"generator": GENERATOR, "onnx_version": onnx.__version__, "cases": len(cases),
                    "by_operator": {}}
        for case in cases:
            manifest["by_operator"][case.operator] = manifest["by_operator"].get(case.operator, 0) + 1
        corpus.publish(manifest)

    print(f"write_cases: wrote {len(cases)} cases with expected outputs to {corpus.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
