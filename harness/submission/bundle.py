"""`parity bundle`: run folders packed with their provenance and the
manifest of every file's hash (submission.py's docstring)."""
from __future__ import annotations
import datetime
import gzip
import io
import json
import os
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (  # noqa: E402
    CaseHashes,
    run_json_problem,
    SOURCE_DIR,
    DEFAULT_POLICY,
    FORMAT,
    FORMAT_VERSION,
    RUN_FILES,
    LOG_FILE_LIMIT,
    LOG_TOTAL_LIMIT,
    UsageError,
    Unreadable,
    sha256_bytes,
    sha256_file,
    manifest_sha256,
    case_sha256,
    corpus_sha256,
    source_relative,
    locate_input,
    under,
    plural,
    iso_time,
    command_line,
    machine,
)


# --- parity bundle ----------------------------------------------------------

def read_json_file(path: str, what: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise Unreadable("%s: no %s" % (path, what))
    except (OSError, ValueError) as error:
        raise Unreadable("%s: not readable JSON (%s)" % (path, error))


def run_entry(folder: str, name: str, case_hashes: CaseHashes, files: dict) -> dict:
    """The manifest's record of one run folder; adds its files to `files`
    (bundle path -> bytes). Raises Unreadable naming the folder and file."""
    for required in ("results.jsonl", "run.json"):
        if not os.path.isfile(os.path.join(folder, required)):
            raise Unreadable("%s is not a run folder: it has no %s" % (folder, required))
    run = read_json_file(os.path.join(folder, "run.json"), "run.json")
    wrong = run_json_problem(run)
    if wrong:
        raise Unreadable("%s/run.json: %s: not a run parity wrote" % (folder, wrong))
    settings, planned = run["settings"], run["planned"]
    summary_path = os.path.join(folder, "summary.json")
    summary = read_json_file(summary_path, "summary.json") if os.path.exists(summary_path) else None
    if summary is not None and not isinstance(summary, dict):
        raise Unreadable("%s: not a JSON object" % summary_path)

    prefix = "runs/%s/" % name
    left_out = []
    for base in RUN_FILES:
        path = os.path.join(folder, base)
        if os.path.isfile(path):
            files[prefix + base] = read_bytes(path)
    log_total = 0
    for top, _, names in sorted(os.walk(os.path.join(folder, "logs"))):
        for base in sorted(names):
            path = os.path.join(top, base)
            rel = os.path.relpath(path, folder)
            size = os.path.getsize(path)
            if size > LOG_FILE_LIMIT or log_total + size > LOG_TOTAL_LIMIT:
                left_out.append({"path": rel, "size": size, "sha256": sha256_file(path),
                                 "why": "a log over %d MiB, or past %d MiB of logs in all"
                                        % (LOG_FILE_LIMIT >> 20, LOG_TOTAL_LIMIT >> 20)})
                continue
            log_total += size
            files[prefix + rel] = read_bytes(path)

    given_policy = settings.get("tolerance") or ""
    policy_path = locate_input(given_policy) if given_policy else os.path.join(SOURCE_DIR, DEFAULT_POLICY)
    if not policy_path or not os.path.isfile(policy_path):
        raise Unreadable("%s/run.json: tolerance policy '%s' not found (from here or from %s)"
                         % (folder, given_policy or DEFAULT_POLICY, SOURCE_DIR))
    policy = {"given": given_policy, "default": not given_policy, "path": source_relative(policy_path),
              "sha256": sha256_file(policy_path), "size": os.path.getsize(policy_path)}

    expectations = []
    for k, given in enumerate(p for p in (settings.get("expectations") or "").split(",") if p):
        path = locate_input(given)
        if not path:
            raise Unreadable("%s/run.json: expectations file '%s' not found (from here or from %s)"
                             % (folder, given, SOURCE_DIR))
        copy = "%sexpectations/%d-%s" % (prefix, k + 1, os.path.basename(path))
        files[copy] = read_bytes(path)
        expectations.append({"given": given, "path": source_relative(path), "sha256": sha256_bytes(files[copy]),
                             "size": len(files[copy]), "bundled_as": copy})
    filter_file = None
    if settings.get("filter_file"):
        path = locate_input(settings["filter_file"])
        if not path:
            raise Unreadable("%s/run.json: case list '%s' (--filter-file) not found"
                             % (folder, settings["filter_file"]))
        files[prefix + "filter-file.txt"] = read_bytes(path)
        filter_file = {"given": settings["filter_file"], "path": source_relative(path),
                       "sha256": sha256_bytes(files[prefix + "filter-file.txt"]),
                       "bundled_as": prefix + "filter-file.txt"}

    corpora = []
    planned_dirs = [p["dir"] for p in planned]
    for root in settings.get("cases", []):
        hashes = {}
        for case_dir in planned_dirs:
            rel = under(root, case_dir)
            if rel is None:
                continue
            try:
                hashes[rel] = case_hashes.get(case_dir)
            except OSError as error:
                raise Unreadable("%s: planned case folder %s cannot be hashed: %s" % (folder, case_dir, error))
        corpora.append({"path": root, "name": source_relative(root), "cases": len(hashes),
                        "sha256": corpus_sha256(hashes), "case_sha256": hashes})

    summary = summary or {}
    entry = {
        "name": name,
        "folder": os.path.abspath(folder),
        "adapter": summary.get("adapter"),
        "device": summary.get("device"),
        "versions": summary.get("versions"),
        "finished": summary.get("finished"),
        "planned": len(planned),
        "command_line": command_line(settings, summary, os.path.abspath(folder)),
        "command_line_reconstructed": True,
        "command_line_note": "rebuilt from run.json's settings (and summary.json's jobs): parity run records "
                             "its settings, not the command line it was given",
        "corpora": corpora,
        "tolerance_policy": policy,
        "expectations": expectations,
        "filter_file": filter_file,
        "left_out": left_out,
    }
    if isinstance(summary.get("shards"), list):
        entry["merged_shards"] = len(summary["shards"])
        entry["command_line_note"] += "; the run was %d shards (--shard I/%d) joined by parity merge" % (
            len(summary["shards"]), len(summary["shards"]))
    return entry


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as error:
        raise Unreadable("%s: %s" % (path, error.strerror or error))


def created_epoch(folders: list, entries: list) -> tuple:
    """(epoch, what it is): fixed by the inputs, so that the same folders
    bundle to the same bytes."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        return int(os.environ["SOURCE_DATE_EPOCH"]), "SOURCE_DATE_EPOCH"
    finished = [e["finished"] for e in entries if isinstance(e.get("finished"), str)]
    for text in sorted(finished, reverse=True):
        try:
            stamp = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
            return int(stamp.timestamp()), "the latest \"finished\" of the runs' summary.json"
        except ValueError:
            continue
    newest = max(int(os.path.getmtime(os.path.join(f, b))) for f in folders for b in RUN_FILES
                 if os.path.isfile(os.path.join(f, b)))
    return newest, "the newest modification time of the run files"


def tar_bytes(files: dict, epoch: int) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=epoch, compresslevel=6) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(files):
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(files[name]), epoch, 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(files[name]))
    return out.getvalue()


def bundle(args: list) -> int:
    folders, out, note = [], None, ""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--out", "--note"):
            if i + 1 >= len(args):
                raise UsageError("%s needs a value" % a)
            out, note = (args[i + 1], note) if a == "--out" else (out, args[i + 1])
            i += 2
            continue
        if a.startswith("--"):
            raise UsageError("unknown option '%s'" % a)
        folders.append(a)
        i += 1
    if not folders:
        raise UsageError("give at least one run folder")
    if not out:
        raise UsageError("--out FILE is required")
    for folder in folders:
        if not os.path.isdir(folder):
            raise Unreadable("%s: not a folder" % folder)

    files, entries, names, case_hashes = {}, [], set(), CaseHashes()
    for folder in folders:
        base = os.path.basename(os.path.normpath(os.path.abspath(folder))) or "run"
        name, k = base, 2
        while name in names:  # two folders of the same name: the second is <name>-2
            name, k = "%s-%d" % (base, k), k + 1
        names.add(name)
        try:
            entries.append(run_entry(folder, name, case_hashes, files))
        except OSError as error:  # a file that vanished or cannot be read while bundling
            raise Unreadable("%s: %s" % (folder, error))
    epoch, created_from = created_epoch(folders, entries)
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "created": iso_time(epoch),
        "created_from": created_from,
        "note": note,
        "machine": machine(),
        "runs": entries,
        "files": {n: {"sha256": sha256_bytes(files[n]), "size": len(files[n])} for n in sorted(files)},
    }
    manifest["manifest_sha256"] = manifest_sha256(manifest)
    files["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    data = tar_bytes(files, epoch)
    temp = "%s.tmp-%d" % (out, os.getpid())
    try:
        with open(temp, "wb") as f:
            f.write(data)
        os.replace(temp, out)
    except OSError as error:
        if os.path.exists(temp):
            os.remove(temp)
        raise Unreadable("cannot write %s: %s" % (out, error.strerror or error))
    print("bundle: %s: %d bytes, %s in %s" % (out, len(data), plural(len(files), "file"), plural(len(entries), "run")))
    for e in entries:
        adapter = e["adapter"] if isinstance(e["adapter"], dict) else {}
        device = e["device"] if isinstance(e["device"], dict) else {}
        print("  runs/%s: %s %s (%s) on %s; %s planned; %s (%s), policy %s%s" % (
            e["name"], adapter.get("name", "?"), adapter.get("version", "?"), adapter.get("backend_version", "?"),
            device.get("name", "?"), e["planned"], plural(len(e["corpora"]), "corpus", "corpora"),
            plural(sum(c["cases"] for c in e["corpora"]), "case"), e["tolerance_policy"]["path"],
            "; %s left out" % plural(len(e["left_out"]), "log") if e["left_out"] else ""))
    return 0
