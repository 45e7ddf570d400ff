"""Tests of ci/thread_identity.py: the comparison of two journals names each
difference, and the whole command on a few cases (the real-size models at
toy sizes) finds none, while a corpus that computes nothing fails."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import thread_identity  # noqa: E402

PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)
ROOT = os.environ.get("PARITY_SOURCE_DIR", os.path.dirname(HERE))
PARITY = os.path.join(os.environ.get("PARITY_BINARY_DIR", os.path.join(ROOT, "build")), "parity")
A, B = "a" * 64, "b" * 64


def line(case: str, state: str = "PASS", digests=None) -> dict:
    j = {"suite": "s", "case": case, "state": state}
    if digests is not None:
        j["output_sha256"] = digests
    return j


def journal(*lines) -> dict:
    return {(j["suite"], j["case"]): j for j in lines}


class CompareTest(unittest.TestCase):
    def test_equal_journals_have_no_difference(self):
        one = journal(line("x", digests={"test_data_set_0": [A, B], "test_data_set_1": [B, A]}))
        differences, compared = thread_identity.compare_journals(one, one, 2)
        self.assertEqual(differences, [])
        self.assertEqual(compared, 2)

    def test_each_difference_is_named(self):
        one = journal(line("x", digests={"test_data_set_0": [A, B]}), line("y", digests={"test_data_set_0": [A]}),
                      line("z"), line("w", digests={"test_data_set_0": [A], "test_data_set_1": [A]}))
        many = journal(line("x", digests={"test_data_set_0": [A, A]}), line("y", "FAIL", {"test_data_set_0": [A]}),
                       line("w", digests={"test_data_set_0": [A]}))
        differences, compared = thread_identity.compare_journals(one, many, 4)
        self.assertIn(f"s/x test_data_set_0 output 1: sha256 {B} with --threads 1, {A} with --threads 4", differences)
        self.assertIn("s/y: PASS with --threads 1, FAIL with --threads 4", differences)
        self.assertIn("s/z: ran only with --threads 1", differences)
        self.assertIn("s/w test_data_set_1: outputs computed only with --threads 1", differences)
        self.assertEqual(len(differences), 4)
        self.assertEqual(compared, 3)


class CommandTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="parity-thread-identity-test-")
        cls.cases = os.path.join(cls.work, "real_size")
        written = subprocess.run([PYTHON, os.path.join(ROOT, "cases", "real_size", "write_cases.py"), "--scale",
                                  "small", "--out", cls.cases, "--parity", PARITY], capture_output=True, text=True)
        assert written.returncode == 0, written.stdout + written.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def check(self, *args) -> subprocess.CompletedProcess:
        return subprocess.run([PYTHON, os.path.join(HERE, "thread_identity.py"), "--parity", PARITY, *args],
                              capture_output=True, text=True)

    def test_the_reference_computes_the_same_bits(self):
        done = self.check(self.cases, "--threads", "3")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("3 cases, 3 data sets compared, --threads 1 against --threads 3: 0 differences", done.stdout)

    def test_a_corpus_that_computes_nothing_fails(self):
        folder = os.path.join(self.work, "nothing", "unknown_op")
        os.makedirs(os.path.join(folder, "test_data_set_0"))
        graph = helper.make_graph([helper.make_node("Unknown", ["x"], ["y"], domain="com.example")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid("com.example", 1)])
        model.ir_version = 10
        onnx.save(model, os.path.join(folder, "model.onnx"))
        with open(os.path.join(folder, "test_data_set_0", "input_0.pb"), "wb") as f:
            f.write(helper.make_tensor("x", TensorProto.FLOAT, [1], [1.0]).SerializeToString())
        done = self.check(os.path.dirname(folder))
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("nothing was compared", done.stdout)

    def test_bad_arguments(self):
        self.assertEqual(self.check(self.cases, "--threads", "1").returncode, 2)
        self.assertEqual(self.check(os.path.join(self.work, "nowhere")).returncode, 2)

    def test_parity_takes_and_records_its_thread_count(self):
        for bad in ["0", "-2", "two", "2000"]:
            done = subprocess.run([PARITY, "eval", self.cases, "--threads", bad], capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, bad)
            self.assertIn("--threads takes a number of threads from 1 to 1024", done.stderr, bad)
        out = os.path.join(self.work, "three")
        done = subprocess.run([PARITY, "eval", self.cases, "--threads", "3", "--out", out, "--quiet"],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("3 threads per operator", done.stdout)
        with open(os.path.join(out, "summary.json")) as f:
            self.assertEqual(json.load(f)["compute_threads"], 3)


if __name__ == "__main__":
    unittest.main()
