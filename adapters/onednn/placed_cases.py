"""What the oneDNN family tests share (spatial_test.py, quantized_test.py,
norm_reduce_layout_test.py): small cases written with the function corpus's
writer, each with the placement its run must report; their expected outputs
come from the reference (`parity expect`), and one `parity run --adapter
onednn` over all of them must end every case PASS where the case says it
runs. PARITY_BIN names the parity binary (default build/parity).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "cases", "functions"))
from case_common import rng_for  # noqa: E402
from write_cases import write_case  # noqa: E402

PARITY = os.environ.get("PARITY_BIN", os.path.join(ROOT, "build", "parity"))
NP = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int8": np.int8,
      "uint8": np.uint8, "int32": np.int32}
ELEM = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
        "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int32": TensorProto.INT32}


def data(name, shape, dtype, low=-2.0, high=2.0):
    """Values of `dtype` drawn from a generator seeded by the case name."""
    rng = rng_for(name + str(shape))
    if dtype in ("int8", "uint8", "int32"):
        return rng.integers(0 if dtype == "uint8" else -100, 100, size=shape).astype(NP[dtype])
    return rng.uniform(low, high, size=shape).astype(NP[dtype])


def forget_dims(path, dims_of_input):
    """Makes the named dims of graph inputs unknown (a dim_param) and drops
    the inferred value_info, which would still carry them."""
    model = onnx.load(path)
    for value in model.graph.input:
        for position in dims_of_input.get(value.name, []):
            value.type.tensor_type.shape.dim[position].dim_param = f"{value.name}_{position}"
    del model.graph.value_info[:]
    for value in model.graph.output:
        value.type.tensor_type.ClearField("shape")
    onnx.save(model, path)


def run_all(cases, folder, dynamic):
    """Writes `cases` ([(Case, placement)]) under `folder`, with the dims
    `dynamic` names ({case: {input: [positions]}}) left unknown, and returns
    the results of one run on the oneDNN adapter by case name."""
    root = os.path.join(folder, "cases")
    os.makedirs(root)
    for case, _ in cases:
        write_case(case, root)
        if case.name in dynamic:
            forget_dims(os.path.join(root, case.name, "model.onnx"), dynamic[case.name])
    subprocess.run([PARITY, "expect", root], check=True, capture_output=True, text=True)
    out = os.path.join(folder, "run")
    subprocess.run([PARITY, "run", "--adapter", "onednn", "--cases", root, "--out", out, "--fresh", "--jobs", "1",
                    "--progress", "quiet"], capture_output=True, text=True)
    with open(os.path.join(out, "results.jsonl")) as f:
        return {row["case"]: row for row in map(json.loads, f)}


class PlacedCases:
    """A mixin for a unittest.TestCase whose CASES ([(Case, placement)]) and
    DYNAMIC are set by the test module."""
    CASES: list = []
    DYNAMIC: dict = {}

    @classmethod
    def setUpClass(cls):
        if not os.access(PARITY, os.X_OK):
            raise unittest.SkipTest(f"{PARITY} is not built")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = run_all(cls.CASES, cls.tmp.name, cls.DYNAMIC)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_case_passes_where_it_is_placed(self):
        self.assertTrue(self.CASES, "no cases")
        for case, placement in self.CASES:
            with self.subTest(case=case.name):
                row = self.results.get(case.name)
                self.assertIsNotNone(row, "no result")
                self.assertEqual(row["state"], "PASS", row.get("message"))
                self.assertEqual(row.get("placement"), placement)

