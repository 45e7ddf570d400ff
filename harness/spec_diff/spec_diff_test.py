"""`parity spec-diff` end to end: on two corpora that differ in known ways
(each kind of change, each verdict of the reference, the gate and its
acknowledgements, an earlier run re-judged), and on real onnx builds: 1.22.0
against the pinned onnx, and the pinned onnx against a pinned onnx-weekly
build, checked against what the corpora on disk say independently."""
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
ROOT = os.path.dirname(os.path.dirname(HERE))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(ROOT, "build"))
PARITY = os.path.join(BINARY_DIR, "parity")
CACHE = os.environ.get("PARITY_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnx-parity")
ONNX_1_22 = os.path.join(CACHE, "wheels", "onnx-1.22.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl")
# The newest onnx-weekly build on PyPI when this test was written.
WEEKLY = "onnx-weekly==1.24.0.dev20261026"


def spec_diff(*args):
    proc = subprocess.run([PARITY, "spec-diff", *args], capture_output=True, text=True, timeout=1200)
    return proc


def read_result(out):
    with open(os.path.join(out, "spec_diff.json")) as f:
        return json.load(f)


def rewrite_tensor(path, change):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    array = change(numpy_helper.to_array(tensor).copy())
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, tensor.name).SerializeToString())


class SyntheticChangesTest(unittest.TestCase):
    """A head corpus made from the base's by known edits."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="parity-spec-diff-test-")
        cls.base = os.path.join(cls.work, "base")
        subprocess.run([PARITY, "corpus", "onnx-node", "--out", cls.base, "--filter", "test_", "--min-cases", "1"],
                       check=True, stdout=subprocess.DEVNULL)
        keep = {"test_abs", "test_relu", "test_neg", "test_sigmoid", "test_exp", "test_floor", "test_ceil"}
        for name in os.listdir(cls.base):
            if name not in keep and os.path.isdir(os.path.join(cls.base, name)):
                shutil.rmtree(os.path.join(cls.base, name))
        cls.head = os.path.join(cls.work, "head")
        shutil.copytree(cls.base, cls.head)
        h = lambda case, *rest: os.path.join(cls.head, case, *rest)
        # A meaning change: Abs's expected output negated where it is large.
        rewrite_tensor(h("test_abs", "test_data_set_0", "output_0.pb"), lambda a: np.where(a > 1, -a, a))
        # Bits only: Relu's outputs moved by far less than rtol 1e-3.
        rewrite_tensor(h("test_relu", "test_data_set_0", "output_0.pb"), lambda a: a * np.float32(1 + 1e-6))
        # Test data moved: Neg's inputs and outputs both scaled, consistently.
        rewrite_tensor(h("test_neg", "test_data_set_0", "input_0.pb"), lambda a: a * 2)
        rewrite_tensor(h("test_neg", "test_data_set_0", "output_0.pb"), lambda a: a * 2)
        # Model changed in its opset only.
        model = onnx.load(h("test_exp", "model.onnx"))
        model.opset_import[0].version += 1
        onnx.save(model, h("test_exp", "model.onnx"))
        # Removed.
        shutil.rmtree(h("test_floor"))
        # Added: an operator no onnx defines, so the reference has no kernel.
        shutil.copytree(h("test_ceil"), h("test_fancy_new_op"))
        model = onnx.load(h("test_fancy_new_op", "model.onnx"))
        model.graph.node[0].op_type = "FancyNewOp"
        onnx.save(model, h("test_fancy_new_op", "model.onnx"))
        with open(h("test_fancy_new_op", "case.json")) as f:
            meta = json.load(f)
        meta["operator"] = "FancyNewOp"
        with open(h("test_fancy_new_op", "case.json"), "w") as f:
            json.dump(meta, f)
        # An earlier adapter run on the base.
        cls.run_dir = os.path.join(cls.work, "run")
        subprocess.run([PARITY, "run", "--adapter", "reference", "--cases", cls.base, "--out", cls.run_dir,
                        "--progress", "quiet"], check=True, stdout=subprocess.DEVNULL)
        cls.out = os.path.join(cls.work, "out")
        cls.proc = spec_diff("--base", cls.base, "--head", cls.head, "--out", cls.out, "--runs", cls.run_dir)
        cls.result = read_result(cls.out)
        cls.cases = {c["case"]: c for c in cls.result["cases"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_every_kind_of_change_is_classified(self):
        kinds = {name: c["kind"] for name, c in self.cases.items()}
        self.assertEqual(kinds, {
            "test_abs": "expected output changed beyond tolerance",
            "test_relu": "expected output changed in bits only",
            "test_neg": "expected output changed beyond tolerance",
            "test_exp": "model changed",
            "test_floor": "removed",
            "test_fancy_new_op": "added",
        })
        self.assertEqual(self.cases["test_exp"]["model_change"], "opset")
        self.assertTrue(self.cases["test_neg"]["inputs_changed"])
        self.assertIn("inputs changed too", self.cases["test_neg"]["detail"])
        counts = self.result["counts"]
        self.assertEqual(counts["unchanged"], 2)  # test_sigmoid, test_ceil
        self.assertEqual(sum(counts.values()), 8)

    def test_the_reference_sorts_each_difference(self):
        sorts = {name: c["sort"] for name, c in self.cases.items()}
        self.assertEqual(sorts, {
            "test_abs": "meaning changed",
            "test_relu": "test data moved",
            "test_neg": "test data moved",
            "test_exp": "test data moved",
            "test_floor": "case removed",
            "test_fancy_new_op": "work for the reference",
        })
        self.assertEqual(self.cases["test_abs"]["reference"]["state"], "FAIL")
        self.assertEqual(self.cases["test_abs"]["reference_on_base"]["state"], "PASS")
        self.assertIn("FancyNewOp", self.cases["test_fancy_new_op"]["reference"]["message"])

    def test_an_unacknowledged_meaning_change_fails_the_gate(self):
        self.assertEqual(self.proc.returncode, 1, self.proc.stdout + self.proc.stderr)
        self.assertEqual(self.result["gate"]["unacknowledged"], ["test_abs"])
        self.assertIn("meaning changed: test_abs (Abs)", self.proc.stdout)
        with open(os.path.join(self.out, "report.md")) as f:
            md = f.read()
        self.assertIn("**Gate failed**", md)
        self.assertIn("| test_abs | Abs |", md)
        with open(os.path.join(self.out, "junit.xml")) as f:
            junit = f.read()
        self.assertEqual(junit.count("<failure "), 1)
        self.assertIn('name="test_abs"', junit)

    def test_an_acknowledged_meaning_change_passes_and_a_stale_entry_is_named(self):
        ack = os.path.join(self.work, "ack.json")
        with open(ack, "w") as f:
            json.dump({"acknowledged": [{"case": "test_abs", "reason": "Abs now keeps the sign (a test)"},
                                        {"operator": "Tanh", "reason": "nothing changed it"}]}, f)
        out = os.path.join(self.work, "out-ack")
        proc = spec_diff("--base", self.base, "--head", self.head, "--out", out, "--acknowledge", ack)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        result = read_result(out)
        self.assertEqual(result["gate"]["acknowledged"], ["test_abs"])
        self.assertIn('"operator": "Tanh"', proc.stderr)

    def test_earlier_runs_are_rejudged(self):
        (run,) = self.result["runs"]
        verdicts = {c["case"]: c["verdict"] for c in run["cases"]}
        self.assertEqual(verdicts["test_abs"], "turns FAIL")
        self.assertEqual(verdicts["test_relu"], "stays")
        self.assertEqual(verdicts["test_floor"], "dropped")
        self.assertEqual(verdicts["test_exp"], "may turn")
        self.assertEqual(verdicts["test_neg"], "may turn")
        self.assertNotIn("test_sigmoid", verdicts)

    def test_bad_arguments_are_named(self):
        for args, words in (
                (["--head", self.head], "--base"),
                (["--base", "/no/such/thing", "--head", self.head], "/no/such/thing: no such file or folder"),
                (["--base", self.work, "--head", self.head], "neither a virtual environment"),
                (["--base", "numpy==2.0", "--head", self.head], "must name onnx or onnx-weekly"),
                (["--base", self.base, "--head", self.head, "--runs", self.work], "not a run folder")):
            proc = spec_diff(*args, "--out", os.path.join(self.work, "bad"))
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn(words, proc.stderr, args)
        bad_ack = os.path.join(self.work, "bad-ack.json")
        with open(bad_ack, "w") as f:
            json.dump({"acknowledged": [{"case": "test_abs"}]}, f)
        proc = spec_diff("--base", self.base, "--head", self.head, "--acknowledge", bad_ack)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("needs a reason", proc.stderr)


class RealBuildsTest(unittest.TestCase):
    """The two diffs README reports. The lists in spec_diff.json are checked
    against the two corpora on disk, read here without the tool's code."""

    def check_against_disk(self, out):
        result = read_result(out)
        base, head = os.path.join(out, "work", "base-corpus"), os.path.join(out, "work", "head-corpus")
        names = lambda d: {n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n, "model.onnx"))}
        listed = lambda kind: {c["case"] for c in result["cases"] if c["kind"] == kind}
        self.assertEqual(listed("added"), names(head) - names(base))
        self.assertEqual(listed("removed"), names(base) - names(head))
        # Every case whose expected output files differ in bytes is listed as changed.
        changed_outputs = set()
        for name in names(base) & names(head):
            for root, _, files in os.walk(os.path.join(head, name)):
                for f in files:
                    if f.startswith("output_"):
                        other = os.path.join(base, name, os.path.relpath(os.path.join(root, f), os.path.join(head, name)))
                        if not os.path.exists(other) or open(other, "rb").read() != open(os.path.join(root, f), "rb").read():
                            changed_outputs.add(name)
        listed_changed = {c["case"] for c in result["cases"]} - listed("added") - listed("removed")
        self.assertLessEqual(changed_outputs, listed_changed)
        # Every difference has the reference's verdict, and every one it ran has its state.
        for c in result["cases"]:
            self.assertIn("sort", c, c["case"])
            if c["kind"] != "removed":
                self.assertIn("reference", c, c["case"])
        self.assertEqual(sum(result["counts"].values()), len(names(base) | names(head)))
        return result

    def test_onnx_1_22_to_pinned(self):
        if not os.path.isfile(ONNX_1_22):
            self.skipTest(f"{ONNX_1_22} is not there (cases/onnx_node/fetch_onnx_data.sh fetches it)")
        out = tempfile.mkdtemp(prefix="parity-spec-diff-1.22-")
        self.addCleanup(shutil.rmtree, out, True)
        proc = spec_diff("--base", ONNX_1_22, "--head", "pinned", "--out", out)
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        result = self.check_against_disk(out)
        self.assertEqual(result["base"]["onnx_version"], "1.22.0")
        self.assertEqual(result["head"]["onnx_version"], onnx.__version__)
        # Every operator the pinned onnx added since 1.22 is listed (read from both schema tables here).
        self.assertTrue(result["operators_added"], "1.23 added operators (SwiGLU)")
        print(f"\n1.22.0 -> pinned: {json.dumps(result['counts'])}; {json.dumps(result['sorts'])}", file=sys.stderr)

    def test_a_virtual_environment_and_a_source_tree_are_builds(self):
        if not os.path.isfile(ONNX_1_22):
            self.skipTest(f"{ONNX_1_22} is not there (cases/onnx_node/fetch_onnx_data.sh fetches it)")
        work = tempfile.mkdtemp(prefix="parity-spec-diff-builds-")
        self.addCleanup(shutil.rmtree, work, True)
        # A built tree: the wheel's files, onnx/ with its compiled extension.
        tree = os.path.join(work, "onnx-tree")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", tree, ONNX_1_22],
                       check=True)
        # A virtual environment that imports that onnx before the project's packages.
        venv = os.path.join(work, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        site = subprocess.run([os.path.join(venv, "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        project_site = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(os.path.join(p, "numpy")))
        with open(os.path.join(site, "parity_test.pth"), "w") as f:
            f.write(tree + "\n" + project_site + "\n")
        out = os.path.join(work, "out")
        proc = spec_diff("--base", venv, "--head", tree, "--out", out, "--filter", "test_abs")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        result = read_result(out)
        self.assertEqual((result["base"]["kind"], result["head"]["kind"]), ("venv", "checkout"))
        self.assertEqual(result["base"]["onnx_version"], "1.22.0")
        self.assertEqual(result["head"]["onnx_version"], "1.22.0")
        self.assertEqual(result["counts"]["unchanged"], sum(result["counts"].values()))
        self.assertGreater(result["counts"]["unchanged"], 0)

    def test_pinned_to_onnx_weekly(self):
        out = tempfile.mkdtemp(prefix="parity-spec-diff-weekly-")
        self.addCleanup(shutil.rmtree, out, True)
        proc = spec_diff("--base", "pinned", "--head", WEEKLY, "--out", out)
        if proc.returncode == 2 and "downloading" in proc.stderr:
            self.fail(f"{WEEKLY} could not be fetched from PyPI: {proc.stderr}")
        self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        result = self.check_against_disk(out)
        self.assertTrue(result["head"]["distribution"].startswith("onnx-weekly 1.24.0.dev20261026"))
        # An operator added to the spec with cases but no reference kernel is work for the reference.
        for op in result["operators_added"]:
            if "(no reference kernel)" in op:
                name = op.split(" ")[0]
                self.assertTrue(any(k.startswith(name + "-") for k in result["work_for_reference"]), op)
        # The gate fails exactly when there are unacknowledged meaning changes, each printed.
        meaning = [c["case"] for c in result["cases"] if c["sort"] == "meaning changed"]
        self.assertEqual(proc.returncode, 1 if meaning else 0)
        for name in meaning:
            self.assertIn(f"meaning changed: {name} ", proc.stdout)
        print(f"\npinned -> {WEEKLY}: {json.dumps(result['counts'])}; {json.dumps(result['sorts'])}", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
