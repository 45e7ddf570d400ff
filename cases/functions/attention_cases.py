"""Case matrix of Attention (opsets 23 and 24): layouts, grouped-query heads,
the key/value cache, masks and their broadcast shapes, causal masking with
and without an offset, scale, softcap, the QK output modes, softmax
precision and (24) nonpad_kv_seqlen. Each feature runs in the three float
dtypes."""
from __future__ import annotations

import numpy as np
from onnx import helper

from case_common import DTYPES, Case, as_dtype, elem_of, rng_for

BASE = {"layout": "4d", "batch": 2, "q_heads": 4, "kv_heads": 4, "q_len": 3, "kv_len": 5, "head": 8, "v_head": 8,
        "past": 0, "mask": None, "attrs": {}, "nonpad": None, "masked_row": None}


def _f(description, **changes):
    cfg = dict(BASE)
    cfg["attrs"] = dict(changes.pop("attrs", {}))
    cfg.update(changes)
    cfg["description"] = description
    return cfg


# Mask kinds: (bool or float, shape key). Shape keys, with T the total sequence length:
#   qt [q, T]; b1qt [B, 1, q, T]; 1hqt [1, H, q, T]; bhqt [B, H, q, T]; t [T];
#   q_short [q, T - 2] (the last axis shorter than T, padded with -inf; opset 24).
FEATURES_23 = {
    "mha_4d": _f("multi-head, 4-D inputs, cross attention (q_len 3, kv_len 5)"),
    "mha_3d": _f("multi-head, 3-D inputs with q_num_heads = kv_num_heads", layout="3d"),
    "gqa_4d": _f("grouped-query heads (4 query, 2 key/value) with repeat-interleave, 4-D", kv_heads=2),
    "gqa_3d": _f("grouped-query heads (4 query, 2 key/value), 3-D with q_num_heads != kv_num_heads",
                 layout="3d", kv_heads=2),
    "mqa_3d": _f("multi-query (one key/value head), 3-D", layout="3d", kv_heads=1),
    "v_head_size_differs_4d": _f("value head size 6 differs from the query/key head size 8, grouped-query, 4-D",
                                 kv_heads=2, v_head=6),
    "self_attention_4d": _f("self attention (q_len = kv_len = 5), 4-D", q_len=5),
    "past_present_4d": _f("past_key/past_value (length 4) with present outputs, 4-D", past=4),
    "past_present_gqa_3d": _f("past key/value with present outputs, grouped-query, 3-D", layout="3d", kv_heads=2,
                              past=4),
    "bool_mask_2d_4d": _f("bool mask [q, total] broadcast over batch and heads", mask=("bool", "qt")),
    "bool_mask_batch_4d": _f("bool mask [B, 1, q, total] broadcast over heads", mask=("bool", "b1qt")),
    "float_mask_heads_4d": _f("float mask [1, H, q, total] broadcast over batch", mask=("float", "1hqt")),
    "float_mask_full_gqa_3d": _f("float mask [B, H, q, total], grouped-query, 3-D", layout="3d", kv_heads=2,
                                 mask=("float", "bhqt")),
    "float_mask_keys_only_4d": _f("rank-1 float mask [total] broadcast over batch, heads and queries",
                                  mask=("float", "t")),
    "causal_square_4d": _f("is_causal=1, q_len = kv_len, no past (lower-triangular)", q_len=5, attrs={"is_causal": 1}),
    "causal_cross_4d": _f("is_causal=1, q_len 3 < kv_len 5, no past (offset 0: top-left alignment)",
                          attrs={"is_causal": 1}),
    "causal_past_4d": _f("is_causal=1 with past (offset = past length 4: bottom-right alignment)", q_len=2, kv_len=2,
                         past=4, attrs={"is_causal": 1}),
    "causal_past_bool_mask_gqa_3d": _f("is_causal=1 with past and a bool mask [B, 1, q, total], grouped-query, 3-D",
                                       layout="3d", kv_heads=2, q_len=2, kv_len=2, past=4, mask=("bool", "b1qt"),
                                       attrs={"is_causal": 1}),
    "non_causal_past_4d": _f("is_causal=0 with past: every query sees all past and current keys", q_len=2, kv_len=2,
                             past=4, attrs={"is_causal": 0}),
    "past_float_mask_gqa_4d": _f("past key/value, float mask [B, H, q, total], grouped-query, 4-D", kv_heads=2, past=4,
                                 mask=("float", "bhqt")),
    "scale_0p1_4d": _f("explicit scale 0.1", attrs={"scale": 0.1}),
    "scale_0p5_3d": _f("explicit scale 0.5, 3-D grouped-query", layout="3d", kv_heads=2, attrs={"scale": 0.5}),
    "softcap_4d": _f("softcap 2.0 with scale 1.0 (scores well past the cap)", attrs={"softcap": 2.0, "scale": 1.0}),
    "softcap_float_mask_3d": _f("softcap 5.0 then a float mask [q, total], 3-D", layout="3d",
                                mask=("float", "qt"), attrs={"softcap": 5.0, "scale": 1.0}),
    "qk_mode_0_4d": _f("qk_matmul_output_mode 0 (scaled Q K^T) with softcap and a float mask", mask=("float", "qt"),
                       attrs={"qk_matmul_output_mode": 0, "softcap": 3.0, "scale": 1.0}),
    "qk_mode_1_4d": _f("qk_matmul_output_mode 1 (after softcap)", mask=("float", "qt"),
                       attrs={"qk_matmul_output_mode": 1, "softcap": 3.0, "scale": 1.0}),
    "qk_mode_2_4d": _f("qk_matmul_output_mode 2 (after softcap and mask)", mask=("float", "qt"),
                       attrs={"qk_matmul_output_mode": 2, "softcap": 3.0, "scale": 1.0}),
    "qk_mode_3_4d": _f("qk_matmul_output_mode 3 (after softmax)", mask=("float", "qt"),
                       attrs={"qk_matmul_output_mode": 3, "softcap": 3.0, "scale": 1.0}),
    "qk_mode_3_causal_gqa_3d": _f("qk_matmul_output_mode 3 with is_causal=1, grouped-query, 3-D", layout="3d",
                                  kv_heads=2, q_len=5, attrs={"qk_matmul_output_mode": 3, "is_causal": 1}),
    "qk_mode_2_past_present_4d": _f("qk_matmul_output_mode 2 with past and present outputs (all four outputs)",
                                    past=4, mask=("float", "1hqt"), attrs={"qk_matmul_output_mode": 2}),
    "softmax_precision_float_4d": _f("softmax_precision 1 (float)", attrs={"softmax_precision": 1}),
    "softmax_precision_double_4d": _f("softmax_precision 11 (double)", attrs={"softmax_precision": 11}),
    "fully_masked_row_bool_mask_4d": _f("fully-masked query row: bool mask whose row 1 is all false gives a zero row",
                                        mask=("bool", "qt"), masked_row=1),
    "head_64_causal_4d": _f("head size 64, q_len = kv_len = 16, is_causal=1 (a realistic prefill block)", batch=1,
                            q_heads=2, kv_heads=2, q_len=16, kv_len=16, head=64, v_head=64, attrs={"is_causal": 1}),
}

FEATURES_24 = {
    "mha_4d": FEATURES_23["mha_4d"],
    "gqa_3d": FEATURES_23["gqa_3d"],
    "past_present_4d": FEATURES_23["past_present_4d"],
    "bool_mask_batch_4d": FEATURES_23["bool_mask_batch_4d"],
    "causal_past_4d": FEATURES_23["causal_past_4d"],
    "qk_mode_3_causal_gqa_3d": FEATURES_23["qk_mode_3_causal_gqa_3d"],
    "softcap_float_mask_3d": FEATURES_23["softcap_float_mask_3d"],
    "nonpad_kv_seqlen_4d": _f("nonpad_kv_seqlen [4, 6] over a key/value cache of 6 (external cache)", kv_len=6,
                              nonpad=[4, 6]),
    "nonpad_kv_seqlen_gqa_3d": _f("nonpad_kv_seqlen [3, 6], grouped-query, 3-D", layout="3d", kv_heads=2, kv_len=6,
                                  nonpad=[3, 6]),
    "nonpad_kv_seqlen_causal_4d": _f("nonpad_kv_seqlen [4, 6] with is_causal=1 (offset nonpad - q_len per batch)",
                                     q_len=2, kv_len=6, nonpad=[4, 6], attrs={"is_causal": 1}),
    "nonpad_kv_seqlen_causal_fully_masked_rows_4d": _f(
        "fully-masked rows from a negative causal offset: nonpad_kv_seqlen [2, 6] < q_len 3 with is_causal=1",
        kv_len=6, nonpad=[2, 6], attrs={"is_causal": 1}),
    "nonpad_kv_seqlen_short_bool_mask_4d": _f(
        "nonpad_kv_seqlen [3, 5] with a bool mask [q, 4] shorter than the cache of 6", kv_len=6, nonpad=[3, 5],
        mask=("bool", "q_short")),
    "nonpad_kv_seqlen_qk_mode_3_4d": _f("nonpad_kv_seqlen [4, 6] with qk_matmul_output_mode 3", kv_len=6,
                                        nonpad=[4, 6], attrs={"qk_matmul_output_mode": 3}),
    "float_mask_shorter_than_total_4d": _f("float mask [q, total - 2], its missing tail padded with -inf",
                                           mask=("float", "q_short")),
}


def _mask_shape(key, batch, heads, q_len, total):
    return {"qt": [q_len, total], "b1qt": [batch, 1, q_len, total], "1hqt": [1, heads, q_len, total],
            "bhqt": [batch, heads, q_len, total], "t": [total], "q_short": [q_len, total - 2]}[key]


def _bool_mask(rng, shape, masked_row):
    mask = rng.random(shape) < 0.7
    # Key 0 stays allowed in every row, so that no row is fully masked, even
    # under is_causal, unless the case is about that.
    mask[..., 0] = True
    if masked_row is not None:
        mask[..., masked_row, :] = False
    return mask


def _case(name, opset, dt, cfg) -> Case:
    rng = rng_for(name)
    b, qh, kvh, q_len, kv_len = cfg["batch"], cfg["q_heads"], cfg["kv_heads"], cfg["q_len"], cfg["kv_len"]
    hd, vhd, past = cfg["head"], cfg["v_head"], cfg["past"]
    total = past + kv_len
    attrs = dict(cfg["attrs"])
    if cfg["layout"] == "3d":
        q_shape, k_shape, v_shape = (b, q_len, qh * hd), (b, kv_len, kvh * hd), (b, kv_len, kvh * vhd)
        attrs["q_num_heads"], attrs["kv_num_heads"] = qh, kvh
    else:
        q_shape, k_shape, v_shape = (b, qh, q_len, hd), (b, kvh, kv_len, hd), (b, kvh, kv_len, vhd)
    inputs = [("Q", as_dtype(rng.normal(0.0, 1.0, q_shape), dt)), ("K", as_dtype(rng.normal(0.0, 1.0, k_shape), dt)),
              ("V", as_dtype(rng.uniform(-2.0, 2.0, v_shape), dt))]
    node_inputs = ["Q", "K", "V"]
    if cfg["mask"]:
        kind, key = cfg["mask"]
        shape = _mask_shape(key, b, qh, q_len, total)
        mask = _bool_mask(rng, shape, cfg["masked_row"]) if kind == "bool" else as_dtype(rng.uniform(-3.0, 0.5, shape), dt)
        inputs.append(("attn_mask", mask))
        node_inputs.append("attn_mask")
    else:
        node_inputs.append("")
    if past:
        inputs += [("past_key", as_dtype(rng.normal(0.0, 1.0, (b, kvh, past, hd)), dt)),
                   ("past_value", as_dtype(rng.uniform(-2.0, 2.0, (b, kvh, past, vhd)), dt))]
        node_inputs += ["past_key", "past_value"]
    else:
        node_inputs += ["", ""]
    if cfg["nonpad"] is not None:
        inputs.append(("nonpad_kv_seqlen", np.array(cfg["nonpad"], dtype=np.int64)))
        node_inputs.append("nonpad_kv_seqlen")
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    outputs = [("Y", elem_of(dt))]
    node_outputs = ["Y"]
    if past:
        node_outputs += ["present_key", "present_value"]
        outputs += [("present_key", elem_of(dt)), ("present_value", elem_of(dt))]
    if "qk_matmul_output_mode" in attrs:
        node_outputs += [""] * (3 - len(node_outputs)) + ["qk_matmul_output"]
        outputs.append(("qk_matmul_output", elem_of(dt)))
    tags = ["function", "attention", dt, f"opset{opset}", cfg["layout"]]
    if kvh < qh:
        tags.append("grouped-query")
    if past:
        tags.append("kv-cache")
    if cfg["masked_row"] is not None or "fully_masked" in name:
        tags.append("fully-masked-row")
    return Case(name, "Attention", cfg["description"], tags, opset,
                [helper.make_node("Attention", node_inputs, node_outputs, **attrs)], inputs, outputs)


def attention() -> list:
    cases = []
    for opset, features in ((23, FEATURES_23), (24, FEATURES_24)):
        for label, cfg in features.items():
            for dt in DTYPES:
                cases.append(_case(f"test_attention_opset{opset}_{label}_{dt}", opset, dt, cfg))
    return cases
