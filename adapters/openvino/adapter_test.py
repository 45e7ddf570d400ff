#!/usr/bin/env python3
"""The OpenVINO CPU adapter (adapters/openvino/) through `parity run`, on
cases written here with their expected outputs from the reference (`parity
expect`): float32 inference precision (a MatMul long enough that the CPU
plugin's default bfloat16 would fail the float32 tolerance must PASS with
float32-sized errors), operators OpenVINO's ONNX frontend cannot convert
(UNSUPPORTED, the message naming them), the placement of every node on the
CPU, and the load-time figures (read plus compile) in the results."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(HERE, "../../build"))
PARITY = os.path.join(BINARY_DIR, "parity")
ADAPTER_BUILT = os.path.exists(os.path.join(BINARY_DIR, "adapters", "libparity_adapter_openvino.so"))


def write_case(root, name, nodes, inputs, outputs, opsets=(("", 21),)):
    """inputs: (name, float32 array); outputs: names of float32 outputs."""
    folder = os.path.join(root, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs])
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def write_corpus(root):
    rng = np.random.default_rng(7)
    # K = 1024 products of values in [0.5, 1.5): bfloat16 operands (8 bits of
    # mantissa) err by about 2e-3 relative per product, far past float32's
    # matrix-product tolerance.
    a = rng.uniform(0.5, 1.5, (8, 1024)).astype(np.float32)
    b = rng.uniform(0.5, 1.5, (1024, 16)).astype(np.float32)
    write_case(root, "matmul_float32_precision", [helper.make_node("MatMul", ["a", "b"], ["y"], name="product")],
               [("a", a), ("b", b)], ["y"])
    x = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    write_case(root, "three_nodes_placed",
               [helper.make_node("Relu", ["x"], ["r"], name="relu_0"), helper.make_node("Tanh", ["r"], ["t"]),
                helper.make_node("Add", ["t", "x"], ["y"], name="add_0")], [("x", x)], ["y"])
    # The frontend renames a parameter that flows straight to an output
    # (it takes the output's name): the adapter must still bind it, here
    # beside a scalar input that has no parameter left.
    write_case(root, "dropout_passthrough", [helper.make_node("Dropout", ["x", "r"], ["y"])],
               [("x", x), ("r", np.array(0.5, np.float32))], ["y"])
    # Operators of domains the adapter declares, which the frontend has no
    # conversion rule for: creation must be refused, naming them.
    write_case(root, "unconvertible_operator",
               [helper.make_node("NoSuchOperator", ["x"], ["r"], domain="com.microsoft", name="mystery"),
                helper.make_node("Relu", ["r"], ["y"])], [("x", x)], ["y"],
               opsets=(("", 21), ("com.microsoft", 1)))
    # The reference has no kernel for it either: the expected output is a
    # placeholder of the right shape, since the case never runs.
    with open(os.path.join(root, "unconvertible_operator", "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.maximum(x, 0), "y").SerializeToString())


def run(cases, out):
    proc = subprocess.run([PARITY, "run", "--adapter", "openvino", "--cases", cases, "--out", out, "--fresh",
                           "--jobs", "1", "--progress", "quiet"], capture_output=True, text=True, timeout=600)
    with open(os.path.join(out, "results.jsonl")) as f:
        return {r["case"]: r for r in map(json.loads, f)}, proc


@unittest.skipUnless(ADAPTER_BUILT, "the OpenVINO adapter is not built (OpenVINO absent from .venv)")
class OpenVinoAdapterTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="parity-openvino-test-")
        corpus = os.path.join(cls.tmp.name, "cases")
        write_corpus(corpus)
        # The reference has no kernel for the made-up operator either: that
        # case keeps its placeholder, every other gets the reference's outputs.
        proc = subprocess.run([PARITY, "expect", corpus], capture_output=True, text=True, timeout=600)
        assert "wrote the expected outputs of 3 of 4 cases" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        cls.rows, cls.proc = run(corpus, os.path.join(cls.tmp.name, "run"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def row(self, name):
        self.assertIn(name, self.rows, self.proc.stdout + self.proc.stderr)
        return self.rows[name]

    def test_matmul_runs_in_float32(self):
        row = self.row("matmul_float32_precision")
        self.assertEqual(row["state"], "PASS", row.get("message"))
        # bfloat16 operands would be off by about 1e-3 relative; float32
        # sums of 1024 products stay within a few 1e-6.
        self.assertLess(row["outputs"][0]["max_rel_error"], 1e-5, row["outputs"][0])

    def test_unconvertible_operator_is_unsupported_and_named(self):
        row = self.row("unconvertible_operator")
        self.assertEqual(row["state"], "UNSUPPORTED", row.get("message"))
        self.assertIn("com.microsoft.NoSuchOperator", row["message"])
        self.assertIn("cannot convert", row["message"])

    def test_every_node_placed_on_the_cpu(self):
        row = self.row("three_nodes_placed")
        self.assertEqual(row["state"], "PASS", row.get("message"))
        self.assertEqual(row["placement"], {"cpu": 3})

    def test_renamed_parameter_is_bound(self):
        row = self.row("dropout_passthrough")
        self.assertEqual(row["state"], "PASS", row.get("message"))

    def test_load_time_is_read_plus_compile(self):
        row = self.row("three_nodes_placed")
        self.assertGreater(row["compile_ms_cold"], 0)
        self.assertGreaterEqual(row["load_ms_cold"], row["compile_ms_cold"])
        self.assertEqual(row["compile_ms_warm"]["repeats"], row["load_ms_warm"]["repeats"])
        self.assertGreater(row["kernels_compiled"] + row["kernels_deferred"], 0)

    def test_backend_version_is_openvinos_build(self):
        with open(os.path.join(self.tmp.name, "run", "summary.json")) as f:
            summary = json.load(f)
        self.assertIn("OpenVINO 2026.4", json.dumps(summary))


if __name__ == "__main__":
    unittest.main()
