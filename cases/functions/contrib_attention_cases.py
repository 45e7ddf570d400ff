"""Case matrices of the org.onnxparity.contrib attention functions (version
1): MultiHeadAttention, GroupQueryAttention and PagedAttention, ONNX Runtime contrib operators
proposed for standardisation (spec/functions/multi_head_attention.md,
group_query_attention.md, paged_attention.md). Models import the
default domain at 23 and org.onnxparity.contrib at 1; ONNX has no schema for
that domain, so every graph output carries its shape."""
from __future__ import annotations

import numpy as np
from onnx import helper

from case_common import DTYPES, Case, as_dtype, elem_of, rng_for

FLOATS = list(DTYPES)
DOMAIN = "org.onnxparity.contrib"
DOMAINS = [(DOMAIN, 1)]
TAGS = ["function", "attention", "contrib"]

# B batches, N heads of size D (value heads of size DV), S queries, L new
# keys, P cached keys.
B, N, D, DV, S, L = 2, 2, 8, 4, 3, 3


def _flags(rng, shape) -> np.ndarray:
    # int32 0/1 with key 0 always 1, so that no query has every key blocked
    # (a fully blocked row is rounding-sensitive by definition: see the page).
    flags = (rng.uniform(0.0, 1.0, shape) > 0.3).astype(np.int32)
    flags[..., 0] = 1
    return flags


def _mha_case(label, dt, mask, causal, past, bias, presents, attrs) -> Case:
    name = f"test_multiheadattention_{label}_{dt}"
    rng = rng_for(name)
    total = past + L
    # ONNX Runtime takes a value head narrower than the key head only
    # without a cache, so cached cases use DV = D.
    dv = D if past else DV
    inputs = [("query", as_dtype(rng.uniform(-1.0, 1.0, (B, S, N * D)), dt)),
              ("key", as_dtype(rng.uniform(-1.0, 1.0, (B, L, N * D)), dt)),
              ("value", as_dtype(rng.uniform(-1.0, 1.0, (B, L, N * dv)), dt))]
    names = ["query", "key", "value", ""]
    if mask == "lengths":
        inputs.append(("key_padding_mask", np.array([2, total], dtype=np.int32)))
    elif mask == "flags_2d":
        inputs.append(("key_padding_mask", _flags(rng, (B, total))))
    elif mask == "flags_3d":
        inputs.append(("key_padding_mask", _flags(rng, (B, S, total))))
    names.append("key_padding_mask" if mask else "")
    if bias:
        inputs.append(("attention_bias", as_dtype(rng.uniform(-1.0, 1.0, bias + [S, total]), dt)))
    names.append("attention_bias" if bias else "")
    if past:
        inputs.append(("past_key", as_dtype(rng.uniform(-1.0, 1.0, (B, N, past, D)), dt)))
        inputs.append(("past_value", as_dtype(rng.uniform(-1.0, 1.0, (B, N, past, dv)), dt)))
        names += ["past_key", "past_value"]
    while names[-1] == "":
        names.pop()
    outputs = [("output", elem_of(dt), [B, S, N * dv])]
    if presents:
        outputs += [("present_key", elem_of(dt), [B, N, total, D]),
                    ("present_value", elem_of(dt), [B, N, total, dv])]
    node_attrs = {"num_heads": N, **attrs}
    if causal:
        node_attrs["unidirectional"] = 1
    node = helper.make_node("MultiHeadAttention", names, [o[0] for o in outputs], domain=DOMAIN, **node_attrs)
    feature = (f"query [{B}, {S}, {N}*{D}], key [{B}, {L}, {N}*{D}], value [{B}, {L}, {N}*{dv}], num_heads {N}"
               + (f", key_padding_mask {mask}" if mask else "")
               + (", unidirectional" if causal else "")
               + (f", past {past} keys" if past else "")
               + (f", attention_bias {bias + [S, total]}" if bias else "")
               + "".join(f", {k}={v}" for k, v in attrs.items())
               + (", present outputs" if presents else ""))
    return Case(name, "MultiHeadAttention", feature, TAGS + [dt], 23, [node], inputs, outputs, domains=DOMAINS)


def multi_head_attention() -> list:
    """MultiHeadAttention: each key padding mask form (none, 1-D lengths, 2-D
    and 3-D flags) x unidirectional x a 2-key cache; then attention_bias
    [B, N, S, T] and [1, 1, S, T], scale 0.25 and mask_filter_value -1000."""
    cases = []
    for dt in FLOATS:
        for mask in (None, "lengths", "flags_2d", "flags_3d"):
            for causal in (False, True):
                for past in (0, 2):
                    label = (f"{mask or 'no_mask'}{'_unidirectional' if causal else ''}"
                             f"{'_past' if past else ''}")
                    cases.append(_mha_case(label, dt, mask, causal, past, None, past > 0, {}))
        cases.append(_mha_case("attention_bias_full_flags_2d_unidirectional_past", dt, "flags_2d", True, 2,
                               [B, N], True, {}))
        cases.append(_mha_case("attention_bias_broadcast", dt, None, False, 0, [1, 1], False, {}))
        cases.append(_mha_case("scale_0p25_lengths", dt, "lengths", False, 0, None, False, {"scale": 0.25}))
        cases.append(_mha_case("mask_filter_value_m1000_flags_2d_unidirectional", dt, "flags_2d", True, 0,
                               [B, N], False, {"mask_filter_value": -1000.0}))
    return cases


# GroupQueryAttention: NQ query heads share NKV key/value heads of size GD.
NQ, NKV, GD = 4, 2, 8


def _gqa_case(label, dt, batch, q_len, past, seqlens_k, total, attrs) -> Case:
    name = f"test_groupqueryattention_{label}_{dt}"
    rng = rng_for(name)
    present = max(past, total)
    inputs = [("query", as_dtype(rng.uniform(-1.0, 1.0, (batch, q_len, NQ * GD)), dt)),
              ("key", as_dtype(rng.uniform(-1.0, 1.0, (batch, q_len, NKV * GD)), dt)),
              ("value", as_dtype(rng.uniform(-1.0, 1.0, (batch, q_len, NKV * GD)), dt))]
    names = ["query", "key", "value"]
    if past:
        inputs.append(("past_key", as_dtype(rng.uniform(-1.0, 1.0, (batch, NKV, past, GD)), dt)))
        inputs.append(("past_value", as_dtype(rng.uniform(-1.0, 1.0, (batch, NKV, past, GD)), dt)))
        names += ["past_key", "past_value"]
    else:
        names += ["", ""]
    inputs.append(("seqlens_k", np.array(seqlens_k, dtype=np.int32)))
    inputs.append(("total_sequence_length", np.array(total, dtype=np.int32)))
    names += ["seqlens_k", "total_sequence_length"]
    outputs = [("output", elem_of(dt), [batch, q_len, NQ * GD]),
               ("present_key", elem_of(dt), [batch, NKV, present, GD]),
               ("present_value", elem_of(dt), [batch, NKV, present, GD])]
    node = helper.make_node("GroupQueryAttention", names, [o[0] for o in outputs], domain=DOMAIN,
                            num_heads=NQ, kv_num_heads=NKV, **attrs)
    feature = (f"query [{batch}, {q_len}, {NQ}*{GD}], key/value [{batch}, {q_len}, {NKV}*{GD}], "
               f"num_heads {NQ}, kv_num_heads {NKV}"
               + (f", past [{batch}, {NKV}, {past}, {GD}]" if past else ", no past")
               + f", seqlens_k {list(seqlens_k)}, total_sequence_length {total}"
               + "".join(f", {k}={v}" for k, v in attrs.items()))
    return Case(name, "GroupQueryAttention", feature, TAGS + [dt], 23, [node], inputs, outputs, domains=DOMAINS)


def group_query_attention() -> list:
    """GroupQueryAttention: a prompt without cache (plain, local_window_size
    2, softcap 0.5), a decode step over a 4-row cache whose two entries hold
    2 and 4 valid rows (plain, window 2, scale 0.25), a decode step inside a
    6-row buffer (total below the buffer), and a 2-query chunk after a cache
    (batch 1, as ONNX Runtime requires for S > 1 with a cache)."""
    cases = []
    for dt in FLOATS:
        cases.append(_gqa_case("prompt", dt, 2, 4, 0, [3, 3], 4, {}))
        cases.append(_gqa_case("prompt_local_window_2", dt, 2, 4, 0, [3, 3], 4, {"local_window_size": 2}))
        cases.append(_gqa_case("prompt_softcap_0p5", dt, 2, 4, 0, [3, 3], 4, {"softcap": 0.5}))
        cases.append(_gqa_case("decode_ragged_past", dt, 2, 1, 4, [2, 4], 5, {}))
        cases.append(_gqa_case("decode_ragged_past_local_window_2", dt, 2, 1, 4, [2, 4], 5,
                               {"local_window_size": 2}))
        cases.append(_gqa_case("decode_ragged_past_scale_0p25", dt, 2, 1, 4, [2, 4], 5, {"scale": 0.25}))
        cases.append(_gqa_case("decode_in_buffer", dt, 2, 1, 6, [2, 4], 5, {}))
        cases.append(_gqa_case("chunk_after_past", dt, 1, 2, 3, [4], 5, {}))
    return cases


# PagedAttention: NQ query heads share NKV key/value heads of size GD, in a
# cache of PB blocks of PS slots, PM blocks per sequence.
PB, PS, PM = 8, 4, 3


def _paged_case(label, dt, cumulative, past, table, attrs) -> Case:
    name = f"test_pagedattention_{label}_{dt}"
    rng = rng_for(name)
    tokens = cumulative[-1]
    inputs = [("query", as_dtype(rng.uniform(-1.0, 1.0, (tokens, NQ * GD)), dt)),
              ("key", as_dtype(rng.uniform(-1.0, 1.0, (tokens, NKV * GD)), dt)),
              ("value", as_dtype(rng.uniform(-1.0, 1.0, (tokens, NKV * GD)), dt)),
              ("key_cache", as_dtype(rng.uniform(-1.0, 1.0, (PB, PS, NKV, GD)), dt)),
              ("value_cache", as_dtype(rng.uniform(-1.0, 1.0, (PB, PS, NKV, GD)), dt)),
              ("cumulative_sequence_length", np.array(cumulative, dtype=np.int32)),
              ("past_seqlens", np.array(past, dtype=np.int32)),
              ("block_table", np.array(table, dtype=np.int32))]
    outputs = [("output", elem_of(dt), [tokens, NQ * GD]),
               ("key_cache_out", elem_of(dt), [PB, PS, NKV, GD]),
               ("value_cache_out", elem_of(dt), [PB, PS, NKV, GD])]
    node = helper.make_node("PagedAttention", [i[0] for i in inputs], [o[0] for o in outputs], domain=DOMAIN,
                            num_heads=NQ, kv_num_heads=NKV, **attrs)
    feature = (f"query [{tokens}, {NQ}*{GD}], key/value [{tokens}, {NKV}*{GD}], num_heads {NQ}, kv_num_heads {NKV}, "
               f"caches [{PB}, {PS}, {NKV}, {GD}], cumulative_sequence_length {list(cumulative)}, "
               f"past_seqlens {list(past)}, block_table {[list(r) for r in table]}"
               + "".join(f", {k}={v}" for k, v in attrs.items()))
    return Case(name, "PagedAttention", feature, TAGS + [dt], 23, [node], inputs, outputs, domains=DOMAINS)


def paged_attention() -> list:
    """PagedAttention over two sequences, blocks out of order and unused
    table entries -1: a prompt of 5 and 3 tokens (plain, local_window_size
    3), a decode step after 6 and 9 cached keys (plain, scale 0.25), and a
    mixed step of 3 new tokens after 2 and 1 after 10 that crosses a block
    boundary (plain, softcap 0.5)."""
    prompt = ([0, 5, 8], [0, 0], [[3, 6, -1], [1, -1, -1]])
    decode = ([0, 1, 2], [6, 9], [[7, 2, -1], [0, 5, 4]])
    mixed = ([0, 3, 4], [2, 10], [[6, 3, -1], [1, 0, 2]])
    cases = []
    for dt in FLOATS:
        cases.append(_paged_case("prompt", dt, *prompt, {}))
        cases.append(_paged_case("prompt_local_window_3", dt, *prompt, {"local_window_size": 3}))
        cases.append(_paged_case("decode", dt, *decode, {}))
        cases.append(_paged_case("decode_scale_0p25", dt, *decode, {"scale": 0.25}))
        cases.append(_paged_case("mixed", dt, *mixed, {}))
        cases.append(_paged_case("mixed_softcap_0p5", dt, *mixed, {"softcap": 0.5}))
    return cases


def contrib_attention() -> list:
    return multi_head_attention() + group_query_attention() + paged_attention()
