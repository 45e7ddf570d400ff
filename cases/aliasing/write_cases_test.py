"""Tests of the aliasing corpus generator: complete steps chained bit for
bit, annotations that follow the grammar of reference/aliasing/aliasing.h,
one invalid case per rule that onnx.checker accepts, pruned bench steps,
and the exit statuses."""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stateful_writer  # noqa: E402
import valid_cases  # noqa: E402

PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)
ROOT = os.environ.get("PARITY_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
PARITY = os.path.join(os.environ.get("PARITY_BINARY_DIR", os.path.join(ROOT, "build")), "parity")
RULES = {"ALIAS-KEY", "ALIAS-IR", "ALIAS-NAMES", "ALIAS-TWICE", "ALIAS-TYPE", "ALIAS-READ-AFTER-WRITE",
         "ALIAS-CONTROL-FLOW", "ALIAS-SCATTER"}


def parse_alias(value: str) -> dict:
    """The annotation grammar, written again here from the header's words."""
    fields = {}
    for part in value.split(";"):
        name, _, text = part.strip().partition("=")
        assert name in ("input", "mode", "region") and name not in fields, value
        fields[name] = text.strip()
    assert fields.get("input"), value
    assert fields.setdefault("mode", "may") in ("may", "must"), value
    assert fields.setdefault("region", "whole") in ("whole", "scatter"), value
    return fields


def data_files(set_dir: str, kind: str) -> list:
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(set_dir, f"{kind}_*.pb")))


def generate(out: str, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, os.path.join(HERE, "write_cases.py"), "--out", out, "--parity", PARITY, *extra],
                          capture_output=True, text=True)


@unittest.skipUnless(os.access(PARITY, os.X_OK), f"no parity binary at {PARITY}")
class CorpusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="aliasing-test-")
        cls.out = os.path.join(cls.tmp, "aliasing")
        cls.result = generate(cls.out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cases(self, group: str) -> list:
        return sorted(glob.glob(os.path.join(self.out, group, "*")))

    def meta(self, case_dir: str) -> dict:
        with open(os.path.join(case_dir, "case.json")) as f:
            return json.load(f)

    def test_generator_succeeds_with_its_gate(self):
        self.assertEqual(self.result.returncode, 0, self.result.stdout + self.result.stderr)

    def test_steps_are_complete_and_chained(self):
        self.assertGreaterEqual(len(self.cases("valid")), 6)
        for case_dir in self.cases("valid"):
            model = onnx.load(os.path.join(case_dir, "model.onnx"))
            inputs = [i.name for i in model.graph.input]
            outputs = [o.name for o in model.graph.output]
            carry = self.meta(case_dir)["steps"]["carry"]
            self.assertTrue(carry, case_dir)
            sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
            self.assertTrue(3 <= len(sets) <= 8, case_dir)
            for k in range(len(sets)):
                set_dir = os.path.join(case_dir, f"test_data_set_{k}")
                self.assertEqual(data_files(set_dir, "input"), sorted(f"input_{i}.pb" for i in range(len(inputs))))
                self.assertEqual(data_files(set_dir, "output"), sorted(f"output_{j}.pb" for j in range(len(outputs))))
                if k == 0:
                    continue
                before = os.path.join(case_dir, f"test_data_set_{k - 1}")
                for c in carry:
                    got = stateful_writer.read_tensor(os.path.join(set_dir, f"input_{inputs.index(c['input'])}.pb"))
                    want = stateful_writer.read_tensor(os.path.join(before, f"output_{outputs.index(c['output'])}.pb"))
                    self.assertTrue(stateful_writer.same_bits(got, want), f"{set_dir}: {c}")

    def test_annotations_follow_the_grammar(self):
        modes, regions, unannotated = set(), set(), 0
        for case_dir in self.cases("valid"):
            graph = onnx.load(os.path.join(case_dir, "model.onnx")).graph
            aliases = {p.key.removeprefix("ai.onnx.alias."): parse_alias(p.value) for p in graph.metadata_props
                       if p.key.startswith("ai.onnx.alias.")}
            unannotated += not aliases
            carry = {c["output"]: c["input"] for c in self.meta(case_dir)["steps"]["carry"]}
            for output, fields in aliases.items():
                # An aliased output is carried into the input it shares a buffer with.
                self.assertEqual(carry.get(output), fields["input"], case_dir)
                modes.add(fields["mode"])
                regions.add(fields["region"])
        self.assertEqual(modes, {"may", "must"})
        self.assertEqual(regions, {"whole", "scatter"})
        self.assertGreaterEqual(unannotated, 1)

    def test_every_rule_has_a_case_that_only_breaks_it(self):
        seen = set()
        for group in ("invalid", "hazard"):
            for case_dir in self.cases(group):
                check = self.meta(case_dir)["check"]
                self.assertIn(check["rule"], RULES)
                self.assertTrue(check["message"])
                seen.add(check["rule"])
                model = onnx.load(os.path.join(case_dir, "model.onnx"))
                onnx.checker.check_model(model, full_check=True)
                has_data = bool(glob.glob(os.path.join(case_dir, "test_data_set_0", "output_*.pb")))
                self.assertEqual(has_data, group == "hazard", case_dir)
        self.assertEqual(seen, RULES)


class WriterTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="aliasing-writer-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_missing_binary_is_exit_2(self):
        result = generate(os.path.join(self.tmp, "out"), "--parity", os.path.join(self.tmp, "no-such-parity"))
        self.assertEqual(result.returncode, 2, result.stderr)

    def test_failed_expect_leaves_nothing(self):
        out = os.path.join(self.tmp, "out")
        result = subprocess.run([PYTHON, os.path.join(HERE, "write_cases.py"), "--out", out, "--parity", "/bin/false",
                                 "--filter", "running_mean"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("parity expect", result.stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    @unittest.skipUnless(os.access(PARITY, os.X_OK), f"no parity binary at {PARITY}")
    def test_broken_chain_is_refused(self):
        case = valid_cases.running_mean()
        case_dir = os.path.join(self.tmp, case.name)
        stateful_writer.write_stateful(case, case_dir, PARITY, self.tmp, {})
        stateful_writer.verify_chain(case, case_dir)
        total_in = os.path.join(case_dir, "test_data_set_2", "input_1.pb")
        array = stateful_writer.read_tensor(total_in).copy()
        array.flat[0] = array.flat[0] + 1.0
        stateful_writer.write_tensor(total_in, array, "total_in")
        with self.assertRaisesRegex(stateful_writer.StepFailed, "step 2 input 'total_in'"):
            stateful_writer.verify_chain(case, case_dir)

    @unittest.skipUnless(os.access(PARITY, os.X_OK), f"no parity binary at {PARITY}")
    def test_pruned_steps_keep_what_the_harness_cannot_fill(self):
        case = valid_cases.decoder_layer_case("small_pruned", 1, 4, 2, 8, 16, 12, 3, 3, [], prune=True)
        case_dir = os.path.join(self.tmp, case.name)
        stateful_writer.write_stateful(case, case_dir, PARITY, self.tmp, {})
        n_in, n_out, last = len(case.model.graph.input), len(case.model.graph.output), len(case.steps) - 1
        for k in range(len(case.steps)):
            set_dir = os.path.join(case_dir, f"test_data_set_{k}")
            # Step 0 sends every input; later steps only those not carried (the two caches).
            want_in = n_in if k == 0 else n_in - 2
            want_out = n_out if k == last else n_out - 2
            self.assertEqual(data_files(set_dir, "input"), sorted(f"input_{i}.pb" for i in range(want_in)), set_dir)
            self.assertEqual(data_files(set_dir, "output"), sorted(f"output_{j}.pb" for j in range(want_out)),
                             set_dir)


if __name__ == "__main__":
    unittest.main()
