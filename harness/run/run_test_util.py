"""Shared pieces of the end-to-end tests of `parity run`: where the build is,
a small corpus written once per test process, and reading a run folder."""
import json
import os
import shutil
import subprocess
import tempfile

BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(os.path.dirname(__file__), "../../build"))
PARITY = os.path.join(BINARY_DIR, "parity")


def write_corpus(folder, name_contains, suite="onnx_node"):
    """Writes the node cases whose name contains `name_contains` into
    folder/`suite` (the folder's name is the cases' suite)."""
    out = os.path.join(folder, suite)
    subprocess.run([PARITY, "corpus", "onnx-node", "--out", out, "--filter", name_contains, "--min-cases", "1"],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def read_run(out_dir):
    """(plan, results by case name, summary) of a run folder; fails on a duplicate result."""
    with open(os.path.join(out_dir, "run.json")) as f:
        plan = [p["case"] for p in json.load(f)["planned"]]
    results = {}
    with open(os.path.join(out_dir, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            assert r["case"] not in results, "case %s has two results" % r["case"]
            results[r["case"]] = r
    summary = None
    if os.path.exists(os.path.join(out_dir, "summary.json")):
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
    return plan, results, summary


def temp_dir(test_case):
    d = tempfile.TemporaryDirectory(prefix="parity-run-test-")
    test_case.addCleanup(d.cleanup)
    return d.name


def write_failing_copy(source_case, copy):
    """Copies a case folder to `copy` with the last byte of its first
    expected output (inside the tensor's data) flipped, so that it FAILs."""
    shutil.copytree(source_case, copy)
    with open(os.path.join(copy, "test_data_set_0", "output_0.pb"), "r+b") as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)[0]
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last ^ 0x40]))
    return copy
