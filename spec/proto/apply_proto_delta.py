"""Applies proto deltas (spec/proto/*.delta) to an onnx .proto file.

    apply_proto_delta.py SOURCE_PROTO OUT_PROTO DELTA... [--package NAME]

--package renames the proto package, so that Python can load the patched
schema beside the onnx package's own one (both are `onnx` otherwise).
Fails, naming the delta and line, when a message is missing or a field
number or name is already taken, so a new onnx release cannot silently
collide with a draft field.
"""
import re
import sys


def parse_delta(path):
    blocks = []  # (kind, message or None, lines, line number)
    current = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stripped = line.strip()
            if current is None:
                if stripped.startswith("@into "):
                    current = ("into", stripped.split()[1], [], number)
                elif stripped == "@append":
                    current = ("append", None, [], number)
                elif stripped.startswith("@"):
                    sys.exit(f"{path}:{number}: unknown directive '{stripped}'")
            elif stripped == "@end":
                blocks.append(current)
                current = None
            else:
                current[2].append(line.rstrip("\n"))
    if current is not None:
        sys.exit(f"{path}:{current[3]}: block has no @end")
    return blocks


def message_span(text, name):
    """(start of body, index of closing brace) of a top-level message."""
    match = re.search(r"^message\s+" + re.escape(name) + r"\s*\{", text, re.M)
    if not match:
        return None
    depth = 0
    for i in range(match.end() - 1, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return match.end(), i
    return None


FIELD = re.compile(r"^\s*(?:optional|repeated|required)?\s*[\w.]+\s+(\w+)\s*=\s*(\d+)\s*;")


def direct_fields(body):
    """Names and numbers of the fields declared directly in a message body."""
    fields, depth = [], 0
    for line in body.splitlines():
        if depth == 0:
            m = FIELD.match(line)
            if m:
                fields.append((m.group(1), int(m.group(2))))
        depth += line.count("{") - line.count("}")
    return fields


def reserved_numbers(body):
    numbers = set()
    for m in re.finditer(r"^\s*reserved\s+([^;]*);", body, re.M):
        for part in m.group(1).split(","):
            part = part.strip()
            if re.fullmatch(r"\d+", part):
                numbers.add(int(part))
            elif re.fullmatch(r"\d+\s+to\s+\d+", part):
                lo, hi = (int(x) for x in part.split("to"))
                numbers.update(range(lo, hi + 1))
    return numbers


def apply(text, delta_path):
    for kind, message, lines, number in parse_delta(delta_path):
        where = f"{delta_path}:{number}"
        if kind == "append":
            text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
            continue
        span = message_span(text, message)
        if span is None:
            sys.exit(f"{where}: message {message} is not in the schema")
        body = text[span[0]:span[1]]
        taken = dict(direct_fields(body))
        taken_numbers = set(taken.values()) | reserved_numbers(body)
        for name, field_number in direct_fields("\n".join(lines)):
            if name in taken:
                sys.exit(f"{where}: {message} already has a field named '{name}'")
            if field_number in taken_numbers:
                sys.exit(f"{where}: {message} field number {field_number} ('{name}') is already used or reserved")
        text = text[:span[1]] + "\n".join(lines) + "\n" + text[span[1]:]
    return text


def main(argv):
    args, package = [], None
    it = iter(argv)
    for arg in it:
        if arg == "--package":
            package = next(it, None)
        else:
            args.append(arg)
    if len(args) < 3 or package == "":
        sys.exit(__doc__)
    source, out, deltas = args[0], args[1], args[2:]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    for delta in deltas:
        text = apply(text, delta)
    if package:
        text, count = re.subn(r"^package\s+onnx\s*;", f"package {package};", text, flags=re.M)
        if count != 1:
            sys.exit(f"{source}: no 'package onnx;' line to rename")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
