"""The suite's check on its own verdicts: the correct flash kernel must PASS every
Attention case of the function corpus in float16, bfloat16 and float32, and
each of its nine faults must FAIL at least one case that the correct kernel
passes. Prints the table fault -> FAIL count.

It reads the function corpus that ci/test.sh writes (cases/functions/
write_cases.py): PARITY_FUNCTION_CORPUS, or corpus/functions under the build
folder. It writes no cases itself, and fails when the corpus is missing.
"""

import collections
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import faults  # noqa: E402

SOURCE_DIR = os.environ.get("PARITY_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
PARITY = os.path.join(BINARY_DIR, "parity")
CORPUS = os.environ.get("PARITY_FUNCTION_CORPUS", os.path.join(BINARY_DIR, "corpus", "functions"))
# Every Attention case of the corpus (opsets 23, 24 and 25, all three types).
CASE_FILTER = "test_attention_*"
TYPES = ("float16", "bfloat16", "float32")
# Small blocks, so that the corpus's short key sequences (5 to 16 keys) span
# several blocks and the online softmax's rescaling is exercised too.
SMALL_BLOCKS = {faults.BLOCK_QUERIES_VARIABLE: "2", faults.BLOCK_KEYS_VARIABLE: "4"}


def type_of(case: str) -> str:
    suffix = case.rsplit("_", 1)[-1]
    return suffix if suffix in TYPES else "other"


def run_cases(out_dir: str, **environment) -> dict:
    """Runs the Attention cases on the adapter with these PARITY_FLASH_* settings;
    case -> its result line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARITY_FLASH_")}
    env.update(environment)
    command = [PARITY, "run", "--adapter", HERE, "--cases", CORPUS, "--filter", CASE_FILTER, "--out", out_dir,
               "--fresh", "--jobs", "1", "--progress", "quiet"]
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    # 0: every case passed, 1: some failed. Anything else is a broken run.
    if finished.returncode not in (0, 1):
        raise AssertionError(f"{' '.join(command)} exited {finished.returncode}:\n{finished.stdout}\n{finished.stderr}")
    with open(os.path.join(out_dir, "results.jsonl")) as f:
        results = [json.loads(line) for line in f if line.strip()]
    return {r["case"]: r for r in results}


def states_by_type(results: dict) -> dict:
    counts = collections.defaultdict(collections.Counter)
    for case, result in results.items():
        counts[type_of(case)][result["state"]] += 1
    return counts


class FlashVerdictsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(PARITY):
            raise AssertionError(f"{PARITY} is missing: build the parity target first")
        if not os.path.isdir(CORPUS):
            raise AssertionError(f"the function corpus {CORPUS} is missing: write it first with "
                                 f"cases/functions/write_cases.py --out {CORPUS} (ci/test.sh does), or point "
                                 "PARITY_FUNCTION_CORPUS at it")
        cls.cases = sorted(name for name in os.listdir(CORPUS) if name.startswith("test_attention_"))
        if not cls.cases:
            raise AssertionError(f"{CORPUS} holds no test_attention_* case")
        cls.scratch = tempfile.TemporaryDirectory(prefix="flash_corpus_")
        cls.correct = run_cases(os.path.join(cls.scratch.name, "correct"))
        cls.passed = {case for case, r in cls.correct.items() if r["state"] == "PASS"}

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def assert_every_case_passes(self, results: dict, label: str):
        self.assertEqual(sorted(results), self.cases, "the run's cases are not the corpus's Attention cases")
        for kind in TYPES:
            self.assertTrue(any(type_of(c) == kind for c in results), f"no {kind} Attention case in {CORPUS}")
        failing = {case: r for case, r in results.items() if r["state"] != "PASS"}
        counts = {kind: dict(counter) for kind, counter in sorted(states_by_type(results).items())}
        lines = [f"{case}: {r['state']}: {r.get('message', '')}" for case, r in sorted(failing.items())]
        if failing:
            self.fail(f"{label}: {len(failing)} of {len(results)} Attention cases do not PASS (states by type: "
                      f"{counts}):\n" + "\n".join(lines))

    def test_correct_kernel_passes_every_case(self):
        self.assert_every_case_passes(self.correct, "the correct kernel")

    def test_correct_kernel_with_small_blocks_passes_every_case(self):
        results = run_cases(os.path.join(self.scratch.name, "small_blocks"), **SMALL_BLOCKS)
        self.assert_every_case_passes(results, "the correct kernel in blocks of 2 queries and 4 keys")

    def test_every_fault_fails_a_case_the_correct_kernel_passes(self):
        table = []
        for fault in sorted(faults.FAULTS):
            results = run_cases(os.path.join(self.scratch.name, fault), **{faults.FAULT_VARIABLE: fault})
            broken = {c: r["state"] for c, r in results.items() if r["state"] not in ("PASS", "FAIL", "MISTRUSTED")}
            if broken:
                self.fail(f"fault {fault}: cases end neither PASS nor FAIL: {broken}")
            failing = [c for c, r in results.items() if r["state"] == "FAIL"]
            caught = [c for c in failing if c in self.passed]
            by_type = collections.Counter(type_of(c) for c in caught)
            table.append((fault, len(failing), len(caught), by_type))
        print(f"\nfault -> FAIL count over {len(self.cases)} Attention cases "
              f"(caught: FAIL where the correct kernel PASSes; {len(self.passed)} such cases)")
        print(f"{'fault':<20} {'FAIL':>5} {'caught':>7} {'float16':>8} {'bfloat16':>9} {'float32':>8}")
        for fault, failing, caught, by_type in table:
            print(f"{fault:<20} {failing:>5} {caught:>7} {by_type['float16']:>8} {by_type['bfloat16']:>9} "
                  f"{by_type['float32']:>8}")
        uncaught = [fault for fault, _, caught, _ in table if caught == 0]
        if uncaught:
            self.fail(f"no case catches these faults: {', '.join(uncaught)}")


if __name__ == "__main__":
    unittest.main()
