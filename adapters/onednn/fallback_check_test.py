#!/usr/bin/env python3
"""Tests of fallback_check.py on small run folders written here: each rule
of the gate, kept and broken."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fallback_check  # noqa: E402


def write_run(folder, rows):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "results.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps({"suite": "s", **r}) + "\n")


class FallbackCheckTest(unittest.TestCase):
    def check(self, allowed, forbidden):
        with tempfile.TemporaryDirectory() as d:
            write_run(os.path.join(d, "a"), allowed)
            write_run(os.path.join(d, "b"), forbidden)
            return fallback_check.main([os.path.join(d, "a"), os.path.join(d, "b")])

    lowered = {"case": "all", "state": "PASS", "placement": {"cpu": 2}}
    mixed = {"case": "mixed", "state": "PASS", "placement": {"cpu": 1, "reference": 1}}
    required = {"case": "mixed", "state": "UNSUPPORTED", "message": "session creation: FALLBACK_REQUIRED: x"}

    def test_holds_when_exactly_the_mixed_cases_need_fallback(self):
        self.assertEqual(self.check([self.lowered, self.mixed], [self.lowered, self.required]), 0)

    def test_a_mixed_case_that_runs_anyway_is_a_breach(self):
        self.assertEqual(self.check([self.mixed], [{**self.mixed}]), 1)

    def test_fallback_required_for_a_fully_lowered_case_is_a_breach(self):
        self.assertEqual(self.check([self.lowered], [{**self.required, "case": "all"}]), 1)

    def test_fell_back_is_a_breach(self):
        self.assertEqual(self.check([self.mixed], [{**self.mixed, "state": "FELL_BACK"}]), 1)

    def test_a_different_state_without_fallback_is_a_breach(self):
        self.assertEqual(self.check([self.lowered], [{**self.lowered, "state": "FAIL"}]), 1)

    def test_a_crash_in_either_run_is_a_breach(self):
        self.assertEqual(self.check([{**self.lowered, "state": "CRASH"}], [{**self.lowered, "state": "CRASH"}]), 1)

    def test_a_missing_case_is_a_breach(self):
        self.assertEqual(self.check([self.lowered, self.mixed], [self.lowered]), 1)


if __name__ == "__main__":
    unittest.main()
