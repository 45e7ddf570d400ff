"""`parity bundle` and `parity verify` (harness/submission/submission.py),
through the real command line: a fresh run bundles to the same bytes twice
and is accepted; every way of changing a submission after it ran is refused
with exit status 1 and a line naming what changed; bad input is exit status
2 with a one-line message, never a traceback."""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import run_test_util as util  # noqa: E402

SOURCE_DIR = os.environ.get("PARITY_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
POLICY = os.path.join(SOURCE_DIR, "spec", "tolerance.json")


def parity(*args):
    return subprocess.run([util.PARITY, *args], capture_output=True, text=True, timeout=120)


def read_tar(path):
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}


def write_tar(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            tar.addfile(info, io.BytesIO(files[name]))


def rehash(files):
    """What a submitter who edits a bundle and recomputes every hash in its
    manifest writes, from the definitions alone (README.md, "Submissions")."""
    manifest = json.loads(files["manifest.json"])
    manifest["files"] = {n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)}
                         for n, b in files.items() if n != "manifest.json"}
    del manifest["manifest_sha256"]
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    manifest["manifest_sha256"] = hashlib.sha256(canonical).hexdigest()
    files["manifest.json"] = json.dumps(manifest).encode("utf-8")


def edit_lines(data, edit):
    """results.jsonl with `edit(line)` applied to each parsed line; a line
    for which it returns None is dropped."""
    out = []
    for text in data.decode("utf-8").splitlines():
        line = edit(json.loads(text))
        if line is not None:
            out.append(json.dumps(line, separators=(",", ":"), sort_keys=True))
    return ("\n".join(out) + "\n").encode("utf-8")


class SubmissionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="parity-submission-test-")
        cls.corpus = util.write_corpus(cls.work, "test_relu")  # test_relu, test_relu_expanded_ver18
        # A corpus whose third case FAILs: a copy of test_relu with the last
        # byte of its expected output (inside the tensor's data) changed.
        cls.failing = os.path.join(cls.work, "failing", "onnx_node")
        shutil.copytree(cls.corpus, cls.failing)
        corrupted = os.path.join(cls.failing, "test_relu_corrupted")
        util.write_failing_copy(os.path.join(cls.corpus, "test_relu"), corrupted)
        cls.expectations = os.path.join(cls.work, "expectations.json")
        with open(cls.expectations, "w") as f:
            json.dump({"adapter": "reference",
                       "xfail": [{"cases": "test_relu_corrupted", "reason": "its expected output was corrupted"}]}, f)
        cls.good = cls.run_parity("good", cls.corpus)
        cls.gate_failed = cls.run_parity("gate_failed", cls.failing)
        cls.expected = cls.run_parity("expected", cls.failing, "--expect", cls.expectations)
        cls.good_bundle = cls.bundle_of(cls.good, "good.tar.gz")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    @classmethod
    def run_parity(cls, name, corpus, *extra):
        out = os.path.join(cls.work, name)
        proc = subprocess.run([util.PARITY, "run", "--adapter", "reference", "--cases", corpus, "--out", out,
                               "--progress", "quiet", *extra], capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        return out

    @classmethod
    def bundle_of(cls, run, name, *extra):
        path = os.path.join(cls.work, name)
        proc = parity("bundle", run, "--out", path, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return path

    def tampered(self, source, change, recompute):
        """A copy of bundle `source` with `change(files)` applied, its manifest's
        hashes recomputed or not."""
        files = read_tar(source)
        change(files)
        if recompute:
            rehash(files)
        path = os.path.join(self.work, "tampered-%s.tar.gz" % self.id().rsplit(".", 1)[-1])
        write_tar(path, files)
        return path

    def assert_refused(self, proc, *messages, absent=()):
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("verify: refused:", proc.stdout)
        for m in messages:
            self.assertIn(m, proc.stdout)
        for m in absent:
            self.assertNotIn(m, proc.stdout)

    def assert_unreadable(self, proc, message):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn(message, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)

    def test_fresh_run_is_accepted(self):
        proc = parity("verify", self.good_bundle)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("verify: accepted (1 run, 2 cases)", proc.stdout)
        manifest = json.loads(read_tar(self.good_bundle)["manifest.json"])
        run = manifest["runs"][0]
        self.assertEqual(run["adapter"]["name"], "reference")
        self.assertEqual(run["tolerance_policy"]["path"], "spec/tolerance.json")
        self.assertTrue(run["tolerance_policy"]["default"])
        self.assertEqual(sorted(run["corpora"][0]["case_sha256"]), ["test_relu", "test_relu_expanded_ver18"])
        self.assertTrue(run["command_line"].startswith("parity run --adapter "), run["command_line"])
        self.assertTrue(run["command_line_reconstructed"])
        # The case hash is what coreutils give in the case folder (README.md).
        folder = os.path.join(self.corpus, "test_relu")
        files = subprocess.run("find . -type f -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
                               shell=True, cwd=folder, capture_output=True, text=True, check=True).stdout.split()[0]
        self.assertEqual(run["corpora"][0]["case_sha256"]["test_relu"], files)

    def test_same_inputs_give_the_same_bytes(self):
        again = self.bundle_of(self.good, "again.tar.gz")
        with open(self.good_bundle, "rb") as a, open(again, "rb") as b:
            self.assertEqual(a.read(), b.read())
        noted = self.bundle_of(self.good, "noted.tar.gz", "--note", "vendor X, driver 1.2")
        self.assertEqual(json.loads(read_tar(noted)["manifest.json"])["note"], "vendor X, driver 1.2")

    def test_edited_results_are_refused_with_or_without_new_hashes(self):
        source = self.bundle_of(self.gate_failed, "gate_failed.tar.gz")

        def fail_to_pass(line):
            if line["case"] == "test_relu_corrupted":
                line["state"] = "PASS"
                line.pop("gate_failure", None)
                line.pop("message", None)
            return line

        def edit(files):
            files["runs/gate_failed/results.jsonl"] = edit_lines(files["runs/gate_failed/results.jsonl"], fail_to_pass)

        # Hashes left as they were: the files table catches it.
        self.assert_refused(parity("verify", self.tampered(source, edit, recompute=False)),
                            "runs/gate_failed/results.jsonl: SHA-256 differs from the manifest")
        # Hashes recomputed: the table and manifest_sha256 agree, and the gate
        # now passes; summary.json and junit.xml still tell the run that ran.
        proc = parity("verify", self.tampered(source, edit, recompute=True))
        self.assert_refused(proc,
                            "runs/gate_failed/summary.json: by_state says FAIL 1, PASS 2, results.jsonl has PASS 3",
                            "runs/gate_failed/summary.json: gate_failures is 1, results.jsonl gives 0",
                            "runs/gate_failed/junit.xml: 1 case(s) told differently from results.jsonl: "
                            "test_relu_corrupted (failure in junit.xml, PASS in results.jsonl)",
                            absent=("SHA-256 differs", "manifest_sha256", "gate failed"))

        # summary.json rewritten to match too: junit.xml is left.
        def edit_summary_too(files):
            edit(files)
            summary = json.loads(files["runs/gate_failed/summary.json"])
            summary["by_state"] = {"PASS": 3}
            summary["by_suite"] = {"onnx_node": {"PASS": 3}}
            summary["by_operator"] = {"Relu": {"PASS": 3}}
            summary["gate_failures"] = 0
            files["runs/gate_failed/summary.json"] = json.dumps(summary).encode()

        proc = parity("verify", self.tampered(source, edit_summary_too, recompute=True))
        self.assert_refused(proc, "test_relu_corrupted (failure in junit.xml, PASS in results.jsonl)",
                            "verify: refused: 1 problem")

    def test_failing_case_dropped_everywhere_is_refused(self):
        """The failing case taken out of the plan, the lines, the summary,
        junit.xml and the manifest's corpus hashes: the corpus still holds it."""
        source = self.bundle_of(self.gate_failed, "dropped.tar.gz")
        gone = "test_relu_corrupted"

        def drop(files):
            run = "runs/gate_failed/"
            files[run + "results.jsonl"] = edit_lines(files[run + "results.jsonl"],
                                                      lambda line: None if line["case"] == gone else line)
            plan = json.loads(files[run + "run.json"])
            plan["planned"] = [p for p in plan["planned"] if p["case"] != gone]
            files[run + "run.json"] = json.dumps(plan).encode()
            summary = json.loads(files[run + "summary.json"])
            summary.update(total=2, planned=2, not_run=0, gate_failures=0, by_state={"PASS": 2},
                           by_suite={"onnx_node": {"PASS": 2}}, by_operator={"Relu": {"PASS": 2}})
            files[run + "summary.json"] = json.dumps(summary).encode()
            junit = ElementTree.fromstring(files[run + "junit.xml"])
            for suite in junit.iter("testsuite"):
                for case in [c for c in suite.findall("testcase") if c.get("name") == gone]:
                    suite.remove(case)
            files[run + "junit.xml"] = ElementTree.tostring(junit)
            manifest = json.loads(files["manifest.json"])
            entry = manifest["runs"][0]
            entry["planned"] = 2
            corpus = entry["corpora"][0]
            del corpus["case_sha256"][gone]
            corpus["cases"] = 2
            listing = "".join("%s  %s\n" % (h, p) for p, h in sorted(corpus["case_sha256"].items()))
            corpus["sha256"] = hashlib.sha256(listing.encode()).hexdigest()
            files["manifest.json"] = json.dumps(manifest).encode()

        self.assert_refused(parity("verify", self.tampered(source, drop, recompute=True)),
                            "runs/gate_failed/run.json: 1 case(s) that the settings select from the corpora not "
                            "planned: test_relu_corrupted", "verify: refused: 1 problem")

    def test_edited_manifest_and_added_files_are_refused(self):
        def note(files):
            manifest = json.loads(files["manifest.json"])
            manifest["note"] = "edited"
            files["manifest.json"] = json.dumps(manifest).encode()

        self.assert_refused(parity("verify", self.tampered(self.good_bundle, note, recompute=False)),
                            "manifest.json: manifest_sha256 differs from the manifest's own hash")

        def add(files):
            files["runs/good/extra.txt"] = b"x"

        self.assert_refused(parity("verify", self.tampered(self.good_bundle, add, recompute=False)),
                            "runs/good/extra.txt: in the bundle but not in the manifest")

    def test_changed_or_absent_corpus_is_refused(self):
        copy = os.path.join(self.work, "copy", "onnx_node")
        shutil.copytree(self.corpus, copy)
        proc = parity("verify", self.good_bundle, "--corpus", copy)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

        with open(os.path.join(copy, "test_relu", "test_data_set_0", "input_0.pb"), "ab") as f:
            f.write(b"\0")
        self.assert_refused(parity("verify", self.good_bundle, "--corpus", copy),
                            "corpus %s (checked at %s): hash differs: 1 case folder changed: test_relu"
                            % (self.corpus, copy))

        # A case added to the corpus: the plan no longer is the corpus's.
        shutil.copytree(os.path.join(self.corpus, "test_relu"), os.path.join(copy, "test_relu_added"))
        self.assert_refused(parity("verify", self.good_bundle, "--corpus", copy),
                            "runs/good/run.json: 1 case(s) that the settings select from the corpora not planned: "
                            "test_relu_added")

        gone = os.path.join(self.work, "gone", "onnx_node")
        self.assert_refused(parity("verify", self.good_bundle, "--corpus", gone),
                            "not on this machine, so it cannot be checked")
        proc = parity("verify", self.good_bundle, "--corpus", os.path.join(self.work, "elsewhere"))
        self.assert_unreadable(proc, "--corpus %s: the bundle has no corpus of that name"
                               % os.path.join(self.work, "elsewhere"))

    def test_changed_or_absent_policy_is_refused(self):
        policy = os.path.join(self.work, "tolerance.json")
        shutil.copyfile(POLICY, policy)
        proc = parity("verify", self.good_bundle, "--policy", policy)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        with open(policy) as f:
            doc = json.load(f)
        doc["description"] += " Edited."
        with open(policy, "w") as f:
            json.dump(doc, f, indent=2)
        self.assert_refused(parity("verify", self.good_bundle, "--policy", policy),
                            "tolerance policy %s: SHA-256 differs from the one runs/good ran under" % policy)
        missing = os.path.join(self.work, "no-policy.json")
        self.assert_refused(parity("verify", self.good_bundle, "--policy", missing),
                            "tolerance policy %s: not on this machine" % missing)

    def test_missing_or_duplicated_result_is_refused(self):
        def drop(files):
            files["runs/good/results.jsonl"] = edit_lines(
                files["runs/good/results.jsonl"],
                lambda line: None if line["case"] == "test_relu_expanded_ver18" else line)

        self.assert_refused(parity("verify", self.tampered(self.good_bundle, drop, recompute=False)),
                            "runs/good/results.jsonl: SHA-256 differs from the manifest")
        self.assert_refused(parity("verify", self.tampered(self.good_bundle, drop, recompute=True)),
                            "runs/good/results.jsonl: 1 planned case without a result: test_relu_expanded_ver18",
                            "runs/good/summary.json: total is 2, results.jsonl gives 1",
                            absent=("SHA-256 differs",))

        def twice(files):
            files["runs/good/results.jsonl"] += files["runs/good/results.jsonl"].splitlines(keepends=True)[0]

        self.assert_refused(parity("verify", self.tampered(self.good_bundle, twice, recompute=True)),
                            "runs/good/results.jsonl: 1 case with more than one result:")

    def test_failed_gate_is_refused(self):
        path = self.bundle_of(self.gate_failed, "failed.tar.gz")
        self.assert_refused(parity("verify", path),
                            "runs/gate_failed: gate failed: 1 case(s) count against it: test_relu_corrupted (FAIL)",
                            "verify: refused: 1 problem")

    def test_expectations_are_checked(self):
        path = self.bundle_of(self.expected, "expected.tar.gz")
        proc = parity("verify", path)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)  # test_relu_corrupted is XFAIL

        # The bundled copy emptied with the hashes recomputed: the gate,
        # recomputed from it, disagrees with the lines.
        def unlist(files):
            files["runs/expected/expectations/1-expectations.json"] = b'{"adapter": "reference"}'
            manifest = json.loads(files["manifest.json"])
            entry = manifest["runs"][0]["expectations"][0]
            entry["sha256"] = hashlib.sha256(b'{"adapter": "reference"}').hexdigest()
            files["manifest.json"] = json.dumps(manifest).encode()

        self.assert_refused(parity("verify", self.tampered(path, unlist, recompute=True)),
                            "runs/expected/results.jsonl: 1 line whose state or gate verdict the expectations do not "
                            "give: test_relu_corrupted (XFAIL, the expectations give FAIL, counted)",
                            "expectations %s: SHA-256 differs from the one runs/expected ran under" % self.expectations)

        # The file itself edited after the run.
        with open(self.expectations) as f:
            original = f.read()
        try:
            with open(self.expectations, "a") as f:
                f.write("\n")
            self.assert_refused(parity("verify", path),
                                "expectations %s: SHA-256 differs from the one runs/expected ran under"
                                % self.expectations)
        finally:
            with open(self.expectations, "w") as f:
                f.write(original)

    def test_bad_input_is_exit_status_2(self):
        self.assert_unreadable(parity("verify", os.path.join(self.work, "none.tar.gz")), "no such file")
        text = os.path.join(self.work, "text.tar.gz")
        with open(text, "w") as f:
            f.write("not a bundle\n")
        self.assert_unreadable(parity("verify", text), "not a readable gzip-compressed tar")
        truncated = os.path.join(self.work, "truncated.tar.gz")
        with open(self.good_bundle, "rb") as f:
            data = f.read()
        with open(truncated, "wb") as f:
            f.write(data[:len(data) // 2])
        self.assert_unreadable(parity("verify", truncated), "not a readable gzip-compressed tar")
        no_manifest = os.path.join(self.work, "no-manifest.tar.gz")
        write_tar(no_manifest, {"runs/good/run.json": b"{}"})
        self.assert_unreadable(parity("verify", no_manifest), "no manifest.json")
        bad_json = os.path.join(self.work, "bad-json.tar.gz")
        write_tar(bad_json, {"manifest.json": b"{not json"})
        self.assert_unreadable(parity("verify", bad_json), "manifest.json is not readable JSON")
        wrong_shape = os.path.join(self.work, "wrong-shape.tar.gz")
        write_tar(wrong_shape, {"manifest.json": b'{"format": "onnx-parity-bundle", "format_version": 1, "runs": 3}'})
        self.assert_unreadable(parity("verify", wrong_shape),
                               "manifest.json: \"files\" is missing or of the wrong type")
        for proc in (parity("verify"), parity("verify", self.good_bundle, "--bogus"), parity("bundle", self.good),
                     parity("bundle", "--out", os.path.join(self.work, "x.tar.gz"))):
            self.assert_unreadable(proc, "usage: parity ")

        not_a_run = os.path.join(self.work, "not-a-run")
        os.makedirs(not_a_run, exist_ok=True)
        self.assert_unreadable(parity("bundle", not_a_run, "--out", os.path.join(self.work, "x.tar.gz")),
                               "%s is not a run folder: it has no results.jsonl" % not_a_run)
        broken = os.path.join(self.work, "broken-run")
        shutil.copytree(self.good, broken)
        with open(os.path.join(broken, "run.json"), "w") as f:
            f.write("{")
        proc = parity("bundle", broken, "--out", os.path.join(self.work, "x.tar.gz"))
        self.assert_unreadable(proc, "%s/run.json: not readable JSON" % broken)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "x.tar.gz")))


if __name__ == "__main__":
    unittest.main()
