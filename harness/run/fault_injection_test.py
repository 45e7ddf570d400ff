"""`parity run` against an adapter that crashes, hangs, leaks, returns wrong
shapes or garbage on chosen cases: the run completes, every planned case has
exactly one result, and each fault ends in the state it is due."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402

# case -> (fault, expected state)
FAULTS = {
    "test_sigmoid": ("crash", "CRASH"),
    "test_sigmoid_example": ("hang", "TIMEOUT"),
    "test_sign": ("garbage", "FAIL"),
    "test_sin": ("wrong_shape", "FAIL"),
    "test_sin_example": ("exit", "CRASH"),
    "test_sinh": ("error", "FAIL"),
    "test_sinh_example": ("unsupported", "UNSUPPORTED"),
    "test_size": ("stdout_noise", "PASS"),
    "test_size_example": ("hang_create", "TIMEOUT"),
    "test_simple_rnn_defaults": ("abort", "CRASH"),
}


class FaultInjectionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-fault-test-")
        cls.corpus = util.write_corpus(cls.work, "test_si")

    def run_parity(self, out, faults, *extra):
        env = dict(os.environ, PARITY_FAULTS=faults)
        return subprocess.run([util.PARITY, "run", "--adapter", "fault_injection", "--cases", self.corpus,
                               "--out", out, "--timeout", "3", "--warm-repeats", "1", "--progress", "lines", *extra],
                              env=env, capture_output=True, text=True, timeout=300)

    def test_every_fault_ends_in_its_state_and_the_run_completes(self):
        out = os.path.join(self.work, "faults")
        faults = ",".join("%s=%s" % (case, fault) for case, (fault, _) in FAULTS.items())
        # Three leaking cases of 2 x 64 MiB each pass a 160 MiB limit: the
        # worker is retired between cases, and the cases still pass.
        leaking = ["test_simple_rnn_bidirectional", "test_simple_rnn_reverse", "test_simple_rnn_with_initial_bias"]
        faults += "".join(",%s=leak" % case for case in leaking)
        proc = self.run_parity(out, faults, "--jobs", "2", "--worker-memory-limit", "160")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)  # the gate fails: there are FAILs
        plan, results, summary = util.read_run(out)
        self.assertEqual(sorted(plan), sorted(results), "every planned case has exactly one result")
        self.assertGreaterEqual(len(plan), 12)
        for case, (fault, state) in FAULTS.items():
            self.assertIn(case, results)
            self.assertEqual(results[case]["state"], state, "%s (%s): %s" % (case, fault, results[case].get("message")))
        killed_for_memory = 0
        for case, r in results.items():
            if case in leaking and r["state"] == "CRASH":
                # A leak caught while a call was still running: the worker is
                # killed for its memory, and the message says so.
                self.assertIn("resident memory", r["message"])
                killed_for_memory += 1
            elif case not in FAULTS:
                self.assertEqual(r["state"], "PASS", "%s: %s" % (case, r.get("message")))
        self.assertIn("signal 11", results["test_sigmoid"]["message"])
        self.assertIn("exited with status 7", results["test_sin_example"]["message"])
        self.assertIn("no answer within the case's 3 s", results["test_sigmoid_example"]["message"])
        self.assertIn("shape", results["test_sin"]["message"])
        self.assertGreater(results["test_sign"]["outputs"][0]["mismatches"], 0)
        # crash, exit, abort and two hangs each cost a worker; the leak one more.
        self.assertGreaterEqual(summary["worker_restarts"], 5)
        self.assertGreaterEqual(summary["memory_restarts"] + killed_for_memory, 1, proc.stdout)
        self.assertEqual(summary["total"], len(plan))
        for r in results.values():
            self.assertIn("--cases", r["repro"])

    def test_fallback_is_a_failure_only_where_forbidden(self):
        allowed = os.path.join(self.work, "fallback-allowed")
        proc = self.run_parity(allowed, "test_sigmoid=fell_back", "--filter", "test_sigmoid*")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(allowed)
        self.assertEqual(results["test_sigmoid"]["state"], "PASS")
        self.assertIn("cpu-fallback", results["test_sigmoid"]["placement"])

        forbidden = os.path.join(self.work, "fallback-forbidden")
        proc = self.run_parity(forbidden, "test_sigmoid=fell_back", "--filter", "test_sigmoid*", "--no-fallback")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(forbidden)
        self.assertEqual(results["test_sigmoid"]["state"], "FELL_BACK")
        self.assertEqual(results["test_sigmoid_example"]["state"], "PASS")

    def test_an_absent_device_skips_every_case(self):
        out = os.path.join(self.work, "absent-device")
        proc = self.run_parity(out, "", "--filter", "test_sin*", "--device", "npu:7")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        self.assertTrue(results)
        for r in results.values():
            self.assertEqual(r["state"], "SKIP")
            self.assertIn("npu:7", r["message"])

    def test_a_bad_fault_list_fails_every_case_with_its_message(self):
        out = os.path.join(self.work, "bad-faults")
        proc = self.run_parity(out, "test_sin=explode", "--filter", "test_sin")
        _, results, _ = util.read_run(out)
        self.assertEqual(results["test_sin"]["state"], "FAIL")
        self.assertIn("explode", results["test_sin"]["message"])


if __name__ == "__main__":
    unittest.main()
