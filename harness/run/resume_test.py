"""A run killed with SIGKILL half-way and started again finishes with the
same results as an uninterrupted run: nothing lost, nothing run twice."""
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402


class ResumeTest(unittest.TestCase):
    def test_killed_run_resumes_to_the_same_results(self):
        work = util.temp_dir(self)
        corpus = util.write_corpus(work, "test_re")

        def command(out):
            return [util.PARITY, "run", "--adapter", "reference", "--cases", corpus, "--out", out,
                    "--progress", "quiet", "--jobs", "2"]

        whole = os.path.join(work, "whole")
        subprocess.run(command(whole), check=True, capture_output=True, timeout=600)
        plan, expected, _ = util.read_run(whole)
        self.assertGreater(len(plan), 50)

        killed = os.path.join(work, "killed")
        proc = subprocess.Popen(command(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = os.path.join(killed, "results.jsonl")
        deadline = time.time() + 300
        while time.time() < deadline:
            if os.path.exists(journal):
                with open(journal) as f:
                    if sum(1 for _ in f) >= len(plan) // 3:
                        break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with open(journal) as f:
            done_before = sum(1 for _ in f)
        self.assertLess(done_before, len(plan), "the kill came too late to test anything")
        # A write cut short by the kill leaves a partial last line.
        with open(journal, "a") as f:
            f.write('{"case": "test_re')

        resumed = subprocess.run(command(killed), capture_output=True, text=True, timeout=600)
        self.assertIn(resumed.returncode, (0, 1), resumed.stderr)
        self.assertIn("%d already in the journal" % done_before, resumed.stdout)
        plan_again, results, summary = util.read_run(killed)  # fails on a case with two results
        self.assertEqual(plan_again, plan)
        self.assertEqual(sorted(results), sorted(expected))
        for case, r in expected.items():
            self.assertEqual(results[case]["state"], r["state"], case)
            self.assertEqual(results[case]["outputs"], r["outputs"], case)
        self.assertEqual(summary["total"], len(plan))

        # Resuming with other settings is refused, naming what differs.
        other = subprocess.run(command(killed) + ["--timeout", "5"], capture_output=True, text=True, timeout=60)
        self.assertEqual(other.returncode, 2)
        self.assertIn("timeout", other.stderr)


if __name__ == "__main__":
    unittest.main()
