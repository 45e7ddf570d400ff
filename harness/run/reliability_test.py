"""Broken cases and misuse as a new user meets them: test data that does not
fit its model ends ERROR under `parity run` and `parity eval` alike, named,
never blamed on the backend; `parity eval` says so in its exit status; a
second run on a busy --out is refused while the first keeps every result;
a case folder whose name is not UTF-8 resumes."""
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402

sys.path.insert(0, os.path.join(util.BINARY_DIR, "python"))
from parity_onnx import onnx_ml_pb2  # noqa: E402


def tensor_bytes(data_type, dims, raw):
    t = onnx_ml_pb2.TensorProto()
    t.data_type = data_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t.SerializeToString()


FLOAT, INT64 = 1, 7


class BrokenTestDataTest(unittest.TestCase):
    """Each mutant breaks one data file of a copy of test_abs (one float input
    x[3,4,5] and one output y[3,4,5])."""

    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-reliability-")
        corpus = util.write_corpus(cls.work, "test_abs")
        cls.good = os.path.join(corpus, "test_abs")
        cls.cases = os.path.join(cls.work, "broken")
        os.makedirs(cls.cases)
        mutants = {
            # name -> (file, bytes or None for a directory, a word the message must hold)
            "short_data": ("input_0.pb", tensor_bytes(FLOAT, [3, 4, 5], b"\0" * 10), "10 bytes of data"),
            "wrong_type": ("input_0.pb", tensor_bytes(INT64, [3, 4, 5], b"\0" * 480), "declares float"),
            "wrong_shape": ("input_0.pb", tensor_bytes(FLOAT, [3, 4, 6], b"\0" * 288), "dimension 2 = 5"),
            "not_protobuf": ("input_0.pb", b"\xff\xff\xff\xff", "not a valid TensorProto"),
            "input_is_a_directory": ("input_0.pb", None, "not a regular file"),
            # 2^31 floats declared in a few bytes: refused before anything is allocated.
            "huge_output": ("output_0.pb", tensor_bytes(FLOAT, [1 << 31], b"\0" * 10), "10 bytes of data"),
            "missing_output": ("output_0.pb", "remove", "output_0.pb (output 'y') is missing"),
        }
        cls.expected = {}
        for name, (file, content, word) in mutants.items():
            case = os.path.join(cls.cases, name)
            shutil.copytree(cls.good, case)
            path = os.path.join(case, "test_data_set_0", file)
            os.remove(path)
            if content is None:
                os.makedirs(path)
            elif content != "remove":
                with open(path, "wb") as f:
                    f.write(content)
            cls.expected[name] = word
        # A symbolic link loop beside the data sets.
        loop = os.path.join(cls.cases, "symlink_loop")
        shutil.copytree(cls.good, loop)
        os.symlink("test_data_set_loop", os.path.join(loop, "test_data_set_loop"))
        cls.expected["symlink_loop"] = "test_data_set_loop"

    def check_results(self, results):
        self.assertEqual(sorted(results), sorted(self.expected))
        for name, word in self.expected.items():
            r = results[name]
            self.assertEqual(r["state"], "ERROR", "%s: %s" % (name, r.get("message")))
            self.assertIn(word, r["message"], name)

    def test_run_ends_each_broken_case_error_not_on_the_backend(self):
        out = os.path.join(self.work, "run")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        proc = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", self.cases, "--out", out,
                               "--progress", "quiet", "--jobs", "2"], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)  # ERROR only: the gate passed
        _, results, _ = util.read_run(out)
        self.check_results(results)
        # The huge output did not make anyone allocate its 8 GiB.
        peak_kib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        self.assertLess(peak_kib, 1 << 20, "a process of the run reached %d KiB" % peak_kib)

    def test_eval_exits_3_and_prints_every_error(self):
        out = os.path.join(self.work, "eval")
        proc = subprocess.run([util.PARITY, "eval", self.cases, "--quiet", "--out", out],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        with open(os.path.join(out, "results.jsonl")) as f:
            lines = [json.loads(line) for line in f]
        self.check_results({r["case"]: r for r in lines})
        printed = dict(re.findall(r"^ERROR (\S+): (.*)$", proc.stdout, re.M))
        self.assertEqual(sorted(printed), sorted(self.expected), proc.stdout)
        for name, word in self.expected.items():
            self.assertIn(word, printed[name], name)


class InvalidValuesTest(unittest.TestCase):
    """Inputs that parse and fit their declared types but that the model
    cannot take (an axis out of range): the reference refuses them too, so
    the case is broken, whatever code the backend answers with."""

    def test_inputs_the_reference_refuses_end_error_on_every_adapter(self):
        work = util.temp_dir(self)
        corpus = util.write_corpus(work, "test_unsqueeze_axis_0")
        case = os.path.join(corpus, "test_unsqueeze_axis_0")
        with open(os.path.join(case, "test_data_set_0", "input_1.pb"), "wb") as f:
            f.write(tensor_bytes(INT64, [1], struct.pack("<q", 100)))
        for adapter in ("reference", "onnxruntime"):
            out = os.path.join(work, adapter)
            proc = subprocess.run([util.PARITY, "run", "--adapter", adapter, "--cases", case, "--out", out,
                                   "--progress", "quiet"], capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
            _, results, _ = util.read_run(out)
            r = results["test_unsqueeze_axis_0"]
            self.assertEqual(r["state"], "ERROR", r["message"])
            self.assertIn("the case's inputs are invalid: the reference refuses them too", r["message"])
            self.assertIn("axis 100", r["message"])


def write_constant_of_shape_case(folder, elements):
    """A case whose one node, ConstantOfShape, makes `elements` floats; its
    output's shape is left undeclared and its expected file holds one float."""
    from onnx import helper
    case = os.path.join(folder, "test_big_constant_of_shape")
    os.makedirs(os.path.join(case, "test_data_set_0"))
    shape = helper.make_tensor("shape", INT64, [1], [elements])
    node = helper.make_node("ConstantOfShape", ["shape"], ["y"])
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", FLOAT, None)], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with open(os.path.join(case, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    with open(os.path.join(case, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(tensor_bytes(FLOAT, [1], b"\0" * 4))
    return case


class MemoryLimitTest(unittest.TestCase):
    def test_eval_out_of_memory_is_an_error_of_the_case_not_an_abort(self):
        # 4 GB of floats under a 2 GiB address-space cap: the allocation
        # throws std::bad_alloc, which must end the case, not the process.
        work = util.temp_dir(self)
        case = write_constant_of_shape_case(work, 1 << 30)
        cap = 2 << 30
        proc = subprocess.run([util.PARITY, "eval", case, "--quiet", "--jobs", "1"], capture_output=True, text=True,
                              timeout=120, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("ERROR test_big_constant_of_shape: out of memory while evaluating the case", proc.stdout)

    def test_the_worker_memory_limit_reaches_the_reference_adapter(self):
        # 200 MB of floats under --worker-memory-limit 100: the adapter refuses
        # the tensor before allocating it (its message names the limit); the
        # worker is not killed for its resident memory.
        work = util.temp_dir(self)
        case = write_constant_of_shape_case(work, 50 * 1000 * 1000)
        out = os.path.join(work, "out")
        proc = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", case, "--out", out,
                               "--worker-memory-limit", "100", "--progress", "quiet"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        _, results, summary = util.read_run(out)
        r = results["test_big_constant_of_shape"]
        self.assertEqual(r["state"], "FAIL", r["message"])
        self.assertIn("over the allocation limit of 104857600 bytes", r["message"])
        self.assertEqual(summary["memory_restarts"], 0)


class BusyOutputFolderTest(unittest.TestCase):
    def test_a_second_run_on_a_busy_folder_is_refused_and_the_first_keeps_every_result(self):
        work = util.temp_dir(self)
        corpus = util.write_corpus(work, "test_abs")
        out = os.path.join(work, "out")
        # One case hangs until its 4 s timeout, so the first run is busy for a while.
        env = dict(os.environ, PARITY_FAULTS="test_abs=hang")
        first = subprocess.Popen([util.PARITY, "run", "--adapter", "fault_injection", "--cases", corpus, "--out", out,
                                  "--timeout", "4", "--progress", "quiet", "--jobs", "1"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        journal = os.path.join(out, "results.jsonl")
        deadline = time.time() + 60
        while not os.path.exists(journal) and time.time() < deadline:
            time.sleep(0.01)
        self.assertTrue(os.path.exists(journal))
        for extra in ([], ["--fresh"]):
            second = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", corpus, "--out", out,
                                     "--progress", "quiet", *extra], capture_output=True, text=True, timeout=60)
            self.assertEqual(second.returncode, 2, second.stdout + second.stderr)
            self.assertIn("is in use by another command writing it (pid %d, parity run)" % first.pid, second.stderr)
        eval_proc = subprocess.run([util.PARITY, "eval", corpus, "--quiet", "--out", out],
                                   capture_output=True, text=True, timeout=60)
        self.assertEqual(eval_proc.returncode, 2, eval_proc.stdout + eval_proc.stderr)
        self.assertIn("in use", eval_proc.stderr)
        stdout, stderr = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 1, stdout + stderr)  # the hang is a TIMEOUT
        plan, results, summary = util.read_run(out)  # fails on a case with two results
        self.assertEqual(sorted(plan), sorted(results))
        self.assertEqual(results["test_abs"]["state"], "TIMEOUT")
        self.assertEqual(summary["total"], len(plan))
        # Once the first run is over the folder is free again.
        again = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", corpus, "--out", out,
                                "--progress", "quiet", "--fresh"], capture_output=True, text=True, timeout=120)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)


class NonUtf8FolderTest(unittest.TestCase):
    def test_a_case_whose_name_is_not_utf8_resumes(self):
        work = util.temp_dir(self)
        corpus = util.write_corpus(work, "test_abs")
        os.rename(os.path.join(corpus, "test_abs").encode(), os.path.join(corpus, "test_abs_\xff").encode("latin-1"))
        out = os.path.join(work, "out")
        command = [util.PARITY, "run", "--adapter", "reference", "--cases", corpus, "--out", out, "--progress", "quiet"]
        first = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=120)
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        plan, results, _ = util.read_run(out)
        self.assertIn("test_abs_\ufffd", results)
        second = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=120)
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        self.assertIn("%d already in the journal" % len(plan), second.stdout)
        _, again, _ = util.read_run(out)  # one line per case still
        self.assertEqual(sorted(again), sorted(results))


if __name__ == "__main__":
    unittest.main()
