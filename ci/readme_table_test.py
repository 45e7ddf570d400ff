"""Tests of ci/readme_table.py: the README's results table from run folders
(counts per state in the reports' order, the gate row, wall time only for
a run of the suite alone, creation medians, the placement row), and clear
errors for folders it cannot read."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import readme_table  # noqa: E402

PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)


def line(case: str, state: str, suite: str = "onnx_node", cold: float = 1.0, warm: float = 0.5, **extra) -> dict:
    j = {"case": case, "suite": suite, "state": state, "device": "cpu", "load_ms_cold": cold,
         "load_ms_warm": {"median": warm, "min": warm, "max": warm, "repeats": 3}}
    j.update(extra)
    return j


def write_run(root: str, name: str, lines: list[dict], summary: dict) -> str:
    folder = os.path.join(root, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "results.jsonl"), "w") as f:
        for j in lines:
            f.write(json.dumps(j) + "\n")
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(summary, f)
    return folder


class TableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        root = self.tmp.name
        self.reference = write_run(root, "reference", [
            line("a", "PASS", cold=0.25, warm=0.125),
            line("b", "PASS", cold=0.5, warm=0.25),
            line("c", "MISTRUSTED", cold=1.0, warm=0.5),
        ], {"adapter": {"name": "reference", "backend_version": "onnx-parity-reference"},
            "device": {"name": "cpu"}, "seconds": 0.61})
        self.device = write_run(root, "onednn", [
            line("a", "PASS", placement={"cpu": 1}, placement_flops={"cpu": 72.0}, placement_flops_unknown=0),
            line("b", "FAIL", placement={"reference": 1}, placement_flops={"reference": 24.0},
                 placement_flops_unknown=0),
            line("c", "FELL_BACK", placement={"cpu": 2, "reference": 1}, placement_flops={"cpu": 0.0},
                 placement_flops_unknown=1),
            line("m", "PASS", suite="models", cold=40.0, warm=20.0),
        ], {"adapter": {"name": "onednn", "backend_version": "oneDNN 3.2.0 (abc); ISA avx512_core_amx"},
            "device": {"name": "cpu"}, "seconds": 12.3})

    def table(self, *args) -> list[list[str]]:
        out = subprocess.run([PYTHON, os.path.join(HERE, "readme_table.py"), *args], capture_output=True,
                             text=True, check=True).stdout
        rows = [r.strip("|").split(" | ") for r in out.splitlines()]
        return [[c.strip() for c in r] for r in rows]

    def test_columns_rows_and_figures(self):
        rows = self.table(self.reference, self.device, "--suite", "onnx_node", "--placement",
                          "--label", f"{self.device}=oneDNN 3.2, CPU")
        self.assertEqual(rows[0], ["state", "reference", "oneDNN 3.2, CPU"])
        body = {r[0]: r[1:] for r in rows[2:]}
        self.assertEqual(body["PASS"], ["2", "1"])
        self.assertEqual(body["MISTRUSTED"], ["1", "0"])
        # FAIL and FELL_BACK share README's gate row.
        self.assertEqual(body["FAIL, CRASH, TIMEOUT, FELL_BACK"], ["0", "2"])
        self.assertNotIn("UNSUPPORTED", body)  # no run has one
        # The device run holds another suite: no wall time of onnx_node alone.
        self.assertEqual(body["whole corpus (wall)"], ["0.61 s", "–"])
        # Medians over the suite's cases only (the models case's 40 ms is left out).
        self.assertEqual(body["session creation, median cold / warm"], ["0.50 / 0.25 ms", "1.0 / 0.50 ms"])
        # Nodes 3 of 5 on cpu; FLOPs 72 of 96 known; one node unknown.
        self.assertEqual(body["nodes / FLOPs on the device"][1], "60.0% / 75.0% (1 nodes' FLOPs unknown)")
        self.assertEqual(body["nodes / FLOPs on the device"][0], "–")  # no placement reported

    def test_default_labels_and_every_suite(self):
        rows = self.table(self.reference, self.device)
        self.assertEqual(rows[0], ["state", "reference", "onednn oneDNN 3.2.0, cpu"])
        body = {r[0]: r[1:] for r in rows[2:]}
        self.assertEqual(body["PASS"], ["2", "2"])
        self.assertEqual(body["whole corpus (wall)"], ["0.61 s", "12 s"])
        self.assertNotIn("nodes / FLOPs on the device", body)

    def test_bad_folders_and_labels_are_named(self):
        script = os.path.join(HERE, "readme_table.py")
        missing = os.path.join(self.tmp.name, "nowhere")
        run = subprocess.run([PYTHON, script, missing], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn(f"{missing}: no results.jsonl", run.stderr)
        run = subprocess.run([PYTHON, script, self.reference, "--suite", "functions"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("no case of suite functions", run.stderr)
        run = subprocess.run([PYTHON, script, self.reference, "--label", "elsewhere=x"], capture_output=True,
                             text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("not among the runs", run.stderr)

    def test_two_significant_digits(self):
        self.assertEqual(readme_table.significant(0.3612), "0.36")
        self.assertEqual(readme_table.significant(0.00614), "0.0061")
        self.assertEqual(readme_table.significant(0.3), "0.30")
        self.assertEqual(readme_table.significant(17.4), "17")


if __name__ == "__main__":
    unittest.main()
