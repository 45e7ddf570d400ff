"""`parity run` on models with variant entries: the targets sent (option,
case.json, capabilities), the selection check against the reference's
resolution or a pinned one, the stripped twin's load times, and the ONNX
Runtime adapter, which knows nothing of entries and runs the main graph."""
import importlib.util
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402
import variant_case_util as vc  # noqa: E402

DECLARED = [vc.REFERENCE_TARGET, "portable"]
HAS_ONNXRUNTIME = importlib.util.find_spec("onnxruntime") is not None


def choices(result):
    return {v["entry"]: v["chosen"] for v in result["variants"]}


class VariantRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-variant-test-")
        cls.cases = os.path.join(cls.work, "cases")
        vc.write_variant_case(cls.cases, "test_variant_default")
        vc.write_variant_case(cls.cases, "test_variant_case_targets", {"variant_targets": ["portable"]})
        vc.write_variant_case(cls.cases, "test_variant_pinned_agrees",
                              {"variants": {"select": {",".join(DECLARED): ["e0"], vc.NPU_TARGET: ["e1"]}}})
        vc.write_variant_case(cls.cases, "test_variant_pinned_differs",
                              {"variants": {"select": {",".join(DECLARED): ["e1"]}}})
        vc.write_variant_case(cls.cases, "test_plain", with_entries=False)
        cls.suite = os.path.join(cls.cases, "variants")

    def run_parity(self, out, *extra, adapter="reference", env=None, check_rc=None):
        proc = subprocess.run([util.PARITY, "run", "--adapter", adapter, "--cases", self.suite, "--out", out,
                               "--warm-repeats", "2", "--progress", "quiet", *extra],
                              capture_output=True, text=True, timeout=600, env=env)
        if check_rc is not None:
            self.assertEqual(proc.returncode, check_rc, proc.stdout + proc.stderr)
        return proc

    def test_reference_selects_what_the_resolver_selects_and_outputs_match(self):
        out = os.path.join(self.work, "default")
        self.run_parity(out, check_rc=1)  # test_variant_pinned_differs fails the gate
        _, results, summary = util.read_run(out)

        r = results["test_variant_default"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertEqual(r["variant_targets"], DECLARED)  # the reference's capabilities
        self.assertEqual(r["variants_expected"], ["e0"])
        self.assertEqual(choices(r), {"e0": vc.CALLS["e0"], "e1": "main", "e2": "main"})
        self.assertEqual(r["outputs"][0]["verdict"], "match")
        # The resolved graph ran: the call node replaced Add and Relu.
        self.assertEqual(sum(r["placement"].values()), 1)

        r = results["test_variant_case_targets"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertEqual(r["variant_targets"], ["portable"])
        self.assertEqual(r["variants_expected"], ["e2"])
        self.assertEqual(choices(r), {"e0": "main", "e1": "main", "e2": vc.CALLS["e2"]})

        self.assertEqual(results["test_variant_pinned_agrees"]["state"], "PASS")

        # (b) a pinned selection that differs from what the adapter did is a FAIL.
        r = results["test_variant_pinned_differs"]
        self.assertEqual(r["state"], "FAIL")
        self.assertEqual(r["message"], "variant selection: targets [org.onnxparity.reference, portable] "
                                       "selected [e0], expected [e1]")
        self.assertEqual(r["variants_expected"], ["e1"])
        self.assertEqual(r["outputs"][0]["verdict"], "match")  # the numbers are right; the choice is not
        self.assertTrue(r["gate_failure"])

        # (c) the stripped twin's load times, on variant models only.
        for name in ("test_variant_default", "test_variant_case_targets", "test_variant_pinned_differs"):
            self.assertGreater(results[name]["load_ms_stripped_cold"], 0, name)
            self.assertEqual(results[name]["load_ms_stripped_warm"]["repeats"], 2, name)
        plain = results["test_plain"]
        self.assertEqual(plain["state"], "PASS")
        self.assertEqual(plain["variants"], [])
        for key in ("variants_expected", "load_ms_stripped_cold", "load_ms_stripped_warm"):
            self.assertNotIn(key, plain)
        v = summary["variant_load_ms"]
        self.assertEqual(v["cases"], 4)
        self.assertGreater(v["stripped_cold"]["median"], 0)
        self.assertGreater(v["cold_ratio"], 0)
        with open(os.path.join(out, "report.md")) as f:
            report = f.read()
        self.assertIn("## Variant models: session creation against the same model without entries", report)
        self.assertIn("| models with entries measured | 4 |", report)
        with open(os.path.join(out, "report.html")) as f:
            self.assertIn('id="variant-load"', f.read())

    def test_variant_targets_option_reaches_the_adapter_and_binds_the_run(self):
        out = os.path.join(self.work, "npu")
        # No case pins a selection for these targets: the resolution decides, and every case passes.
        self.run_parity(out, "--variant-targets", vc.NPU_TARGET, check_rc=0)
        with open(os.path.join(out, "run.json")) as f:
            self.assertEqual(json.load(f)["settings"]["variant_targets"], [vc.NPU_TARGET])
        _, results, _ = util.read_run(out)
        self.assertEqual(len(results), 5)
        for name, r in results.items():
            # The option wins over case.json's targets, and the adapter used it.
            self.assertEqual(r["state"], "PASS", "%s: %s" % (name, r.get("message")))
            self.assertEqual(r["variant_targets"], [vc.NPU_TARGET], name)
            self.assertIn("--variant-targets com.example.npu", r["repro"])
            if name != "test_plain":
                self.assertEqual(r["variants_expected"], ["e1"], name)
                self.assertEqual(choices(r), {"e0": "main", "e1": vc.CALLS["e1"], "e2": "main"}, name)

        # Resuming with other targets, or without the option, is refused.
        for extra in (["--variant-targets", "portable"], []):
            proc = self.run_parity(out, *extra, check_rc=2)
            self.assertIn("variant_targets", proc.stderr)

    def test_an_empty_target_list_is_the_adapters_own_choice(self):
        out = os.path.join(self.work, "empty")
        self.run_parity(out, "--variant-targets", "", "--filter", "test_variant_default", check_rc=0)
        _, results, _ = util.read_run(out)
        r = results["test_variant_default"]
        self.assertEqual(r["variant_targets"], [])
        self.assertEqual(r["variants_expected"], ["e0"])  # the reference's declared targets
        self.assertEqual(choices(r)["e0"], vc.CALLS["e0"])

    def test_an_adapter_that_lies_about_its_selection_fails(self):
        out = os.path.join(self.work, "lie")
        env = dict(os.environ, PARITY_FAULTS="test_variant_default=wrong_variant")
        self.run_parity(out, "--filter", "test_variant_default", adapter="fault_injection", env=env, check_rc=1)
        _, results, _ = util.read_run(out)
        r = results["test_variant_default"]
        self.assertEqual(r["state"], "FAIL")
        self.assertEqual(r["message"], "variant selection: targets [org.onnxparity.reference, portable] "
                                       "selected [], expected [e0]")
        self.assertEqual(r["outputs"][0]["verdict"], "match")

    def test_a_failing_stripped_measurement_never_changes_the_verdict(self):
        out = os.path.join(self.work, "stripped_faults")
        # The stripped twin hangs (a PASS case) or is refused (a FAIL case, whose
        # selection message must survive); the case after the hang gets a fresh worker.
        env = dict(os.environ, PARITY_FAULTS="test_variant_default=hang_stripped,"
                                             "test_variant_pinned_differs=fail_stripped")
        self.run_parity(out, "--timeout", "3", "--jobs", "1", adapter="fault_injection", env=env, check_rc=1)
        _, results, summary = util.read_run(out)

        r = results["test_variant_default"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertNotIn("message", r)
        self.assertNotIn("load_ms_stripped_cold", r)
        self.assertEqual(r["load_ms_stripped_error"], "session creation: no answer within 3 s; the worker was killed")

        r = results["test_variant_pinned_differs"]
        self.assertEqual(r["state"], "FAIL")
        self.assertEqual(r["message"], "variant selection: targets [org.onnxparity.reference, portable] "
                                       "selected [e0], expected [e1]")
        self.assertIn("session creation: INTERNAL: fault injection", r["load_ms_stripped_error"])
        self.assertNotIn("load_ms_stripped_cold", r)

        # The others measured their twins, the one after the hang included.
        for name in ("test_variant_case_targets", "test_variant_pinned_agrees"):
            self.assertEqual(results[name]["state"], "PASS", name)
            self.assertGreater(results[name]["load_ms_stripped_cold"], 0, name)
            self.assertNotIn("load_ms_stripped_error", results[name])
        self.assertEqual(summary["worker_restarts"], 1)  # the hung worker only

    @unittest.skipUnless(HAS_ONNXRUNTIME, "onnxruntime is not installed")
    def test_onnxruntime_runs_the_main_graph_of_a_model_with_entries(self):
        out = os.path.join(self.work, "onnxruntime")
        self.run_parity(out, "--filter", "test_variant_default", adapter="onnxruntime", check_rc=0)
        _, results, summary = util.read_run(out)
        r = results["test_variant_default"]
        self.assertEqual(r["state"], "PASS", r.get("message"))
        self.assertEqual(r["variant_targets"], [])  # it declares none
        self.assertEqual(r["variants"], [])          # and reports no choice: the fallback
        self.assertEqual(r["variants_expected"], [])
        self.assertEqual(r["outputs"][0]["verdict"], "match")
        self.assertGreater(r["load_ms_stripped_cold"], 0)
        self.assertEqual(summary["variant_load_ms"]["cases"], 1)


if __name__ == "__main__":
    unittest.main()
