"""Checks of the exported-model cases that need no torch: every case PASSes
on the reference and on ONNX Runtime (but for the failures listed below,
each with its reason), a twin whose outputs are scaled by 1 + 5e-4 FAILs on
the reference, the cases are complete, and case_diff (the comparison of
export_models.py --check) names each kind of difference."""
from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import case_diff  # noqa: E402

ROOT = os.environ.get("PARITY_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
PARITY = os.path.join(os.environ.get("PARITY_BINARY_DIR", os.path.join(ROOT, "build")), "parity")
HAS_ONNXRUNTIME = importlib.util.find_spec("onnxruntime") is not None
CASES = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(HERE, "*", "model.onnx")))

# A scale that any float32 backend worth the name cannot hide behind: 5e-4
# relative is about 4,000 float32 ULP, and above the case tolerance (atol
# 1e-5 + rtol 1.3e-6) for every value larger than 0.02 in magnitude.
TWIN_SCALE = 1.0 + 5e-4

# Cases ONNX Runtime 1.31.1 fails, with a text its message must contain. A
# case that starts passing fails this test, so that the entry is removed.
ONNXRUNTIME_FAILURES = {
    "bert_encoder_opset23": (
        "inconsistent q_sequence_length",
        "the padding mask [batch, 1, 1, keys] that the exporter passes to Attention broadcasts over the "
        "query axis as the Attention text allows; ONNX Runtime's CPU kernel requires that axis to equal "
        "the query length"),
}


def run_parity(*args) -> subprocess.CompletedProcess:
    return subprocess.run([PARITY, *args], capture_output=True, text=True, timeout=600)


def read_results(out: str) -> dict:
    with open(os.path.join(out, "results.jsonl")) as f:
        return {r["case"]: r for r in map(json.loads, f)}


def write_scaled_twin(case_dir: str, twin_dir: str) -> None:
    """A copy of the case whose floating graph outputs are each multiplied by
    TWIN_SCALE: the value an output had is renamed, and a Mul appended writes
    the output's own name, so the expected outputs still name it."""
    shutil.copytree(case_dir, twin_dir)
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    graph = model.graph
    scale_name = "twin_output_scale"
    graph.initializer.append(numpy_helper.from_array(np.array(TWIN_SCALE, dtype=np.float32), scale_name))
    for out in graph.output:
        if out.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
            continue
        unscaled = out.name + "_before_twin_scale"
        for node in graph.node:
            node.input[:] = [unscaled if n == out.name else n for n in node.input]
            node.output[:] = [unscaled if n == out.name else n for n in node.output]
        for info in graph.value_info:
            if info.name == out.name:
                info.name = unscaled
        graph.node.append(helper.make_node("Mul", [unscaled, scale_name], [out.name], name=f"twin_scale_{out.name}"))
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(twin_dir, "model.onnx"))


@unittest.skipUnless(os.access(PARITY, os.X_OK), f"no parity binary at {PARITY}")
class ModelCasesRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="models-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_cases(self, adapter: str, cases: str, label: str) -> tuple[subprocess.CompletedProcess, dict]:
        out = os.path.join(self.tmp, label)
        proc = run_parity("run", "--adapter", adapter, "--cases", cases, "--out", out,
                          "--warm-repeats", "1", "--progress", "quiet")
        self.assertTrue(os.path.isfile(os.path.join(out, "results.jsonl")), proc.stdout + proc.stderr)
        return proc, read_results(out)

    def test_there_are_cases(self):
        self.assertEqual(len(CASES), 6, CASES)

    def test_reference_passes_every_case(self):
        proc, results = self.run_cases("reference", HERE, "reference")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(sorted(results), CASES)
        for name, r in results.items():
            self.assertEqual(r["state"], "PASS", f"{name}: {r.get('message')}")
            self.assertTrue(r["outputs"] and all(o["verdict"] == "match" for o in r["outputs"]), name)

    def test_eval_passes_every_case(self):
        out = os.path.join(self.tmp, "eval")
        proc = run_parity("eval", HERE, "--out", out, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        results = read_results(out)
        self.assertEqual(sorted(results), CASES)
        for name, r in results.items():
            self.assertEqual(r["state"], "PASS", f"{name}: {r.get('message')}")

    @unittest.skipUnless(HAS_ONNXRUNTIME, "onnxruntime is not installed")
    def test_onnxruntime_passes_every_case_but_the_listed_failures(self):
        proc, results = self.run_cases("onnxruntime", HERE, "onnxruntime")
        self.assertEqual(sorted(results), CASES)
        for name, r in results.items():
            if name in ONNXRUNTIME_FAILURES:
                text, reason = ONNXRUNTIME_FAILURES[name]
                self.assertEqual(r["state"], "FAIL", f"{name} now ends {r['state']}: remove it from "
                                 f"ONNXRUNTIME_FAILURES ({reason})")
                self.assertIn(text, r.get("message", ""), name)
            else:
                self.assertEqual(r["state"], "PASS", f"{name}: {r.get('message')}")
        self.assertEqual(proc.returncode, 1 if ONNXRUNTIME_FAILURES else 0, proc.stdout + proc.stderr)

    def test_scaled_twins_fail_on_the_reference(self):
        twins = os.path.join(self.tmp, "twins")
        os.makedirs(twins)
        for name in CASES:
            write_scaled_twin(os.path.join(HERE, name), os.path.join(twins, name))
        proc, results = self.run_cases("reference", twins, "twins")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(sorted(results), CASES)
        for name, r in results.items():
            self.assertEqual(r["state"], "FAIL", f"{name}: {r.get('message')}")
            # Every output is scaled, so every output must be caught, not just one.
            self.assertTrue(r["outputs"], name)
            for o in r["outputs"]:
                self.assertEqual(o["verdict"], "mismatch", f"{name} {o['name']}")


class ModelCasesLayoutTest(unittest.TestCase):
    def test_each_case_is_complete(self):
        for name in CASES:
            case_dir = os.path.join(HERE, name)
            model = onnx.load(os.path.join(case_dir, "model.onnx"))
            onnx.checker.check_model(model, full_check=True)
            with open(os.path.join(case_dir, "case.json")) as f:
                meta = json.load(f)
            self.assertEqual(meta["source"], "pytorch-eager", name)
            self.assertEqual((meta["tolerance"]["atol"], meta["tolerance"]["rtol"]), (1e-5, 1.3e-6), name)
            data = os.path.join(case_dir, "test_data_set_0")
            for kind, values in (("input", model.graph.input), ("output", model.graph.output)):
                files = sorted(glob.glob(os.path.join(data, f"{kind}_*.pb")))
                self.assertEqual(len(files), len(values), f"{name} {kind}s")
                for k, value in enumerate(values):
                    tensor = onnx.TensorProto()
                    with open(os.path.join(data, f"{kind}_{k}.pb"), "rb") as f:
                        tensor.ParseFromString(f.read())
                    self.assertEqual(tensor.name, value.name, f"{name} {kind}_{k}")
                    dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
                    self.assertEqual(list(tensor.dims), dims, f"{name} {kind}_{k}")
                    array = numpy_helper.to_array(tensor)
                    if kind == "output":
                        self.assertTrue(np.all(np.isfinite(array)), f"{name} {value.name}")
                        self.assertGreater(len(np.unique(array)), array.size // 2, f"{name} {value.name}")

    def test_no_exporter_metadata_is_committed(self):
        # Node metadata of the exporter holds source paths and stack traces.
        for name in CASES:
            model = onnx.load(os.path.join(HERE, name, "model.onnx"))
            self.assertFalse([n.name for n in model.graph.node if n.metadata_props or n.doc_string], name)
            self.assertFalse(model.metadata_props, name)


class CaseDiffTest(unittest.TestCase):
    """The comparison behind export_models.py --check, on edited copies of a committed case."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="models-diff-test-")
        self.committed = os.path.join(HERE, "llama_decoder_opset23")
        self.copy = os.path.join(self.tmp, "case")
        shutil.copytree(self.committed, self.copy)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def edit_model(self, edit) -> None:
        path = os.path.join(self.copy, "model.onnx")
        model = onnx.load(path)
        edit(model)
        onnx.save(model, path)

    def test_identical_copy_has_no_difference(self):
        self.assertEqual(case_diff.diff_cases(self.committed, self.copy), [])

    def test_an_attribute_is_named(self):
        def edit(model):
            node = next(n for n in model.graph.node if n.op_type == "RMSNormalization")
            next(a for a in node.attribute if a.name == "epsilon").f = 1e-5
        self.edit_model(edit)
        problems = case_diff.diff_cases(self.committed, self.copy)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("RMSNormalization", problems[0])
        self.assertIn("attribute 'epsilon'", problems[0])

    def test_initializer_bytes_are_named(self):
        def edit(model):
            t = model.graph.initializer[0]
            array = numpy_helper.to_array(t).copy()
            array.flat[3] = np.nextafter(array.flat[3], np.float32(np.inf))
            t.CopyFrom(numpy_helper.from_array(array, t.name))
        self.edit_model(edit)
        problems = case_diff.diff_cases(self.committed, self.copy)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("initializer 'decoder.embed_tokens.weight' bytes differ (1 elements differ", problems[0])

    def test_node_order_and_graph_outputs_are_named(self):
        def edit(model):
            nodes = list(model.graph.node)
            nodes[1], nodes[2] = nodes[2], nodes[1]
            del model.graph.node[:]
            model.graph.node.extend(nodes)
            model.graph.output[0].name = "renamed"
        self.edit_model(edit)
        problems = "\n".join(case_diff.diff_cases(self.committed, self.copy))
        self.assertIn("outputs [('logits'", problems)
        self.assertIn("node 1 (", problems)

    def test_expected_output_and_case_json_are_named(self):
        path = os.path.join(self.copy, "test_data_set_0", "output_0.pb")
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        array = numpy_helper.to_array(tensor) * np.float32(1.001)
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(array, tensor.name).SerializeToString())
        with open(os.path.join(self.copy, "case.json")) as f:
            meta = json.load(f)
        meta["tags"].append("edited")
        with open(os.path.join(self.copy, "case.json"), "w") as f:
            json.dump(meta, f)
        problems = "\n".join(case_diff.diff_cases(self.committed, self.copy))
        self.assertIn("test_data_set_0/output_0.pb: differs (", problems)
        self.assertIn("largest by", problems)
        self.assertIn("case.json: keys ['tags'] differ", problems)

    def test_a_missing_file_is_named(self):
        os.remove(os.path.join(self.copy, "test_data_set_0", "output_0.pb"))
        problems = case_diff.diff_cases(self.committed, self.copy)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("only committed: ['test_data_set_0/output_0.pb']", problems[0])


if __name__ == "__main__":
    unittest.main()
