"""Writes the operator schemas of the installed onnx package as C++ data:
for each (domain, op_type, since_version), the input and output counts and
the attributes with their types and whether they are required. The build
runs it (CMakeLists.txt) so the validator checks nodes against the schemas
of the pinned onnx release; nothing generated is committed.

usage: export_schemas.py OUTPUT.cc
"""
from __future__ import annotations

import sys


def _cxx_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    import onnx
    from onnx import defs

    rows = []
    for schema in defs.get_all_schemas_with_history():
        attributes = []
        for name in sorted(schema.attributes):
            attribute = schema.attributes[name]
            required = "!" if attribute.required else ""
            attributes.append(f"{name}={int(attribute.type)}{required}")
        # max_input/max_output are 2^31-1 for variadic ones.
        rows.append(
            "  {%s, %s, %d, %d, %d, %d, %d, %s, %s},"
            % (
                _cxx_string(schema.domain),
                _cxx_string(schema.name),
                schema.since_version,
                schema.min_input,
                schema.max_input,
                schema.min_output,
                schema.max_output,
                "true" if schema.deprecated else "false",
                _cxx_string(";".join(attributes)),
            )
        )
    rows.sort()
    with open(argv[1], "w") as out:
        out.write(f"// Generated from onnx {onnx.__version__} by reference/model/export_schemas.py.\n")
        out.write('#include "reference/model/op_schemas.h"\n\nnamespace parity::internal {\n\n')
        out.write(f"const char kOnnxSchemaVersion[] = {_cxx_string(onnx.__version__)};\n")
        out.write("const OpSchemaRow kOnnxSchemaRows[] = {\n")
        out.write("\n".join(rows))
        out.write("\n};\nconst size_t kOnnxSchemaRowCount = sizeof(kOnnxSchemaRows) / sizeof(kOnnxSchemaRows[0]);\n")
        out.write("\n}  // namespace parity::internal\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
