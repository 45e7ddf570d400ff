#!/usr/bin/env python3
"""Cases of the oneDNN attention family that the corpora lack: Attention in
bfloat16 and float16 with grouped-query heads, 3-D inputs, broadcast bool
and float masks, nonpad_kv_seqlen with the QK output in each mode, the soft
cap and a past cache, and with its heads merged after it (one region);
TensorScatter on integer and 16-bit caches, circular;
RotaryEmbedding in bfloat16, interleaved, with position_ids. Each case is
written with `parity expect` (the reference's outputs) and run with
`parity run --adapter onednn`; the test asserts PASS and that the node ran
on oneDNN (placement {"cpu": 1}).

  attention_test.py [--parity build/parity]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARITY = os.path.join(ROOT, "build", "parity")
NP_TYPES = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.BFLOAT16: ml_dtypes.bfloat16,
            TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_, TensorProto.INT32: np.int32}


def write_case(root: str, name: str, node: onnx.NodeProto, inputs: dict, outputs: list, opset: int,
               after: tuple = (), initializers: tuple = ()) -> str:
    """inputs: name -> array (in the node's order; None for an absent one);
    after: nodes that follow `node`; initializers: (name, array)."""
    rng_inputs = [(n, a) for n, a in inputs.items() if a is not None]
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                    for n, a in rng_inputs]
    graph_outputs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs]
    graph = helper.make_graph([node, *after], name, graph_inputs, graph_outputs,
                              initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    case_dir = os.path.join(root, name)
    data = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (n, a) in enumerate(rng_inputs):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    subprocess.run([PARITY, "expect", case_dir], check=True, capture_output=True)
    return case_dir


def run_onednn(case_dir: str, out: str) -> dict:
    subprocess.run([PARITY, "run", "--adapter", "onednn", "--cases", case_dir, "--out", out, "--fresh", "--jobs", "1",
                    "--progress", "quiet"], check=False, capture_output=True)
    with open(os.path.join(out, "results.jsonl")) as f:
        return json.loads(f.readline())


def normal(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


class AttentionFamilyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="onednn-attention-")
        self.rng = np.random.default_rng(7)

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, name, node, inputs, outputs, opset=24):
        case_dir = write_case(self.tmp.name, name, node, inputs, outputs, opset)
        result = run_onednn(case_dir, os.path.join(self.tmp.name, "run-" + name))
        self.assertEqual(result["state"], "PASS", f"{name}: {result.get('message', '')}")
        self.assertEqual(result["placement"], {"cpu": 1}, name)

    def attention_inputs(self, dtype, batch, q_heads, kv_heads, q_len, kv_len, head, three_d):
        def shaped(heads, seq):
            return (batch, seq, heads * head) if three_d else (batch, heads, seq, head)
        return {"Q": normal(self.rng, shaped(q_heads, q_len), dtype),
                "K": normal(self.rng, shaped(kv_heads, kv_len), dtype),
                "V": normal(self.rng, shaped(kv_heads, kv_len), dtype)}

    def test_attention_gqa_3d_bool_mask_broadcast(self):
        for dtype, suffix in ((ml_dtypes.bfloat16, "bfloat16"), (np.float16, "float16"), (np.float32, "float32")):
            inputs = self.attention_inputs(dtype, 2, 4, 2, 3, 5, 8, three_d=True)
            # [q_len, kv_len]: broadcast over batch and heads; row 1 fully masked (zero output rows).
            mask = self.rng.random((3, 5)) > 0.4
            mask[1, :] = False
            inputs["attn_mask"] = mask
            node = helper.make_node("Attention", list(inputs), ["Y"], q_num_heads=4, kv_num_heads=2)
            self.check(f"attention_gqa_3d_bool_mask_{suffix}", node, inputs, ["Y"])

    def test_attention_float_mask_shorter_softcap_past(self):
        for dtype, suffix in ((ml_dtypes.bfloat16, "bfloat16"), (np.float32, "float32")):
            inputs = self.attention_inputs(dtype, 1, 4, 1, 2, 2, 16, three_d=False)
            # [heads, 1, 4] of a total length 6: per head, padded with -inf to 6 keys.
            inputs["attn_mask"] = normal(self.rng, (4, 1, 4), dtype)
            inputs["past_key"] = normal(self.rng, (1, 1, 4, 16), dtype)
            inputs["past_value"] = normal(self.rng, (1, 1, 4, 16), dtype)
            node = helper.make_node("Attention", list(inputs), ["Y", "present_key", "present_value"],
                                    softcap=2.0, is_causal=1, scale=0.3)
            self.check(f"attention_softcap_past_{suffix}", node, inputs, ["Y", "present_key", "present_value"])

    def test_attention_nonpad_qk_modes(self):
        for mode in range(4):
            inputs = self.attention_inputs(np.float32, 3, 2, 2, 2, 70, 8, three_d=False)
            for name in ("attn_mask", "past_key", "past_value"):
                inputs[name] = None
            inputs["nonpad_kv_seqlen"] = np.array([0, 3, 70], np.int64)
            node = helper.make_node("Attention", [n if a is not None else "" for n, a in inputs.items()],
                                    ["Y", "", "", "QK"], is_causal=1, softcap=3.0, qk_matmul_output_mode=mode)
            self.check(f"attention_nonpad_qk_mode_{mode}", node, inputs, ["Y", "QK"])

    def test_attention_nonpad_reads_valid_keys(self):
        # A cache of 200 keys, 3 valid for entry 0 and 130 for entry 1.
        inputs = self.attention_inputs(ml_dtypes.bfloat16, 2, 4, 2, 1, 200, 32, three_d=False)
        for name in ("attn_mask", "past_key", "past_value"):
            inputs[name] = None
        inputs["nonpad_kv_seqlen"] = np.array([3, 130], np.int64)
        node = helper.make_node("Attention", [n if a is not None else "" for n, a in inputs.items()], ["Y"],
                                is_causal=1)
        self.check("attention_nonpad_decode_bfloat16", node, inputs, ["Y"])

    def test_attention_float32_writes_y_itself(self):
        # In float32 P V writes Y in place where one stride steps through a
        # key/value head's rows: one query (a decode step) with grouped
        # heads, 4-D and 3-D; grouped heads in 4-D at any length; one query
        # head per key/value head in 3-D. Grouped 3-D heads with several
        # queries have no such stride and go through the reorder.
        cases = [("decode_gqa_4d", 1, 4, 2, 1, 9, False), ("decode_gqa_3d", 2, 4, 2, 1, 9, True),
                 ("gqa_4d", 2, 4, 2, 3, 5, False), ("mha_3d", 2, 3, 3, 4, 6, True), ("gqa_3d", 2, 4, 2, 3, 5, True)]
        for name, batch, q_heads, kv_heads, q_len, kv_len, three_d in cases:
            inputs = self.attention_inputs(np.float32, batch, q_heads, kv_heads, q_len, kv_len, 8, three_d)
            heads = {"q_num_heads": q_heads, "kv_num_heads": kv_heads} if three_d else {}
            node = helper.make_node("Attention", list(inputs), ["Y"], is_causal=1, **heads)
            self.check(f"attention_float32_y_{name}", node, inputs, ["Y"])

    def test_attention_with_heads_merged_after_it_is_one_kernel(self):
        # Y through Transpose(0, 2, 1, 3) and Reshape to [batch, seq, heads * size]:
        # one region, Y written in that layout; one query, as at a decode step, too.
        for dtype, suffix, q_len in ((ml_dtypes.bfloat16, "bfloat16", 3), (np.float32, "float32", 3),
                                     (np.float32, "float32_one_query", 1)):
            inputs = self.attention_inputs(dtype, 2, 4, 2, q_len, 5, 8, three_d=False)
            node = helper.make_node("Attention", list(inputs), ["Y"], is_causal=1)
            after = (helper.make_node("Transpose", ["Y"], ["T"], perm=[0, 2, 1, 3]),
                     helper.make_node("Reshape", ["T", "shape"], ["merged"]))
            name = f"attention_heads_merged_{suffix}"
            case_dir = write_case(self.tmp.name, name, node, inputs, ["merged"], 24, after=after,
                                  initializers=(("shape", np.array([2, q_len, 32], np.int64)),))
            result = run_onednn(case_dir, os.path.join(self.tmp.name, "run-" + name))
            self.assertEqual(result["state"], "PASS", f"{name}: {result.get('message', '')}")
            self.assertEqual(result["placement"], {"cpu": 3}, name)
            self.assertEqual(result["kernels_compiled"] + result["kernels_deferred"], 1, name)

    def test_tensor_scatter_types_circular(self):
        for dtype, suffix in ((np.int64, "int64"), (ml_dtypes.bfloat16, "bfloat16"), (np.float16, "float16")):
            cache = (self.rng.standard_normal((2, 3, 6, 4)) * 100).astype(dtype)
            update = (self.rng.standard_normal((2, 3, 3, 4)) * 100).astype(dtype)
            inputs = {"past_cache": cache, "update": update, "write_indices": np.array([5, 1], np.int64)}
            node = helper.make_node("TensorScatter", list(inputs), ["present_cache"], mode="circular", axis=2)
            self.check(f"tensor_scatter_circular_{suffix}", node, inputs, ["present_cache"])

    def test_rotary_bfloat16_interleaved_position_ids(self):
        for three_d in (False, True):
            x = normal(self.rng, (2, 5, 3 * 8) if three_d else (2, 3, 5, 8), ml_dtypes.bfloat16)
            angles = self.rng.uniform(0, 6.3, (16, 3))
            inputs = {"X": x, "cos_cache": np.cos(angles).astype(ml_dtypes.bfloat16),
                      "sin_cache": np.sin(angles).astype(ml_dtypes.bfloat16),
                      "position_ids": self.rng.integers(0, 16, (2, 5)).astype(np.int64)}
            attrs = {"interleaved": 1, "rotary_embedding_dim": 6}
            if three_d:
                attrs["num_heads"] = 3
            node = helper.make_node("RotaryEmbedding", list(inputs), ["Y"], **attrs)
            self.check(f"rotary_bfloat16_interleaved_{'3d' if three_d else '4d'}", node, inputs, ["Y"], opset=23)


def main() -> int:
    global PARITY
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parity", default=PARITY)
    args, rest = parser.parse_known_args()
    PARITY = args.parity
    if not os.access(PARITY, os.X_OK):
        print(f"attention_test: no parity binary at {PARITY}", file=sys.stderr)
        return 2
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    raise SystemExit(main())
