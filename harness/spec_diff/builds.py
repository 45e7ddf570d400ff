"""The onnx builds that `parity spec-diff` compares: each named on the command
line as a wheel file, a pip requirement, a virtual environment, a built source
checkout, a corpus folder already written, or "pinned" (the project's own
onnx), and turned into a Python interpreter (with a PYTHONPATH) that imports
that onnx. From a build come its node corpus (cases/onnx_node/write_corpus.py
run under it) and its operator schema table."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WRITE_CORPUS = os.path.join(ROOT, "cases", "onnx_node", "write_corpus.py")


class BuildError(Exception):
    """A build that cannot be used: the message names the build and why."""


@dataclasses.dataclass
class Build:
    spec: str                 # as given on the command line
    kind: str                 # pinned, wheel, requirement, venv, checkout, corpus
    python: str = ""          # the interpreter that imports this onnx (empty for a corpus)
    pythonpath: str = ""      # prepended to PYTHONPATH, or empty
    onnx_version: str = ""    # onnx.__version__
    distribution: str = ""    # "onnx-weekly 1.24.0.dev20261026": the installed package, which may differ
    opset: int = 0            # onnx.defs.onnx_opset_version()
    corpus: str = ""          # the node corpus written from it

    def env(self) -> dict:
        env = dict(os.environ)
        if self.pythonpath:
            env["PYTHONPATH"] = self.pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def describe(self) -> dict:
        return {"spec": self.spec, "kind": self.kind, "onnx_version": self.onnx_version,
                "distribution": self.distribution, "opset": self.opset}


def _cache_dir() -> str:
    base = os.environ.get("PARITY_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "onnx-parity")
    return os.path.join(base, "wheels")


def _run(argv, what, env=None, timeout=900):
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BuildError(f"{what}: {error}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise BuildError(f"{what}: exit status {proc.returncode}: " + " | ".join(tail))
    return proc.stdout


def _install_wheel(wheel: str, work: str) -> str:
    """Unpacks `wheel` (with no dependencies: the project's numpy and protobuf
    serve every onnx) into a folder of `work` named by the wheel's hash, once."""
    with open(wheel, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    target = os.path.join(work, "site-" + digest)
    if not os.path.isdir(os.path.join(target, "onnx")):
        staging = target + ".tmp"
        shutil.rmtree(staging, ignore_errors=True)
        _run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
              "--no-compile", "--target", staging, wheel], f"installing {wheel}")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    return target


def _download(requirement: str) -> str:
    """The wheel of a pip requirement for this interpreter, from the cache or PyPI."""
    cache = _cache_dir()
    os.makedirs(cache, exist_ok=True)
    before = set(os.listdir(cache))
    out = _run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps",
                "--only-binary=:all:", "--dest", cache, requirement], f"downloading {requirement}")
    # pip names the file it saved or found ("Saved X" / "File was already downloaded X").
    for line in out.splitlines():
        for marker in ("Saved ", "File was already downloaded "):
            if marker in line and line.strip().endswith(".whl"):
                path = line.split(marker, 1)[1].strip()
                return path if os.path.isabs(path) else os.path.join(cache, os.path.basename(path))
    new = sorted(set(os.listdir(cache)) - before)
    if len(new) == 1 and new[0].endswith(".whl"):
        return os.path.join(cache, new[0])
    raise BuildError(f"downloading {requirement}: pip did not say which wheel it saved")


def _probe(build: Build) -> None:
    """Fills the versions from the build's own interpreter."""
    script = (
        "import json, os, importlib.metadata as md, onnx, onnx.defs\n"
        "where = os.path.dirname(os.path.abspath(onnx.__file__))\n"
        "dist = ''\n"
        "for d in md.distributions():\n"
        "    top = (d.read_text('top_level.txt') or '').split()\n"
        "    files = [str(f) for f in (d.files or [])]\n"
        "    if ('onnx' in top or 'onnx/__init__.py' in files) and\\\n"
        "       os.path.abspath(str(d.locate_file('onnx'))) == where:\n"
        "        dist = d.metadata['Name'] + ' ' + d.version\n"
        "        break\n"
        "print(json.dumps({'version': onnx.__version__, 'dist': dist, 'opset': onnx.defs.onnx_opset_version()}))\n")
    out = _run([build.python, "-c", script], f"{build.spec}: importing onnx", env=build.env(), timeout=120)
    try:
        facts = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BuildError(f"{build.spec}: importing onnx printed no versions") from None
    build.onnx_version, build.distribution, build.opset = facts["version"], facts["dist"], facts["opset"]
    if not build.distribution:
        build.distribution = "onnx " + build.onnx_version + " (no installed distribution: a source tree)"


def resolve(spec: str, work: str) -> Build:
    """The build that `spec` names; raises BuildError when it is none."""
    os.makedirs(work, exist_ok=True)
    project_python = os.path.join(ROOT, ".venv", "bin", "python")
    if spec == "pinned":
        build = Build(spec, "pinned", python=project_python if os.path.exists(project_python) else sys.executable)
    elif spec.endswith(".whl"):
        if not os.path.isfile(spec):
            raise BuildError(f"{spec}: no such wheel file")
        build = Build(spec, "wheel", python=sys.executable, pythonpath=_install_wheel(os.path.abspath(spec), work))
    elif os.path.isdir(spec):
        if os.path.isfile(os.path.join(spec, "corpus.json")):
            return _corpus_build(spec)
        if os.path.exists(os.path.join(spec, "bin", "python")):
            build = Build(spec, "venv", python=os.path.join(os.path.abspath(spec), "bin", "python"))
        elif os.path.isfile(os.path.join(spec, "onnx", "__init__.py")):
            build = Build(spec, "checkout", python=sys.executable, pythonpath=os.path.abspath(spec))
        else:
            raise BuildError(f"{spec}: a folder that is neither a virtual environment (bin/python), an onnx "
                             "source checkout (onnx/__init__.py) nor a corpus written by parity corpus onnx-node "
                             "(corpus.json)")
    elif os.path.sep in spec or spec.startswith("."):
        raise BuildError(f"{spec}: no such file or folder")
    else:
        name = spec.split("==")[0].split(">")[0].split("<")[0].strip().lower()
        if name not in ("onnx", "onnx-weekly", "onnx_weekly"):
            raise BuildError(f"{spec}: a requirement must name onnx or onnx-weekly")
        wheel = _download(spec)
        build = Build(spec, "requirement", python=sys.executable, pythonpath=_install_wheel(wheel, work))
    _probe(build)
    return build


def _corpus_build(folder: str) -> Build:
    with open(os.path.join(folder, "corpus.json")) as f:
        try:
            meta = json.load(f)
        except ValueError as error:
            raise BuildError(f"{folder}/corpus.json: {error}") from None
    version = str(meta.get("onnx_version", ""))
    return Build(folder, "corpus", onnx_version=version, distribution="onnx " + version + " (a written corpus)",
                 corpus=os.path.abspath(folder))


def write_corpus(build: Build, out: str, name_filter: str | None) -> None:
    """Writes the build's node corpus into `out` (kept when already written
    from the same build: the stamp is the build's description)."""
    if build.kind == "corpus":
        return
    stamp = os.path.join(out, ".spec-diff-build")
    want = json.dumps({"build": build.describe(), "pythonpath": build.pythonpath, "filter": name_filter},
                      sort_keys=True)
    if os.path.isfile(stamp) and open(stamp).read() == want:
        build.corpus = out
        return
    argv = [build.python, WRITE_CORPUS, "--out", out, "--min-cases", "1"]
    if name_filter:
        argv += ["--filter", name_filter]
    _run(argv, f"{build.spec}: writing its node corpus", env=build.env())
    with open(stamp, "w") as f:
        f.write(want)
    build.corpus = out


SCHEMA_SCRIPT = (
    "import json, onnx.defs\n"
    "table = {}\n"
    "for s in onnx.defs.get_all_schemas_with_history():\n"
    "    table.setdefault((s.domain or 'ai.onnx') + ':' + s.name, []).append(s.since_version)\n"
    "print(json.dumps({k: sorted(set(v)) for k, v in table.items()}))\n")


def schema_table(python: str, env: dict | None, what: str) -> dict:
    """{"domain:op": [since versions]} of the onnx that `python` imports."""
    out = _run([python, "-c", SCHEMA_SCRIPT], f"{what}: reading its operator schemas", env=env, timeout=120)
    return json.loads(out.strip().splitlines()[-1])
