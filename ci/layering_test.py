"""The layering check: no source includes a layer above its own.

Reads every #include "..." of the project's C++ sources and checks it
against the table below (ARCHITECTURE.md explains it). A new include from a
lower layer to a higher one fails this test, naming the file, the line and
the rule; so does an operator name compared in the evaluator, whose in-place
writers come from the registry.

Run: python3 ci/layering_test.py [ROOT]   (ctest runs it as ci/layering_test.py)
"""
import os
import re
import sys
import tempfile
import unittest

REFERENCE = ["reference/core", "reference/model", "reference/eval", "reference/ops", "reference/variants",
             "reference/aliasing"]

# (folder, the folders its sources may include), most specific first. A
# source belongs to the first folder that is a prefix of its path.
LAYERS = [
    ("reference/core", ["reference/core"]),
    ("reference/model", ["reference/core", "reference/model"]),
    ("reference/eval", ["reference/core", "reference/model", "reference/eval"]),
    ("reference/ops", ["reference/core", "reference/model", "reference/eval", "reference/ops"]),
    ("reference/variants", ["reference/core", "reference/model", "reference/eval", "reference/variants"]),
    ("reference/aliasing", REFERENCE),
    ("harness/results", REFERENCE + ["harness/results"]),
    ("reports", ["reference/core", "harness/results", "reports"]),
    ("harness/worker", REFERENCE + ["harness/worker", "harness/protocol", "spec/abi"]),
    ("harness", REFERENCE + ["harness", "reports", "spec/abi"]),
    ("adapters", REFERENCE + ["adapters", "spec/abi"]),
    ("spec/functions", REFERENCE + ["harness", "spec/functions"]),
    ("spec", ["spec"]),
    # The libFuzzer targets sit on top, beside the parity command.
    ("fuzz", REFERENCE + ["harness", "fuzz"]),
]

# Tests, benchmarks and their helpers may use every layer of the reference
# (a kernel test runs the whole registry) and, outside reference/, what the
# harness's tests need; they never make reference/ depend on harness/.
TEST_EXTRA = {
    "reference": REFERENCE,
    "harness": ["adapters"],
    "reports": ["harness"],  # the report tests also drive `parity report` end to end
}

PROJECT_ROOTS = ("reference/", "harness/", "reports/", "adapters/", "spec/", "cases/", "fuzz/")
SOURCE_ENDINGS = (".cc", ".h", ".cu", ".cpp", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# The evaluator dispatches through the registry: it compares no op_type with a name.
OPERATOR_NAME = re.compile(r'op_type\(\)\s*[!=]=\s*"|"\s*[!=]=\s*[a-z_.>-]*op_type\(\)')


def is_test_file(path):
    name = os.path.basename(path)
    return (name.endswith(("_test.cc", "_bench.cc")) or "test_util" in name or name.startswith("test_")
            or name.endswith("_test_support.h"))


def layer_of(path):
    for folder, allowed in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            return folder, allowed
    return None, None


def within(target, folders):
    return any(target == f or target.startswith(f + "/") for f in folders)


def sources(root):
    for top in ("reference", "harness", "reports", "adapters", "spec", "fuzz"):
        for base, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in ("build", "__pycache__"))
            for f in sorted(files):
                if f.endswith(SOURCE_ENDINGS):
                    yield os.path.relpath(os.path.join(base, f), root).replace(os.sep, "/")


def violations(root):
    found = []
    for path in sources(root):
        folder, allowed = layer_of(path)
        if folder is None:
            continue
        allowed = list(allowed)
        if is_test_file(path):
            allowed += TEST_EXTRA.get(path.split("/")[0], [])
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if not target.startswith(PROJECT_ROOTS):
                continue  # generated headers (onnx/onnx-ml.pb.h) and system headers
            if not within(target, allowed):
                found.append(f"{path}:{number}: includes {target}, a layer above {folder} "
                             f"(it may include {', '.join(sorted(set(allowed)))})")
        if folder == "reference/eval" and not is_test_file(path):
            for number, line in enumerate(lines, 1):
                if OPERATOR_NAME.search(line):
                    found.append(f"{path}:{number}: compares an op_type with an operator name; the evaluator "
                                 "knows operators only through its registry")
    return found


class LayeringTest(unittest.TestCase):
    root = os.environ.get("PARITY_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def test_no_include_points_up(self):
        found = violations(self.root)
        self.assertEqual(found, [], "\n" + "\n".join(found))

    def test_every_source_folder_has_a_layer(self):
        unplaced = [p for p in sources(self.root) if layer_of(p)[0] is None]
        self.assertEqual(unplaced, [], "sources in no layer of ci/layering_test.py: " + ", ".join(unplaced))

    def test_the_check_catches_an_include_that_points_up(self):
        with tempfile.TemporaryDirectory() as tree:
            def write(path, text):
                os.makedirs(os.path.dirname(os.path.join(tree, path)), exist_ok=True)
                with open(os.path.join(tree, path), "w") as f:
                    f.write(text)
            write("reference/model/loader.cc", '#include "reference/core/status.h"\n#include "reference/eval/evaluator.h"\n')
            write("reference/eval/evaluator.cc", 'bool scatter = node.op_type() == "TensorScatter";\n')
            write("reference/eval/evaluator_test.cc", '#include "reference/ops/reference_registry.h"\n')
            write("reference/ops/kernel_test.cc", '#include "harness/compare.h"\n')
            found = violations(tree)
            self.assertEqual(len(found), 3, found)
            self.assertIn("reference/model/loader.cc:2: includes reference/eval/evaluator.h", found[0] + found[1] + found[2])
            self.assertTrue(any("op_type" in f and "evaluator.cc:1" in f for f in found), found)
            self.assertTrue(any("kernel_test.cc:1: includes harness/compare.h" in f for f in found), found)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        problems = violations(sys.argv[1])
        print("\n".join(problems) if problems else "layering: no include points up")
        sys.exit(1 if problems else 0)
    unittest.main()
