"""Writes the exported-model cases: tiny seeded PyTorch architectures
(architectures.py) exported by torch.onnx.export(..., dynamo=True), with the
eager PyTorch float32 run as the expected outputs.

  export_models.py --out DIR     writes DIR/<case>/ (model.onnx, test_data_set_0/, case.json)
  export_models.py --check       re-exports into a temporary folder and compares with
                                 the committed cases (--cases, default this folder);
                                 exit 1 and one line per difference if any

Needs the exporter environment of setup_export.sh (torch is not part of the
project's normal setup)."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import case_diff  # noqa: E402

try:
    import torch
except ImportError:  # a clear message instead of a traceback: torch lives in .venv-export only
    sys.exit("export_models.py: torch is not installed; run cases/models/setup_export.sh and use "
             ".venv-export/bin/python")

import architectures as arch  # noqa: E402

WEIGHT_SEED = 0  # every Llama-style case uses the same weights
PROMPT_LENGTH = 8
TOLERANCE = {
    "ulp": 0,
    "atol": 1e-5,
    "rtol": 1.3e-6,
    "reason": "the source's own declared tolerance: the expected outputs are PyTorch's eager float32 run, "
              "not the reference's correctly rounded one, so they are compared as PyTorch compares float32 "
              "results, with torch.testing.assert_close's defaults (rtol 1.3e-6, atol 1e-5; ulp 0 so that "
              "those two alone decide)",
}


@dataclass
class Export:
    """What one case exports: the module, its named inputs in order, and the names of its outputs."""
    module: torch.nn.Module
    inputs: dict[str, torch.Tensor]
    outputs: list[str]


@dataclass
class CaseSpec:
    name: str
    opset: int
    build: Callable[[], Export]
    why: str
    tags: list[str] = field(default_factory=list)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _llama_decoder() -> arch.LlamaDecoder:
    decoder = arch.LlamaDecoder(arch.Config())
    arch.init_weights(decoder, _generator(WEIGHT_SEED))
    return decoder.eval()


def build_llama_prefill() -> Export:
    ids = torch.randint(0, arch.Config().vocab, (1, PROMPT_LENGTH), generator=_generator(1))
    return Export(arch.LlamaPrefill(_llama_decoder()), {"input_ids": ids}, ["logits"])


def build_llama_decode_step() -> Export:
    """The step after a 7-token prompt: the cache is the eager prefill's own."""
    decoder = _llama_decoder()
    g = _generator(2)
    prompt = torch.randint(0, decoder.cfg.vocab, (1, PROMPT_LENGTH - 1), generator=g)
    with torch.no_grad():
        _, cache = decoder(prompt, torch.arange(prompt.shape[1]).unsqueeze(0))
    inputs = {
        "input_ids": torch.randint(0, decoder.cfg.vocab, (1, 1), generator=g),
        "position_ids": torch.tensor([[prompt.shape[1]]], dtype=torch.int64),
    }
    for i, (key, value) in enumerate(cache):
        inputs[f"past_key_{i}"] = key.contiguous()
        inputs[f"past_value_{i}"] = value.contiguous()
    outputs = ["logits"] + [f"present_{kind}_{i}" for i in range(len(cache)) for kind in ("key", "value")]
    return Export(arch.LlamaDecodeStep(decoder), inputs, outputs)


def build_vit() -> Export:
    model = arch.VisionTransformer()
    arch.init_weights(model, _generator(10))
    pixels = torch.randn((1, 3, 32, 32), generator=_generator(11))
    return Export(model.eval(), {"pixel_values": pixels}, ["logits"])


def build_bert() -> Export:
    model = arch.BertEncoder()
    arch.init_weights(model, _generator(20))
    ids = torch.randint(0, 128, (2, PROMPT_LENGTH), generator=_generator(21))
    # The second sequence is 5 tokens padded to 8: its last three keys are masked.
    mask = torch.tensor([[1] * 8, [1] * 5 + [0] * 3], dtype=torch.int64)
    return Export(model.eval(), {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state", "pooled"])


LLAMA_WHY = ("A Llama-style decoder (grouped-query attention with 4 query and 2 key/value heads, rotary "
             "embeddings, RMSNorm, SwiGLU MLP; hidden 64, 2 layers, vocabulary 128) on an 8-token prompt, "
             "exported by PyTorch's dynamo exporter at opset {opset}")
CASES = [
    CaseSpec("llama_decoder_opset18", 18, build_llama_prefill,
             LLAMA_WHY.format(opset=18) + ", where attention and RMSNorm are decomposed into primitive operators.",
             ["llama", "gqa", "rotary"]),
    CaseSpec("llama_decoder_opset23", 23, build_llama_prefill,
             LLAMA_WHY.format(opset=23) + ", which emits Attention (causal, GQA) and RMSNormalization.",
             ["llama", "gqa", "rotary", "attention", "rms-normalization"]),
    CaseSpec("llama_decoder_opset24", 24, build_llama_prefill,
             LLAMA_WHY.format(opset=24) + ", which emits Attention (causal, GQA) and RMSNormalization.",
             ["llama", "gqa", "rotary", "attention", "rms-normalization"]),
    CaseSpec("llama_decode_step_opset23", 23, build_llama_decode_step,
             "One decode step of the same Llama-style decoder after a 7-token prompt: key/value cache inputs "
             "(the eager prefill's) and present key/value outputs grown by one position, at opset 23.",
             ["llama", "gqa", "rotary", "attention", "rms-normalization", "kv-cache"]),
    CaseSpec("vit_opset23", 23, build_vit,
             "A vision transformer: 8x8 patch embedding (Conv) of a 32x32 image, class token, position "
             "embeddings, 2 pre-norm layers with LayerNormalization, Attention and exact Gelu, at opset 23.",
             ["vit", "attention", "layer-normalization", "gelu", "conv"]),
    CaseSpec("bert_encoder_opset23", 23, build_bert,
             "A BERT-like encoder: token and position embeddings, 2 post-norm layers with LayerNormalization, "
             "Attention under a boolean padding mask from the attention_mask input, exact Gelu and a tanh "
             "pooler; a batch of two sequences, the second padded, at opset 23.",
             ["bert", "attention", "attention-mask", "layer-normalization", "gelu"]),
]


def _strip(model: onnx.ModelProto) -> None:
    """Removes what the exporter records about the machine that ran it: node
    metadata (source paths, stack traces, module names) and doc strings.
    They change no result, and a committed model must not depend on where
    the exporter ran."""
    def strip_nodes(nodes):
        for node in nodes:
            node.doc_string = ""
            del node.metadata_props[:]
            for attr in node.attribute:
                if attr.HasField("g"):
                    strip_graph(attr.g)
                for g in attr.graphs:
                    strip_graph(g)

    def strip_graph(graph):
        graph.doc_string = ""
        del graph.metadata_props[:]
        for v in list(graph.input) + list(graph.output) + list(graph.value_info):
            v.doc_string = ""
            del v.metadata_props[:]
        for t in graph.initializer:
            t.doc_string = ""
            del t.metadata_props[:]
        strip_nodes(graph.node)

    model.doc_string = ""
    del model.metadata_props[:]
    strip_graph(model.graph)
    for f in model.functions:
        f.doc_string = ""
        del f.metadata_props[:]
        strip_nodes(f.node)


def export_case(spec: CaseSpec, out_dir: str) -> None:
    torch.manual_seed(0)  # nothing should draw from it; fixed in case something does
    job = spec.build()
    job.module.eval()
    args = tuple(job.inputs.values())
    with torch.no_grad():
        expected = job.module(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    program = torch.onnx.export(job.module, args, dynamo=True, opset_version=spec.opset,
                                input_names=list(job.inputs), output_names=job.outputs, verbose=False)
    model = program.model_proto
    _strip(model)
    onnx.checker.check_model(model, full_check=True)
    graph_outputs = [o.name for o in model.graph.output]
    if graph_outputs != job.outputs:
        raise RuntimeError(f"{spec.name}: the exporter named the outputs {graph_outputs}, not {job.outputs}")

    case_dir = os.path.join(out_dir, spec.name)
    if os.path.isdir(case_dir):
        shutil.rmtree(case_dir)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (name, value) in enumerate(job.inputs.items()):
        tensor = numpy_helper.from_array(value.numpy(), name)
        with open(os.path.join(data_dir, f"input_{k}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    for k, (name, value) in enumerate(zip(job.outputs, expected)):
        array = value.numpy()
        assert array.dtype == np.float32, (spec.name, name, array.dtype)
        with open(os.path.join(data_dir, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    meta = {
        "source": "pytorch-eager",
        "generator": "cases/models/export_models.py",
        "suite": "models",
        "tags": ["exported", "pytorch-dynamo", f"opset-{spec.opset}"] + spec.tags,
        "why": spec.why,
        "tolerance": TOLERANCE,
    }
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def write_cases(out_dir: str, only: list[str]) -> None:
    os.makedirs(out_dir, exist_ok=True)
    for spec in CASES:
        if not only or spec.name in only:
            export_case(spec, out_dir)
            print(f"wrote {os.path.join(out_dir, spec.name)}")


def check(committed: str) -> int:
    with tempfile.TemporaryDirectory(prefix="models-check-") as tmp:
        write_cases(tmp, [])
        problems = []
        names = {spec.name for spec in CASES}
        on_disk = {d for d in os.listdir(committed) if os.path.isfile(os.path.join(committed, d, "model.onnx"))}
        for extra in sorted(on_disk - names):
            problems.append(f"{extra}: committed, but no exporter case has that name")
        for spec in CASES:
            case_dir = os.path.join(committed, spec.name)
            if not os.path.isdir(case_dir):
                problems.append(f"{spec.name}: not committed in {committed}")
                continue
            problems += [f"{spec.name}: {p}" for p in case_diff.diff_cases(case_dir, os.path.join(tmp, spec.name))]
    for p in problems:
        print(f"DIFFERS {p}")
    print(f"check: {len(CASES)} cases re-exported, {len(problems)} differences")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="folder to write the cases into")
    parser.add_argument("--check", action="store_true", help="re-export and compare with --cases")
    parser.add_argument("--cases", default=HERE, help="the committed cases --check compares with")
    parser.add_argument("--only", action="append", default=[], help="write only this case (repeatable)")
    args = parser.parse_args()
    if bool(args.out) == args.check:
        parser.error("give exactly one of --out DIR and --check")
    unknown = sorted(set(args.only) - {spec.name for spec in CASES})
    if unknown:
        parser.error(f"unknown case(s) {unknown}; known: {[spec.name for spec in CASES]}")
    # One thread and deterministic kernels: the eager outputs must come out
    # the same bits on every run for --check to compare them exactly.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if args.check:
        if not os.path.isdir(args.cases):
            parser.error(f"--cases {args.cases}: no such folder")
        return check(args.cases)
    write_cases(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
