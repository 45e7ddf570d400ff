"""A case whose case.json breaks spec/case.schema.json (an unknown key, an
unknown "fallback", a bad tolerance override) ends in ERROR, never FAIL, under
`parity run`, `parity eval` and `parity check --cases`, with a message naming
the file and the key; its neighbours run as usual."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402
import variant_case_util as vc  # noqa: E402

# case name -> (case.json, the part of the refusal after "<dir>/case.json: ")
BAD = {
    "test_bad_fallback": ({"fallback": "forbiden"},
                          '"fallback": expected "allowed" or "forbidden", got "forbiden"'),
    "test_unknown_key": ({"tolerence": {"atol": 1, "reason": "r"}}, 'unknown key "tolerence"'),
    "test_bad_tolerance": ({"tolerance": {"atol": 1}}, 'tolerance: missing required key "reason"'),
}


class CaseFileRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-case-file-test-")
        cases = os.path.join(cls.work, "cases")
        vc.write_variant_case(cases, "test_good", {"fallback": "allowed", "tags": ["plain"]}, with_entries=False)
        for name, (meta, _) in BAD.items():
            vc.write_variant_case(cases, name, meta, with_entries=False)
        cls.suite = os.path.join(cases, "variants")

    def expect_refusals(self, results):
        self.assertEqual(results["test_good"]["state"], "PASS", results["test_good"].get("message"))
        for name, (_, refusal) in BAD.items():
            r = results[name]
            self.assertEqual(r["state"], "ERROR", name)
            path = os.path.join(self.suite, name, "case.json")
            self.assertIn(f"{path}: {refusal}", r["message"], name)

    def test_run_reports_error_naming_the_key(self):
        out = os.path.join(self.work, "run")
        proc = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", self.suite, "--out", out,
                               "--progress", "quiet"], capture_output=True, text=True, timeout=600)
        # ERROR is the harness's, not the backend's: the gate passes (exit 3 says ERRORs happened).
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        _, results, _ = util.read_run(out)
        self.expect_refusals(results)

    def test_eval_reports_error_naming_the_key(self):
        out = os.path.join(self.work, "eval")
        subprocess.run([util.PARITY, "eval", self.suite, "--quiet", "--out", out], capture_output=True, text=True,
                       timeout=600)
        with open(os.path.join(out, "results.jsonl")) as f:
            results = {r["case"]: r for r in map(json.loads, f)}
        self.expect_refusals(results)

    def test_check_reports_error_naming_the_key(self):
        proc = subprocess.run([util.PARITY, "check", "--cases", self.suite], capture_output=True, text=True,
                              timeout=600)
        self.assertNotEqual(proc.returncode, 0)
        for name, (_, refusal) in BAD.items():
            self.assertIn(f"ERROR {name}: ", proc.stdout)
            self.assertIn(refusal, proc.stdout)
        self.assertIn("OK test_good", proc.stdout)


if __name__ == "__main__":
    unittest.main()
