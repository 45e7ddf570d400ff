"""The numpy oracle's org.onnxparity.contrib attention functions, version 1:
MultiHeadAttention, GroupQueryAttention and PagedAttention, as their pages
in spec/functions/ define them, in float64; the graph walk rounds each
output to its type."""
from __future__ import annotations

import math

import numpy as np

from ops_attention import check_heads, grouped, scaled_scores, soft_capped, softmax_rows
from ops_basic import require_inputs, same_type
from values import Tensor, is_float, type_name

DOMAIN = "org.onnxparity.contrib"


def _heads(ctx, data: np.ndarray, heads: int, what: str) -> np.ndarray:
    """[B, S, H*D] as [B, H, S, D]."""
    if data.ndim != 3 or data.shape[2] % heads:
        raise ctx.error(f"{what} {list(data.shape)} must be [B, S, {heads}*D]")
    b, s, hidden = data.shape
    return data.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)


def _merged(y: np.ndarray) -> np.ndarray:
    """[B, H, S, D] as [B, S, H*D]."""
    b, h, s, d = y.shape
    return y.transpose(0, 2, 1, 3).reshape(b, s, h * d)


def _attend(q, k, v, bias, scale, softcap=0.0):
    """softmax(cap(Q K^T * scale) + bias) V over grouped heads, fully blocked rows zero."""
    probs = softmax_rows(soft_capped(scaled_scores(q, k, scale), softcap) + bias, empty_rows_zero=True)
    return np.matmul(probs, grouped(v, q.shape[1]))


def _scale_and_softcap(ctx, head: int):
    scale = ctx.attr("scale", 0.0)
    if ctx.has("scale") and scale == 0.0:
        raise ctx.error("scale 0 is not allowed (0 means 'not given' in ONNX Runtime)")
    softcap = ctx.attr("softcap", 0.0)
    if softcap < 0:
        raise ctx.error(f"softcap {softcap} is negative")
    return (scale or 1.0 / math.sqrt(head)), softcap


def _float_values(ctx, named):
    present = [(n, v) for n, v in named if v is not None]
    for name, value in present:
        if not is_float(value.elem):
            raise ctx.error(f"{name} is {type_name(value.elem)}, not a float type")
    return same_type(ctx, [v for _, v in present])


def _multi_head_attention(ctx, values):
    require_inputs(ctx, values, 3, 8)
    query, key, value = values[:3]
    bias_in, padding, attention_bias, past_key, past_value = (values[i] if len(values) > i else None
                                                               for i in range(3, 8))
    if bias_in is not None:
        raise ctx.error("input 3 (bias) is not part of this version: add it to query, key and value first")
    elem = _float_values(ctx, [("query", query), ("key", key), ("value", value), ("attention_bias", attention_bias),
                               ("past_key", past_key), ("past_value", past_value)])
    heads = ctx.attr("num_heads", 0)
    if heads <= 0:
        raise ctx.error("num_heads is required and must be positive")
    q = _heads(ctx, query.data, heads, "query")
    k = _heads(ctx, key.data, heads, "key")
    v = _heads(ctx, value.data, heads, "value")
    batch, _, q_len, head = q.shape
    if (past_key is None) != (past_value is None):
        raise ctx.error("past_key and past_value come together or not at all")
    past = 0
    if past_key is not None:
        past = past_key.shape[2]
        k = np.concatenate([past_key.data, k], axis=2)
        v = np.concatenate([past_value.data, v], axis=2)
    total = k.shape[2]
    scale, _ = _scale_and_softcap(ctx, head)
    keys = np.arange(total)[None, None, :]
    blocked = np.zeros((batch, q_len, total), dtype=bool)
    if padding is not None:
        flags = padding.data
        if flags.ndim == 1 and flags.shape == (batch,):
            blocked |= keys >= flags[:, None, None]
        elif flags.shape in ((batch, total), (batch, q_len, total)):
            blocked |= (flags == 0).reshape(batch, -1, total)
        else:
            raise ctx.error(f"key_padding_mask {list(flags.shape)} must be [{batch}], [{batch}, {total}] or "
                            f"[{batch}, {q_len}, {total}]")
    if ctx.attr("unidirectional", 0):
        blocked |= keys > past + np.arange(q_len)[None, :, None]  # query i sits at key position past + i
    bias = np.where(blocked, ctx.attr("mask_filter_value", -10000.0), 0.0)[:, None, :, :]
    if attention_bias is not None:
        try:
            bias = bias + np.broadcast_to(attention_bias.data, (batch, heads, q_len, total))
        except ValueError:
            raise ctx.error(f"attention_bias {list(attention_bias.shape)} does not broadcast to "
                            f"[{batch}, {heads}, {q_len}, {total}]") from None
    y = _attend(q, k, v, bias, scale)
    return [Tensor(_merged(y), elem), Tensor(k, elem), Tensor(v, elem)]


def _group_query_attention(ctx, values):
    require_inputs(ctx, values, 3, 7)
    if len(values) < 7 or values[5] is None or values[6] is None:
        raise ctx.error("seqlens_k (input 5) and total_sequence_length (input 6) are required")
    query, key, value, past_key, past_value, seqlens, total_length = values
    elem = _float_values(ctx, [("query", query), ("key", key), ("value", value), ("past_key", past_key),
                               ("past_value", past_value)])
    if ctx.attr("do_rotary", 0):
        raise ctx.error("do_rotary must be 0 in this version: apply RotaryEmbedding first")
    heads, kv_heads = ctx.attr("num_heads", 0), ctx.attr("kv_num_heads", 0)
    check_heads(ctx, heads, kv_heads)
    q = _heads(ctx, query.data, heads, "query")
    k_new = _heads(ctx, key.data, kv_heads, "key")
    v_new = _heads(ctx, value.data, kv_heads, "value")
    batch, _, q_len, head = q.shape
    if (past_key is None) != (past_value is None):
        raise ctx.error("past_key and past_value come together or not at all")
    buffer = 0 if past_key is None else past_key.shape[2]
    total = int(total_length.data.reshape(-1)[0]) if total_length.data.size == 1 else None
    if total is None:
        raise ctx.error(f"total_sequence_length must hold one value, has shape {list(total_length.shape)}")
    valid = seqlens.data.reshape(-1).astype(np.int64) + 1  # t[b]: valid keys of entry b, the new ones last
    if valid.shape != (batch,):
        raise ctx.error(f"seqlens_k must have shape [{batch}], has {list(seqlens.shape)}")
    cached = valid - q_len  # p[b]
    length = max(buffer, total)
    for b in range(batch):
        if cached[b] < 0 or cached[b] > buffer or valid[b] > total:
            raise ctx.error(f"batch entry {b}: seqlens_k + 1 = {valid[b]} must lie in [{q_len}, {q_len + buffer}] "
                            f"and at most total_sequence_length {total}")
    # present_*: the first p[b] rows of the past, the new rows, then zeros.
    present_k = np.zeros((batch, kv_heads, length, head))
    present_v = np.zeros((batch, kv_heads, length, v_new.shape[3]))
    for b in range(batch):
        p = cached[b]
        if p:
            present_k[b, :, :p] = past_key.data[b, :, :p]
            present_v[b, :, :p] = past_value.data[b, :, :p]
        present_k[b, :, p:p + q_len] = k_new[b]
        present_v[b, :, p:p + q_len] = v_new[b]
    scale, softcap = _scale_and_softcap(ctx, head)
    window = ctx.attr("local_window_size", -1)
    if window == 0 or window < -1:
        raise ctx.error(f"local_window_size {window} keeps no key; it must be -1 or positive")
    position = cached[:, None] + np.arange(q_len)[None, :]  # [B, S]
    keys = np.arange(length)[None, None, :]
    blocked = (keys > position[:, :, None]) | (keys >= valid[:, None, None])
    if window > 0:
        blocked |= keys <= position[:, :, None] - window  # w keys ending at the query, itself included
    bias = np.where(blocked, -np.inf, 0.0)[:, None, :, :]
    y = _attend(q, present_k, present_v, bias, scale, softcap)
    return [Tensor(_merged(y), elem), Tensor(present_k, elem), Tensor(present_v, elem)]


def _paged_attention(ctx, values):
    require_inputs(ctx, values, 8)
    query, key, value, key_cache, value_cache, cumulative, past_lengths, table = values[:8]
    elem = _float_values(ctx, [("query", query), ("key", key), ("value", value), ("key_cache", key_cache),
                               ("value_cache", value_cache)])
    if ctx.attr("do_rotary", 0):
        raise ctx.error("do_rotary must be 0 in this version: apply RotaryEmbedding first")
    heads, kv_heads = ctx.attr("num_heads", 0), ctx.attr("kv_num_heads", 0)
    check_heads(ctx, heads, kv_heads)
    if key_cache.data.ndim != 4 or value_cache.shape != key_cache.shape:
        raise ctx.error(f"key_cache {list(key_cache.shape)} and value_cache {list(value_cache.shape)} must be one "
                        "[blocks, block_size, kv_num_heads, head_size] shape")
    blocks, block_size, cache_heads, head = key_cache.shape
    tokens = query.shape[0]
    if cache_heads != kv_heads or query.shape != (tokens, heads * head) or key.shape != (tokens, kv_heads * head) \
            or value.shape != key.shape:
        raise ctx.error(f"query {list(query.shape)}, key {list(key.shape)}, value {list(value.shape)} do not fit "
                        f"{heads} query heads and {kv_heads} key/value heads of size {head}")
    starts = cumulative.data.reshape(-1).astype(np.int64)
    sequences = starts.size - 1
    past = past_lengths.data.reshape(-1).astype(np.int64)
    rows = table.data.astype(np.int64)
    if sequences < 0 or starts[0] != 0 or starts[-1] != tokens or np.any(np.diff(starts) < 0):
        raise ctx.error(f"cumulative_sequence_length {starts.tolist()} must rise from 0 to {tokens}")
    if past.shape != (sequences,) or rows.ndim != 2 or rows.shape[0] != sequences:
        raise ctx.error(f"past_seqlens {list(past.shape)} and block_table {list(rows.shape)} must have "
                        f"{sequences} rows")
    scale, softcap = _scale_and_softcap(ctx, head)
    window = ctx.attr("local_window_size", -1)
    if window == 0 or window < -1:
        raise ctx.error(f"local_window_size {window} keeps no key; it must be -1 or positive")

    def slot(b: int, position: int) -> int:
        index = position // block_size
        if index >= rows.shape[1] or not 0 <= rows[b, index] < blocks:
            raise ctx.error(f"sequence {b} position {position} has no block in the table (row {rows[b].tolist()})")
        return int(rows[b, index]) * block_size + position % block_size

    # Writes first: every new token's key and value into its slot.
    k_slots = key_cache.data.reshape(blocks * block_size, kv_heads, head).copy()
    v_slots = value_cache.data.reshape(blocks * block_size, kv_heads, head).copy()
    written = {}
    owner = np.searchsorted(starts[1:], np.arange(tokens), side="right")  # b(r)
    for r in range(tokens):
        b = owner[r]
        position = past[b] + r - starts[b]
        s = slot(b, position)
        if s in written:
            raise ctx.error(f"tokens {written[s]} and {r} write the same cache slot {s}")
        written[s] = r
        k_slots[s] = key.data[r].reshape(kv_heads, head)
        v_slots[s] = value.data[r].reshape(kv_heads, head)
    # Then each token reads its own sequence's positions 0 .. pos(r), within the window.
    output = np.zeros((tokens, heads * head))
    for r in range(tokens):
        b = owner[r]
        position = past[b] + r - starts[b]
        first = max(0, position - window + 1) if window > 0 else 0
        gathered = [slot(b, j) for j in range(first, position + 1)]
        k = k_slots[gathered].transpose(1, 0, 2)[None]  # [1, Hkv, keys, D]
        v = v_slots[gathered].transpose(1, 0, 2)[None]
        q = query.data[r].reshape(1, heads, 1, head)
        output[r] = _attend(q, k, v, 0.0, scale, softcap).reshape(-1)
    shape = key_cache.shape
    return [Tensor(output, elem), Tensor(k_slots.reshape(shape), elem), Tensor(v_slots.reshape(shape), elem)]


def register(registry) -> None:
    registry.add(DOMAIN, "MultiHeadAttention", _multi_head_attention, versions=(1,))
    registry.add(DOMAIN, "GroupQueryAttention", _group_query_attention, versions=(1,))
    registry.add(DOMAIN, "PagedAttention", _paged_attention, versions=(1,))

