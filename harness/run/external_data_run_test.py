"""Cases whose initializers keep their data in a file beside model.onnx
(data_location EXTERNAL, spec/protocol/README.md "External data").

A valid case passes `parity run` on the reference and on ONNX Runtime: the
harness sends the case's folder as CreateSession.model_dir. Cases whose
location leaves the folder ('..', an absolute path, a symbolic link leading
out) or whose range lies beyond the file are broken cases: `parity run` ends
them in ERROR before any adapter sees them, and `parity eval` refuses them,
each naming the rule. Then each adapter is sent such a case straight through
the worker protocol, to show that its own check refuses it with the same
words (reference, reference_inplace, template through parity-worker; the
Python adapters onnxruntime and onnx_reference through their own workers)."""
import json
import os
import shutil
import subprocess
import sys
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import parity_protocol as protocol
import parity_worker_pb2 as pb
from parity_worker_client import WorkerClient

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402

SOURCE_DIR = os.environ.get("PARITY_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../.."))
PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)

WEIGHTS = np.array([[1, 2, 3], [-4, 0.5, 6]], dtype=np.float32)
OFFSET = 16  # bytes of padding before the weights in weights.bin
X = np.array([[10, 20, 30], [40, 50, 60]], dtype=np.float32)

# case name -> (location, offset, the rule its refusal names); None: the valid case.
CASES = {
    "test_ext_valid": ("weights.bin", OFFSET, None),
    "test_ext_dotdot": ("../outside.bin", OFFSET, "contains '..'"),
    "test_ext_absolute": ("{root}/outside.bin", OFFSET, "is an absolute path"),
    "test_ext_symlink": ("link_out.bin", OFFSET, "outside the model's folder"),
    "test_ext_beyond": ("weights.bin", 4096, "lies beyond the end of 'weights.bin'"),
}


def model_bytes(location, offset):
    """y = x + w over float[2,3], with w in `location` at `offset`."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=list(WEIGHTS.shape),
                    data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(WEIGHTS.nbytes))):
        w.external_data.add(key=key, value=value)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], "external",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], initializer=[w])
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21)])
    return model.SerializeToString()


def write_cases(root):
    """root/external/<case>/ for each of CASES, and root/external/outside.bin
    (a copy of the weights outside every case's folder). Returns the suite folder."""
    suite = os.path.join(root, "external")
    os.makedirs(suite)
    blob = b"\x7f" * OFFSET + WEIGHTS.tobytes()
    with open(os.path.join(suite, "outside.bin"), "wb") as f:
        f.write(blob)
    for name, (location, offset, _) in CASES.items():
        folder = os.path.join(suite, name)
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data)
        with open(os.path.join(folder, "weights.bin"), "wb") as f:
            f.write(blob)
        os.symlink(os.path.join(suite, "outside.bin"), os.path.join(folder, "link_out.bin"))
        with open(os.path.join(folder, "model.onnx"), "wb") as f:
            f.write(model_bytes(location.format(root=suite), offset))
        with open(os.path.join(data, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(X, "x").SerializeToString())
        # Sums of small integers and halves: exact in float32, as the reference writes them.
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(X + WEIGHTS, "y").SerializeToString())
    return suite


class WithCases(unittest.TestCase):
    """The cases of write_cases, written once per test class into a folder of its own."""

    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-external-data-test-")
        cls.suite = write_cases(cls.work)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)


class ExternalDataRunTest(WithCases):

    def expect_states(self, results, tool):
        valid = results["test_ext_valid"]
        self.assertEqual(valid["state"], "PASS", f"{tool}: {valid.get('message')}")
        for name, (_, _, rule) in CASES.items():
            if rule is None:
                continue
            r = results[name]
            # A broken case, not a backend fault.
            self.assertEqual(r["state"], "ERROR", f"{tool} {name}: {r.get('message')}")
            self.assertIn(rule, r["message"], f"{tool} {name}")
            self.assertIn("tensor 'w'", r["message"], f"{tool} {name}")

    def run_adapter(self, adapter):
        out = os.path.join(self.work, "run-" + adapter)
        proc = subprocess.run([util.PARITY, "run", "--adapter", adapter, "--cases", self.suite, "--out", out,
                               "--progress", "quiet"], capture_output=True, text=True, timeout=600)
        # ERRORs are the harness's, never the backend's: exit status 3 says they happened.
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        self.expect_states(results, adapter)
        return results

    def test_run_on_the_reference(self):
        self.run_adapter("reference")

    def test_run_on_onnxruntime(self):
        self.run_adapter("onnxruntime")

    def test_eval_refuses_naming_the_same_rule(self):
        out = os.path.join(self.work, "eval")
        subprocess.run([util.PARITY, "eval", self.suite, "--quiet", "--out", out], capture_output=True, text=True,
                       timeout=600)
        with open(os.path.join(out, "results.jsonl")) as f:
            results = {r["case"]: r for r in map(json.loads, f)}
        self.expect_states(results, "eval")


class ExternalDataWithVariantsTest(unittest.TestCase):
    """A model with variant entries and an external initializer: its stripped
    twin, created after the outputs are compared, reads the same weights."""

    def test_stripped_twin_gets_the_folder_too(self):
        import variant_case_util as vc  # needs build/python (parity_onnx)
        from parity_onnx import onnx_ml_pb2

        work = util.temp_dir(self)
        folder = os.path.join(work, "variants", "test_ext_variants")
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data)
        rng = np.random.default_rng(3)
        x = rng.standard_normal((2, 3)).astype(np.float32)
        b = rng.standard_normal((2, 3)).astype(np.float32)
        with open(os.path.join(folder, "weights.bin"), "wb") as f:
            f.write(b"\x7f" * OFFSET + b.tobytes())
        model = onnx_ml_pb2.ModelProto.FromString(vc.variant_model_bytes())
        del model.graph.input[1]  # b becomes an initializer whose data is in weights.bin
        w = model.graph.initializer.add(name="b", data_type=TensorProto.FLOAT, dims=[2, 3],
                                        data_location=onnx_ml_pb2.TensorProto.EXTERNAL)
        for key, value in (("location", "weights.bin"), ("offset", str(OFFSET))):
            w.external_data.add(key=key, value=value)
        with open(os.path.join(folder, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        for file_name, array in (("input_0.pb", x), ("output_0.pb", np.maximum(x + b, np.float32(0)))):
            with open(os.path.join(data, file_name), "wb") as f:
                f.write(numpy_helper.from_array(array).SerializeToString())
        out = os.path.join(work, "run")
        proc = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", os.path.dirname(folder),
                               "--out", out, "--progress", "quiet"], capture_output=True, text=True, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        r = results["test_ext_variants"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertTrue(r["variants"], "the reference selected no entry: the model was not the variant one")
        self.assertNotIn("load_ms_stripped_error", r)
        self.assertIsNotNone(r.get("load_ms_stripped_cold"))


def native_worker(adapter):
    return [os.path.join(util.BINARY_DIR, "parity-worker"),
            os.path.join(util.BINARY_DIR, "adapters", f"libparity_adapter_{adapter}.so")], None


def python_worker(adapter):
    folder = os.path.join(SOURCE_DIR, "adapters", adapter)
    return [PYTHON, "adapter.py"], folder


# adapter -> (command, working folder)
WORKERS = {
    "reference": native_worker("reference"),
    "reference_inplace": native_worker("reference_inplace"),
    "template": native_worker("template"),
    "onnxruntime": python_worker("onnxruntime"),
    "onnx_reference": python_worker("onnx_reference"),
}


class AdapterContainmentTest(WithCases):
    """Each adapter's own check, with no harness in front of it."""

    def worker(self, adapter):
        command, cwd = WORKERS[adapter]
        # The Python workers run in their adapter's folder: a relative PYTHONPATH would not reach the modules.
        python_path = ":".join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(":") if p)
        worker = WorkerClient(command, cwd=cwd, env=dict(os.environ, PYTHONPATH=python_path), timeout=120)
        self.addCleanup(worker.close)
        hello = worker.hello()
        self.assertEqual(hello.status.code, pb.OK, hello.status.message + worker.log())
        return worker

    def create(self, worker, name, model_dir=None):
        folder = os.path.join(self.suite, name)
        with open(os.path.join(folder, "model.onnx"), "rb") as f:
            model = f.read()
        return worker.create(model, case_name=name, model_dir=folder if model_dir is None else model_dir)

    def test_each_adapter_runs_the_valid_case_and_refuses_the_others(self):
        for adapter in WORKERS:
            with self.subTest(adapter=adapter):
                worker = self.worker(adapter)
                created = self.create(worker, "test_ext_valid")
                self.assertEqual(created.status.code, pb.OK, created.status.message)
                ran = worker.run(created.session.session_id, [protocol.value_to_proto("x", X)])
                self.assertEqual(ran.status.code, pb.OK, ran.status.message)
                np.testing.assert_array_equal(protocol.value_from_proto(ran.run.outputs[0]), X + WEIGHTS)

                no_folder = self.create(worker, "test_ext_valid", model_dir="")
                self.assertEqual(no_folder.status.code, pb.INVALID_ARGUMENT, no_folder.status.message)
                self.assertIn("weights.bin", no_folder.status.message)

                for name, (_, _, rule) in CASES.items():
                    if rule is None:
                        continue
                    refused = self.create(worker, name)
                    self.assertEqual(refused.status.code, pb.INVALID_ARGUMENT, f"{name}: {refused.status.message}")
                    self.assertIn(rule, refused.status.message, name)
                worker.shutdown()


if __name__ == "__main__":
    unittest.main()
