"""Tests of apply_proto_delta.py: a delta lands where it says, and every
collision with the schema (a taken or reserved number, a taken name, a
missing message) stops the build with a message naming the delta line."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "apply_proto_delta.py")

SCHEMA = """syntax = "proto2";

package onnx;

message GraphProto {
  repeated string node = 1;
  message Inner {
    optional int32 deep = 40;
  }
  optional string name = 2;
  reserved 3, 6 to 9;
}
"""


def write(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def delta_adding(field_line, message="GraphProto"):
    return f"comment line\n@into {message}\n{field_line}\n@end\n@append\nmessage Extra {{ optional int32 x = 1; }}\n@end\n"


class ApplyProtoDeltaTest(unittest.TestCase):
    def run_script(self, delta_text, *extra):
        with tempfile.TemporaryDirectory() as folder:
            schema = write(folder, "schema.proto", SCHEMA)
            delta = write(folder, "test.delta", delta_text)
            out = os.path.join(folder, "out.proto")
            result = subprocess.run([sys.executable, SCRIPT, schema, out, delta, *extra],
                                    capture_output=True, text=True)
            text = open(out, encoding="utf-8").read() if os.path.exists(out) else None
            return result, text

    def test_field_goes_into_the_message_and_the_message_is_appended(self):
        result, text = self.run_script(delta_adding("  repeated string extra = 17;"))
        self.assertEqual(result.returncode, 0, result.stderr)
        graph = text[text.index("message GraphProto"):text.index("message Extra")]
        self.assertIn("repeated string extra = 17;", graph)
        self.assertLess(graph.index("reserved 3"), graph.index("extra = 17"))
        self.assertTrue(text.rstrip().endswith("message Extra { optional int32 x = 1; }"))

    def test_a_taken_number_is_refused(self):
        result, text = self.run_script(delta_adding("  optional string other = 2;"))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("test.delta:2", result.stderr)
        self.assertIn("field number 2", result.stderr)
        self.assertIsNone(text)

    def test_a_reserved_number_is_refused(self):
        for number in (3, 7):
            result, _ = self.run_script(delta_adding(f"  optional string other = {number};"))
            self.assertNotEqual(result.returncode, 0)
            self.assertIn(f"field number {number}", result.stderr)

    def test_a_taken_name_is_refused(self):
        result, _ = self.run_script(delta_adding("  optional string name = 30;"))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("already has a field named 'name'", result.stderr)

    def test_a_nested_message_field_number_does_not_count(self):
        result, _ = self.run_script(delta_adding("  optional string other = 40;"))
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_missing_message_is_refused(self):
        result, _ = self.run_script(delta_adding("  optional string other = 30;", message="NoSuchProto"))
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("message NoSuchProto is not in the schema", result.stderr)

    def test_a_block_without_end_is_refused(self):
        result, _ = self.run_script("@into GraphProto\n  optional string other = 30;\n")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("block has no @end", result.stderr)

    def test_package_is_renamed(self):
        result, text = self.run_script(delta_adding("  repeated string extra = 17;"), "--package", "parity_onnx")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("package parity_onnx;", text)
        self.assertNotIn("package onnx;", text)

    def test_the_project_delta_applies_to_the_pinned_schema(self):
        import onnx
        source = os.path.join(os.path.dirname(onnx.__file__), "onnx-ml.proto")
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "onnx-ml.proto")
            result = subprocess.run([sys.executable, SCRIPT, source, out, os.path.join(HERE, "variants.delta")],
                                    capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            text = open(out, encoding="utf-8").read()
            self.assertIn("repeated EquivalentSubgraphProto equivalent_subgraph = 17;", text)
            self.assertIn("message EquivalentSubgraphProto {", text)


if __name__ == "__main__":
    unittest.main()
