"""`parity verify`: the checks a submission checker runs on a bundle
(submission.py's docstring)."""
from __future__ import annotations
import collections
import fnmatch
import gzip
import json
import os
import sys
import tarfile
import xml.etree.ElementTree as ElementTree
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (  # noqa: E402
    CaseHashes,
    run_json_problem,
    FORMAT,
    FORMAT_VERSION,
    MEMBER_LIMIT,
    BUNDLE_LIMIT,
    GATE_STATES,
    STATES,
    UNKNOWN_OPERATOR,
    UsageError,
    Unreadable,
    sha256_bytes,
    manifest_sha256,
    path_order,
    case_sha256,
    hash_or_none,
    corpus_sha256,
    from_source,
    discover_cases,
    select_cases,
    read_names,
    under,
    expectation_entries,
    listed,
    counts_text,
    plural,
    command_line,
    machine,
)


# --- parity verify ----------------------------------------------------------

def read_bundle(path: str) -> tuple:
    """(manifest, files: name -> bytes, odd: problems with the tar's entries)."""
    files, odd = {}, []
    total = 0
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for member in tar:
                if not member.isfile():
                    odd.append("%s: in the bundle but not a plain file" % member.name)
                    continue
                if member.name in files:
                    odd.append("%s: in the bundle twice" % member.name)
                    continue
                total += member.size
                if member.size > MEMBER_LIMIT or total > BUNDLE_LIMIT:
                    raise Unreadable("%s: %s is too large for a bundle" % (path, member.name))
                files[member.name] = tar.extractfile(member).read()
    except FileNotFoundError:
        raise Unreadable("%s: no such file" % path)
    except IsADirectoryError:
        raise Unreadable("%s: a folder, not a bundle" % path)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError, ValueError) as error:
        raise Unreadable("%s: not a readable gzip-compressed tar (%s)" % (path, error))
    if "manifest.json" not in files:
        raise Unreadable("%s: no manifest.json: not a bundle parity bundle wrote" % path)
    try:
        manifest = json.loads(files.pop("manifest.json").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise Unreadable("%s: manifest.json is not readable JSON (%s)" % (path, error))
    check_manifest_shape(manifest, path)
    return manifest, files, odd


def check_manifest_shape(m, path: str):
    """The manifest's structure, so that the checks below can rely on it."""
    def need(obj, key, kind, where):
        if not isinstance(obj, dict) or not isinstance(obj.get(key), kind):
            raise Unreadable("%s: manifest.json: %s\"%s\" is missing or of the wrong type" % (path, where, key))
        return obj[key]

    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise Unreadable("%s: manifest.json is not the manifest of a parity bundle" % path)
    if m.get("format_version") != FORMAT_VERSION:
        raise Unreadable("%s: manifest.json has format_version %r; this parity reads %d"
                         % (path, m.get("format_version"), FORMAT_VERSION))
    for name, entry in need(m, "files", dict, "").items():
        need(entry, "sha256", str, "files[%s]." % name)
        need(entry, "size", int, "files[%s]." % name)
    names = set()
    for k, run in enumerate(need(m, "runs", list, "")):
        where = "runs[%d]." % k
        name = need(run, "name", str, where)
        if not name or "/" in name or name in (".", "..") or name in names:
            raise Unreadable("%s: manifest.json: %sname '%s' is not a folder name of its own" % (path, where, name))
        names.add(name)
        need(run, "command_line", str, where)
        need(run, "planned", int, where)
        for c in need(run, "corpora", list, where):
            need(c, "path", str, where + "corpora[].")
            need(c, "sha256", str, where + "corpora[].")
            for rel, h in need(c, "case_sha256", dict, where + "corpora[].").items():
                if not isinstance(h, str):
                    raise Unreadable("%s: manifest.json: %scorpora[].case_sha256[%s] is not a string"
                                     % (path, where, rel))
        policy = need(run, "tolerance_policy", dict, where)
        need(policy, "path", str, where + "tolerance_policy.")
        need(policy, "sha256", str, where + "tolerance_policy.")
        need(policy, "given", str, where + "tolerance_policy.")
        for e in need(run, "expectations", list, where):
            for key in ("given", "path", "sha256", "bundled_as"):
                need(e, key, str, where + "expectations[].")
        if run.get("filter_file") is not None:
            need(run, "filter_file", dict, where)
            for key in ("given", "sha256", "bundled_as"):
                need(run["filter_file"], key, str, where + "filter_file.")


class Verifier:
    """The checks of one bundle; each problem is one line naming what changed."""

    def __init__(self, manifest: dict, files: dict, corpus_dirs: dict, policy: str | None):
        self.manifest, self.files = manifest, files
        self.corpus_dirs = corpus_dirs  # recorded corpus path -> folder on this machine
        self.policy = policy
        self.problems, self.notes = [], []
        self.case_hashes = CaseHashes()
        self.cases = 0

    def refuse(self, text: str):
        # Runs that share a corpus or the policy find its change once.
        if text not in self.problems:
            self.problems.append(text)

    def check(self):
        self.check_files()
        if not self.manifest["runs"]:
            self.refuse("manifest.json: the bundle holds no run")
        for run in self.manifest["runs"]:
            self.check_run(run)

    def check_files(self):
        table = self.manifest["files"]
        if self.manifest.get("manifest_sha256") != manifest_sha256(self.manifest):
            self.refuse("manifest.json: manifest_sha256 differs from the manifest's own hash (the manifest was edited)")
        for name in sorted(table):
            if name not in self.files:
                self.refuse("%s: in the manifest but not in the bundle" % name)
                continue
            data = self.files[name]
            if (sha256_bytes(data), len(data)) != (table[name]["sha256"], table[name]["size"]):
                self.refuse("%s: SHA-256 differs from the manifest" % name)
        runs = {"runs/%s/" % r["name"] for r in self.manifest["runs"]}
        for name in sorted(self.files):
            if name not in table:
                self.refuse("%s: in the bundle but not in the manifest" % name)
            elif not any(name.startswith(p) for p in runs):
                self.refuse("%s: belongs to no run of the manifest" % name)

    def json_file(self, name: str):
        if name not in self.files:
            self.refuse("%s: missing from the bundle" % name)
            return None
        try:
            return json.loads(self.files[name].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            self.refuse("%s: not readable JSON (%s)" % (name, error))
            return None

    def check_run(self, entry: dict):
        prefix = "runs/%s/" % entry["name"]
        run = self.json_file(prefix + "run.json")
        if run is None:
            return
        wrong = run_json_problem(run)
        if wrong:
            self.refuse("%srun.json: %s" % (prefix, wrong))
            return
        settings, planned = run["settings"], run["planned"]
        summary = None
        if prefix + "summary.json" in self.files:
            summary = self.json_file(prefix + "summary.json")
            if summary is not None and not isinstance(summary, dict):
                self.refuse("%ssummary.json: not a JSON object" % prefix)
                summary = None
        else:
            self.refuse("%ssummary.json: missing: the run did not finish" % prefix)
        lines = self.result_lines(prefix)
        self.cases += len(planned)

        self.check_provenance(entry, prefix, settings, summary, len(run["planned"]))
        self.check_corpora(entry, prefix, settings, planned)
        self.check_policy(entry, prefix)
        entries = self.check_expectations(entry, prefix)
        self.check_plan(entry, prefix, settings, planned)
        if lines is not None:
            self.check_results(prefix, planned, lines)
            self.check_gate(prefix, lines, entries, bool(settings.get("expectations")))
            if summary is not None:
                self.check_summary(prefix, summary, planned, lines)
            if prefix + "junit.xml" in self.files:
                self.check_junit(prefix, planned, lines)
        if settings.get("shard") not in (None, "1/1") or settings.get("filter") or settings.get("filter_file"):
            self.notes.append("%s ran part of its corpora (shard %s, filter '%s', case list '%s')" % (
                prefix.rstrip("/"), settings.get("shard"), settings.get("filter", ""), settings.get("filter_file", "")))
        if lines and any(r.get("state") == "ERROR" for r in lines):
            self.notes.append("%s: %s ended in ERROR (the case's or the harness's fault, not counted by the gate)"
                              % (prefix.rstrip("/"), plural(sum(r.get("state") == "ERROR" for r in lines), "case")))

    def result_lines(self, prefix: str):
        name = prefix + "results.jsonl"
        if name not in self.files:
            self.refuse("%s: missing from the bundle" % name)
            return None
        lines = []
        for n, text in enumerate(self.files[name].split(b"\n"), 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                self.refuse("%s: line %d is not JSON (a partial line: the run did not finish?)" % (name, n))
                continue
            if not isinstance(line, dict) or not all(isinstance(line.get(k), str)
                                                     for k in ("case", "suite", "state", "dir")) \
                    or not isinstance(line.get("operator", ""), (str, type(None))) \
                    or not isinstance(line.get("gate_failure", False), (bool, type(None))):
                self.refuse("%s: line %d: \"case\", \"suite\", \"state\", \"dir\", \"operator\" or "
                            "\"gate_failure\" is missing or of the wrong type" % (name, n))
                continue
            if line["state"] not in STATES:
                self.refuse("%s: line %d (%s): '%s' is not a result state" % (name, n, line["case"], line["state"]))
            lines.append(line)
        return lines

    def check_provenance(self, entry, prefix, settings, summary, planned_count):
        """What the manifest says of the run against the run's own files."""
        if summary is not None:
            for key in ("adapter", "device", "versions"):
                if entry.get(key) != summary.get(key):
                    self.refuse("manifest.json: runs/%s: \"%s\" differs from %ssummary.json's"
                                % (entry["name"], key, prefix))
        if entry["planned"] != planned_count:
            self.refuse("manifest.json: runs/%s: planned %d, but %srun.json plans %d"
                        % (entry["name"], entry["planned"], prefix, planned_count))
        if entry["command_line"] != command_line(settings, summary, entry.get("folder", "")):
            self.refuse("manifest.json: runs/%s: the command line is not what %srun.json's settings give"
                        % (entry["name"], prefix))
        if [c["path"] for c in entry["corpora"]] != settings.get("cases"):
            self.refuse("manifest.json: runs/%s: the corpora differ from %srun.json's settings.cases"
                        % (entry["name"], prefix))
        if entry["tolerance_policy"]["given"] != (settings.get("tolerance") or ""):
            self.refuse("manifest.json: runs/%s: the tolerance policy differs from %srun.json's settings.tolerance"
                        % (entry["name"], prefix))
        given = [p for p in (settings.get("expectations") or "").split(",") if p]
        if [e["given"] for e in entry["expectations"]] != given:
            self.refuse("manifest.json: runs/%s: the expectations differ from %srun.json's settings.expectations"
                        % (entry["name"], prefix))
        if bool(entry.get("filter_file")) != bool(settings.get("filter_file")):
            self.refuse("manifest.json: runs/%s: the case list differs from %srun.json's settings.filter_file"
                        % (entry["name"], prefix))

    def check_corpora(self, entry, prefix, settings, planned):
        for corpus in entry["corpora"]:
            recorded = corpus["path"]
            here = self.corpus_dirs.get(recorded, recorded)
            label = "corpus %s" % recorded + ("" if here == recorded else " (checked at %s)" % here)
            expected = corpus["case_sha256"]
            planned_here = {under(recorded, p["dir"]) for p in planned} - {None}
            if set(expected) != planned_here:
                self.refuse("manifest.json: runs/%s: %s: the case hashes name %d case folders, the plan %d"
                            % (entry["name"], label, len(expected), len(planned_here)))
            if corpus_sha256(expected) != corpus["sha256"]:
                self.refuse("manifest.json: runs/%s: %s: its SHA-256 is not that of its case hashes"
                            % (entry["name"], label))
            if not os.path.isdir(here):
                self.refuse("%s: not on this machine, so it cannot be checked (give its copy with --corpus DIR)"
                            % label)
                continue
            changed, missing, actual = [], [], {}
            for rel in sorted(expected, key=path_order):
                folder = here if rel == "." else os.path.join(here, rel)
                if not os.path.isdir(folder):
                    missing.append(rel)
                    continue
                try:
                    actual[rel] = self.case_hashes.get(os.path.normpath(folder))
                except OSError:
                    changed.append(rel)
                    continue
                if actual[rel] != expected[rel]:
                    changed.append(rel)
            if changed or missing:
                what = []
                if changed:
                    what.append("%s changed: %s" % (plural(len(changed), "case folder"), listed(changed)))
                if missing:
                    what.append("%s missing: %s" % (plural(len(missing), "case folder"), listed(missing)))
                self.refuse("%s: hash differs: %s" % (label, "; ".join(what)))
            elif corpus_sha256(actual) != corpus["sha256"]:
                self.refuse("%s: hash differs from the manifest's" % label)

    def check_policy(self, entry, prefix):
        policy = entry["tolerance_policy"]
        path = self.policy or from_source(policy["path"])
        label = "tolerance policy %s" % path + (" (the default)" if policy.get("default") and not self.policy else "")
        if not os.path.isfile(path):
            self.refuse("%s: not on this machine, so it cannot be checked (give it with --policy FILE)" % label)
        elif hash_or_none(path) != policy["sha256"]:
            self.refuse("%s: SHA-256 differs from the one runs/%s ran under" % (label, entry["name"]))

    def check_expectations(self, entry, prefix):
        """The expectations' bundled copies against their recorded hashes and,
        where present here, the files at their paths; returns their entries
        (None when they cannot be read)."""
        texts = []
        for e in entry["expectations"]:
            copy = self.files.get(e["bundled_as"])
            if copy is None or not e["bundled_as"].startswith(prefix):
                self.refuse("%s: the copy of expectations %s is missing" % (e["bundled_as"], e["given"]))
                return None
            if sha256_bytes(copy) != e["sha256"]:
                self.refuse("%s: SHA-256 differs from the expectations' recorded hash" % e["bundled_as"])
            path = from_source(e["path"])
            if not os.path.isfile(path):
                self.notes.append("expectations %s: not on this machine; the gate was checked against the bundled "
                                  "copy %s" % (e["path"], e["bundled_as"]))
            elif hash_or_none(path) != e["sha256"]:
                self.refuse("expectations %s: SHA-256 differs from the one runs/%s ran under"
                            % (path, entry["name"]))
            texts.append((e["bundled_as"], copy))
        try:
            return expectation_entries([(p, t.decode("utf-8")) for p, t in texts])
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
            self.refuse("%s: the bundled expectations are not expectations files" % prefix)
            return None

    def check_plan(self, entry, prefix, settings, planned):
        """The plan is what the settings select from the corpora as they are
        here: no case of the corpora left out of it."""
        roots = settings["cases"]
        outside = [p["case"] for p in planned if all(under(r, p["dir"]) is None for r in roots)]
        if outside:
            self.refuse("%srun.json: %d planned case(s) outside the corpora of settings.cases: %s"
                        % (prefix, len(outside), listed(outside)))
        here = [self.corpus_dirs.get(r, r) for r in roots]
        if not all(os.path.isdir(h) for h in here):
            return  # refused above: a corpus that is not here
        names = None
        if entry.get("filter_file"):
            copy = self.files.get(entry["filter_file"]["bundled_as"])
            if copy is None:
                self.refuse("%s: missing from the bundle" % entry["filter_file"]["bundled_as"])
                return
            names = read_names(copy.decode("utf-8", "replace"))
        back = {}  # a case folder here -> its path where the run ran
        for root, actual in zip(roots, here):
            for d in discover_cases([actual]):
                rel = under(os.path.normpath(os.path.abspath(actual)), d)
                back[d] = root if rel == "." else os.path.join(root, rel)
        found = sorted(set(back.values()), key=path_order)
        selected = set(select_cases(found, settings, names))
        planned_dirs = {p["dir"] for p in planned}
        left_out = sorted(selected - planned_dirs, key=path_order)
        if left_out:
            self.refuse("%srun.json: %d case(s) that the settings select from the corpora not planned: %s" % (
                prefix, len(left_out), listed(os.path.basename(d) for d in left_out)))
        extra = sorted((planned_dirs & set(found)) - selected, key=path_order)  # a missing one: refused above
        if extra:
            self.refuse("%srun.json: %d planned case(s) that the settings do not select from the corpora: %s" % (
                prefix, len(extra), listed(os.path.basename(d) for d in extra)))

    def check_results(self, prefix, planned, lines):
        by_dir = collections.Counter(r.get("dir") for r in lines)
        planned_dirs = collections.Counter(p["dir"] for p in planned)
        missing = [p["case"] for p in planned if by_dir[p["dir"]] == 0]
        twice = sorted({r["case"] for r in lines if by_dir[r.get("dir")] > 1})
        unplanned = [r["case"] for r in lines if planned_dirs[r.get("dir")] == 0]
        if missing:
            self.refuse("%sresults.jsonl: %s without a result: %s" % (prefix, plural(len(missing), "planned case"),
                                                                      listed(missing)))
        if twice:
            self.refuse("%sresults.jsonl: %s with more than one result: %s" % (prefix, plural(len(twice), "case"),
                                                                               listed(twice)))
        if unplanned:
            self.refuse("%sresults.jsonl: %s the run did not plan: %s" % (prefix, plural(len(unplanned), "result"),
                                                                          listed(unplanned)))

    def check_gate(self, prefix, lines, entries, has_expectations):
        """The gate passed: no line counts against it, and each line's verdict
        is the one its state and the expectations give (harness/case_outcome.cc)."""
        failing = ["%s (%s)" % (r["case"], r["state"]) for r in lines if counts_for_gate(r)]
        if failing:
            self.refuse("%s: gate failed: %d case(s) count against it: %s" % (prefix.rstrip("/"), len(failing),
                                                                            listed(failing)))
        if entries is None:
            return
        wrong = []
        for r in lines:
            state, counts = expected_verdict(r, entries if has_expectations else None)
            if (state, counts) != (r["state"], counts_for_gate(r)):
                wrong.append("%s (%s%s, the expectations give %s%s)" % (
                    r["case"], r["state"], ", counted" if counts_for_gate(r) else "", state,
                    ", counted" if counts else ""))
        if wrong:
            self.refuse("%sresults.jsonl: %s whose state or gate verdict the expectations do not give: %s"
                        % (prefix, plural(len(wrong), "line"), listed(wrong)))

    def check_summary(self, prefix, summary, planned, lines):
        """summary.json's counts are those of results.jsonl (harness/results/summary.cc)."""
        name = prefix + "summary.json"
        by_state = collections.Counter(r["state"] for r in lines)
        by_suite, by_operator = {}, {}
        for r in lines:
            by_suite.setdefault(r["suite"], collections.Counter())[r["state"]] += 1
            op = r.get("operator") or UNKNOWN_OPERATOR
            by_operator.setdefault(op, collections.Counter())[r["state"]] += 1
        finished = {(r["suite"], r["case"]) for r in lines}
        expected = {
            "total": len(lines),
            "planned": len(planned),
            "gate_failures": sum(counts_for_gate(r) for r in lines),
        }
        if "not_run" in summary:  # parity merge writes none
            expected["not_run"] = sum((p.get("suite"), p.get("case")) not in finished for p in planned)
        for key, value in expected.items():
            if summary.get(key) != value:
                self.refuse("%s: %s is %s, results.jsonl gives %d" % (name, key, summary.get(key), value))
        if summary.get("by_state") != dict(by_state):
            self.refuse("%s: by_state says %s, results.jsonl has %s" % (
                name, counts_text(summary.get("by_state") or {}), counts_text(by_state)))
        for key, computed in (("by_suite", by_suite), ("by_operator", by_operator)):
            told = summary.get(key) if isinstance(summary.get(key), dict) else {}
            differ = sorted(k for k in set(told) | set(computed) if told.get(k) != dict(computed.get(k, {})))
            if differ:
                k = differ[0]
                self.refuse("%s: %s differs from results.jsonl for %s (%s['%s'] says %s, the lines give %s)" % (
                    name, key, listed(differ), key, k, counts_text(told.get(k) or {}),
                    counts_text(computed.get(k, {}))))

    def check_junit(self, prefix, planned, lines):
        """junit.xml tells each case as results.jsonl does (reports/junit.cc)."""
        name = prefix + "junit.xml"
        try:
            root = ElementTree.fromstring(self.files[name])
        except ElementTree.ParseError as error:
            self.refuse("%s: not readable XML (%s)" % (name, error))
            return
        told = collections.defaultdict(list)
        for suite in root.iter("testsuite"):
            suite_name = suite.get("name", "").rsplit("/", 1)[-1]
            for case in suite.iter("testcase"):
                kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
                told[(suite_name, case.get("name", ""))].append(kind)
        expected, states = collections.defaultdict(list), collections.defaultdict(list)
        for r in lines:
            expected[(r["suite"], r["case"])].append(junit_kind(r))
            states[(r["suite"], r["case"])].append(r["state"])
        for p in planned:
            if (p.get("suite"), p.get("case")) not in states:
                expected[(p.get("suite"), p.get("case"))].append("skipped")
                states[(p.get("suite"), p.get("case"))].append("NOT RUN")
        differ = sorted(k for k in set(told) | set(expected) if sorted(told.get(k, [])) != sorted(expected.get(k, [])))
        if differ:
            self.refuse("%s: %d case(s) told differently from results.jsonl: %s" % (name, len(differ), listed(
                "%s (%s in junit.xml, %s in results.jsonl)" % (case, "/".join(told.get((s, case), [])) or "absent",
                                                               "/".join(states.get((s, case), [])) or "absent")
                for s, case in differ)))


def counts_for_gate(r: dict) -> bool:
    return r.get("gate_failure") is True or r.get("state") in GATE_STATES


def junit_kind(r: dict) -> str:
    if counts_for_gate(r) and r["state"] != "ERROR":
        return "failure"
    if r["state"] == "ERROR":
        return "error"
    return "skipped" if r["state"] != "PASS" else "passed"


def expected_verdict(r: dict, entries: list | None) -> tuple:
    """(state, counts for the gate) that harness/case_outcome.cc's
    ApplyExpectation gives the line's outcome: its state before the
    expectations (XFAIL was FAIL, XPASS was PASS) under the entries."""
    raw = {"XFAIL": "FAIL", "XPASS": "PASS"}.get(r["state"], r["state"])
    if raw in ("ERROR", "SKIP"):
        return raw, False
    if entries is None:
        return raw, raw in GATE_STATES
    entry = next((state for globs, state in entries
                  if any(fnmatch.fnmatchcase(r["case"], g) for g in globs)), None)
    if entry is None:
        return raw, raw != "PASS"
    if raw == "PASS":
        return "XPASS", True
    if raw != entry:
        return raw, True
    return ("XFAIL" if raw == "FAIL" else raw), False


def match_corpora(given: list, manifest: dict) -> dict:
    """--corpus DIR -> the recorded corpus whose path ends in the most of
    DIR's last folders (at least its name); ambiguity is a usage error."""
    recorded = sorted({c["path"] for r in manifest["runs"] for c in r["corpora"]})
    chosen = {}
    for d in given:
        parts = os.path.normpath(os.path.abspath(d)).split("/")

        def score(path):
            theirs, n = path.rstrip("/").split("/"), 0
            while n < min(len(parts), len(theirs)) and parts[-1 - n] == theirs[-1 - n] and parts[-1 - n]:
                n += 1
            return n

        scores = {p: score(p) for p in recorded}
        best = max(scores.values(), default=0)
        if best == 0:
            raise UsageError("--corpus %s: the bundle has no corpus of that name (it has: %s)" % (d, listed(recorded)))
        winners = [p for p in recorded if scores[p] == best]
        if len(winners) > 1:
            raise UsageError("--corpus %s: matches %s alike; give a path whose last folders tell them apart"
                             % (d, listed(winners)))
        if winners[0] in chosen:
            raise UsageError("--corpus %s and %s both stand for %s" % (chosen[winners[0]], d, winners[0]))
        chosen[winners[0]] = os.path.normpath(os.path.abspath(d))
    return chosen


def verify(args: list) -> int:
    path, corpora, policy = None, [], None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--corpus", "--policy"):
            if i + 1 >= len(args):
                raise UsageError("%s needs a value" % a)
            if a == "--corpus":
                corpora.append(args[i + 1])
            else:
                policy = args[i + 1]
            i += 2
            continue
        if a.startswith("--"):
            raise UsageError("unknown option '%s'" % a)
        if path is not None:
            raise UsageError("give one bundle, not '%s' and '%s'" % (path, a))
        path = a
        i += 1
    if path is None:
        raise UsageError("give the bundle to check")
    manifest, files, odd = read_bundle(path)
    verifier = Verifier(manifest, files, match_corpora(corpora, manifest), policy)
    verifier.problems.extend(odd)
    verifier.check()
    for note in dict.fromkeys(verifier.notes):
        print("note: " + note)
    for problem in verifier.problems:
        print(problem)
    if verifier.problems:
        print("verify: refused: %s" % plural(len(verifier.problems), "problem"))
        return 1
    print("verify: accepted (%s, %s)" % (plural(len(manifest["runs"]), "run"), plural(verifier.cases, "case")))
    return 0
