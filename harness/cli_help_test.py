"""`parity SUBCOMMAND --help` for every subcommand that `parity --help` lists,
usage errors that print the subcommand's own usage, and README.md's Commands
block, which must be `parity --help` word for word.

  cli_help_test.py          checks (a ctest test)
  cli_help_test.py --write  rewrites README.md's block from build/parity
"""
import os
import re
import subprocess
import sys
import unittest

SOURCE_DIR = os.environ.get("PARITY_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
PARITY = os.path.join(BINARY_DIR, "parity")
README = os.path.join(SOURCE_DIR, "README.md")

# README.md carries `parity --help` between these two lines.
BEGIN = "<!-- begin: parity --help (harness/cli_help_test.py --write regenerates it) -->\n```\n"
END = "```\n<!-- end: parity --help -->\n"

# Subcommands that must exist whatever the table says, so that a parse of
# `parity --help` that finds nothing cannot pass.
REQUIRED = {"corpus", "eval", "check", "resolve", "stamp", "expect", "run", "merge", "report"}


def parity(*args):
    return subprocess.run([PARITY, *args], capture_output=True, text=True, timeout=60)


def full_usage():
    result = parity("--help")
    assert result.returncode == 0, result.stderr
    return result.stdout


def forms(usage):
    """(name, synopsis) of every form: a synopsis starts "  parity NAME" and
    goes on over the lines indented deeper than "  parity", up to the
    description (indented six spaces and not starting with "[")."""
    found = []
    lines = usage.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"  parity (\S+)", line)
        if not m:
            continue
        synopsis = [line]
        for more in lines[i + 1:]:
            if re.match(r" {9,}\[", more):
                synopsis.append(more)
            else:
                break
        found.append((m.group(1), "\n".join(synopsis)))
    return found


def readme_block():
    with open(README) as f:
        text = f.read()
    begin = text.find(BEGIN)
    end = text.find(END, begin + len(BEGIN)) if begin >= 0 else -1
    return text, begin, end


class CliHelpTest(unittest.TestCase):
    def test_every_subcommand_has_help(self):
        usage = full_usage()
        names = []
        for name, _ in forms(usage):
            if name not in names:
                names.append(name)
        self.assertTrue(REQUIRED <= set(names), "parity --help lacks %s" % (REQUIRED - set(names)))
        for name in names:
            for flag in ("--help", "-h"):
                result = parity(name, flag)
                self.assertEqual(result.returncode, 0, "parity %s %s: %s" % (name, flag, result.stderr))
                self.assertTrue(result.stdout.strip(), "parity %s %s printed nothing" % (name, flag))
                self.assertEqual(result.stderr, "", "parity %s %s wrote to stderr" % (name, flag))
                # Each form of the subcommand, as the full usage prints it, and no other subcommand's.
                printed = [n for n, _ in forms(result.stdout)]
                self.assertEqual(set(printed), {name}, "parity %s %s" % (name, flag))
                for n, synopsis in forms(usage):
                    if n == name:
                        self.assertIn(synopsis, result.stdout, "parity %s %s" % (name, flag))
            self.assertEqual(parity("help", name).stdout, parity(name, "--help").stdout)

    def test_help_after_other_arguments(self):
        result = parity("eval", "some/case", "--quiet", "--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("parity eval PATH...", result.stdout)

    def test_usage_errors_exit_2_with_the_subcommands_own_usage(self):
        for args in (["eval", "--no-such-option"], ["check", "--no-such-option"], ["resolve"],
                     ["stamp", "--no-such-option"], ["run", "--cases", "x"], ["merge"], ["expect"],
                     ["report", "--no-such-option"], ["corpus", "no-such-corpus"]):
            result = parity(*args)
            self.assertEqual(result.returncode, 2, "parity %s: %s" % (" ".join(args), result.stderr))
            self.assertIn("parity %s: " % args[0], result.stderr)
            printed = {n for n, _ in forms(result.stderr)}
            self.assertEqual(printed, {args[0]}, "parity %s printed: %s" % (" ".join(args), result.stderr))

    def test_unknown_subcommand_exits_2_with_the_whole_usage(self):
        result = parity("no-such-command")
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown command 'no-such-command'", result.stderr)
        self.assertEqual(result.stderr.split("\n", 1)[1], full_usage())
        self.assertEqual(parity("help", "no-such-command").returncode, 2)

    def test_readme_commands_block_is_the_full_usage(self):
        text, begin, end = readme_block()
        self.assertGreaterEqual(begin, 0, "README.md has no line %r" % BEGIN.splitlines()[0])
        self.assertGreaterEqual(end, 0, "README.md's parity --help block has no end line")
        block = text[begin + len(BEGIN):end]
        usage = full_usage()
        for name, synopsis in forms(usage):
            self.assertIn(synopsis + "\n", block, "README.md lacks the synopsis of %s" % name)
        self.assertEqual(block, usage, "README.md's Commands block differs from `parity --help`; "
                         "run harness/cli_help_test.py --write")


def write_readme():
    text, begin, end = readme_block()
    if begin < 0 or end < 0:
        sys.exit("README.md has no parity --help block to rewrite")
    with open(README, "w") as f:
        f.write(text[:begin + len(BEGIN)] + full_usage() + text[end:])


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_readme()
    else:
        unittest.main()
