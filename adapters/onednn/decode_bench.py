#!/usr/bin/env python3
"""oneDNN against ONNX Runtime on the decode benchmark of spec/aliasing.md
(cases/aliasing/decode_bench.py): the grouped-query decoder layer with a
4,096-position cache, a prefill of 16 tokens then 32 decode steps in one
session, in float32 and in bfloat16 (a variant written here: the same model
and inputs with every float tensor rounded to bfloat16, its expected outputs
from the reference), and the largest exported decoders of cases/models/.
Both adapters run in one invocation, one after the other, on the same
machine with the same thread count (`parity run --threads`; ONNX Runtime's
adapter uses one intra-op thread, so the default is 1).

Prints per adapter and case: session creation (load_ms_cold, of which the
backend's compile step), the first step (the prefill; for an exported
model, its first run) and the median of the later steps in ms (an exported
model runs its data set --steps times in one session), then the ratios
oneDNN / ONNX Runtime of the median step and of session creation.

  decode_bench.py [--parity build/parity] [--work DIR] [--threads N] [--repeats N] [--steps N]

Exit status: 0 printed, 1 a run did not pass on oneDNN, 2 no parity binary.
A case ONNX Runtime does not run is printed with its state and message.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "cases", "aliasing"))

import ml_dtypes  # noqa: E402

import alias_model  # noqa: E402
import stateful_writer  # noqa: E402
import valid_cases  # noqa: E402
import write_cases  # noqa: E402

ADAPTERS = ["onednn", "onnxruntime"]
MODELS = ["llama_decoder_opset24", "llama_decode_step_opset23"]


def in_bfloat16(graph) -> None:
    """`graph` in bfloat16: every float initializer and constant rounded
    once, every float value, input, output and Cast declared bfloat16."""
    for i, init in enumerate(graph.initializer):
        if init.data_type == TensorProto.FLOAT:
            rounded = numpy_helper.to_array(init).astype(ml_dtypes.bfloat16)
            graph.initializer[i].CopyFrom(numpy_helper.from_array(rounded, init.name))
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = TensorProto.BFLOAT16
    for node in graph.node:  # a Cast or a float constant made in the graph
        for attr in node.attribute:
            if attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.BFLOAT16
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == TensorProto.FLOAT:
                attr.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(attr.t).astype(ml_dtypes.bfloat16),
                                                        attr.t.name))


def to_bfloat16(case):
    """The float32 bench case with every float tensor rounded once to bfloat16.
    Its steps keep their carried inputs in their files (about 130 MB in all),
    so that the reference can run each step alone and every output has its
    error budget (spec/tolerance.md): a bfloat16 decoder layer is judged
    against a conventional bfloat16 run of the layer, not by the
    per-operator floor alone (ONEDNN-61)."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    in_bfloat16(model.graph)
    model.graph.name = case.name + "_bfloat16"

    def rounded(values):
        return {k: v.astype(ml_dtypes.bfloat16) if v.dtype == np.float32 else v for k, v in values.items()}

    return alias_model.StatefulCase(case.name + "_bfloat16", case.operator, case.feature + " (bfloat16)",
                                    [t for t in case.tags if t != "float32"] + ["bfloat16"], model, case.carry,
                                    rounded(case.initial), [rounded(s) for s in case.steps],
                                    prune_carried=False)


def write_bench_cases(parity: str, corpus: str) -> list:
    subprocess.run([sys.executable, os.path.join(ROOT, "cases", "aliasing", "write_cases.py"), "--out", corpus,
                    "--parity", parity, "--bench", "--no-check"], check=True, stdout=subprocess.DEVNULL)
    f32 = os.path.join(corpus, "bench", "gqa_decode_4096")
    bf16_case = to_bfloat16(valid_cases.bench_cases()[0])
    bf16 = os.path.join(corpus, "bench", bf16_case.name)
    scratch = os.path.join(corpus, "scratch")
    os.makedirs(scratch, exist_ok=True)
    stateful_writer.write_stateful(bf16_case, bf16, parity, scratch, write_cases.stateful_meta(bf16_case, "bench"))
    return [f32, bf16]


def write_steps(out: str, model: bytes, meta: dict, files: dict, steps: int) -> str:
    """Case folder `out`, written anew: `model` (the bytes of model.onnx),
    `meta` as case.json with "steps" of nothing carried, and the data set
    `files` (file name -> bytes) as each of `steps` steps, so that the
    first run, which makes the kernels of shapes not known at creation, is
    apart from the median of the others."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model)
    with open(os.path.join(out, "case.json"), "w") as f:
        json.dump(dict(meta, steps={"carry": []}), f, indent=1)
    for step in range(steps):
        os.makedirs(os.path.join(out, f"test_data_set_{step}"))
        for file, data in files.items():
            with open(os.path.join(out, f"test_data_set_{step}", file), "wb") as f:
                f.write(data)
    return out


def read_case(model_case: str) -> tuple:
    """(model.onnx's bytes, case.json, test_data_set_0's files by name) of a case folder."""
    with open(os.path.join(model_case, "model.onnx"), "rb") as f:
        model = f.read()
    with open(os.path.join(model_case, "case.json")) as f:
        meta = json.load(f)
    data = os.path.join(model_case, "test_data_set_0")
    files = {}
    for file in sorted(os.listdir(data)):
        with open(os.path.join(data, file), "rb") as f:
            files[file] = f.read()
    return model, meta, files


def repeated_steps(model_case: str, corpus: str, steps: int) -> str:
    """An exported model's case as `steps` steps of one session on its one data set."""
    return write_steps(os.path.join(corpus, "models", os.path.basename(model_case)), *read_case(model_case), steps)


def bfloat16_model(parity: str, model_case: str, corpus: str, steps: int) -> str:
    """An exported model in bfloat16: every float initializer and input
    rounded once, every float value declared bfloat16, its expected outputs
    from the reference (`parity expect`), judged by the error budget of the
    whole graph (spec/tolerance.md) instead of the float32 model's declared
    tolerance; run as repeated_steps runs it."""
    model_bytes, meta, files = read_case(model_case)
    model = onnx.ModelProto()
    model.ParseFromString(model_bytes)
    in_bfloat16(model.graph)
    model.graph.name += "_bfloat16"
    # Its expected outputs are the reference's: the float32 run's tolerance
    # gives way to the error budget (spec/tolerance.md).
    meta["source"] = "reference"
    meta.pop("tolerance", None)
    meta["tags"] = [t for t in meta.get("tags", []) if t != "float32"] + ["bfloat16"]
    meta["why"] = f"{os.path.basename(model_case)} in bfloat16 (decode_bench.py): " + meta.get("why", "")
    inputs = {}
    for file, data in files.items():
        if not file.startswith("input_"):
            continue
        tensor = TensorProto()
        tensor.ParseFromString(data)
        if tensor.data_type == TensorProto.FLOAT:
            tensor = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(ml_dtypes.bfloat16), tensor.name)
        inputs[file] = tensor.SerializeToString()
    out = write_steps(os.path.join(corpus, "models", os.path.basename(model_case) + "_bfloat16"),
                      model.SerializeToString(), meta, inputs, steps)
    subprocess.run([parity, "expect", out], check=True, stdout=subprocess.DEVNULL)
    return out


def run(parity: str, adapter: str, case_dir: str, out: str, threads: int, repeats: int) -> dict:
    subprocess.run([parity, "run", "--adapter", adapter, "--cases", case_dir, "--out", out, "--fresh", "--jobs", "1",
                    "--threads", str(threads), "--warm-repeats", str(repeats), "--state-readback", "last",
                    "--progress", "quiet"], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "results.jsonl")) as f:
        return json.loads(f.readline())


def summary(result: dict) -> dict:
    steps = result.get("steps") or []
    if steps:
        prefill, decode = steps[0]["run_ms"], statistics.median(s["run_ms"] for s in steps[1:])
    else:
        prefill, decode = result.get("run_ms"), None
    return {"state": result["state"], "message": result.get("message", ""), "create": result.get("load_ms_cold"),
            "compile": result.get("compile_ms_cold"), "prefill": prefill, "decode": decode,
            "placement": result.get("placement", {})}


def fmt(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "onednn-decode-bench"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=10, help="warm repeats of each session creation")
    parser.add_argument("--steps", type=int, default=20, help="runs of each exported model in one session")
    parser.add_argument("--in-process-only", action="store_true",
                        help="only the exported models' step in a loop inside one process")
    parser.add_argument("--rounds", type=int, default=24, help="alternating rounds of the in-process loop")
    args = parser.parse_args(argv)
    if not os.access(args.parity, os.X_OK):
        print(f"decode_bench: no parity binary at {args.parity}", file=sys.stderr)
        return 2
    corpus = os.path.join(args.work, "corpus")
    cases = [] if args.in_process_only else write_bench_cases(args.parity, corpus)  # writes `corpus` anew
    bfloat16_models = [bfloat16_model(args.parity, os.path.join(ROOT, "cases", "models", m), corpus, args.steps)
                       for m in MODELS]
    if args.in_process_only:
        in_process(args.parity, args.threads, bfloat16_models, args.rounds)
        return 0
    cases += [repeated_steps(os.path.join(ROOT, "cases", "models", m), corpus, args.steps) for m in MODELS]
    cases += bfloat16_models
    failed = False
    # ONNX Runtime's float32 rows by case, the yardstick of the bfloat16 ones.
    onnxruntime_float32 = {}
    print(f"threads {args.threads}; times in ms (noisy on a shared machine)")
    print(f"{'case':<34} {'adapter':<12} {'state':<12} {'create':>9} {'compile':>9} {'prefill/run':>11} "
          f"{'decode med':>10}  placement")
    for case_dir in cases:
        name = os.path.basename(case_dir)
        rows = {}
        for adapter in ADAPTERS:
            rows[adapter] = summary(run(args.parity, adapter, case_dir, os.path.join(args.work, adapter, name),
                                        args.threads, args.repeats))
            r = rows[adapter]
            print(f"{name:<34} {adapter:<12} {r['state']:<12} {fmt(r['create']):>9} {fmt(r['compile']):>9} "
                  f"{fmt(r['prefill']):>11} {fmt(r['decode']):>10}  {r['placement']}")
            if r["state"] not in ("PASS", "MISTRUSTED"):
                print(f"{'':<34} {'':<12} {r['message'][:300]}")
                failed |= adapter == "onednn"
        a, b = rows["onednn"], rows["onnxruntime"]
        if a["decode"] and b["decode"] and b["state"] == "PASS":
            print(f"{name:<34} median step oneDNN / ONNX Runtime = {a['decode'] / b['decode']:.2f}; "
                  f"session creation {a['create'] / b['create']:.2f}")
            onnxruntime_float32[name] = b
        elif a["decode"] and name.endswith("_bfloat16") and name[:-len("_bfloat16")] in onnxruntime_float32:
            # ONNX Runtime's CPU provider has no bfloat16 MatMul (ONEDNN-62): the
            # case in bfloat16 on oneDNN against the fastest form ONNX Runtime
            # runs, its float32 one.
            print(f"{name:<34} median step oneDNN bfloat16 / ONNX Runtime float32 = "
                  f"{a['decode'] / onnxruntime_float32[name[:-len('_bfloat16')]]['decode']:.2f}")
    in_process(args.parity, args.threads, bfloat16_models, args.rounds)
    return 1 if failed else 0


def in_process(parity: str, threads: int, bfloat16_models: list, rounds: int = 24, runs: int = 500,
               window: float = 0.1) -> None:
    """The exported models' step in a loop inside one process each, without
    the workers around it: the oneDNN adapter's run through parity_bench's
    AdapterRun (with the workers' malloc setting, spec/protocol/README.md)
    and ONNX Runtime's InferenceSession.run, on the same inputs. The two
    alternate, round by round, and each round gives a ratio: on a shared
    machine the load changes within seconds, so a ratio of two measurements
    taken minutes apart says more about the load than about the adapters.
    A model in bfloat16 (bfloat16_model) runs on oneDNN only, against ONNX
    Runtime's float32 run of the same model in the same round."""
    import onnxruntime
    bench = os.path.join(os.path.dirname(parity), "parity_bench")
    if not os.access(bench, os.X_OK):
        print(f"\nin one process: {bench} is not built")
        return
    dirs = [os.path.join(ROOT, "cases", "models", m) for m in MODELS]
    env = dict(os.environ, PARITY_THREADS=str(threads), PARITY_BENCH_CASES=":".join(dirs + bfloat16_models),
               PARITY_BENCH_ADAPTER=os.path.join(os.path.dirname(parity), "adapters", "libparity_adapter_onednn.so"))
    env.setdefault("GLIBC_TUNABLES", "glibc.malloc.tcache_count=1024")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    sessions = {}
    for d in dirs:
        session = onnxruntime.InferenceSession(os.path.join(d, "model.onnx"), options,
                                               providers=["CPUExecutionProvider"])
        feeds = {}
        for i, value in enumerate(session.get_inputs()):
            tensor = TensorProto()
            with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            feeds[value.name] = numpy_helper.to_array(tensor)
        for _ in range(100):
            session.run(None, feeds)
        sessions[os.path.basename(d)] = (session, feeds)
    names = list(sessions) + [os.path.basename(d) for d in bfloat16_models]
    onednn, ort, ratios = ({name: [] for name in names} for _ in range(3))
    for _ in range(rounds):
        out = subprocess.run([bench, "--benchmark_filter=AdapterRun", f"--benchmark_min_time={window}",
                              "--benchmark_format=json"], env=env, cwd=ROOT, capture_output=True, text=True,
                             check=False)
        mean_us = {b["run_name"].split("/")[-1]: b["real_time"] for b in json.loads(out.stdout or "{}").get("benchmarks", [])}
        for name, (session, feeds) in sessions.items():
            # The same statistic as Google Benchmark's: the mean over a
            # loop of at least as long (a median would leave out the slow
            # runs that the other side's mean counts).
            count, start = 0, time.perf_counter()
            while count < runs or time.perf_counter() - start < window:
                session.run(None, feeds)
                count += 1
            elapsed = time.perf_counter() - start
            for oned in (name, name + "_bfloat16"):
                if oned not in mean_us:
                    continue
                onednn[oned].append(mean_us[oned] / 1000.0)
                ort[oned].append(elapsed / count * 1000.0)
                ratios[oned].append(onednn[oned][-1] / ort[oned][-1])
    print(f"\nin one process (ms), {rounds} rounds, each oneDNN's run (parity_bench AdapterRun, a mean over "
          f"{window} s of iterations) then ONNX Runtime's InferenceSession.run (a mean over at least {runs} runs "
          f"and {window} s): the medians of the rounds, and the median and range of the rounds' ratios")
    for name in names:
        if not ratios[name]:
            print(f"{name:<34} parity_bench gave no figure")
            continue
        yardstick = "ONNX Runtime float32" if name.endswith("_bfloat16") else "ONNX Runtime"
        print(f"{name:<34} oneDNN {statistics.median(onednn[name]):.3f}  {yardstick} {statistics.median(ort[name]):.3f}  "
              f"ratio {statistics.median(ratios[name]):.2f} ({min(ratios[name]):.2f} to {max(ratios[name]):.2f})")


if __name__ == "__main__":
    raise SystemExit(main())
