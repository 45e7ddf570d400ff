"""Sharding is deterministic and balanced, `parity merge` joins shards into
what an unsharded run gives (also when the shards run at once, as on N CI
runners, and through `parity report`), and --filter-file selects exactly the
cases it names."""
import json
import os
import shutil
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.dirname(__file__))
import run_test_util as util  # noqa: E402


class ShardMergeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = util.tempfile.mkdtemp(prefix="parity-shard-test-")
        cls.corpus = util.write_corpus(cls.work, "test_re")
        # A second suite whose cases do not all pass, so that a merge that
        # lost or swapped states would show: Bernoulli is UNSUPPORTED by the
        # reference, and a copy of test_relu with one expected value changed
        # (the last byte of output_0.pb, inside its tensor data) FAILs.
        cls.mixed = util.write_corpus(cls.work, "test_bernoulli", suite="mixed")
        corrupted = os.path.join(cls.mixed, "test_relu_corrupted")
        util.write_failing_copy(os.path.join(cls.corpus, "test_relu"), corrupted)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def run_argv(self, out, *extra, cases=None):
        return [util.PARITY, "run", "--adapter", "reference", "--cases", *(cases or [self.corpus]), "--out", out,
                "--progress", "quiet", *extra]

    def run_parity(self, out, *extra, check=True, cases=None):
        proc = subprocess.run(self.run_argv(out, *extra, cases=cases), capture_output=True, text=True, timeout=600)
        if check:
            self.assertIn(proc.returncode, (0, 1), proc.stdout + proc.stderr)
        return proc

    def test_shards_partition_the_cases_and_merge_to_the_whole_run(self):
        whole = os.path.join(self.work, "whole")
        self.run_parity(whole)
        plan, expected, _ = util.read_run(whole)

        shards = []
        for i in (1, 2, 3):
            out = os.path.join(self.work, "shard%d" % i)
            self.run_parity(out, "--shard", "%d/3" % i)
            shards.append(out)
        plans = [util.read_run(s)[0] for s in shards]
        sizes = [len(p) for p in plans]
        self.assertLessEqual(max(sizes) - min(sizes), 1, sizes)
        self.assertEqual(sorted(sum(plans, [])), sorted(plan), "the shards cover every case exactly once")
        # Deterministic: the same shard again plans the same cases.
        again = os.path.join(self.work, "shard2-again")
        self.run_parity(again, "--shard", "2/3")
        self.assertEqual(util.read_run(again)[0], plans[1])

        merged = os.path.join(self.work, "merged")
        proc = subprocess.run([util.PARITY, "merge", *shards, "--out", merged], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        merged_plan, results, summary = util.read_run(merged)
        self.assertEqual(sorted(merged_plan), sorted(plan))
        self.assertEqual({c: r["state"] for c, r in results.items()}, {c: r["state"] for c, r in expected.items()})
        self.assertEqual(summary["total"], len(plan))
        self.assertEqual(summary["shards"], ["1/3", "2/3", "3/3"])

        # A shard given twice is refused, and so is a missing one: a merge
        # must not hide cases that never ran.
        proc = subprocess.run([util.PARITY, "merge", shards[0], shards[0], shards[2], "--out",
                               os.path.join(self.work, "bad")], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("are both shard 1/3", proc.stderr)
        proc = subprocess.run([util.PARITY, "merge", shards[0], shards[2], "--out", os.path.join(self.work, "bad")],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("2/3 missing", proc.stderr)
        # So is a folder of another run.
        other = os.path.join(self.work, "other")
        self.run_parity(other, "--shard", "1/3", "--timeout", "9")
        proc = subprocess.run([util.PARITY, "merge", shards[1], other, "--out", os.path.join(self.work, "bad2")],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("not a shard of the same run", proc.stderr)

    def test_concurrent_shards_merged_and_reported_equal_one_run(self):
        """Three shards as three processes at once (as on three CI runners),
        merged by `parity merge` and rendered by `parity report`: the report's
        summary and cases are those of one unsharded run of the same cases."""
        cases = [self.corpus, self.mixed]
        whole = os.path.join(self.work, "concurrent-whole")
        self.run_parity(whole, "--jobs", "1", cases=cases)

        shards, procs = [], []
        for i in (1, 2, 3):
            out = os.path.join(self.work, "concurrent-shard%d" % i)
            log = open(out + ".log", "w")
            self.addCleanup(log.close)
            procs.append(subprocess.Popen(self.run_argv(out, "--shard", "%d/3" % i, "--jobs", "1", cases=cases),
                                          stdout=log, stderr=subprocess.STDOUT))
            shards.append(out)
        statuses = []
        for out, proc in zip(shards, procs):
            try:
                statuses.append(proc.wait(timeout=600))
            except subprocess.TimeoutExpired:
                for p in procs:
                    p.kill()
                raise
            with open(out + ".log") as f:
                self.assertIn(statuses[-1], (0, 1), f.read())
        # test_relu_corrupted fails the gate of exactly one shard.
        self.assertEqual(sorted(statuses), [0, 0, 1])

        merged = os.path.join(self.work, "concurrent-merged")
        proc = subprocess.run([util.PARITY, "merge", *shards, "--out", merged], capture_output=True, text=True,
                              timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for folder in (whole, merged):
            proc = subprocess.run([util.PARITY, "report", folder], capture_output=True, text=True, timeout=600)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

        _, whole_results, whole_summary = util.read_run(whole)
        _, merged_results, merged_summary = util.read_run(merged)
        self.assertEqual({"PASS", "FAIL", "UNSUPPORTED"}, set(whole_summary["by_state"]), whole_summary["by_state"])
        for key in ("by_state", "by_suite", "by_operator", "total", "planned", "not_run", "gate_failures"):
            self.assertEqual(merged_summary[key], whole_summary[key], key)
        self.assertEqual(merged_summary["shards"], ["1/3", "2/3", "3/3"])
        self.assertEqual({c: (r["state"], r.get("gate_failure", False)) for c, r in merged_results.items()},
                         {c: (r["state"], r.get("gate_failure", False)) for c, r in whole_results.items()})
        # What the report shows: each JUnit test case's outcome, and the
        # Markdown table of cases by state.
        self.assertEqual(self.junit_outcomes(merged), self.junit_outcomes(whole))
        self.assertEqual(self.states_table(merged), self.states_table(whole))

    @staticmethod
    def junit_outcomes(folder):
        """{(suite, case): "passed" | "failure" | "error" | "skipped"} of junit.xml."""
        outcomes = {}
        for suite in ElementTree.parse(os.path.join(folder, "junit.xml")).getroot().iter("testsuite"):
            for case in suite.iter("testcase"):
                marks = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
                outcomes[(suite.get("name"), case.get("name"))] = marks[0] if marks else "passed"
        return outcomes

    @staticmethod
    def states_table(folder):
        with open(os.path.join(folder, "report.md")) as f:
            text = f.read()
        start = text.index("## Cases by state")
        return text[start:text.index("\n## ", start + 1)]

    def test_filter_file_selects_exactly_its_cases(self):
        names = os.path.join(self.work, "names.txt")
        with open(names, "w") as f:
            f.write("# two cases\ntest_relu\n  test_reshape_extended_dims  # a comment\n\n")
        out = os.path.join(self.work, "listed")
        self.run_parity(out, "--filter-file", names)
        plan, results, _ = util.read_run(out)
        self.assertEqual(sorted(plan), ["test_relu", "test_reshape_extended_dims"])

        # A list with no names selects nothing (not everything).
        empty = os.path.join(self.work, "empty.txt")
        with open(empty, "w") as f:
            f.write("# nothing to re-run\n")
        proc = self.run_parity(os.path.join(self.work, "listed-empty"), "--filter-file", empty, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("no cases selected", proc.stderr)

        with open(names, "a") as f:
            f.write("test_no_such_case\n")
        proc = self.run_parity(os.path.join(self.work, "listed-bad"), "--filter-file", names, check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("test_no_such_case", proc.stderr)

    def test_bad_arguments_are_named(self):
        for args, text in ((["--shard", "4/3"], "--shard"), (["--shard", "x"], "--shard"),
                           (["--timeout", "-1"], "--timeout"), (["--adapter", "no_such_adapter"], "no_such_adapter")):
            proc = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", self.corpus,
                                   "--out", os.path.join(self.work, "bad-args"), *args],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn(text, proc.stderr, args)


if __name__ == "__main__":
    unittest.main()
