"""Tests of agreement.py's coverage: which cases some oracle checks, and why
none checks the others, on run folders written here."""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agreement  # noqa: E402


def write_run(root, name, results, cases_dir):
    directory = os.path.join(root, name)
    os.makedirs(directory)
    with open(os.path.join(directory, "results.jsonl"), "w") as f:
        for result in results:
            f.write(json.dumps({"adapter": name, **result}) + "\n")
    with open(os.path.join(directory, "run.json"), "w") as f:
        json.dump({"settings": {"adapter": f"/nowhere/adapters/{name}", "cases": [cases_dir]}}, f)
    return directory


class CoverageTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        # The corpus: three cases with results, and one folder no run reached.
        self.cases_dir = os.path.join(self.root, "functions")
        for case, operator in (("a", "Swish"), ("b", "Swish"), ("c", "Attention"), ("d", "Attention")):
            os.makedirs(os.path.join(self.cases_dir, case))
            open(os.path.join(self.cases_dir, case, "model.onnx"), "w").close()
            with open(os.path.join(self.cases_dir, case, "case.json"), "w") as f:
                json.dump({"operator": operator}, f)
        first = write_run(self.root, "first", [
            {"case": "a", "operator": "Swish", "state": "PASS"},
            {"case": "b", "operator": "Swish", "state": "MISTRUSTED"},
            {"case": "c", "operator": "Attention", "state": "UNSUPPORTED", "expectation": "no kernel (FN-19)"}],
            self.cases_dir)
        second = write_run(self.root, "second", [
            {"case": "a", "operator": "Swish", "state": "PASS"},
            {"case": "b", "operator": "Swish", "state": "FAIL", "message": "output 0 'Y': 1 of 4 elements differ"},
            {"case": "c", "operator": "Attention", "state": "FAIL", "message": "output 0 'Y': 2 of 8 elements differ"}],
            self.cases_dir)
        self.runs = [(n, d, *agreement.read_run(d)) for n, d in (("first", first), ("second", second))]

    def test_checked_cases_and_reasons_for_the_rest(self):
        cases, checkers, why_not = agreement.coverage(self.runs)
        self.assertEqual(cases, {"a": "Swish", "b": "Swish", "c": "Attention", "d": "Attention"})
        self.assertEqual(checkers["a"], ["first", "second"])
        self.assertEqual(checkers["b"], ["first"])  # MISTRUSTED agrees
        self.assertEqual(sorted(why_not), ["c", "d"])
        self.assertEqual(why_not["c"], ["first: UNSUPPORTED (no kernel (FN-19))",
                                        "second: FAIL (output 0 'Y': 2 of 8 elements differ)"])
        self.assertEqual(why_not["d"], ["first: no result", "second: no result"])

    def test_page_has_the_coverage_table_and_the_unchecked_list(self):
        page = "\n".join(agreement.render_coverage(self.runs))
        self.assertIn("**2 of 4 cases are checked**; 2 are not.", page)
        self.assertIn("| Swish | 2 | 2 | 1 | 2 | 1 | 0 |", page)
        self.assertIn("| Attention | 2 | 0 | 0 | 0 | 0 | 2 |", page)
        self.assertIn("| `c` | Attention | first: UNSUPPORTED (no kernel ([FN-19](../findings.md))); second: FAIL", page)

    def test_main_prints_the_count(self):
        out = os.path.join(self.root, "agreement.md")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            status = agreement.main(["--runs", f"first={self.runs[0][1]}", f"second={self.runs[1][1]}", "--out", out])
        self.assertEqual(status, 0)
        self.assertIn("2 of 4 cases checked by at least one oracle besides the reference, 2 by none",
                      printed.getvalue())
        with open(out) as f:
            self.assertIn("## Coverage", f.read())


if __name__ == "__main__":
    unittest.main()
