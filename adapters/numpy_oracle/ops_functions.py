"""The numpy oracle's Swish (24), SwiGLU (28), RMSNormalization (23),
RotaryEmbedding (23) and TensorScatter (24), from the operators' text in
float64; the graph walk rounds each output to its type."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ops_basic import require_inputs, same_type
from values import Tensor, float_attribute, is_float, type_name


def float_inputs(ctx, values):
    for index, value in enumerate(values):
        if value is not None and not is_float(value.elem):
            raise ctx.error(f"input {index} is {type_name(value.elem)}, not a float type")


def _swish_of(a: np.ndarray, alpha: float) -> np.ndarray:
    # a * sigmoid(alpha * a); exp overflows to inf far in the negative tail,
    # where 1 / (1 + inf) = 0 is the right limit.
    with np.errstate(over="ignore"):
        return a / (1.0 + np.exp(-alpha * a))


def _swish(ctx, values):
    require_inputs(ctx, values, 1)
    float_inputs(ctx, values)
    x = values[0]
    return [Tensor(_swish_of(x.data, ctx.attr("alpha", 1.0)), x.elem)]


def _swiglu(ctx, values):
    require_inputs(ctx, values, 2)
    float_inputs(ctx, values)
    elem = same_type(ctx, values)
    a, b = values
    if a.shape != b.shape:
        raise ctx.error(f"A {list(a.shape)} and B {list(b.shape)} must have the same shape (no broadcasting)")
    return [Tensor(_swish_of(a.data, ctx.attr("alpha", 1.0)) * b.data, elem)]


def first_axis(ctx, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is outside [-{rank}, {rank - 1}]")
    return axis % rank


def one_way_broadcast(ctx, scale: np.ndarray, shape: tuple, what: str) -> np.ndarray:
    try:
        broadcast = np.broadcast_shapes(scale.shape, shape)
    except ValueError:
        broadcast = None
    if broadcast != tuple(shape):
        raise ctx.error(f"{what} {list(scale.shape)} does not broadcast one way to {list(shape)}")
    return scale


def root_mean_square_inverse(x: np.ndarray, first_axis: int, epsilon: float) -> np.ndarray:
    """1 / sqrt(mean(x^2) + epsilon) over the axes from `first_axis` on, kept as size 1."""
    axes = tuple(range(first_axis, x.ndim))
    return 1.0 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + epsilon)


def _rms_normalization(ctx, values):
    require_inputs(ctx, values, 2)
    float_inputs(ctx, values)
    x, scale = values
    axis = first_axis(ctx, ctx.attr("axis", -1), x.data.ndim)
    epsilon = ctx.attr("epsilon", float_attribute(1e-5))
    stash = ctx.attr("stash_type", TensorProto.FLOAT)
    if not is_float(stash):
        raise ctx.error(f"stash_type {stash} is not a float type")
    # stash_type names the precision of the statistics; float64 is at least
    # that precision, so the oracle's result is the exact one rounded once.
    gamma = one_way_broadcast(ctx, scale.data, x.shape, "scale")
    return [Tensor(x.data * root_mean_square_inverse(x.data, axis, epsilon) * gamma, scale.elem)]


def _rotary_embedding(ctx, values):
    require_inputs(ctx, values, 3, 4)
    x, cos_cache, sin_cache = values[:3]
    position_ids = values[3] if len(values) > 3 else None
    float_inputs(ctx, [x, cos_cache, sin_cache])
    data = x.data
    if data.ndim == 4:
        batch, heads, seq, head_size = data.shape
        bshd = data.transpose(0, 2, 1, 3)
    elif data.ndim == 3:
        heads = ctx.attr("num_heads", 0)
        batch, seq, hidden = data.shape
        if heads <= 0 or hidden % heads:
            raise ctx.error(f"a 3-D input needs num_heads dividing its hidden size {hidden}, num_heads is {heads}")
        head_size = hidden // heads
        bshd = data.reshape(batch, seq, heads, head_size)
    else:
        raise ctx.error(f"X must be 3-D or 4-D, is {list(x.shape)}")
    rotary = ctx.attr("rotary_embedding_dim", 0) or head_size
    if rotary > head_size or rotary % 2:
        raise ctx.error(f"rotary_embedding_dim {rotary} must be even and at most the head size {head_size}")
    half = rotary // 2
    cos, sin = cos_cache.data, sin_cache.data
    if position_ids is not None:
        ids = position_ids.data
        if ids.shape != (batch, seq):
            raise ctx.error(f"position_ids {list(ids.shape)} must be [batch, sequence] = [{batch}, {seq}]")
        if cos.ndim != 2 or ids.min() < 0 or ids.max() >= cos.shape[0]:
            raise ctx.error(f"position_ids must index the {cos.shape[0] if cos.ndim else 0} rows of a 2-D cos_cache")
        cos, sin = cos[ids], sin[ids]
    for name, cache in (("cos_cache", cos), ("sin_cache", sin)):
        if cache.shape != (batch, seq, half):
            raise ctx.error(f"{name} gives {list(cache.shape)} per token, expected [{batch}, {seq}, {half}]")
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]  # over the heads
    rotate = bshd[..., :rotary]
    if ctx.attr("interleaved", 0):
        x1, x2 = rotate[..., 0::2], rotate[..., 1::2]
    else:
        x1, x2 = rotate[..., :half], rotate[..., half:]
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    out = bshd.copy()
    if ctx.attr("interleaved", 0):
        out[..., 0:rotary:2], out[..., 1:rotary:2] = real, imag
    else:
        out[..., :half], out[..., half:rotary] = real, imag
    out = out.transpose(0, 2, 1, 3) if data.ndim == 4 else out.reshape(data.shape)
    return [Tensor(out, x.elem)]


def _tensor_scatter(ctx, values):
    require_inputs(ctx, values, 2, 3)
    cache, update = values[0], values[1]
    indices = values[2] if len(values) > 2 else None
    if cache.elem != update.elem:
        raise ctx.error(f"past_cache is {type_name(cache.elem)}, update {type_name(update.elem)}")
    rank = cache.data.ndim
    axis = first_axis(ctx, ctx.attr("axis", -2), rank)
    if axis == 0:
        raise ctx.error("axis must not be 0 (the batch axis)")
    mode = ctx.attr("mode", b"linear")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("linear", "circular"):
        raise ctx.error(f"mode '{mode}' is neither 'linear' nor 'circular'")
    shape, upd = cache.shape, update.shape
    if len(upd) != rank or any(u != c for i, (u, c) in enumerate(zip(upd, shape)) if i != axis):
        raise ctx.error(f"update {list(upd)} must match past_cache {list(shape)} except on axis {axis}")
    max_len, length = shape[axis], upd[axis]
    if length > max_len:
        raise ctx.error(f"update length {length} exceeds max_sequence_length {max_len}")
    batch = shape[0]
    starts = np.zeros(batch, dtype=np.int64) if indices is None else indices.data.reshape(-1)
    if starts.shape != (batch,):
        raise ctx.error(f"write_indices must have shape [{batch}], has {list(indices.shape)}")
    out = cache.data.copy()
    for b in range(batch):
        start = int(starts[b])
        if start < 0 or (mode == "linear" and start + length > max_len):
            raise ctx.error(f"write index {start} of batch {b} with {length} rows leaves [0, {max_len}) "
                            f"in {mode} mode")
        positions = np.arange(start, start + length)
        if mode == "circular":
            positions %= max_len
        # Every prefix index of this batch entry moves the same rows along `axis`.
        target = np.moveaxis(out[b], axis - 1, 0)
        target[positions] = np.moveaxis(update.data[b], axis - 1, 0)
    return [Tensor(out, cache.elem)]


def register(registry) -> None:
    registry.add("", "Swish", _swish, versions=(24,))
    registry.add("", "SwiGLU", _swiglu, versions=(28,))
    registry.add("", "RMSNormalization", _rms_normalization, versions=(23,))
    registry.add("", "RotaryEmbedding", _rotary_embedding, versions=(23,))
    registry.add("", "TensorScatter", _tensor_scatter, versions=(24,))

