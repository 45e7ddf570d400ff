"""The function bodies of spec/functions/ are compiled into `parity`: with
that folder of the source tree hidden (an empty tmpfs mounted over it in a
private mount namespace), `parity eval --prefer-function-bodies` still
expands them and ends each case as it does with the folder in place."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("PARITY_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
PARITY = os.path.join(BINARY_DIR, "parity")
FUNCTIONS = os.path.realpath(os.path.join(SOURCE_DIR, "spec", "functions"))

# Runs "$@" with an empty tmpfs over $FUNCTIONS, after checking that it is empty.
HIDE = 'mount -t tmpfs tmpfs "$FUNCTIONS" && [ -z "$(ls -A "$FUNCTIONS")" ] && exec "$@"'


def hidden(command):
    unshare = shutil.which("unshare")
    return [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", HIDE, "sh", *command]


def states(out_dir):
    with open(os.path.join(out_dir, "results.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    return {r["case"]: (r["state"], r.get("message", "")) for r in lines}


class EmbeddedFunctionBodiesTest(unittest.TestCase):
    def setUp(self):
        if not shutil.which("unshare"):
            self.skipTest("no unshare(1) to hide spec/functions/ with")
        probe = subprocess.run(hidden(["true"]), capture_output=True, text=True,
                               env={**os.environ, "FUNCTIONS": FUNCTIONS})
        if probe.returncode != 0:
            self.skipTest("this machine allows no private mount namespace: " + probe.stderr.strip())
        work = tempfile.TemporaryDirectory(prefix="parity-embedded-functions-")
        self.addCleanup(work.cleanup)
        self.work = work.name

    def test_eval_expands_the_bodies_with_spec_functions_hidden(self):
        cases = os.path.join(self.work, "cases")
        subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "cases", "functions", "write_cases.py"),
                        "--out", cases, "--parity", PARITY, "--filter", "swish", "--min-cases", "1"],
                       check=True, capture_output=True, timeout=300)
        env = {**os.environ, "FUNCTIONS": FUNCTIONS}
        env.pop("PARITY_SOURCE_DIR", None)

        def evaluate(out, wrap):
            command = [PARITY, "eval", cases, "--quiet", "--prefer-function-bodies", "--out", out, "--expect",
                       os.path.join(SOURCE_DIR, "adapters", "reference", "expectations", "function_bodies.json")]
            return subprocess.run(wrap(command), capture_output=True, text=True, env=env, timeout=300)

        shown = os.path.join(self.work, "shown")
        hidden_out = os.path.join(self.work, "hidden")
        first = evaluate(shown, lambda c: c)
        second = evaluate(hidden_out, hidden)
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        expected = states(shown)
        self.assertTrue(expected)
        # Each body ran: PASS, or a known difference from the kernel (XFAIL).
        for case, (state, message) in expected.items():
            self.assertIn(state, ("PASS", "XFAIL"), "%s: %s" % (case, message))
        self.assertEqual(states(hidden_out), expected)


if __name__ == "__main__":
    unittest.main()
