"""Tests of the real-size generator and its timed command, on the same three
models at toy sizes (write_cases.py --scale small): the cases (checked by
onnx, their case.json by spec/case.schema.json) and their FLOP counts, a timed run whose checks all pass, a run that notices an output file
this parity did not compute, and the agreement rule on its own."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import timed_run  # noqa: E402
import write_cases  # noqa: E402

PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)
ROOT = os.environ.get("PARITY_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
# The schema checker of spec/case.schema.json, which the other generators' cases pass.
sys.path.insert(0, os.path.join(ROOT, "spec"))
import case_schema_test  # noqa: E402
PARITY = os.path.join(os.environ.get("PARITY_BINARY_DIR", os.path.join(ROOT, "build")), "parity")


def load_json(path: str):
    with open(path) as f:
        return json.load(f)


class FlopCountTest(unittest.TestCase):
    def test_the_counts_of_the_issue(self):
        matmul, conv, attention = write_cases.all_cases("real")
        self.assertEqual(matmul.flops, 2 * 1024 ** 3)
        self.assertEqual(conv.flops, 2 * 1 * 128 * 64 * 3 * 3 * 112 * 112)
        # Only the unmasked pairs of a causal mask: L*(L+1)/2 of L*L.
        self.assertEqual(attention.flops, 4 * 32 * 128 * (1024 * 1025 // 2))
        self.assertEqual([list(a.shape) for _, a in attention.inputs], [[1, 32, 1024, 128]] * 3)

    def test_inputs_are_the_same_each_time(self):
        first, second = write_cases.all_cases("small"), write_cases.all_cases("small")
        for a, b in zip(first, second):
            for (_, x), (_, y) in zip(a.inputs, b.inputs):
                np.testing.assert_array_equal(x, y)
        # Different inputs of one case are different data.
        self.assertFalse(np.array_equal(first[0].inputs[0][1], first[0].inputs[1][1]))


class AgreementTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.a = rng.uniform(-1, 1, (32, 32)).astype(np.float32)
        self.b = rng.uniform(-1, 1, (32, 32)).astype(np.float32)
        self.exact = (self.a.astype(np.float64) @ self.b.astype(np.float64)).astype(np.float32)

    def test_a_float32_product_agrees(self):
        verdict = timed_run.compare_outputs(self.a @ self.b, self.exact)
        self.assertTrue(verdict["agree"], verdict)
        self.assertLess(verdict["normwise"], 1e-5)

    def test_a_wrong_meaning_disagrees(self):
        verdict = timed_run.compare_outputs(self.a.T @ self.b, self.exact)
        self.assertFalse(verdict["agree"])
        self.assertIn("largest magnitude", verdict["why"])

    def test_shapes_and_nan(self):
        self.assertFalse(timed_run.compare_outputs(self.exact[:4], self.exact)["agree"])
        broken = self.exact.copy()
        broken[0, 0] = np.nan
        self.assertIn("NaN", timed_run.compare_outputs(broken, self.exact)["why"])


class TimedRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="parity-real-size-test-")
        cls.cases = os.path.join(cls.work, "real_size")
        written = subprocess.run([PYTHON, os.path.join(HERE, "write_cases.py"), "--scale", "small", "--out", cls.cases,
                                  "--parity", PARITY], capture_output=True, text=True)
        assert written.returncode == 0, written.stdout + written.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def timed(self, cases: str) -> tuple[subprocess.CompletedProcess, list]:
        report = os.path.join(self.work, "timed.json")
        if os.path.exists(report):
            os.remove(report)
        done = subprocess.run([PYTHON, os.path.join(HERE, "timed_run.py"), "--cases", cases, "--parity", PARITY,
                               "--json", report], capture_output=True, text=True)
        records = load_json(report) if os.path.exists(report) else []
        return done, records

    def test_the_cases_are_checked_models_with_expected_outputs(self):
        manifest = load_json(os.path.join(self.cases, "corpus.json"))
        self.assertEqual(len(manifest["cases"]), 3)
        schema = case_schema_test.load_schema()
        for name in manifest["cases"]:
            meta = load_json(os.path.join(self.cases, name, "case.json"))
            self.assertEqual(case_schema_test.schema_problems(schema, meta), [], name)
            model = onnx.load(os.path.join(self.cases, name, "model.onnx"))
            onnx.checker.check_model(model, full_check=True)
            self.assertGreaterEqual(model.opset_import[0].version, 23)
            self.assertTrue(os.path.isfile(os.path.join(self.cases, name, "test_data_set_0", "output_0.pb")))

    def test_every_check_passes_and_is_printed(self):
        done, records = self.timed(self.cases)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("3 of 3 cases passed every check", done.stdout)
        self.assertIn("total over 3 cases", done.stdout)
        for record in records:
            self.assertEqual(record["problems"], [])
            for key in ("one_thread", "default", "onnx"):
                self.assertGreater(record[key]["run_s"], 0)
                self.assertGreater(record[key]["peak_rss_mib"], 1)
            self.assertEqual(record["one_thread"]["threads"], 1)
            self.assertEqual(record["one_thread"]["digests"], record["default"]["digests"])
            self.assertTrue(all(a["agree"] for a in record["agreement"]))
            self.assertIn(record["case"], done.stdout)

    def test_an_output_file_this_parity_did_not_compute_is_a_problem(self):
        changed = os.path.join(self.work, "changed")
        shutil.copytree(self.cases, changed)
        name = next(n for n in os.listdir(changed) if n.startswith("matmul"))
        path = os.path.join(changed, name, "test_data_set_0", "output_0.pb")
        proto = onnx.TensorProto()
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
        values = numpy_helper.to_array(proto).copy()
        # One element one float32 step away: within any tolerance, but not these bits.
        values.flat[0] = np.nextafter(values.flat[0], np.float32(np.inf))
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(values, proto.name).SerializeToString())
        done, records = self.timed(changed)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn(f"problems in {name}", done.stdout)
        problems = next(r["problems"] for r in records if r["case"] == name)
        self.assertTrue(any("are not the case's output files'" in p for p in problems), problems)

    def test_missing_cases_are_named(self):
        done, _ = self.timed(os.path.join(self.work, "nowhere"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("write_cases.py", done.stderr)


if __name__ == "__main__":
    unittest.main()
