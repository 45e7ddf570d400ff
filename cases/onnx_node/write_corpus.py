"""Writes the node test cases of the installed onnx package to disk in the
ONNX backend-test layout (model.onnx, test_data_set_N/input_K.pb,
output_K.pb). Newer onnx releases build these cases in memory only, so this
is the one place they become files. Releases up to 1.22 ship them as files
instead (onnx/backend/test/data/node/): those are copied as they are, each
with the case.json it would have had. Called by `parity corpus onnx-node`
and `parity spec-diff`.

Exit status: 0 on success, 1 when fewer cases than --min-cases were written,
2 on bad arguments or an unusable onnx package.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
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


def _on_disk_cases(loader):
    """The node cases of a release that ships them as files, each with its
    model read, so that _operators can name the operator it is about."""
    import onnx

    cases = []
    for case in sorted(loader.load_model_tests(kind="node"), key=lambda c: c.name):
        if case.model_dir is None:  # a case that points at a download, not a node test
            continue
        case.model = onnx.load(os.path.join(case.model_dir, "model.onnx"))
        cases.append(case)
    return cases


def _copy_case(case, case_dir, operator):
    """Copies an on-disk case's model and data sets byte for byte."""
    shutil.copytree(case.model_dir, case_dir,
                    ignore=lambda folder, names: [n for n in names if n == "data.json"])
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(_case_meta(case, operator), f, indent=1, sort_keys=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to write the cases into")
    parser.add_argument("--min-cases", type=int, default=1000,
                        help="fail when fewer cases than this are written")
    parser.add_argument("--filter", default=None, help="only cases whose name contains this")
    args = parser.parse_args(argv)

    try:
        import onnx
        from onnx.backend.test import loader
    except ImportError as error:
        print(f"corpus: cannot import onnx: {error}", file=sys.stderr)
        return 2

    on_disk = not hasattr(loader, "load_node_model_tests")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the generators' own numpy overflow warnings
            cases = _on_disk_cases(loader) if on_disk else loader.load_node_model_tests()
    except Exception as error:  # an onnx build whose test loader does not work
        print(f"corpus: onnx {onnx.__version__} cannot list its node tests: {type(error).__name__}: {error}",
              file=sys.stderr)
        return 2

    # Written beside --out and swapped in at the end (cases/staged_corpus.py).
    written = 0
    failures = []
    operators = _operators(cases)
    with StagedCorpus(args.out, ".corpus-") as corpus:
        for case in cases:
            if args.filter and args.filter not in case.name:
                continue
            try:
                write = _copy_case if on_disk else _write_case
                write(case, os.path.join(corpus.path, case.name), operators[case.name])
                written += 1
            except Exception as error:  # one bad case must not lose the rest
                failures.append((case.name, f"{type(error).__name__}: {error}"))
        corpus.publish({
            "source": ("onnx.backend.test.loader.load_model_tests (the files of onnx/backend/test/data/node)"
                       if on_disk else "onnx.backend.test.loader.load_node_model_tests"),
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
