"""Does `parity eval` judge ONNX's on-disk node corpus as ONNX's own backend
runner would? For every case folder it runs the reference adapter through
parity-worker, compares the outputs with the case's expected outputs the way
onnx's runner does for a test loaded from disk (Runner.assert_similar_outputs
of the pinned onnx, with the rtol/atol onnx's loader gives the case), and
sets that verdict beside the one `parity eval --out DIR` wrote to
DIR/results.jsonl.

    runner_agreement.py --corpus build/corpus/onnx_node_1.22 --eval DIR
                        [--build build] [--allow cases/onnx_node/runner_agreement.json]
                        [--findings spec/findings.md] [--json FILE] [--filter TEXT]

Prints the counts (cases, both pass, both fail, both not run) and every
disagreement with both sides' reasons. Exit status: 0 when every
disagreement is in the allow-list and every allow-list entry still
disagrees as it says; 1 otherwise; 2 on bad arguments or a bad allow-list.
How onnx's runner compares is written down in cases/onnx_node/README.md.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# onnx's loader (onnx/backend/test/loader/__init__.py, load_model_tests) gives
# a case these unless its folder holds a data.json with "rtol"/"atol".
LOADER_RTOL = 1e-3
LOADER_ATOL = 1e-7

# How a parity state counts here: the runner has no MISTRUSTED (it is a match
# that proves little) and no UNSUPPORTED (a backend that cannot run a case
# raises, which the runner reports as a test error).
PARITY_CLASS = {"PASS": "pass", "MISTRUSTED": "pass", "XPASS": "pass",
                "FAIL": "fail", "XFAIL": "fail", "UNSUPPORTED": "not run"}


class UsageError(Exception):
    """Bad arguments or a bad allow-list: exit status 2."""


def case_folders(corpus, name_filter):
    if not os.path.isdir(corpus):
        raise UsageError(f"--corpus {corpus}: not a folder")
    names = sorted(n for n in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, n, "model.onnx")))
    if name_filter:
        names = [n for n in names if name_filter in n]
    if not names:
        raise UsageError(f"--corpus {corpus}: no case folder (one holding model.onnx)" +
                         (f" whose name contains '{name_filter}'" if name_filter else ""))
    return [(n, os.path.join(corpus, n)) for n in names]


def loader_tolerance(folder):
    """(rtol, atol) as onnx's loader reads them for a folder with model.onnx."""
    rtol, atol = LOADER_RTOL, LOADER_ATOL
    data_json = os.path.join(folder, "data.json")
    if os.path.exists(data_json):
        with open(data_json) as f:
            data = json.load(f)
        rtol, atol = data.get("rtol", rtol), data.get("atol", atol)
    return rtol, atol


def read_parity_results(eval_dir):
    path = os.path.join(eval_dir, "results.jsonl")
    if not os.path.isfile(path):
        raise UsageError(f"--eval {eval_dir}: no results.jsonl (run `parity eval CORPUS --out {eval_dir}` first)")
    results = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise UsageError(f"{path}:{number}: not JSON ({e})") from e
            results[r["case"]] = r
    return results


def finding_ids(findings_path):
    """Ids of spec/findings.md: each finding opens with **ID. in bold."""
    with open(findings_path) as f:
        return set(re.findall(r"^\*\*([A-Z][A-Z0-9]*-[A-Z0-9]+)\.", f.read(), flags=re.M))


def read_allow_list(path, known_ids):
    """{case: entry}; every entry names both verdicts and a reason that cites
    a finding of spec/findings.md by its id."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}: not JSON ({e})") from e
    cases = data.get("cases")
    if not isinstance(cases, dict):
        raise UsageError(f'{path}: "cases" must be an object of case name -> entry')
    for name, entry in cases.items():
        where = f'{path}: "cases"."{name}"'
        if not isinstance(entry, dict) or set(entry) != {"parity", "runner", "reason"}:
            raise UsageError(f'{where}: expected exactly the keys "parity", "runner" and "reason"')
        cited = set(re.findall(r"\b([A-Z][A-Z0-9]*-[A-Z0-9]+)\b", entry["reason"]))
        if not cited & known_ids:
            raise UsageError(f"{where}: the reason cites no finding of spec/findings.md by its id "
                             f"(found {sorted(cited) or 'none'})")
    return cases


class ReferenceWorker:
    """parity-worker hosting the reference adapter; restarted if it dies."""

    def __init__(self, build):
        sys.path[:0] = [os.path.join(build, "python"), os.path.join(ROOT, "harness", "python")]
        import parity_worker_pb2 as pb  # noqa: PLC0415  (generated into the build folder)
        from parity_worker_client import WorkerClient  # noqa: PLC0415
        self.pb, self._client_class = pb, WorkerClient
        self.command = [os.path.join(build, "parity-worker"),
                        os.path.join(build, "adapters", "libparity_adapter_reference.so")]
        for path in self.command:
            if not os.path.exists(path):
                raise UsageError(f"{path} is missing: build parity-worker and parity_adapter_reference")
        self.client = None

    def _start(self):
        self.client = self._client_class(self.command, timeout=120)
        hello = self.client.hello()
        if hello.status.code != self.pb.OK:
            raise RuntimeError(f"parity-worker refused hello: {hello.status.message}\n{self.client.log()}")

    def run(self, folder, model_bytes, inputs):
        """The outputs (pb.Value) of one data set, or (code name, message) when
        the adapter refused the model or the run."""
        from parity_worker_client import WorkerDied  # noqa: PLC0415
        if self.client is None:
            self._start()
        try:
            created = self.client.create(model_bytes, case_name=os.path.basename(folder), model_dir=folder)
            if created.status.code != self.pb.OK:
                return None, (self.pb.StatusCode.Name(created.status.code), created.status.message)
            session = created.session.session_id
            ran = self.client.run(session, inputs)
            self.client.release(session)
            if ran.status.code != self.pb.OK:
                return None, (self.pb.StatusCode.Name(ran.status.code), ran.status.message)
            return list(ran.run.outputs), None
        except WorkerDied as e:
            log = self.client.log()
            self.client.close()
            self.client = None
            return None, ("CRASH", f"{e}; worker log: {log[-500:]}")

    def close(self):
        if self.client is not None:
            self.client.shutdown()
            self.client.finish()


def worker_inputs(pb, graph, data_dir):
    """input_K.pb as protocol values named by graph input K, sent as the file's
    bytes (as `parity run` sends them). onnx's runner counts input_*.pb and
    reads file K against graph.input[K]'s type; so does this."""
    count = len(glob.glob(os.path.join(data_dir, "input_*.pb")))
    values = []
    for k in range(count):
        with open(os.path.join(data_dir, f"input_{k}.pb"), "rb") as f:
            data = f.read()
        declared = graph.input[k]
        value = pb.Value(name=declared.name)
        if declared.type.HasField("sequence_type"):
            value.sequence.ParseFromString(data)
        elif declared.type.HasField("optional_type"):
            value.optional.ParseFromString(data)
        else:
            value.tensor.ParseFromString(data)
        values.append(value)
    return values


def runner_value(value):
    """A worker output as the Python object a backend hands onnx's runner,
    made by the same numpy_helper functions the runner's _load_proto uses
    for the expected side."""
    from onnx import numpy_helper  # noqa: PLC0415
    if value.HasField("sequence"):
        return numpy_helper.to_list(value.sequence)
    if value.HasField("optional"):
        return numpy_helper.to_optional(value.optional)
    return numpy_helper.to_array(value.tensor)


def expected_outputs(runner, graph, data_dir):
    """output_*.pb read by onnx's runner itself (Runner._load_proto: file K
    against graph.output[K]'s type; a map type is skipped with a message)."""
    count = len(glob.glob(os.path.join(data_dir, "output_*.pb")))
    outputs = []
    for k in range(count):
        runner._load_proto(None, os.path.join(data_dir, f"output_{k}.pb"), outputs, graph.output[k].type)
    return outputs


def bfloat16_plain_verdict(expected, actual, rtol, atol):
    """onnx 1.22.0's runner compared bfloat16 outputs with assert_allclose on
    the bfloat16 arrays and the case's rtol (runner/__init__.py line 228);
    1.23 casts them to float32 and takes rtol >= 2**-6. Whether the 1.22 way
    passes, for the tensors of dtype bfloat16 only; None when there is none."""
    import numpy as np  # noqa: PLC0415
    pairs = [(e, a) for e, a in zip(expected, actual, strict=False)
             if getattr(e, "dtype", None) is not None and e.dtype.name == "bfloat16"
             and getattr(a, "dtype", None) is not None and a.dtype == e.dtype and a.shape == e.shape]
    if not pairs:
        return None
    try:
        for e, a in pairs:
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    except AssertionError:
        return "fail"
    return "pass"


def judge_case(runner, worker, folder):
    """The runner's verdict on one case: {"verdict": pass|fail|error|not run, "reason", ...}."""
    import onnx  # noqa: PLC0415
    rtol, atol = loader_tolerance(folder)
    model = onnx.load(os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "model.onnx"), "rb") as f:
        model_bytes = f.read()
    result = {"rtol": rtol, "atol": atol}
    data_dirs = sorted(glob.glob(os.path.join(folder, "test_data_set*")))
    for data_dir in data_dirs:
        outputs, refused = worker.run(folder, model_bytes, worker_inputs(worker.pb, model.graph, data_dir))
        if refused is not None:
            code, message = refused
            # UNSUPPORTED: the reference declares it cannot; the runner would
            # see the backend raise. Any other code is a failed run.
            result.update(verdict="not run" if code == "UNSUPPORTED" else "fail",
                          reason=f"{os.path.basename(data_dir)}: reference {code}: {message}")
            return result
        actual = [runner_value(v) for v in outputs]
        expected = expected_outputs(runner, model.graph, data_dir)
        plain = bfloat16_plain_verdict(expected, actual, rtol, atol)
        if plain is not None and result.get("bfloat16_onnx_1_22") != "fail":
            result["bfloat16_onnx_1_22"] = plain
        try:
            runner.assert_similar_outputs(expected, actual, rtol=rtol, atol=atol, model_dir=folder)
        except AssertionError as e:
            result.update(verdict="fail", reason=f"{os.path.basename(data_dir)}: {_squeeze(str(e))}")
            return result
        except Exception as e:  # noqa: BLE001  (the runner would report the test as an error)
            where = traceback.extract_tb(e.__traceback__)[-1]
            result.update(verdict="error", reason=f"{os.path.basename(data_dir)}: {type(e).__name__}: "
                          f"{_squeeze(str(e))} (at {os.path.basename(where.filename)}:{where.lineno})")
            return result
    result.update(verdict="pass", reason=f"{len(data_dirs)} data set(s) within rtol {rtol}, atol {atol}")
    return result


def _squeeze(text, limit=300):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def compare(cases, parity, runner, worker):
    rows = []
    for name, folder in cases:
        r = parity.get(name)
        parity_state = r["state"] if r else "MISSING"
        side = judge_case(runner, worker, folder)
        rows.append({"case": name, "parity": parity_state, "parity_class": PARITY_CLASS.get(parity_state, "other"),
                     "parity_message": (r or {}).get("message", ""), "runner": side["verdict"], **side})
    return rows


def report(rows, allow, out):
    agree = {"pass": 0, "fail": 0, "not run": 0}
    disagreements, listed = [], []
    for row in rows:
        if row["parity_class"] == row["runner"] and row["runner"] in agree:
            agree[row["runner"]] += 1
        elif row["case"] in allow:
            listed.append(row)
        else:
            disagreements.append(row)
    stale = []
    by_case = {row["case"]: row for row in rows}
    for name, entry in sorted(allow.items()):
        row = by_case.get(name)
        if row is None:
            continue  # not in this selection (--filter)
        if row in listed and (entry["parity"], entry["runner"]) == (row["parity"], row["runner"]):
            continue
        stale.append((name, entry, row))
    plain_differs = [row["case"] for row in rows
                     if row.get("bfloat16_onnx_1_22") and row["runner"] in ("pass", "fail")
                     and row["bfloat16_onnx_1_22"] != row["runner"]]

    print(f"cases: {len(rows)}", file=out)
    print(f"both pass: {agree['pass']}", file=out)
    print(f"both fail: {agree['fail']}", file=out)
    print(f"both not run: {agree['not run']}", file=out)
    print(f"disagreements: {len(disagreements) + len(listed)} ({len(listed)} in the allow-list)", file=out)
    for row in disagreements + listed:
        mark = "allowed" if row in listed else "NOT ALLOWED"
        print(f"  {row['case']}: parity {row['parity']}, runner {row['runner']} [{mark}]", file=out)
        if row["parity_message"]:
            print(f"    parity: {_squeeze(row['parity_message'])}", file=out)
        print(f"    runner: {row['reason']}", file=out)
        if row in listed:
            print(f"    allowed because: {allow[row['case']]['reason']}", file=out)
    for name, entry, row in stale:
        print(f"  STALE allow-list entry {name}: lists parity {entry['parity']}, runner {entry['runner']}; "
              f"now parity {row['parity']}, runner {row['runner']}", file=out)
    print(f"bfloat16 cases onnx 1.22.0's runner (assert_allclose on bfloat16, rtol {LOADER_RTOL}) "
          f"judges otherwise than 1.23's: {len(plain_differs)}" + (f" ({', '.join(plain_differs)})" if plain_differs else ""),
          file=out)
    return not disagreements and not stale


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="folder of case folders (build/corpus/onnx_node_1.22)")
    parser.add_argument("--eval", required=True, dest="eval_dir", help="the --out DIR of `parity eval` on the corpus")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="build folder with parity-worker")
    parser.add_argument("--allow", default=os.path.join(HERE, "runner_agreement.json"), help="allow-list file")
    parser.add_argument("--findings", default=os.path.join(ROOT, "spec", "findings.md"))
    parser.add_argument("--filter", default="", help="only cases whose name contains this text")
    parser.add_argument("--json", help="write every case's two verdicts to this file")
    args = parser.parse_args(argv)
    try:
        cases = case_folders(args.corpus, args.filter)
        parity = read_parity_results(args.eval_dir)
        allow = read_allow_list(args.allow, finding_ids(args.findings))
        worker = ReferenceWorker(os.path.abspath(args.build))
    except UsageError as e:
        print(f"runner_agreement: {e}", file=sys.stderr)
        return 2
    from onnx.backend.test.runner import Runner  # noqa: PLC0415
    try:
        rows = compare(cases, parity, Runner, worker)
    finally:
        worker.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if report(rows, allow, sys.stdout) else 1


if __name__ == "__main__":
    sys.exit(main())
