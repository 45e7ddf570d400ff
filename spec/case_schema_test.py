"""spec/case.schema.json against the corpora: every case.json the generators
write (ONNX's node tests, functions, variants, aliasing) validates against the
schema and parses with the C++ reader (harness/case_file.h, through
parity_tests' CaseFileCorpusTest). The schema and the reader knowing the same
keys is checked in harness/case_file_test.cc."""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("PARITY_SOURCE_DIR", os.path.dirname(HERE))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(ROOT, "build"))
PARITY = os.path.join(BINARY_DIR, "parity")
PARITY_TESTS = os.path.join(BINARY_DIR, "parity_tests")
PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)
SCHEMA_PATH = os.path.join(HERE, "case.schema.json")

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}
# The JSON Schema keywords the checker below implements; a schema using any
# other would be checked only in part, so the test refuses it.
KEYWORDS = {"$schema", "$id", "title", "description", "type", "properties", "additionalProperties", "required",
            "items", "enum", "const", "oneOf", "minLength", "minimum", "maximum"}


def schema_problems(schema: dict, value, path: str = "") -> list:
    """The places where `value` breaks `schema`, each "path: what" (empty when
    it validates). The part of JSON Schema (2020-12) the case schema uses."""
    where = path or "(top level)"
    problems = []
    if "type" in schema and not TYPES[schema["type"]](value):
        return [f"{where}: expected {schema['type']}, got {json.dumps(value)}"]
    if "const" in schema and (value != schema["const"] or type(value) is not type(schema["const"])):
        return [f"{where}: expected {json.dumps(schema['const'])}, got {json.dumps(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: expected one of {schema['enum']}, got {json.dumps(value)}"]
    if "oneOf" in schema:
        matching = [b for b in schema["oneOf"] if not schema_problems(b, value, path)]
        if len(matching) != 1:
            return [f"{where}: matches {len(matching)} of the oneOf branches, not 1: {json.dumps(value)}"]
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        problems.append(f"{where}: shorter than {schema['minLength']}")
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{where}: below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{where}: above {schema['maximum']}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}: missing {key!r}")
        for key, item in value.items():
            sub = f"{path}.{key}" if path else key
            if key in properties:
                problems += schema_problems(properties[key], item, sub)
            elif schema.get("additionalProperties") is False:
                problems.append(f"{sub}: unknown key")
            elif isinstance(schema.get("additionalProperties"), dict):
                problems += schema_problems(schema["additionalProperties"], item, sub)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += schema_problems(schema["items"], item, f"{path}[{i}]")
    return problems


def keywords_used(schema) -> set:
    used = set()
    if isinstance(schema, dict):
        for key, sub in schema.items():
            used.add(key)
            if key == "properties":
                for prop in sub.values():
                    used |= keywords_used(prop)
            elif key in ("items", "additionalProperties"):
                used |= keywords_used(sub)
            elif key == "oneOf":
                for branch in sub:
                    used |= keywords_used(branch)
    return used


def load_schema() -> dict:
    with open(SCHEMA_PATH) as f:
        return json.load(f)


class SchemaCheckerTest(unittest.TestCase):
    """The small checker itself: a test that could not fail would prove nothing."""

    def setUp(self):
        self.schema = load_schema()

    def test_the_schema_uses_only_keywords_the_checker_knows(self):
        self.assertEqual(keywords_used(self.schema) - KEYWORDS, set())

    def test_a_full_case_json_validates(self):
        case = {"operator": "Attention", "output_operators": {"y": "Attention"},
                "tolerance": {"ulp": 8, "atol": 1e-3, "rtol": 0, "signed_zero": True,
                              "mistrust": {"min_elements": 4, "zero_fraction": 0.5}, "reason": "r"},
                "steps": {"carry": [{"output": "present", "input": "past"}]}, "fallback": "forbidden",
                "variant_targets": ["portable"], "variants": {"select": {"": [], "portable": ["e2"]}},
                "check": {"rule": "ALIAS-KEY", "message": "past"}, "tags": ["a"], "feature": "f",
                "generator": "g", "source": "s", "suite": "s", "why": "w"}
        self.assertEqual(schema_problems(self.schema, case), [])
        self.assertEqual(schema_problems(self.schema, {"tolerance": {"mistrust": False, "reason": "r"}}), [])

    def test_refusals_name_the_key(self):
        bad = {
            '{"fallback": "forbiden"}': "fallback: expected one of",
            '{"fallbak": "forbidden"}': "fallbak: unknown key",
            '{"steps": {"cary": []}}': "steps.cary: unknown key",
            '{"steps": {"carry": [{"output": "a"}]}}': "steps.carry[0]: missing 'input'",
            '{"tolerance": {"ulp": 2}}': "tolerance: missing 'reason'",
            '{"tolerance": {"ulp": 1.5, "reason": "r"}}': "tolerance.ulp: expected integer",
            '{"tolerance": {"mistrust": true, "reason": "r"}}': "tolerance.mistrust: matches 0",
            '{"variant_targets": "portable"}': "variant_targets: expected array",
            '{"variants": {"select": {"portable": "e0"}}}': "variants.select.portable: expected array",
            '{"check": {"rule": "R"}}': "check: missing 'message'",
            '{"output_operators": {"y": 1}}': "output_operators.y: expected string",
            '[]': "(top level): expected object",
        }
        for text, expected in bad.items():
            problems = schema_problems(self.schema, json.loads(text))
            self.assertTrue(any(p.startswith(expected) for p in problems), f"{text}: {problems}")


def generate_corpora(out: str) -> dict:
    """Writes each generator's corpus under `out`, as ci/test.sh calls them;
    returns {name: folder}."""
    corpora = {name: os.path.join(out, name) for name in ("onnx_node", "functions", "variants", "aliasing")}
    commands = [
        [PARITY, "corpus", "onnx-node", "--out", corpora["onnx_node"]],
        [PYTHON, os.path.join(ROOT, "cases/functions/write_cases.py"), "--out", corpora["functions"],
         "--parity", PARITY],
        [PYTHON, os.path.join(ROOT, "cases/variants/write_cases.py"), "--out", corpora["variants"],
         "--parity", PARITY, "--no-check"],
        [PYTHON, os.path.join(ROOT, "cases/aliasing/write_cases.py"), "--out", corpora["aliasing"],
         "--parity", PARITY, "--no-check"],
    ]
    for command in commands:
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return corpora


@unittest.skipUnless(os.access(PARITY, os.X_OK) and os.access(PARITY_TESTS, os.X_OK),
                     f"no parity and parity_tests in {BINARY_DIR}")
class GeneratedCorporaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="case-schema-test-")
        cls.corpora = generate_corpora(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def case_files(self, name: str) -> list:
        return sorted(glob.glob(os.path.join(self.corpora[name], "**", "case.json"), recursive=True))

    def test_every_generated_case_json_validates_against_the_schema(self):
        schema = load_schema()
        for name in self.corpora:
            files = self.case_files(name)
            self.assertTrue(files, f"the {name} generator wrote no case.json")
            for path in files:
                with open(path) as f:
                    problems = schema_problems(schema, json.load(f))
                self.assertEqual(problems, [], os.path.relpath(path, self.tmp))

    def test_every_generated_case_json_parses_with_the_cpp_reader(self):
        env = dict(os.environ, PARITY_CASE_CORPORA=":".join(self.corpora.values()))
        proc = subprocess.run([PARITY_TESTS, "--gtest_filter=CaseFileCorpusTest.*"], env=env,
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout[-4000:] + proc.stderr[-2000:])
        # Ran, not skipped, and read every file the schema check read.
        total = sum(len(self.case_files(name)) for name in self.corpora)
        self.assertIn(f"parsed {total} case.json files", proc.stdout)


if __name__ == "__main__":
    unittest.main()
