"""Times the reference on the real-size cases (cases/real_size/write_cases.py)
against onnx's Python reference (onnx.reference.ReferenceEvaluator, float32
in numpy), side by side, in one run.

  timed_run.py [--cases DIR] [--parity PATH] [--json FILE]

Per case, each in a fresh process: `parity eval` with --threads 1, `parity
eval` with the default thread count (one per core), and onnx's evaluator.
Printed per case and in total: the run's seconds (onnx's: its run call;
parity's: results.jsonl "run_ms", which also holds the comparison of the
outputs with the expected ones and their digest; build/parity_bench times the
Run alone) and the whole process's, the ratio of parity's run time to onnx's, the peak resident memory of each process (its
ru_maxrss, from wait4) next to the bytes of the case's inputs and outputs,
and the GFLOP/s of parity's run.

Checks, each failing the exit status:
- `parity eval` ends PASS against the expected outputs `parity expect` wrote;
- the outputs of --threads 1 and of the default are the same bits (their
  "output_sha256" in results.jsonl), and are the case's output_K.pb (so the
  file compared with onnx below is what this parity computes);
- onnx's float32 outputs agree with parity's in meaning: the largest absolute
  difference is at most 1e-3 of the largest magnitude of parity's output
  (see AGREEMENT_BOUND). A float32 reference is not the ground truth, so this
  is a check of meaning, not of conformance.

Exit status: 0 all checks passed, 1 some failed, 2 bad arguments or cases missing.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# onnx's float32 result carries the rounding of every float32 sum: of order
# sqrt(K) * 2^-24 of the sums' scale for K terms (K <= 1024 here), far below
# 1e-3 of the output's largest magnitude. A wrong meaning (a transposed
# operand, a missing scale, a mask on the wrong side) differs by the order of
# the values themselves.
AGREEMENT_BOUND = 1e-3
MIB = 1024.0 * 1024.0


# Runs a command for measured(): a fresh, small Python process that starts
# the command and waits for it with wait4. The command's peak resident memory
# (ru_maxrss) starts from the memory of the process that started it (Linux
# carries the starter's high-water mark across fork or vfork and exec), so the
# starter must not be this script, which holds whole tensors by then.
SPAWNER = """
import json, os, sys, time
log = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_DUP2, log, 1), (os.POSIX_SPAWN_DUP2, log, 2)])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"exit": os.waitstatus_to_exitcode(status), "process_s": time.perf_counter() - start,
                  "peak_rss_mib": usage.ru_maxrss / 1024.0}))
"""


def measured(command: list, log_path: str) -> dict:
    """Runs `command` to its end with its output in `log_path`; returns the
    exit code, wall-clock seconds and the process's peak resident memory
    (ru_maxrss, which Linux gives in KiB)."""
    command = [os.path.abspath(command[0])] + command[1:]
    spawner = subprocess.run([sys.executable, "-c", SPAWNER, log_path] + command, capture_output=True, text=True)
    if spawner.returncode != 0:
        raise RuntimeError(f"cannot start {command[0]}: {spawner.stderr.strip()}")
    return json.loads(spawner.stdout)


def measurement_floor(work: str) -> float:
    """The smallest peak the measurement can report: that of /bin/true."""
    return measured(["/bin/true"], os.path.join(work, "true.log"))["peak_rss_mib"]


def read_tensor(path: str) -> np.ndarray:
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return numpy_helper.to_array(proto)


def case_files(case_dir: str, kind: str) -> list:
    """test_data_set_0/<kind>_K.pb in order of K."""
    set_dir = os.path.join(case_dir, "test_data_set_0")
    files = []
    while os.path.isfile(os.path.join(set_dir, f"{kind}_{len(files)}.pb")):
        files.append(os.path.join(set_dir, f"{kind}_{len(files)}.pb"))
    return files


def sha256_of_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_parity(parity: str, case_dir: str, threads: int | None, work: str) -> dict:
    """`parity eval` on one case in its own process; threads None: the default."""
    label = f"t{threads or 'default'}"
    out = os.path.join(work, f"eval-{os.path.basename(case_dir)}-{label}")
    command = [parity, "eval", case_dir, "--out", out, "--quiet", "--jobs", "1", "--timeout", "3600"]
    if threads is not None:
        command += ["--threads", str(threads)]
    result = measured(command, out + ".log")
    result["command"] = " ".join(command)
    lines = []
    if os.path.isfile(os.path.join(out, "results.jsonl")):
        with open(os.path.join(out, "results.jsonl")) as f:
            lines = [json.loads(line) for line in f if line.strip()]
    if len(lines) != 1:
        with open(out + ".log", errors="replace") as f:
            result["error"] = f"parity eval wrote {len(lines)} result lines (exit {result['exit']}): {f.read()[-2000:]}"
        return result
    line = lines[0]
    result.update(state=line["state"], message=line.get("message", ""), run_s=line["run_ms"] / 1000.0,
                  digests=line.get("output_sha256", {}).get("test_data_set_0", []))
    with open(os.path.join(out, "summary.json")) as f:
        result["threads"] = json.load(f).get("compute_threads")
    return result


def onnx_child(case_dir: str, out_dir: str) -> int:
    """In a process of its own: onnx's ReferenceEvaluator on the case's inputs;
    writes its outputs as output_K.npy and prints its times as JSON."""
    from onnx.reference import ReferenceEvaluator

    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    feeds = {i.name: read_tensor(p) for i, p in zip(model.graph.input, case_files(case_dir, "input"))}
    start = time.perf_counter()
    session = ReferenceEvaluator(model)
    loaded = time.perf_counter()
    outputs = session.run(None, feeds)
    ran = time.perf_counter()
    for k, array in enumerate(outputs):
        np.save(os.path.join(out_dir, f"output_{k}.npy"), array)
    print(json.dumps({"load_s": loaded - start, "run_s": ran - loaded}))
    return 0


def run_onnx(case_dir: str, work: str) -> dict:
    out = os.path.join(work, f"onnx-{os.path.basename(case_dir)}")
    os.makedirs(out)
    result = measured([sys.executable, os.path.abspath(__file__), "--onnx-child", case_dir, out], out + ".log")
    with open(out + ".log", errors="replace") as f:
        text = f.read()
    try:
        result.update(json.loads(text.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        result["error"] = f"onnx's ReferenceEvaluator failed (exit {result['exit']}): {text[-2000:]}"
        return result
    result["outputs"] = [np.load(os.path.join(out, f"output_{k}.npy")) for k in range(len(case_files(case_dir, "output")))]
    return result


def compare_outputs(theirs: np.ndarray, ours: np.ndarray) -> dict:
    """onnx's output against parity's: the largest absolute difference, the
    largest relative one where parity's magnitude is at least 1e-3 of its
    largest (relative errors of values near zero say nothing), that absolute
    difference over the largest magnitude, and the verdict."""
    if theirs.shape != ours.shape:
        return {"agree": False, "why": f"shapes differ: onnx {list(theirs.shape)}, parity {list(ours.shape)}"}
    a, b = theirs.astype(np.float64), ours.astype(np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return {"agree": False, "why": "an output holds inf or NaN"}
    diff = np.abs(a - b)
    scale = float(np.abs(b).max()) if b.size else 0.0
    max_abs = float(diff.max()) if diff.size else 0.0
    big = np.abs(b) >= 1e-3 * scale
    max_rel = float((diff[big] / np.abs(b[big])).max()) if big.any() and scale > 0 else 0.0
    normwise = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    return {"agree": normwise <= AGREEMENT_BOUND, "max_abs": max_abs, "max_rel": max_rel, "normwise": normwise,
            "why": "" if normwise <= AGREEMENT_BOUND else f"max abs difference {max_abs:.3g} is {normwise:.3g} "
                                                          f"of the output's largest magnitude, over {AGREEMENT_BOUND:g}"}


def measure_case(parity: str, case_dir: str, flops: float | None, work: str) -> dict:
    name = os.path.basename(case_dir)
    inputs, outputs = case_files(case_dir, "input"), case_files(case_dir, "output")
    record = {"case": name, "flops": flops, "problems": []}
    if not outputs:
        record["problems"].append("the case has no expected output (write it with write_cases.py)")
        return record
    expected = [read_tensor(p) for p in outputs]
    record["io_mib"] = (sum(read_tensor(p).nbytes for p in inputs) + sum(e.nbytes for e in expected)) / MIB
    record["one_thread"] = run_parity(parity, case_dir, 1, work)
    record["default"] = run_parity(parity, case_dir, None, work)
    record["onnx"] = run_onnx(case_dir, work)
    for key in ("one_thread", "default", "onnx"):
        if "error" in record[key]:
            record["problems"].append(record[key]["error"])
    if record["problems"]:
        return record
    files = [sha256_of_file(p) for p in outputs]
    for key in ("one_thread", "default"):
        r = record[key]
        if r["state"] != "PASS":
            record["problems"].append(f"parity eval ({key}) ended {r['state']}: {r['message']}")
        if r["digests"] != files:
            record["problems"].append(
                f"parity eval ({key}) computed outputs whose sha256 {r['digests']} are not the case's output files' "
                f"{files}: the files come from another build (rewrite them with write_cases.py)")
    if record["one_thread"]["digests"] != record["default"]["digests"]:
        record["problems"].append("--threads 1 and the default thread count computed different bits")
    record["agreement"] = [compare_outputs(t, e) for t, e in zip(record["onnx"]["outputs"], expected)]
    for k, verdict in enumerate(record["agreement"]):
        if not verdict["agree"]:
            record["problems"].append(f"output {k}: onnx and parity disagree: {verdict['why']}")
    del record["onnx"]["outputs"]
    return record


def print_case(record: dict) -> None:
    flops = record.get("flops")
    print(f"\n{record['case']}" + (f" ({flops / 1e9:.2f} GFLOP" if flops else " (") +
          f", inputs+outputs {record.get('io_mib', 0):.1f} MiB)")
    onnx_run = record.get("onnx", {}).get("run_s")
    for key, label in (("one_thread", "parity eval --threads 1"), ("default", "parity eval (default)")):
        r = record.get(key)
        if not r or "run_s" not in r:
            continue
        if key == "default" and r.get("threads"):
            label = f"parity eval ({r['threads']} threads)"
        rate = f"  {flops / r['run_s'] / 1e9:7.2f} GFLOP/s" if flops and r["run_s"] > 0 else ""
        ratio = f"  parity/onnx {r['run_s'] / onnx_run:7.2f}" if onnx_run else ""
        print(f"  {label:28s} run {r['run_s']:9.3f} s  process {r['process_s']:8.3f} s  "
              f"peak RSS {r['peak_rss_mib']:8.1f} MiB{rate}{ratio}  {r['state']}")
    o = record.get("onnx")
    if o and "run_s" in o:
        print(f"  {'onnx ReferenceEvaluator':28s} run {o['run_s']:9.3f} s  process {o['process_s']:8.3f} s  "
              f"peak RSS {o['peak_rss_mib']:8.1f} MiB")
    for k, a in enumerate(record.get("agreement", [])):
        if "max_abs" in a:
            print(f"  output {k}: onnx vs parity max abs {a['max_abs']:.3g}, max rel {a['max_rel']:.3g}, "
                  f"max abs / largest |parity| {a['normwise']:.3g}: {'agree' if a['agree'] else 'DISAGREE'}")
    if not record["problems"] and "default" in record:
        print(f"  outputs: the same bits with --threads 1 and the default (sha256 {record['default']['digests'][0][:16]}...)")
    for problem in record["problems"]:
        print(f"  PROBLEM: {problem}")


def print_total(records: list) -> None:
    done = [r for r in records if all(k in r and "run_s" in r[k] for k in ("one_thread", "default", "onnx"))]
    if not done:
        return
    total = {k: sum(r[k]["run_s"] for r in done) for k in ("one_thread", "default", "onnx")}
    process = {k: sum(r[k]["process_s"] for r in done) for k in ("one_thread", "default", "onnx")}
    peak = {k: max(r[k]["peak_rss_mib"] for r in done) for k in ("one_thread", "default", "onnx")}
    print(f"\ntotal over {len(done)} cases (inputs+outputs {sum(r['io_mib'] for r in done):.1f} MiB):")
    threads = done[0]["default"].get("threads")
    default_label = f"parity eval ({threads} threads)" if threads else "parity eval (default)"
    for k, label in (("one_thread", "parity eval --threads 1"), ("default", default_label),
                     ("onnx", "onnx ReferenceEvaluator")):
        ratio = f"  parity/onnx {total[k] / total['onnx']:7.2f}" if k != "onnx" and total["onnx"] > 0 else ""
        print(f"  {label:28s} run {total[k]:9.3f} s  process {process[k]:8.3f} s  "
              f"largest peak RSS {peak[k]:8.1f} MiB{ratio}")


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--onnx-child"]:
        return onnx_child(argv[1], argv[2])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=os.path.join(ROOT, "build", "corpus", "real_size"),
                        help="the folder write_cases.py wrote (default build/corpus/real_size)")
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"), help="the parity binary")
    parser.add_argument("--json", default=None, help="also write the measurements to this file")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"timed_run: {args.parity} is not an executable parity binary (see --parity)", file=sys.stderr)
        return 2
    manifest_path = os.path.join(args.cases, "corpus.json")
    if not os.path.isfile(manifest_path):
        print(f"timed_run: {manifest_path} is missing: write the cases first "
              f"(cases/real_size/write_cases.py --out {args.cases})", file=sys.stderr)
        return 2
    with open(manifest_path) as f:
        manifest = json.load(f)["cases"]

    records = []
    with tempfile.TemporaryDirectory(prefix="parity-real-size-") as work:
        print(f"peak RSS is each process's ru_maxrss; none reads below {measurement_floor(work):.1f} MiB here "
              "(the peak of /bin/true started the same way)")
        for name in sorted(manifest):
            case_dir = os.path.join(os.path.abspath(args.cases), name)
            if not os.path.isfile(os.path.join(case_dir, "model.onnx")):
                print(f"timed_run: {case_dir}/model.onnx is missing (corpus.json names the case)", file=sys.stderr)
                return 2
            record = measure_case(args.parity, case_dir, manifest[name].get("flops"), work)
            print_case(record)
            sys.stdout.flush()
            records.append(record)
    print_total(records)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    failed = [r["case"] for r in records if r["problems"]]
    print(f"\n{len(records) - len(failed)} of {len(records)} cases passed every check"
          + (f"; problems in {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
