#!/usr/bin/env python3
"""The CUDA adapter's GPU benchmark (issue: Attention against PyTorch's
scaled_dot_product_attention on the same GPU; the grouped-query decoder
layer's decode step in place against functional), in two steps:

  gpu_bench.py write DIR        here (needs onnx): the models, and the
                                decoder layer's stateful cases, into DIR
  gpu_bench.py run DIR OUT --parity P --adapter A
                                on the GPU machine (needs numpy; PyTorch
                                for its side): the inputs, written there,
                                the expected outputs (`parity expect`), the
                                runs, and the figures printed and written to
                                OUT/gpu_bench.json

Attention: prefill (batch 1, 32 heads, 4,096 tokens, head size 128,
causal) and a decode step (one query against 4,095 past positions and its
own), in float16 and bfloat16. Each case runs its one data set `--steps`
times in one session (`parity run`); the figure is the median step after
the first (the first builds cuDNN's plan). PyTorch's SDPA is timed on the
same shapes two ways: on tensors already on the device (CUDA events), and
host to host (the inputs copied to the device and the output back, as a
step through the adapter moves them), and both ratios are printed.

Decoder layer: cases/aliasing's 4,096-position grouped-query decoder layer
(a prefill, then 32 decode steps in one stateful session), as written (its
annotations let TensorScatter write the bound caches in place, in device
memory) and with its annotations removed (functional: each step copies the
caches). Prints the median decode step of both and their ratio, the
adapter process's device memory (nvidia-smi, sampled while it runs) after
the first step and at the end, and the adapter's own count of each step
(ABI run_cost: the device memory its buffers hold, the bytes copied back).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TYPES = {"float16": 10, "bfloat16": 16}
HEADS, TOKENS, SIZE = 32, 4096, 128


def attention_cases():
    """name -> (type, [(input name, shape)]): the Attention problems."""
    cases = {}
    for type_name in TYPES:
        full = [1, HEADS, TOKENS, SIZE]
        cases[f"attention_prefill_{type_name}"] = (type_name, [("q", full), ("k", full), ("v", full)], True)
        one = [1, HEADS, 1, SIZE]
        past = [1, HEADS, TOKENS - 1, SIZE]
        cases[f"attention_decode_{type_name}"] = (
            type_name, [("q", one), ("k", one), ("v", one), ("past_key", past), ("past_value", past)], False)
    return cases


def write(out: str, parity: str) -> None:
    import onnx
    from onnx import helper

    os.makedirs(out, exist_ok=True)
    for name, (type_name, inputs, causal) in attention_cases().items():
        elem = TYPES[type_name]
        names = [n for n, _ in inputs]
        node_inputs = names[:3] + (["", "past_key", "past_value"] if len(names) > 3 else [])
        node = helper.make_node("Attention", node_inputs, ["y"], is_causal=int(causal))
        graph = helper.make_graph(
            [node], name, [helper.make_tensor_value_info(n, elem, s) for n, s in inputs],
            [helper.make_tensor_value_info("y", elem, inputs[0][1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 10
        folder = os.path.join(out, "attention", name)
        os.makedirs(folder, exist_ok=True)
        onnx.save(model, os.path.join(folder, "model.onnx"))
        with open(os.path.join(folder, "inputs.json"), "w") as f:
            json.dump({"type": type_name, "inputs": inputs}, f)
    # The decoder layer, as cases/aliasing writes it, and a functional twin.
    scratch = os.path.join(out, "scratch")
    subprocess.run([sys.executable, os.path.join(ROOT, "cases", "aliasing", "write_cases.py"), "--out", scratch,
                    "--parity", parity, "--bench", "--no-check"], check=True, stdout=subprocess.DEVNULL)
    source = os.path.join(scratch, "bench", "gqa_decode_4096")
    in_place = os.path.join(out, "decode", "in_place", "gqa_decode_4096")
    functional = os.path.join(out, "decode", "functional", "gqa_decode_4096")
    for target in (in_place, functional):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
    model = onnx.load(os.path.join(functional, "model.onnx"))
    kept = [p for p in model.graph.metadata_props if not p.key.startswith("ai.onnx.alias.")]
    del model.graph.metadata_props[:]
    model.graph.metadata_props.extend(kept)
    onnx.save(model, os.path.join(functional, "model.onnx"))
    shutil.rmtree(scratch)
    print(f"gpu_bench.py: wrote {out}")


def tensor_proto(name: str, elem: int, shape, raw: bytes) -> bytes:
    """A TensorProto with raw_data, written field by field (dims 1,
    data_type 2, name 8, raw_data 9), so that no onnx package is needed."""
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            byte = n & 0x7F
            n >>= 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                return bytes(out)
    body = b"".join(b"\x08" + varint(d) for d in shape) + b"\x10" + varint(elem)
    body += b"\x42" + varint(len(name)) + name.encode() + b"\x4a" + varint(len(raw)) + raw
    return body


def random_raw(type_name: str, shape, seed: int):
    import numpy as np
    values = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32) * 0.5
    if type_name == "float16":
        return values.astype(np.float16).tobytes(), values
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # to nearest even
    return rounded.tobytes(), (rounded.astype(np.uint32) << 16).view(np.float32)


def parity_run(parity: str, adapter: str, cases: str, out: str) -> list:
    subprocess.run([parity, "run", "--adapter", adapter, "--cases", cases, "--out", out, "--fresh", "--jobs", "1",
                    "--warm-repeats", "0", "--state-readback", "last", "--progress", "quiet"],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "results.jsonl")) as f:
        return [json.loads(line) for line in f]


def median_step(result: dict):
    steps = [s["run_ms"] for s in result.get("steps") or []]
    return statistics.median(steps[1:]) if len(steps) > 1 else result.get("run_ms")


def torch_sdpa(type_name: str, arrays: dict, causal: bool, repeats: int) -> dict:
    import torch
    dtype = torch.float16 if type_name == "float16" else torch.bfloat16
    host = {n: torch.from_numpy(a).to(dtype) for n, a in arrays.items()}
    if "past_key" in host:
        k_host = torch.cat([host["past_key"], host["k"]], dim=2)
        v_host = torch.cat([host["past_value"], host["v"]], dim=2)
    else:
        k_host, v_host = host["k"], host["v"]
    q, k, v = host["q"].cuda(), k_host.cuda(), v_host.cuda()

    def device_once():
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end)

    def host_once():
        t0 = time.perf_counter()
        qd, kd, vd = host["q"].cuda(), k_host.cuda(), v_host.cuda()
        y = torch.nn.functional.scaled_dot_product_attention(qd, kd, vd, is_causal=causal).cpu()
        del y
        return (time.perf_counter() - t0) * 1000

    for _ in range(3):
        device_once(), host_once()
    return {"device_ms": statistics.median(device_once() for _ in range(repeats)),
            "host_to_host_ms": statistics.median(host_once() for _ in range(repeats))}


class GpuMemory:
    """The device memory nvidia-smi reports for processes other than this
    one, sampled every 50 ms while the adapter's worker runs."""

    def __init__(self):
        self.samples, self._stop = [], threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            try:
                text = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                                      capture_output=True, text=True, timeout=5).stdout
                used = sum(int(line.split(",")[1]) for line in text.splitlines()
                           if line.strip() and int(line.split(",")[0]) != os.getpid())
                self.samples.append((time.monotonic(), used))
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
            self._stop.wait(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run(folder: str, out: str, parity: str, adapter: str, steps: int, repeats: int) -> int:
    os.makedirs(out, exist_ok=True)
    figures = {"attention": {}, "decode": {}}
    for name, (type_name, inputs, causal) in attention_cases().items():
        case = os.path.join(folder, "attention", name)
        data = os.path.join(case, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        arrays = {}
        for i, (input_name, shape) in enumerate(inputs):
            raw, values = random_raw(type_name, shape, seed=i)
            arrays[input_name] = values
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(tensor_proto(input_name, TYPES[type_name], shape, raw))
        subprocess.run([parity, "expect", case], check=True, stdout=subprocess.DEVNULL)
        for s in range(1, steps):  # the same data set again: one session, `steps` runs
            link = os.path.join(case, f"test_data_set_{s}")
            if not os.path.lexists(link):
                os.symlink("test_data_set_0", link)
        (result,) = parity_run(parity, adapter, case, os.path.join(out, name))
        passed = result["state"] == "PASS"
        entry = {"state": result["state"], "message": result.get("message", ""),
                 "adapter_ms": median_step(result) if passed else None,
                 "placement": result.get("placement")}
        try:
            entry.update(torch_sdpa(type_name, arrays, causal, repeats))
        except ImportError as e:
            entry["torch"] = f"not measured: {e}"
        # Speed against PyTorch: its time over the adapter's, for a step that passed.
        if entry["state"] == "PASS" and entry["adapter_ms"] and "device_ms" in entry:
            entry["ratio_device"] = entry["device_ms"] / entry["adapter_ms"]
            entry["ratio_host_to_host"] = entry["host_to_host_ms"] / entry["adapter_ms"]
        figures["attention"][name] = entry
        print(f"{name}: {entry['state']}, adapter {entry['adapter_ms']} ms a step; PyTorch SDPA "
              f"{entry.get('device_ms')} ms on device, {entry.get('host_to_host_ms')} ms host to host; speed "
              f"against PyTorch (>= 0.8 wanted): {entry.get('ratio_device')} on device, "
              f"{entry.get('ratio_host_to_host')} host to host")
    for mode in ("in_place", "functional"):
        with GpuMemory() as memory:
            started = time.monotonic()
            (result,) = parity_run(parity, adapter, os.path.join(folder, "decode", mode), os.path.join(out, mode))
        used = [mb for _, mb in memory.samples]
        # The adapter's own count of each step (run_cost): the device memory
        # its buffers hold after the step, and what the step copied back.
        costs = [s.get("cost") or {} for s in result.get("steps") or []]
        held = [c["device_bytes"] / 2**20 for c in costs if "device_bytes" in c]
        back = [c["to_host_bytes"] for c in costs if "to_host_bytes" in c]
        figures["decode"][mode] = {"state": result["state"], "message": result.get("message", ""),
                                   "decode_step_ms": median_step(result) if result["state"] == "PASS" else None,
                                   "device_mib_first_last": [used[0], used[-1]] if used else None,
                                   "device_mib_max": max(used) if used else None,
                                   "adapter_mib_first_last": [held[0], held[-1]] if held else None,
                                   "adapter_mib_max": max(held) if held else None,
                                   "copied_back_bytes_per_step": statistics.median(back[1:]) if len(back) > 1 else None,
                                   "seconds": time.monotonic() - started}
    in_place, functional = figures["decode"]["in_place"], figures["decode"]["functional"]
    if in_place["decode_step_ms"] and functional["decode_step_ms"]:
        figures["decode"]["ratio"] = in_place["decode_step_ms"] / functional["decode_step_ms"]
    print(f"decoder layer, 4,096 positions: in place {in_place['decode_step_ms']} ms a step ({in_place['state']}), "
          f"functional {functional['decode_step_ms']} ms ({functional['state']}), ratio "
          f"{figures['decode'].get('ratio')} (<= 0.5 wanted); device MiB in place (first, last) "
          f"{in_place['device_mib_first_last']} by nvidia-smi, {in_place['adapter_mib_first_last']} by the adapter "
          f"(functional {functional['adapter_mib_first_last']}); bytes copied back a decode step: in place "
          f"{in_place['copied_back_bytes_per_step']}, functional {functional['copied_back_bytes_per_step']}")
    with open(os.path.join(out, "gpu_bench.json"), "w") as f:
        json.dump(figures, f, indent=1)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir")
    w.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("out")
    r.add_argument("--parity", required=True)
    r.add_argument("--adapter", required=True)
    r.add_argument("--steps", type=int, default=12)
    r.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.dir, args.parity)
        return 0
    return run(args.dir, args.out, args.parity, args.adapter, args.steps, args.repeats)


if __name__ == "__main__":
    sys.exit(main())
