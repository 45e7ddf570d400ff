"""The pieces `parity bundle` and `parity verify` share: the hash
definitions (submission.py's docstring), the plan a run's settings select,
and small helpers."""
from __future__ import annotations
import datetime
import fnmatch
import hashlib
import json
import os
import platform
import shlex


SOURCE_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_POLICY = "spec/tolerance.json"
FORMAT = "onnx-parity-bundle"
FORMAT_VERSION = 1
USAGE = {
    "bundle": "parity bundle RUN_DIR... --out FILE [--note TEXT]",
    "verify": "parity verify FILE [--corpus DIR]... [--policy FILE]",
}

# What a run folder contributes besides logs/ (spec/results.md); .parity.lock is left out.
RUN_FILES = ("results.jsonl", "run.json", "summary.json", "report.md", "report.html", "junit.xml")
# Worker logs are evidence, not results: a log over the first limit, or past
# the second in all, is left out, with its size and SHA-256 in the manifest.
LOG_FILE_LIMIT = 4 << 20
LOG_TOTAL_LIMIT = 16 << 20
# What verify reads into memory from a bundle, at most.
MEMBER_LIMIT = 1 << 30
BUNDLE_LIMIT = 4 << 30

# harness/results/results.cc: FailsGate, and the defaults of `parity run`.
GATE_STATES = {"FAIL", "CRASH", "TIMEOUT", "FELL_BACK", "XPASS"}
STATES = GATE_STATES | {"PASS", "UNSUPPORTED", "SKIP", "XFAIL", "ERROR", "MISTRUSTED"}
UNKNOWN_OPERATOR = "(unknown)"
DEFAULT_TIMEOUT, DEFAULT_WARM_REPEATS = 60.0, 3
# How many names a message lists before "and N more".
LISTED = 8


class UsageError(Exception):
    """Bad arguments: exit status 2 with the command's usage."""


class Unreadable(Exception):
    """An input that cannot be read as what it should be: exit status 2."""


# --- Hashes ---------------------------------------------------------------

def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def canonical_json(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def manifest_sha256(manifest: dict) -> str:
    return sha256_bytes(canonical_json({k: v for k, v in manifest.items() if k != "manifest_sha256"}))


def path_order(path: str) -> bytes:
    return os.fsencode(path)


def _listing_sha256(hashes: dict) -> str:
    """SHA-256 of "<hash>  <path>\\n" lines in the byte order of the paths."""
    text = "".join("%s  %s\n" % (hashes[p], p) for p in sorted(hashes, key=path_order))
    return sha256_bytes(text.encode("utf-8", "surrogateescape"))


def case_sha256(folder: str) -> str:
    """The case hash of the module docstring. Raises OSError on a folder that
    cannot be read, a symbolic link to a folder, or a special file."""
    hashes = {}

    def fail(error):
        raise error

    for top, dirs, files in os.walk(folder, onerror=fail):
        for d in dirs:
            if os.path.islink(os.path.join(top, d)):
                raise OSError("%s: a symbolic link to a folder, which the case hash does not follow"
                              % os.path.join(top, d))
        for name in files:
            path = os.path.join(top, name)
            if not os.path.isfile(path):
                raise OSError("%s: not a regular file" % path)
            hashes[os.path.relpath(path, folder)] = sha256_file(path)
    return _listing_sha256(hashes)


def hash_or_none(path: str) -> str | None:
    """The file's hash, or None when it cannot be read (which differs from any hash)."""
    try:
        return sha256_file(path)
    except OSError:
        return None


def corpus_sha256(case_hashes: dict) -> str:
    return _listing_sha256(case_hashes)


def source_relative(path: str) -> str:
    """`path` relative to the source tree when inside it, else absolute."""
    path = os.path.abspath(path)
    inside = os.path.commonpath([path, SOURCE_DIR]) == SOURCE_DIR
    return os.path.relpath(path, SOURCE_DIR) if inside else path


def from_source(recorded: str) -> str:
    return recorded if os.path.isabs(recorded) else os.path.join(SOURCE_DIR, recorded)


def locate_input(given: str) -> str | None:
    """A path a run was given (relative to where it ran, which run.json does
    not record): as it is from here, else from the source tree."""
    for candidate in (os.path.abspath(given), os.path.join(SOURCE_DIR, given)):
        if os.path.isfile(candidate):
            return candidate
    return None


# --- The plan: which case folders the settings select ---------------------

def discover_cases(roots: list) -> list:
    """Case folders under each root, as harness/case_reader.cc's DiscoverCases
    finds them: a root holding model.onnx is a case, else every folder below
    it holding one (not looked into further); absolute, sorted, unique."""
    found = set()
    for root in roots:
        if os.path.isfile(os.path.join(root, "model.onnx")):
            found.add(os.path.normpath(os.path.abspath(root)))
            continue
        for top, dirs, _ in os.walk(root):
            deeper = []
            for d in sorted(dirs):
                path = os.path.join(top, d)
                if os.path.isfile(os.path.join(path, "model.onnx")):
                    found.add(os.path.normpath(os.path.abspath(path)))
                else:
                    deeper.append(d)
            dirs[:] = deeper
    return sorted(found, key=path_order)


def select_cases(found: list, settings: dict, names: set | None) -> list:
    """harness/run/run_command.cc's SelectCases: --filter, --filter-file, --shard."""
    glob = settings.get("filter") or ""
    selected = [d for d in found
                if (not glob or fnmatch.fnmatchcase(os.path.basename(d), glob))
                and (names is None or os.path.basename(d) in names)]
    index, count = parse_shard(settings.get("shard"))
    return [d for k, d in enumerate(selected) if k % count == index - 1]


def parse_shard(text) -> tuple:
    try:
        index, count = (int(x) for x in str(text or "1/1").split("/"))
        if 1 <= index <= count:
            return index, count
    except ValueError:
        pass
    return 1, 1


def read_names(text: str) -> set:
    """A --filter-file's case names: one per line, '#' starts a comment."""
    names = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip(" \t\r")
        if line:
            names.add(line)
    return names


def under(root: str, case_dir: str) -> str | None:
    """The case folder's path relative to a corpus folder, or None outside it."""
    if case_dir == root:
        return "."
    prefix = root.rstrip("/") + "/"
    return case_dir[len(prefix):] if case_dir.startswith(prefix) else None


def expectation_entries(paths_and_texts: list) -> list:
    """(globs, state) of every entry, in the order harness/expectations.cc
    joins them: files in order, in each "unsupported" before "xfail"."""
    entries = []
    for path, text in paths_and_texts:
        doc = json.loads(text)
        for key in ("unsupported", "xfail"):
            for e in doc.get(key, []):
                globs = [e["cases"]] if isinstance(e["cases"], str) else list(e["cases"])
                entries.append((globs, e.get("state", "UNSUPPORTED" if key == "unsupported" else "FAIL")))
    return entries


# --- Small helpers ---------------------------------------------------------

def listed(names, limit=LISTED) -> str:
    names = list(names)
    text = ", ".join(names[:limit])
    return text + (", and %d more" % (len(names) - limit) if len(names) > limit else "")


def counts_text(counts) -> str:
    if not isinstance(counts, dict):
        return json.dumps(counts)
    return ", ".join("%s %s" % (k, counts[k]) for k in sorted(counts)) or "nothing"


def plural(n: int, word: str, many: str = "") -> str:
    return "%d %s" % (n, word if n == 1 else many or word + "s")


def iso_time(epoch: int) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def number_text(x) -> str:
    return str(int(x)) if isinstance(x, (int, float)) and float(x).is_integer() else str(x)


def command_line(settings: dict, summary: dict | None, folder: str) -> str:
    """The `parity run` command line that the settings stand for. Rebuilt:
    parity run records its settings, not its command line."""
    argv = ["parity", "run", "--adapter", str(settings.get("adapter", ""))]
    if settings.get("device"):
        argv += ["--device", settings["device"]]
    argv += ["--cases", *settings.get("cases", [])]
    for option, key in (("--filter", "filter"), ("--filter-file", "filter_file")):
        if settings.get(key):
            argv += [option, settings[key]]
    if settings.get("shard") not in (None, "1/1"):
        argv += ["--shard", settings["shard"]]
    if settings.get("timeout", DEFAULT_TIMEOUT) != DEFAULT_TIMEOUT:
        argv += ["--timeout", number_text(settings["timeout"])]
    if settings.get("warm_repeats", DEFAULT_WARM_REPEATS) != DEFAULT_WARM_REPEATS:
        argv += ["--warm-repeats", number_text(settings["warm_repeats"])]
    for path in (settings.get("expectations") or "").split(","):
        if path:
            argv += ["--expect", path]
    if settings.get("tolerance"):
        argv += ["--tolerance", settings["tolerance"]]
    if settings.get("no_fallback"):
        argv.append("--no-fallback")
    if settings.get("variant_targets") is not None:
        argv += ["--variant-targets", ",".join(settings["variant_targets"])]
    if settings.get("state_readback"):
        argv += ["--state-readback", settings["state_readback"]]
    if summary and summary.get("jobs", 1) != 1:
        argv += ["--jobs", number_text(summary["jobs"])]
    argv += ["--out", folder]
    return " ".join(shlex.quote(str(a)) for a in argv)


def machine() -> dict:
    """The machine that made the bundle (run.json does not record the one
    that ran); the host name is left out of a file meant to be published."""
    info = {"uname": " ".join((platform.system(), platform.release(), platform.version(), platform.machine())),
            "cpu_cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            models = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if models:
            info["cpu_model"] = models[0]
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
        info["memory_bytes"] = kib * 1024
    except (OSError, StopIteration, ValueError, IndexError):
        pass
    try:
        with open("/etc/os-release") as f:
            fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        info["os_release"] = fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        pass
    return info


class CaseHashes:
    """Case hashes by folder, each computed once (runs share corpora)."""

    def __init__(self):
        self.known = {}

    def get(self, folder: str) -> str:
        if folder not in self.known:
            self.known[folder] = case_sha256(folder)
        return self.known[folder]


def run_json_problem(run) -> str | None:
    """What makes run.json other than what parity run writes (the fields
    verify reads), or None."""
    if not isinstance(run, dict) or not isinstance(run.get("settings"), dict) \
            or not isinstance(run.get("planned"), list):
        return "no \"settings\" object and \"planned\" list"
    settings = run["settings"]
    kinds = {"adapter": str, "device": str, "filter": str, "filter_file": str, "shard": str, "expectations": str,
             "tolerance": str, "state_readback": (str, type(None)), "no_fallback": bool,
             "timeout": (int, float), "warm_repeats": int, "variant_targets": (list, type(None))}
    for key, kind in kinds.items():
        value = settings.get(key)
        if key in settings and (not isinstance(value, kind) or isinstance(value, bool) and kind is not bool):
            return "settings.%s is of the wrong type" % key
    if not isinstance(settings.get("cases"), list) or not all(isinstance(x, str) for x in settings["cases"]):
        return "settings.cases is not a list of folders"
    if not all(isinstance(x, str) for x in settings.get("variant_targets") or []):
        return "settings.variant_targets is not a list of strings"
    for p in run["planned"]:
        if not isinstance(p, dict) or not all(isinstance(p.get(k), str) for k in ("case", "suite", "dir")):
            return "a planned case without a \"case\", \"suite\" and \"dir\""
    return None
