"""The Level Zero NPU adapter end to end, through the real loader and the
test driver (adapters/level_zero/test_driver/, ZE_ENABLE_ALT_DRIVERS):
without a driver every case is SKIP, saying why; the driver's answer to its
layer query places nodes, and what it leaves out falls back (or, with
fallback forbidden, is FALLBACK_REQUIRED); every injected driver fault ends
in its state with one result per case, and a lost device does not outlive
its session."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "run"))
import run_test_util as util  # noqa: E402

ADAPTER = os.path.join(util.BINARY_DIR, "adapters", "libparity_adapter_level_zero.so")
DRIVER = os.path.join(util.BINARY_DIR, "adapters", "level_zero", "libze_parity_test_npu.so")
EXPECTATIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expectations", "onnx_node.json")

# case -> (fault, expected state, text the message must hold). Run in one
# worker, in this order: the case after the lost device passes.
FAULTS = {
    "test_sigmoid": ("device_lost", "FAIL", "ZE_RESULT_ERROR_DEVICE_LOST"),
    "test_sign": ("out_of_memory", "FAIL", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"),
    "test_sin": ("compile_failure", "FAIL", "injected compilation failure"),
    "test_sin_example": ("hang", "TIMEOUT", "no answer within"),
}


@unittest.skipUnless(os.path.exists(ADAPTER) and os.path.exists(DRIVER),
                     "the level_zero adapter and its test driver are built with OpenVINO in .venv and libze-dev")
class NpuAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-npu-test-")
        cls.corpus = util.write_corpus(cls.work, "test_si")

    def run_parity(self, out, env_extra, *extra, driver=True):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PARITY_ZE_TEST_", "ZE_ENABLE_ALT"))}
        if driver:
            env["ZE_ENABLE_ALT_DRIVERS"] = DRIVER
        env.update(env_extra)
        return subprocess.run([util.PARITY, "run", "--adapter", "level_zero", "--cases", self.corpus, "--out", out,
                               "--warm-repeats", "0", "--progress", "quiet", *extra],
                              env=env, capture_output=True, text=True, timeout=600)

    def test_without_a_driver_every_case_is_skip_and_says_why(self):
        out = os.path.join(self.work, "no-driver")
        proc = self.run_parity(out, {}, driver=False)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        plan, results, _ = util.read_run(out)
        self.assertEqual(sorted(plan), sorted(results))
        for case, r in results.items():
            self.assertEqual(r["state"], "SKIP", case)
            self.assertIn("no Level Zero NPU driver was found", r["message"])

    def test_the_driver_runs_the_nodes_it_supports(self):
        out = os.path.join(self.work, "all")
        proc = self.run_parity(out, {}, "--jobs", "2")
        _, results, _ = util.read_run(out)
        self.assertEqual(results["test_sigmoid"]["state"], "PASS", results["test_sigmoid"].get("message"))
        self.assertEqual(results["test_sigmoid"]["placement"], {"npu": 1})
        self.assertEqual(results["test_sin"]["state"], "PASS", results["test_sin"].get("message"))
        self.assertNotIn("CRASH", {r["state"] for r in results.values()}, proc.stdout + proc.stderr)

    def test_what_the_driver_leaves_out_falls_back_or_is_refused(self):
        allowed = os.path.join(self.work, "unsupported")
        self.run_parity(allowed, {"PARITY_ZE_TEST_UNSUPPORTED": "Sigmoid"}, "--filter", "test_sigmoid*")
        _, results, _ = util.read_run(allowed)
        self.assertEqual(results["test_sigmoid"]["state"], "PASS", results["test_sigmoid"].get("message"))
        self.assertEqual(results["test_sigmoid"]["placement"], {"reference": 1})
        forbidden = os.path.join(self.work, "unsupported-no-fallback")
        self.run_parity(forbidden, {"PARITY_ZE_TEST_UNSUPPORTED": "Sigmoid"}, "--filter", "test_sigmoid*",
                        "--no-fallback")
        _, results, _ = util.read_run(forbidden)
        self.assertEqual(results["test_sigmoid"]["state"], "UNSUPPORTED")
        self.assertIn("fallback is forbidden", results["test_sigmoid"]["message"])
        self.assertIn("does not run Sigmoid", results["test_sigmoid"]["message"])

    def test_every_driver_fault_ends_in_its_state(self):
        out = os.path.join(self.work, "faults")
        faults = ",".join("%s/*=%s" % (case, fault) for case, (fault, _, _) in FAULTS.items())
        proc = self.run_parity(out, {"PARITY_ZE_TEST_FAULTS": faults}, "--jobs", "1", "--timeout", "10",
                               "--expect", EXPECTATIONS)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)  # FAILs and a TIMEOUT fail the gate
        plan, results, summary = util.read_run(out)
        self.assertEqual(sorted(plan), sorted(results), "every planned case has exactly one result")
        for case, (fault, state, text) in FAULTS.items():
            self.assertEqual(results[case]["state"], state, "%s (%s): %s" % (case, fault, results[case].get("message")))
            self.assertIn(text, results[case]["message"], case)
        # The next session after the lost device opens a new context and passes.
        self.assertEqual(results["test_sigmoid_example"]["state"], "PASS", results["test_sigmoid_example"].get("message"))
        for case, r in results.items():
            if case not in FAULTS:  # as without faults: passing, or as the expectations say
                self.assertIn(r["state"], ("PASS", "XFAIL", "MISTRUSTED"), "%s: %s" % (case, r.get("message")))
                self.assertFalse(r.get("gate_failure"), case)
        self.assertGreaterEqual(summary["worker_restarts"], 1)  # the hang cost its worker

    def test_a_malformed_fault_list_is_refused_by_name(self):
        out = os.path.join(self.work, "bad-faults")
        self.run_parity(out, {"PARITY_ZE_TEST_FAULTS": "test_sigmoid/*=melt"}, "--filter", "test_sigmoid")
        _, results, _ = util.read_run(out)
        self.assertEqual(results["test_sigmoid"]["state"], "SKIP")
        self.assertIn("ZE_RESULT_ERROR_INVALID_ARGUMENT", results["test_sigmoid"]["message"])


if __name__ == "__main__":
    unittest.main()
