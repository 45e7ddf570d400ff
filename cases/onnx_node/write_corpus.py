"""Writes the node test cases of the installed onnx package to disk in the
ONNX backend-test layout (model.onnx, test_data_set_N/input_K.pb,
output_K.pb). Newer onnx releases build these cases in memory only, so this
is the one place they become files. Called by `parity corpus onnx-node`.

Exit status: 0 on success, 1 when fewer cases than --min-cases were written,
2 on bad arguments or an unusable onnx package.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from staged_corpus import StagedCorpus  # noqa: E402  (cases/)


def _serialize_value(value, type_proto, name):
    from onnx import TensorProto, numpy_helper

    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


# ONNX's node tests compute expected outputs with numpy, mostly in float32,
# not in double: they are compared with the tolerance that each TestCase
# declares (the one ONNX's own backend runner uses), not with ours.
_TOLERANCE_REASON = ("expected outputs of ONNX's node tests come from numpy, mostly in float32; "
                     "compared with the rtol/atol that the onnx TestCase declares")


def _case_meta(case, operator):
    expanded = "_expanded" in case.name
    return {
        "operator": operator,
        "source": "onnx-node",
        "tags": ["onnx-node"] + (["expanded"] if expanded else []),
        "tolerance": {"rtol": case.rtol, "atol": case.atol, "reason": _TOLERANCE_REASON},
    }


def _operators(cases):
    """The operator each case is about: the op of a one-node model; for an
    expanded function body, the op of its unexpanded twin."""
    single = {}
    for case in cases:
        nodes = case.model.graph.node
        if len(nodes) == 1:
            single[case.name] = nodes[0].op_type
    result = {}
    for case in cases:
        twin = case.name.split("_expanded")[0]
        if case.name in single:
            result[case.name] = single[case.name]
        elif twin in single:
            result[case.name] = single[twin]
        else:
            nodes = case.model.graph.node
            result[case.name] = nodes[0].op_type if nodes else ""
    return result


def _write_case(case, case_dir, operator):
    os.makedirs(case_dir)
    graph = case.model.graph
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(_case_meta(case, operator), f, indent=1, sort_keys=True)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    for set_index, (inputs, outputs) in enumerate(case.data_sets):
        set_dir = os.path.join(case_dir, f"test_data_set_{set_index}")
        os.makedirs(set_dir)
        for k, value in enumerate(inputs):
            info = graph.input[k]
            with open(os.path.join(set_dir, f"input_{k}.pb"), "wb") as f:
                f.write(_serialize_value(value, info.type, info.name))
        for k, value in enumerate(outputs):
            info = graph.output[k]
            with open(os.path.join(set_dir, f"output_{k}.pb"), "wb") as f:
                f.write(_serialize_value(value, info.type, info.name))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write the cases into")
    parser.add_argument("--min-cases", type=int, default=1000,
                        help="fail when fewer cases than this are written")
    parser.add_argument("--filter", default=None, help="only cases whose name contains this")
    args = parser.parse_args(argv)

    try:
        import onnx
        from onnx.backend.test.loader import load_node_model_tests
    except ImportError as error:
        print(f"corpus: cannot import onnx: {error}", file=sys.stderr)
        return 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own numpy overflow warnings
        cases = load_node_model_tests()

    # Written beside --out and swapped in at the end (cases/staged_corpus.py).
    written = 0
    failures = []
    operators = _operators(cases)
    with StagedCorpus(args.out, ".corpus-") as corpus:
        for case in cases:
            if args.filter and args.filter not in case.name:
                continue
            try:
                _write_case(case, os.path.join(corpus.path, case.name), operators[case.name])
                written += 1
            except Exception as error:  # one bad case must not lose the rest
                failures.append((case.name, f"{type(error).__name__}: {error}"))
        corpus.publish({
            "source": "onnx.backend.test.loader.load_node_model_tests",
            "onnx_version": onnx.__version__,
            "cases": written,
            "write_failures": [{"case": n, "error": e} for n, e in failures],
        })
    out = corpus.out

    for name, error in failures:
        print(f"corpus: could not write {name}: {error}", file=sys.stderr)
    print(f"corpus: wrote {written} cases from onnx {onnx.__version__} to {out}")
    if args.filter is None and written < args.min_cases:
        print(f"corpus: only {written} cases, fewer than the minimum {args.min_cases}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
