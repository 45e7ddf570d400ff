"""`parity run` on stateful cases (case.json "steps"): a small key/value cache
model, y = TensorScatter(past_key, update, write_index) * update, run as four
steps on one session with the reference adapter. The expected values are
computed here with numpy, not by the code under test."""
import json
import os
import shutil
import subprocess
import sys
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402

STEPS = 4
CACHE = (1, STEPS, 2)  # batch, positions, width; TensorScatter writes along axis -2
CARRY = {"steps": {"carry": [{"output": "present_key", "input": "past_key"}]}}


def model_bytes():
    # Outputs in the order (present_key, y): a run returns y first (unbound
    # outputs, then kept ones), so outputs must be matched by name.
    graph = helper.make_graph(
        [helper.make_node("TensorScatter", ["past_key", "update", "write_index"], ["present_key"], mode="linear"),
         helper.make_node("Mul", ["present_key", "update"], ["y"])],
        "kv",
        [helper.make_tensor_value_info("past_key", TensorProto.FLOAT, list(CACHE)),
         helper.make_tensor_value_info("update", TensorProto.FLOAT, [1, 1, 2]),
         helper.make_tensor_value_info("write_index", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("present_key", TensorProto.FLOAT, list(CACHE)),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, list(CACHE))])
    graph.metadata_props.add(key="ai.onnx.alias.present_key", value="input=past_key;region=scatter")
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 24)])
    return model.SerializeToString()


def expected_steps(seed=3):
    """(inputs, outputs) per step, complete: every input and output file."""
    rng = np.random.default_rng(seed)
    past = np.zeros(CACHE, np.float32)
    steps = []
    for step in range(STEPS):
        update = rng.standard_normal((1, 1, 2)).astype(np.float32)
        present = past.copy()
        present[:, step, :] = update[:, 0, :]
        y = present * update
        steps.append(([past, update, np.array([step], np.int64)], [present, y]))
        past = present
    return steps


def write_case(suite_dir, name, case_json=CARRY, edit=None):
    """Writes the case; `edit(folder)` then changes its files."""
    folder = os.path.join(suite_dir, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model_bytes())
    for step, (inputs, outputs) in enumerate(expected_steps()):
        data = os.path.join(folder, "test_data_set_%d" % step)
        os.makedirs(data)
        for kind, values in (("input", inputs), ("output", outputs)):
            for k, value in enumerate(values):
                write_value(os.path.join(data, "%s_%d.pb" % (kind, k)), value)
    if case_json is not None:
        with open(os.path.join(folder, "case.json"), "w") as f:
            json.dump(case_json, f)
    if edit:
        edit(folder)


def write_value(path, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array).SerializeToString())


def read_value(path):
    tensor = TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def shift(folder, step, file_name):
    """Moves element 0 of a file's value far enough that no tolerance hides it."""
    path = os.path.join(folder, "test_data_set_%d" % step, file_name)
    value = read_value(path).copy()
    value.flat[0] += 1 + 2 * abs(value.flat[0])
    write_value(path, value)


def remove(folder, step, file_name):
    os.remove(os.path.join(folder, "test_data_set_%d" % step, file_name))


def gaps(folder):
    # The state feeds past_key after step 0; present_key is not stored at step 1.
    for step in range(1, STEPS):
        remove(folder, step, "input_0.pb")
    remove(folder, 1, "output_0.pb")


def wrong_state_at_step_1(folder):
    # The expected state at step 1 is wrong; step 2 has no past_key file that
    # would make the case inconsistent with it.
    shift(folder, 1, "output_0.pb")
    remove(folder, 2, "input_0.pb")


class StatefulRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-stateful-test-")
        cls.suite = os.path.join(cls.work, "cases", "aliasing")
        write_case(cls.suite, "test_kv")
        write_case(cls.suite, "test_kv_gaps", edit=gaps)
        write_case(cls.suite, "test_kv_wrong_y_at_step_2", edit=lambda d: shift(d, 2, "output_1.pb"))
        write_case(cls.suite, "test_kv_wrong_state_at_step_1", edit=wrong_state_at_step_1)
        write_case(cls.suite, "test_kv_inconsistent", edit=lambda d: shift(d, 2, "input_0.pb"))
        # The same files without "steps": each data set runs alone, as before.
        write_case(cls.suite, "test_kv_plain", case_json=None)
        cls.corrupt = os.path.join(cls.work, "corrupt", "aliasing")
        write_case(cls.corrupt, "test_corrupt_kv")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def run_parity(self, out, *extra, adapter="reference", cases=None, env=None):
        proc = subprocess.run([util.PARITY, "run", "--adapter", adapter, "--cases", cases or self.suite, "--out", out,
                               "--warm-repeats", "0", "--progress", "quiet", *extra],
                              capture_output=True, text=True, timeout=600, env=env)
        return proc

    def test_steps_run_on_one_session_and_each_step_is_compared(self):
        out = os.path.join(self.work, "every")
        proc = self.run_parity(out)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)  # the wrong expected files fail the gate
        plan, results, summary = util.read_run(out)

        r = results["test_kv"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertEqual(r["state_readback"], "every")
        self.assertEqual([s["step"] for s in r["steps"]], list(range(STEPS)))
        for s in r["steps"]:
            self.assertEqual(sorted(s["compared"]), ["present_key", "y"])
            self.assertGreaterEqual(s["run_ms"], 0)
            self.assertGreater(s["rss_kb"], 0)
            if s["run_peak_rss_kb"] is not None:  # absent where the high-water mark cannot be reset
                self.assertGreater(s["run_peak_rss_kb"], 0)
        self.assertAlmostEqual(r["run_ms"], sum(s["run_ms"] for s in r["steps"]), places=6)
        self.assertEqual({o["name"] for o in r["outputs"]}, {"present_key", "y"})

        r = results["test_kv_gaps"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertEqual(r["steps"][1]["compared"], ["y"])  # no expected present_key at step 1

        r = results["test_kv_wrong_y_at_step_2"]
        self.assertEqual(r["state"], "FAIL")
        self.assertTrue(r["message"].startswith("step 2 (test_data_set_2): output 1 'y': "), r["message"])
        self.assertEqual(len(r["steps"]), 3)  # the case is decided at step 2

        r = results["test_kv_wrong_state_at_step_1"]
        self.assertEqual(r["state"], "FAIL")
        self.assertTrue(r["message"].startswith("step 1 (test_data_set_1): output 0 'present_key': "), r["message"])

        r = results["test_kv_inconsistent"]
        self.assertEqual(r["state"], "ERROR")
        self.assertIn("case is inconsistent: case 'test_kv_inconsistent': test_data_set_2/input_0.pb (input "
                      "'past_key') differs from test_data_set_1/output_0.pb (output 'present_key')", r["message"])

        r = results["test_kv_plain"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertNotIn("steps", r)
        self.assertNotIn("state_readback", r)

        self.assertIsInstance(summary["adapter"]["honours_aliasing"], bool)
        with open(os.path.join(out, "run.json")) as f:
            self.assertIsNone(json.load(f)["settings"]["state_readback"])
        with open(os.path.join(out, "report.md")) as f:
            report = f.read()
        self.assertIn("## Stateful cases", report)
        self.assertIn("| aliasing | test_kv | reference@cpu | PASS | 4 | every |", report)

        # A merge keeps the steps as they were.
        merged = os.path.join(self.work, "merged")
        subprocess.run([util.PARITY, "merge", out, "--out", merged], check=True, capture_output=True, timeout=60)
        _, merged_results, _ = util.read_run(merged)
        self.assertEqual(merged_results["test_kv"]["steps"], results["test_kv"]["steps"])
        self.assertEqual(merged_results["test_kv"]["state_readback"], "every")

    def test_readback_last_compares_the_state_only_at_the_end(self):
        out = os.path.join(self.work, "last")
        proc = self.run_parity(out, "--state-readback", "last", "--filter", "test_kv")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        r = results["test_kv"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertEqual(r["state_readback"], "last")
        self.assertEqual([s["compared"] for s in r["steps"]], [["y"]] * (STEPS - 1) + [["y", "present_key"]])
        self.assertIn("--state-readback last", r["repro"])

        out = os.path.join(self.work, "last_wrong_state")
        proc = self.run_parity(out, "--state-readback", "last", "--filter", "test_kv_wrong_state_at_step_1")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        # The state at step 1 never came back, so its wrong expected file was never compared.
        self.assertEqual(results["test_kv_wrong_state_at_step_1"]["state"], "PASS")
        with open(os.path.join(out, "run.json")) as f:
            self.assertEqual(json.load(f)["settings"]["state_readback"], "last")

    def test_bad_readback_is_refused(self):
        proc = self.run_parity(os.path.join(self.work, "bad"), "--state-readback", "sometimes")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--state-readback takes every or last", proc.stderr)

    def test_a_corrupted_state_fails_the_step_after(self):
        if not os.path.exists(os.path.join(util.BINARY_DIR, "adapters", "libparity_adapter_fault_injection.so")):
            self.skipTest("the fault injection adapter is not built")
        out = os.path.join(self.work, "corrupt_run")
        env = dict(os.environ, PARITY_FAULTS="test_corrupt*=corrupt_state")
        proc = self.run_parity(out, adapter="fault_injection", cases=self.corrupt, env=env)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        r = results["test_corrupt_kv"]
        self.assertEqual(r["state"], "FAIL")
        # The adapter alters the state kept after step 1: step 2 computes from it.
        self.assertTrue(r["message"].startswith("step 2 (test_data_set_2): output "), r["message"])


if __name__ == "__main__":
    unittest.main()
