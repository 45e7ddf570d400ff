"""runner_agreement.py on a corpus of four small cases whose two verdicts do
not depend on parity's tolerance policy: an exact match (both pass), an
output 10% off (both fail), an operator the reference lacks (both not run)
and a sequence holding a rank-0 tensor, which parity passes and onnx's
runner cannot compare (a disagreement); then the allow-list's rules."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(HERE, "../../build"))
PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)
SCRIPT = os.path.join(HERE, "runner_agreement.py")


def write_case(corpus, name, nodes, inputs, outputs, feeds, expected, opset=21):
    folder = os.path.join(corpus, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    graph = helper.make_graph(nodes, name, inputs, outputs)
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, values in (("input", feeds), ("output", expected)):
        for k, proto in enumerate(values):
            with open(os.path.join(data, f"{kind}_{k}.pb"), "wb") as f:
                f.write(proto.SerializeToString())


def write_corpus(corpus):
    x = np.array([[1.0, -2.5, 3.25]], dtype=np.float32)
    tensor = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])]
    out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])]
    identity = [helper.make_node("Identity", ["x"], ["y"])]
    write_case(corpus, "test_exact", identity, tensor, out, [numpy_helper.from_array(x, "x")],
               [numpy_helper.from_array(x, "y")])
    write_case(corpus, "test_far", identity, tensor, out, [numpy_helper.from_array(x, "x")],
               [numpy_helper.from_array(x * np.float32(1.1), "y")])
    # Bernoulli draws random numbers: the reference has no kernel for it.
    write_case(corpus, "test_random", [helper.make_node("Bernoulli", ["x"], ["y"])], tensor, out,
               [numpy_helper.from_array(np.full((1, 3), 0.5, np.float32), "x")],
               [numpy_helper.from_array(np.ones((1, 3), np.float32), "y")], opset=22)
    scalar = np.array(1.5, dtype=np.float32)
    seq_type = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    write_case(corpus, "test_seq_scalar", [helper.make_node("SequenceConstruct", ["x"], ["s"])],
               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])], [seq_type],
               [numpy_helper.from_array(scalar, "x")], [numpy_helper.from_list([scalar], "s")])


class RunnerAgreementTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="parity-runner-agreement-test-")
        cls.corpus = os.path.join(cls.tmp.name, "corpus")
        write_corpus(cls.corpus)
        cls.eval_dir = os.path.join(cls.tmp.name, "eval")
        proc = subprocess.run([os.path.join(BINARY_DIR, "parity"), "eval", cls.corpus, "--quiet", "--out", cls.eval_dir],
                              capture_output=True, text=True, timeout=300)
        # Exit 1: test_far fails the gate; anything else is a broken setup.
        assert proc.returncode == 1, proc.stdout + proc.stderr
        cls.findings = os.path.join(cls.tmp.name, "findings.md")
        with open(cls.findings, "w") as f:
            f.write("# Findings\n\n**RUN-1. A finding.** Text.\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def agreement(self, allow_cases):
        allow = os.path.join(self.tmp.name, "allow.json")
        with open(allow, "w") as f:
            json.dump({"cases": allow_cases}, f)
        rows = os.path.join(self.tmp.name, "rows.json")
        proc = subprocess.run([PYTHON, SCRIPT, "--corpus", self.corpus, "--eval", self.eval_dir, "--build", BINARY_DIR,
                               "--allow", allow, "--findings", self.findings, "--json", rows],
                              capture_output=True, text=True, timeout=300)
        verdicts = {}
        if os.path.exists(rows):
            with open(rows) as f:
                verdicts = {r["case"]: (r["parity"], r["runner"]) for r in json.load(f)}
            os.remove(rows)
        return proc, verdicts

    def test_counts_and_an_unlisted_disagreement(self):
        proc, verdicts = self.agreement({})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(verdicts, {"test_exact": ("PASS", "pass"), "test_far": ("FAIL", "fail"),
                                    "test_random": ("UNSUPPORTED", "not run"),
                                    "test_seq_scalar": ("PASS", "error")})
        for line in ("cases: 4", "both pass: 1", "both fail: 1", "both not run: 1",
                     "disagreements: 1 (0 in the allow-list)",
                     "test_seq_scalar: parity PASS, runner error [NOT ALLOWED]"):
            self.assertIn(line, proc.stdout)
        self.assertIn("TypeError: Unable to compare", proc.stdout)

    def test_a_listed_disagreement_passes(self):
        proc, _ = self.agreement({"test_seq_scalar": {"parity": "PASS", "runner": "error",
                                                      "reason": "onnx's runner calls len() on a rank-0 tensor (RUN-1)"}})
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("[allowed]", proc.stdout)

    def test_an_entry_that_no_longer_disagrees_is_stale(self):
        proc, _ = self.agreement({"test_seq_scalar": {"parity": "PASS", "runner": "error", "reason": "RUN-1"},
                                  "test_exact": {"parity": "FAIL", "runner": "pass", "reason": "RUN-1"}})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("STALE allow-list entry test_exact: lists parity FAIL, runner pass; now parity PASS, runner pass",
                      proc.stdout)

    def test_a_reason_must_cite_a_finding(self):
        proc, _ = self.agreement({"test_seq_scalar": {"parity": "PASS", "runner": "error",
                                                      "reason": "it differs (XYZ-9)"}})
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn('"cases"."test_seq_scalar": the reason cites no finding of spec/findings.md', proc.stderr)
        self.assertIn("XYZ-9", proc.stderr)

    def test_missing_eval_results_are_named(self):
        proc = subprocess.run([PYTHON, SCRIPT, "--corpus", self.corpus, "--eval", os.path.join(self.tmp.name, "none"),
                               "--build", BINARY_DIR], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no results.jsonl", proc.stderr)


if __name__ == "__main__":
    unittest.main()
