"""The valid stateful cases: key/value caches updated by TensorScatter and
read by Attention-24 (linear, circular, ragged batch, a grouped-query decoder
layer), a whole-buffer running state, and a cache carried with no
annotation. Each case is a few steps of one session."""
from __future__ import annotations

import numpy as np
from onnx import helper

from alias_model import (FLOATS, Carry, StatefulCase, alias_value, const_i64, make_model, rng_for, rope_caches,
                         tensor_in)

KV_CARRY = [Carry("present_key", "past_key"), Carry("present_value", "past_value")]


def _normal(rng, shape, dtype, scale=1.0):
    return (rng.normal(0.0, scale, shape)).astype(dtype)


def scatter_attention_model(name, dtype, batch, q_heads, kv_heads, head, max_seq, aliases, ts_mode="linear",
                            mask=None, nonpad=True, causal=False):
    """present_key/value = TensorScatter(past, new, write_indices); y = Attention-24
    over the updated caches. `mask`: None, "sl" ([S, L] bool) or "b1sl" ([B, 1, S, L])."""
    inputs = [tensor_in("q", dtype, [batch, q_heads, "S", head]), tensor_in("k", dtype, [batch, kv_heads, "S", head]),
              tensor_in("v", dtype, [batch, kv_heads, "S", head]),
              tensor_in("write_indices", np.int64, [batch])]
    attention_inputs = ["q", "present_key", "present_value", "", "", "", ""]
    if mask is not None:
        inputs.append(tensor_in("attn_mask", np.bool_, ["S", max_seq] if mask == "sl" else [batch, 1, "S", max_seq]))
        attention_inputs[3] = "attn_mask"
    if nonpad:
        inputs.append(tensor_in("nonpad_kv_seqlen", np.int64, [batch]))
        attention_inputs[6] = "nonpad_kv_seqlen"
    while attention_inputs[-1] == "":
        attention_inputs.pop()
    # Carried inputs last: a step that leaves them out leaves a gap at the end.
    inputs += [tensor_in("past_key", dtype, [batch, kv_heads, max_seq, head]),
               tensor_in("past_value", dtype, [batch, kv_heads, max_seq, head])]
    nodes = [helper.make_node("TensorScatter", ["past_key", "k", "write_indices"], ["present_key"], mode=ts_mode),
             helper.make_node("TensorScatter", ["past_value", "v", "write_indices"], ["present_value"], mode=ts_mode),
             helper.make_node("Attention", attention_inputs, ["y"], is_causal=int(causal))]
    return make_model(name, nodes, inputs, ["y", "present_key", "present_value"], aliases=aliases)


def _kv_step(rng, dtype, batch, q_heads, kv_heads, head, seq):
    return {"q": _normal(rng, (batch, q_heads, seq, head), dtype),
            "k": _normal(rng, (batch, kv_heads, seq, head), dtype),
            "v": rng.uniform(-2.0, 2.0, (batch, kv_heads, seq, head)).astype(dtype)}


def _garbage_caches(rng, dtype, shape):
    # Unwritten rows hold noise, not zeros: a backend that reads past
    # nonpad_kv_seqlen or the mask gets a visibly different answer.
    return {"past_key": _normal(rng, shape, dtype, 3.0), "past_value": _normal(rng, shape, dtype, 3.0)}


def prefill_decode(dt: str) -> StatefulCase:
    name = f"kv_cache_prefill_decode_{dt}"
    dtype = FLOATS[dt]
    b, h, d, length, prompt, decodes = 1, 2, 8, 8, 4, 3
    aliases = {"present_key": alias_value("past_key", "must", "scatter"),
               "present_value": alias_value("past_value", "may", "scatter")}
    model = scatter_attention_model(name, dtype, b, h, h, d, length, aliases, causal=True)
    rng = rng_for(name)
    steps, pos = [], 0
    for seq in [prompt] + [1] * decodes:
        step = _kv_step(rng, dtype, b, h, h, d, seq)
        step["write_indices"] = np.full((b,), pos, np.int64)
        step["nonpad_kv_seqlen"] = np.full((b,), pos + seq, np.int64)
        steps.append(step)
        pos += seq
    return StatefulCase(name, "TensorScatter", "prefill of 4 positions then 3 decode steps: linear TensorScatter into "
                        "the key/value caches, is_causal Attention-24 with nonpad_kv_seqlen (offset = nonpad - S)",
                        ["aliasing", "kv-cache", "scatter", "must", "may", dt], model, KV_CARRY,
                        _garbage_caches(rng, dtype, (b, h, length, d)), steps)


def circular_wrap() -> StatefulCase:
    name = "kv_cache_circular_wrap_float32"
    b, h, d, length = 1, 2, 8, 6
    aliases = {"present_key": alias_value("past_key", "must", "scatter"),
               "present_value": alias_value("past_value", "must", "scatter")}
    model = scatter_attention_model(name, np.float32, b, h, h, d, length, aliases, ts_mode="circular", mask="sl",
                                    nonpad=False)
    rng = rng_for(name)
    # Positions 0-3 prefill; 4-6 a chunk whose write wraps (slots 4, 5, 0);
    # then one token at a time into slots 1, 2, 3.
    slot_position = [-1] * length  # the absolute position each slot holds; -1: never written
    steps, pos = [], 0
    for seq in (4, 3, 1, 1, 1):
        for s in range(seq):
            slot_position[(pos + s) % length] = pos + s
        step = _kv_step(rng, np.float32, b, h, h, d, seq)
        step["write_indices"] = np.array([pos % length], np.int64)
        # Query at position p sees the slots holding positions 0 <= a <= p.
        step["attn_mask"] = np.array([[0 <= a <= pos + i for a in slot_position] for i in range(seq)], np.bool_)
        steps.append(step)
        pos += seq
    return StatefulCase(name, "TensorScatter", "circular TensorScatter into a 6-slot cache: a prefill of 4, a chunk of "
                        "3 whose write wraps past max_seq to slot 0, then decode steps; a bool mask [S, L] marks "
                        "the slots each query may see", ["aliasing", "kv-cache", "scatter", "circular", "must",
                                                         "float32"],
                        model, KV_CARRY, _garbage_caches(rng, np.float32, (b, h, length, d)), steps)


def ragged_batch() -> StatefulCase:
    name = "kv_cache_ragged_batch_gqa_float32"
    b, qh, kvh, d, length, prompt = 3, 4, 2, 8, 10, 4
    lengths = np.array([4, 2, 3], np.int64)  # prompts right-padded to 4 positions
    aliases = {"present_key": alias_value("past_key", "may", "scatter"),
               "present_value": alias_value("past_value", "must", "scatter")}
    model = scatter_attention_model(name, np.float32, b, qh, kvh, d, length, aliases, mask="b1sl")
    rng = rng_for(name)
    steps = []
    writes, seq = np.zeros(b, np.int64), prompt
    for _ in range(5):
        step = _kv_step(rng, np.float32, b, qh, kvh, d, seq)
        step["write_indices"] = writes.copy()
        valid = lengths if seq == prompt else writes + 1
        step["nonpad_kv_seqlen"] = valid.astype(np.int64)
        # Causal by position: query i of sequence b is at writes[b] + i.
        step["attn_mask"] = np.array([[[[j <= writes[n] + i for j in range(length)] for i in range(seq)]]
                                      for n in range(b)], np.bool_)
        steps.append(step)
        writes = lengths.copy() if seq == prompt else writes + 1
        seq = 1
    return StatefulCase(name, "TensorScatter", "3 sequences with prompts of 4, 2 and 3 positions (right-padded to 4), "
                        "then 4 decode steps at different write_indices; nonpad_kv_seqlen per sequence, a causal "
                        "bool mask [B, 1, S, L], 4 query and 2 key/value heads",
                        ["aliasing", "kv-cache", "scatter", "ragged", "grouped-query", "must", "may", "float32"],
                        model, KV_CARRY, _garbage_caches(rng, np.float32, (b, kvh, length, d)), steps)


def decoder_layer_model(name, batch, q_heads, kv_heads, head, hidden, max_seq, max_pos, rng):
    """RMSNormalization -> q/k/v MatMul -> RotaryEmbedding -> TensorScatter
    caches -> Attention-24 (fewer key/value heads) -> MatMul -> residual Add."""
    cos, sin = rope_caches(max_pos, head)
    weights = {
        "norm_scale": rng.uniform(0.5, 1.5, (hidden,)).astype(np.float32),
        "w_q": _normal(rng, (hidden, q_heads * head), np.float32, hidden ** -0.5),
        "w_k": _normal(rng, (hidden, kv_heads * head), np.float32, hidden ** -0.5),
        "w_v": _normal(rng, (hidden, kv_heads * head), np.float32, hidden ** -0.5),
        "w_o": _normal(rng, (q_heads * head, hidden), np.float32, (q_heads * head) ** -0.5),
        "cos_cache": cos, "sin_cache": sin,
    }
    nodes = [helper.make_node("RMSNormalization", ["x", "norm_scale"], ["normed"], axis=-1, epsilon=1e-6)]
    for part, heads in (("q", q_heads), ("k", kv_heads), ("v", kv_heads)):
        nodes.append(helper.make_node("MatMul", ["normed", f"w_{part}"], [f"{part}_flat"]))
        flat = f"{part}_flat"
        if part != "v":
            nodes.append(helper.make_node("RotaryEmbedding", [flat, "cos_cache", "sin_cache", "position_ids"],
                                          [f"{part}_rot"], num_heads=heads))
            flat = f"{part}_rot"
        nodes += [const_i64(f"{part}_split_shape", [0, 0, heads, head]),
                  helper.make_node("Reshape", [flat, f"{part}_split_shape"], [f"{part}_split"]),
                  helper.make_node("Transpose", [f"{part}_split"], [f"{part}_heads"], perm=[0, 2, 1, 3])]
    nodes += [
        helper.make_node("TensorScatter", ["past_key", "k_heads", "write_indices"], ["present_key"]),
        helper.make_node("TensorScatter", ["past_value", "v_heads", "write_indices"], ["present_value"]),
        helper.make_node("Attention", ["q_heads", "present_key", "present_value", "", "", "", "nonpad_kv_seqlen"],
                         ["attended"], is_causal=1),
        helper.make_node("Transpose", ["attended"], ["attended_t"], perm=[0, 2, 1, 3]),
        const_i64("merge_shape", [0, 0, q_heads * head]),
        helper.make_node("Reshape", ["attended_t", "merge_shape"], ["attended_flat"]),
        helper.make_node("MatMul", ["attended_flat", "w_o"], ["projected"]),
        helper.make_node("Add", ["x", "projected"], ["y"]),
    ]
    inputs = [tensor_in("x", np.float32, [batch, "S", hidden]), tensor_in("position_ids", np.int64, [batch, "S"]),
              tensor_in("write_indices", np.int64, [batch]), tensor_in("nonpad_kv_seqlen", np.int64, [batch]),
              tensor_in("past_key", np.float32, [batch, kv_heads, max_seq, head]),
              tensor_in("past_value", np.float32, [batch, kv_heads, max_seq, head])]
    aliases = {"present_key": alias_value("past_key", "must", "scatter"),
               "present_value": alias_value("past_value", "must", "scatter")}
    return make_model(name, nodes, inputs, ["y", "present_key", "present_value"], initializers=weights,
                      aliases=aliases)


def decoder_layer_case(name, batch, q_heads, kv_heads, head, hidden, max_seq, prompt, decodes, tags, prune=False):
    rng = rng_for(name)
    model = decoder_layer_model(name, batch, q_heads, kv_heads, head, hidden, max_seq, max_seq, rng)
    steps, pos = [], 0
    for seq in [prompt] + [1] * decodes:
        steps.append({"x": _normal(rng, (batch, seq, hidden), np.float32),
                      "position_ids": np.tile(np.arange(pos, pos + seq, dtype=np.int64), (batch, 1)),
                      "write_indices": np.full((batch,), pos, np.int64),
                      "nonpad_kv_seqlen": np.full((batch,), pos + seq, np.int64)})
        pos += seq
    feature = (f"grouped-query decoder layer ({q_heads} query, {kv_heads} key/value heads, head size {head}, "
               f"hidden {hidden}, cache {max_seq}): RMSNormalization, q/k/v MatMul, RotaryEmbedding with "
               f"position_ids, TensorScatter caches, Attention-24 is_causal with nonpad_kv_seqlen, output MatMul, "
               f"residual Add; prefill of {prompt} then {decodes} decode steps")
    return StatefulCase(name, "Attention", feature, tags, model, KV_CARRY,
                        _garbage_caches(rng, np.float32, (batch, kv_heads, max_seq, head)), steps, prune_carried=prune)


def decoder_layer() -> StatefulCase:
    return decoder_layer_case("gqa_decoder_layer_float32", 2, 4, 2, 8, 16, 12, 4, 4,
                              ["aliasing", "kv-cache", "scatter", "grouped-query", "decoder-layer", "must", "float32"])


def running_mean() -> StatefulCase:
    """A whole-buffer state: the sum and the count replace their inputs."""
    name = "running_mean_whole_float32"
    inputs = [tensor_in("x", np.float32, [2, 3]), tensor_in("total_in", np.float32, [2, 3]),
              tensor_in("count_in", np.float32, [1])]
    nodes = [helper.make_node("Add", ["total_in", "x"], ["total_out"]),
             helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", 1, [1], [1.0])),
             helper.make_node("Add", ["count_in", "one"], ["count_out"]),
             helper.make_node("Div", ["total_out", "count_out"], ["mean"])]
    aliases = {"total_out": alias_value("total_in", "may", "whole"), "count_out": alias_value("count_in", "must")}
    model = make_model(name, nodes, inputs, ["mean", "total_out", "count_out"], aliases=aliases)
    rng = rng_for(name)
    steps = [{"x": _normal(rng, (2, 3), np.float32)} for _ in range(4)]
    return StatefulCase(name, "Add", "a running sum and count carried as whole-buffer state (region=whole; the sum "
                        "mode=may, the count mode=must with the default region), the mean computed from both",
                        ["aliasing", "whole", "may", "must", "float32"], model,
                        [Carry("total_out", "total_in"), Carry("count_out", "count_in")],
                        {"total_in": np.zeros((2, 3), np.float32), "count_in": np.zeros((1,), np.float32)}, steps)


def concat_cache_unannotated() -> StatefulCase:
    """Attention's own past/present cache grows every step, so it cannot share a buffer."""
    name = "kv_cache_concat_unannotated_float32"
    b, h, d = 1, 2, 8
    inputs = [tensor_in("q", np.float32, [b, h, "S", d]), tensor_in("k", np.float32, [b, h, "S", d]),
              tensor_in("v", np.float32, [b, h, "S", d]), tensor_in("past_key", np.float32, [b, h, "P", d]),
              tensor_in("past_value", np.float32, [b, h, "P", d])]
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "past_key", "past_value"],
                              ["y", "present_key", "present_value"], is_causal=1)]
    # The present length P + S is a new symbol that ONNX's inference cannot name.
    present = [tensor_in(n, np.float32, [b, h, "T", d]) for n in ("present_key", "present_value")]
    model = make_model(name, nodes, inputs, ["y"] + present)
    rng = rng_for(name)
    steps = [_kv_step(rng, np.float32, b, h, h, d, seq) for seq in (3, 1, 1, 1)]
    # Step 0 starts from a cache of 2 positions (a cached system prompt).
    initial = {"past_key": _normal(rng, (b, h, 2, d), np.float32),
               "past_value": rng.uniform(-2.0, 2.0, (b, h, 2, d)).astype(np.float32)}
    return StatefulCase(name, "Attention", "no annotation: Attention-24's past_key/past_value concatenated into "
                        "present outputs one step longer each time, carried as functional state only",
                        ["aliasing", "kv-cache", "no-annotation", "float32"], model, KV_CARRY, initial, steps)


def valid_cases() -> list:
    return [prefill_decode("float32"), prefill_decode("float16"), circular_wrap(), ragged_batch(), decoder_layer(),
            running_mean(), concat_cache_unannotated()]


def bench_cases() -> list:
    # Batch 1, 8 query and 2 key/value heads of 64, a 4,096-position cache.
    return [decoder_layer_case("gqa_decode_4096", 1, 8, 2, 64, 256, 4096, 16, 32,
                               ["aliasing", "bench", "kv-cache", "scatter", "grouped-query", "decoder-layer",
                                "float32"], prune=True)]
