#!/usr/bin/env python3
"""The NPU's variant cases: models that carry a Compiled entry whose blob
the NPU's own driver exported (spec/variants.md, section 2.3), made with
parity-npu-compile from cases that exist already, so their inputs and
expected outputs stay theirs (a blob computes what its region computes).

  write_blob_cases.py --out DIR [--parity build/parity] [--variants DIR] [--models DIR]

From build/corpus/variants/valid (--variants) and cases/models (--models),
each listed case is copied with an entry for the NPU's target covering its
whole main graph, and three more show what happens to entries the NPU must
not take:
  <case>_npu             the blob is chosen and the session is created from it;
  stale_npu              __hash__ no longer matches the region (the graph was
                         edited after the blob was made): never eligible, the
                         main graph runs, compiled from IR (VAR-STALE);
  foreign_compiler_npu   the blob names another compiler version of the same
                         target: the adapter refuses it, and the main graph runs;
  other_npu_only         an entry for com.example.npu only: not listed.
The NPU must be reachable (ZE_ENABLE_ALT_DRIVERS naming the test driver, or
a real one). Exit status: 0 written, 1 a tool failed, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Cases of the variant corpus whose whole main graph the NPU compiles, and
# the exported models.
VARIANT_SOURCES = ["chain_linear_tanh_float32", "chain_linear_tanh_float16", "diamond_float32",
                   "one_node_layernorm", "portable_disjoint", "shared_weight_1mib"]
MODEL_SOURCES = ["llama_decoder_opset24", "llama_decoder_opset23", "bert_encoder_opset23", "vit_opset23"]
NPU_TARGET = "org.onnxparity.test-npu"


def import_schema(parity: str):
    folder = os.path.join(os.path.dirname(os.path.abspath(parity)), "python")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from parity_onnx import onnx_ml_pb2  # noqa: E402 - the patched schema beside the binary
    return onnx_ml_pb2


def compile_into(tool: str, source: str, dest: str) -> str:
    shutil.copytree(source, dest)
    model = os.path.join(dest, "model.onnx")
    done = subprocess.run([tool, model, "--out", model], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"parity-npu-compile {source}: {done.stderr.strip()}")
    return done.stdout.strip()


def edit_npu_entry(schema, model_path: str, edit) -> None:
    model = schema.ModelProto()
    with open(model_path, "rb") as f:
        model.ParseFromString(f.read())
    entries = [e for e in model.graph.equivalent_subgraph if e.domain == NPU_TARGET and e.op_type == "Compiled"]
    if len(entries) != 1:
        raise RuntimeError(f"{model_path}: {len(entries)} NPU entries, expected 1")
    edit(model, entries[0])
    with open(model_path, "wb") as f:
        f.write(model.SerializeToString())


def set_meta(case_dir: str, why: str, select: dict | None = None) -> None:
    path = os.path.join(case_dir, "case.json")
    with open(path) as f:
        meta = json.load(f)
    meta["why"] = why
    meta["suite"] = "variants_npu"
    meta.setdefault("generator", "")
    meta["generator"] = "adapters/level_zero/write_blob_cases.py"
    if select is not None:
        meta.setdefault("variants", {}).setdefault("select", {}).update(select)
    with open(path, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--variants", default=os.path.join(ROOT, "build", "corpus", "variants", "valid"))
    parser.add_argument("--models", default=os.path.join(ROOT, "cases", "models"))
    args = parser.parse_args(argv)
    tool = os.path.join(os.path.dirname(os.path.abspath(args.parity)), "parity-npu-compile")
    if not os.path.exists(tool):
        print(f"write_blob_cases.py: {tool} is missing (built with the level_zero adapter)", file=sys.stderr)
        return 2
    schema = import_schema(args.parity)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    try:
        for name in VARIANT_SOURCES + MODEL_SOURCES:
            source = os.path.join(args.variants if name in VARIANT_SOURCES else args.models, name)
            dest = os.path.join(args.out, f"{name}_npu")
            print(compile_into(tool, source, dest))
            set_meta(dest, f"{name} with a Compiled entry for {NPU_TARGET} over its whole main graph, its blob "
                           "exported by the NPU's driver: the NPU creates the session from the blob, with no compilation")

        base = os.path.join(args.variants, "chain_linear_tanh_float32")
        with open(os.path.join(base, "case.json")) as f:
            portable_pick = json.load(f)["variants"]["select"]["portable"]

        stale = os.path.join(args.out, "stale_npu")
        compile_into(tool, base, stale)

        def make_stale(model, entry):
            for attr in entry.attribute:
                if attr.name == "__hash__":
                    attr.s = ("sha256:" + hashlib.sha256(b"an earlier version of the region").hexdigest()).encode()
        edit_npu_entry(schema, os.path.join(stale, "model.onnx"), make_stale)
        set_meta(stale, "the NPU entry's __hash__ is that of an earlier region (the graph was edited after the blob "
                        "was made): stale, never eligible (VAR-STALE); the main graph runs, compiled from IR")

        foreign = os.path.join(args.out, "foreign_compiler_npu")
        compile_into(tool, base, foreign)

        def make_foreign(model, entry):
            for attr in entry.attribute:
                if attr.name == "__identifier__":
                    attr.s = f"{NPU_TARGET}.blob/0.9".encode()
        edit_npu_entry(schema, os.path.join(foreign, "model.onnx"), make_foreign)
        set_meta(foreign, "the NPU entry's blob names another compiler version of the NPU's target: the adapter "
                          "refuses it (ResolveOptions::refuse) and takes what it would take without it",
                 {f"{NPU_TARGET},portable": portable_pick})

        other = os.path.join(args.out, "other_npu_only")
        shutil.copytree(os.path.join(args.variants, "compiled_npu"), other)
        set_meta(other, "Compiled entries for com.example.npu only: not a target of this NPU, the main graph runs")
    except RuntimeError as error:
        print(f"write_blob_cases.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
