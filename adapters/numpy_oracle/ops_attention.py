"""The numpy oracle's Attention (opsets 23, 24, 25) and FlexAttention
(ai.onnx.preview 1), from the operators' text and spec/functions/attention.md
and flex_attention.md, in float64; the graph walk rounds each output."""
from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ops_basic import require_inputs
from values import FLOAT_FORMATS, Tensor, is_float, round_to_format, type_name


def softmax_rows(x: np.ndarray, empty_rows_zero: bool) -> np.ndarray:
    """Softmax over the last axis, the row maximum subtracted first. A row
    whose every entry is -inf has no maximum to subtract: it is zeros with
    `empty_rows_zero` (Attention's rule), else NaN (0 / 0, as Softmax)."""
    top = x.max(axis=-1, keepdims=True)
    empty = np.isneginf(top)
    with np.errstate(invalid="ignore"):
        weights = np.exp(x - np.where(empty, 0.0, top))
        probs = weights / weights.sum(axis=-1, keepdims=True)
    return np.where(empty, 0.0, probs) if empty_rows_zero else probs


def grouped(kv: np.ndarray, q_heads: int) -> np.ndarray:
    """Key/value heads [B, Hkv, ...] repeated for [B, Hq, ...]: query head h
    reads key/value head floor(h / (Hq / Hkv))."""
    return np.repeat(kv, q_heads // kv.shape[1], axis=1)


def scaled_scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """(Q K^T) * scale over heads grouped as `grouped` says: [B, Hq, S, T]."""
    return np.matmul(q, grouped(k, q.shape[1]).swapaxes(-1, -2)) * scale


def soft_capped(scores: np.ndarray, softcap: float) -> np.ndarray:
    return softcap * np.tanh(scores / softcap) if softcap else scores


def check_heads(ctx, q_heads: int, kv_heads: int) -> None:
    if kv_heads <= 0 or q_heads % kv_heads:
        raise ctx.error(f"{q_heads} query heads are not a multiple of {kv_heads} key/value heads")


def _split_heads(ctx, value: Tensor, heads_attr: str, what: str) -> np.ndarray:
    """A 4-D input as it is, a 3-D one [B, S, H*D] as [B, H, S, D]."""
    data = value.data
    if data.ndim == 4:
        return data
    if data.ndim != 3:
        raise ctx.error(f"{what} must be 3-D or 4-D, is {list(value.shape)}")
    heads = ctx.attr(heads_attr, 0)
    if heads <= 0 or data.shape[2] % heads:
        raise ctx.error(f"3-D {what} {list(value.shape)} needs {heads_attr} dividing its last axis, it is {heads}")
    b, s, hidden = data.shape
    return data.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)


def _mask_bias(ctx, mask: Tensor, shape: tuple) -> np.ndarray:
    """The additive bias of attn_mask, broadcast to [B, Hq, S, T]: a bool mask
    gives 0 (true) or -inf (false), any other mask is added as it is; a last
    axis shorter than T is padded with -inf first."""
    data = mask.data
    if mask.elem == TensorProto.BOOL:
        data = np.where(data, 0.0, -np.inf)
    else:
        data = data.astype(np.float64)
    if data.ndim == 0 or data.ndim > 4:
        raise ctx.error(f"attn_mask must have rank 1 to 4, is {list(mask.shape)}")
    total = shape[-1]
    if data.shape[-1] > total:
        raise ctx.error(f"attn_mask's last axis {data.shape[-1]} is longer than the total sequence length {total}")
    if data.shape[-1] < total:
        pad = [(0, 0)] * (data.ndim - 1) + [(0, total - data.shape[-1])]
        data = np.pad(data, pad, constant_values=-np.inf)
    try:
        return np.broadcast_to(data, shape)
    except ValueError:
        raise ctx.error(f"attn_mask {list(mask.shape)} does not broadcast to {list(shape)}") from None


def _attention(ctx, values):
    opset = ctx.version
    require_inputs(ctx, values, 3, 6 if opset == 23 else 7)
    q_in, k_in, v_in = values[:3]
    mask, past_key, past_value, nonpad = (values[i] if len(values) > i else None for i in range(3, 7))
    for name, value in (("Q", q_in), ("K", k_in), ("V", v_in), ("past_key", past_key), ("past_value", past_value)):
        if value is not None and not is_float(value.elem):
            raise ctx.error(f"{name} is {type_name(value.elem)}, not a float type")
    ranks = {q_in.data.ndim, k_in.data.ndim, v_in.data.ndim}
    if len(ranks) != 1:
        raise ctx.error(f"Q, K and V must have one rank, have shapes {list(q_in.shape)}, {list(k_in.shape)}, "
                        f"{list(v_in.shape)}")
    three_d = q_in.data.ndim == 3
    q = _split_heads(ctx, q_in, "q_num_heads", "Q")
    k = _split_heads(ctx, k_in, "kv_num_heads", "K")
    v = _split_heads(ctx, v_in, "kv_num_heads", "V")
    batch, q_heads, q_len, head = q.shape
    kv_heads = k.shape[1]
    check_heads(ctx, q_heads, kv_heads)
    if k.shape[0] != batch or v.shape[:3] != k.shape[:3] or k.shape[3] != head:
        raise ctx.error(f"Q {list(q.shape)}, K {list(k.shape)} and V {list(v.shape)} (as [B, H, S, D]) disagree")
    if (past_key is None) != (past_value is None):
        raise ctx.error("past_key and past_value come together or not at all")
    past = 0
    if past_key is not None:
        if nonpad is not None:
            raise ctx.error("nonpad_kv_seqlen cannot be given with past_key and past_value")
        past = past_key.shape[2]
        k = np.concatenate([past_key.data, k], axis=2)
        v = np.concatenate([past_value.data, v], axis=2)
    total = k.shape[2]
    scale = ctx.attr("scale", 1.0 / math.sqrt(head))
    softcap = ctx.attr("softcap", 0.0)
    mode = ctx.attr("qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        raise ctx.error(f"qk_matmul_output_mode {mode} is not 0, 1, 2 or 3")

    shape = (batch, q_heads, q_len, total)
    bias = np.zeros(shape)
    if mask is not None:
        bias = bias + _mask_bias(ctx, mask, shape)
    # The causal offset: the past length with an internal cache, nonpad - S
    # per batch entry with an external one, else 0.
    offset = np.full(batch, past, dtype=np.int64)
    if nonpad is not None:
        lengths = nonpad.data.reshape(-1)
        if lengths.shape != (batch,):
            raise ctx.error(f"nonpad_kv_seqlen must have shape [{batch}], has {list(nonpad.shape)}")
        offset = lengths - q_len
        bias = np.where(np.arange(total)[None, None, None, :] >= lengths[:, None, None, None], -np.inf, bias)
    position = offset[:, None] + np.arange(q_len)[None, :]  # [B, S]: the absolute query position
    keys = np.arange(total)[None, None, :]
    blocked = np.zeros((batch, q_len, total), dtype=bool)
    if ctx.attr("is_causal", 0):
        blocked |= keys > position[:, :, None]
    if opset >= 25:
        left, right = ctx.attr("left_window_size", -1), ctx.attr("right_window_size", -1)
        if left < -1 or right < -1:
            raise ctx.error(f"window sizes must be -1 or more, are {left} and {right}")
        if left >= 0:
            blocked |= keys < position[:, :, None] - left
        if right >= 0:
            blocked |= keys > position[:, :, None] + right
    bias = np.where(blocked[:, None, :, :], -np.inf, bias)

    scores = scaled_scores(q, k, scale)
    capped = soft_capped(scores, softcap)
    biased = capped + bias
    probs = softmax_rows(biased, empty_rows_zero=True)
    y = np.matmul(probs, grouped(v, q_heads))
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(batch, q_len, -1)
    qk = (scores, capped, biased, probs)[mode]
    return [Tensor(y, q_in.elem), Tensor(k, k_in.elem), Tensor(v, v_in.elem), Tensor(qk, q_in.elem)]


def _flex_attention(ctx, values):
    require_inputs(ctx, values, 3)
    q, k, v = values
    elems = {q.elem, k.elem, v.elem}
    if len(elems) != 1 or not is_float(q.elem):
        raise ctx.error(f"Q, K and V must share one float type, are {', '.join(type_name(e) for e in elems)}")
    for name, value in (("Q", q), ("K", k), ("V", v)):
        if value.data.ndim != 4:
            raise ctx.error(f"{name} must be 4-D, is {list(value.shape)}")
    batch, q_heads, q_len, head = q.shape
    check_heads(ctx, q_heads, k.shape[1])
    if k.shape[0] != batch or v.shape[:3] != k.shape[:3] or k.shape[3] != head:
        raise ctx.error(f"Q {list(q.shape)}, K {list(k.shape)} and V {list(v.shape)} disagree")
    default = TensorProto.DOUBLE if q.elem == TensorProto.DOUBLE else TensorProto.FLOAT
    precision = ctx.attr("softmax_precision", default)
    if precision not in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16):
        raise ctx.error(f"softmax_precision {precision} is not 1, 10, 11 or 16")
    if not ctx.has("scale") and head == 0:
        raise ctx.error("the default scale 1/sqrt(head_size) is undefined for head_size 0")
    scale = ctx.attr("scale", 1.0 / math.sqrt(head) if head else 0.0)
    scores = scaled_scores(q.data, k.data, scale)
    scores = _hook(ctx, "score_mod", scores, precision)
    probs = softmax_rows(scores, empty_rows_zero=False)
    probs = _hook(ctx, "prob_mod", probs, precision)
    return [Tensor(np.matmul(probs, grouped(v.data, q_heads)), q.elem)]


def _hook(ctx, name: str, data: np.ndarray, precision: int) -> np.ndarray:
    """Runs a FlexAttention hook on the whole tensor, handed over rounded to
    the softmax precision P (the hook's interface type); its result is read
    back as it is."""
    graph = ctx.subgraph(name)
    if graph is None:
        return data
    if len(graph.inputs) != 1 or len(graph.outputs) != 1:
        raise ctx.error(f"{name} must have one input and one output, has {len(graph.inputs)} and "
                        f"{len(graph.outputs)}")
    (input_name, input_elem), (_, output_elem) = graph.inputs[0], graph.outputs[0]
    for what, elem in (("input", input_elem), ("output", output_elem)):
        if elem is not None and elem != precision:
            raise ctx.error(f"{name}'s {what} is declared {type_name(elem)}; the softmax precision is "
                            f"{type_name(precision)}")
    handed = data if precision == TensorProto.DOUBLE else round_to_format(data, FLOAT_FORMATS[precision])
    [result] = graph.run({input_name: Tensor(handed, precision)}, outer=ctx.scope)
    if result.elem != precision or result.shape != data.shape:
        raise ctx.error(f"{name} returned {type_name(result.elem)} {list(result.shape)}; expected "
                        f"{type_name(precision)} {list(data.shape)}")
    return result.data


def register(registry) -> None:
    registry.add("", "Attention", _attention, versions=(23, 24, 25))
    registry.add("ai.onnx.preview", "FlexAttention", _flex_attention, versions=(1,))
