"""Case matrices of Swish, SwiGLU, RMSNormalization, RotaryEmbedding,
TensorScatter and the QDQ MatMul pattern. Every matrix is the product of a
few attribute axes with the three float dtypes; inputs come from a generator
seeded by the case name."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from case_common import DTYPES, Case, as_dtype, attr_suffix, elem_of, rng_for

FLOATS = list(DTYPES)


def _value_range(rng, shape, wide: bool):
    # "wide" reaches far into the saturating tails of the sigmoid gate.
    return rng.uniform(-30.0, 30.0, shape) if wide else rng.uniform(-6.0, 6.0, shape)


def swish() -> list:
    """Swish-24: Y = X * sigmoid(alpha * X)."""
    cases = []
    for alpha in (None, 0.5, 1.702, 3.0, -0.5):
        for wide in (False, True):
            for dt in FLOATS:
                label = "alpha_default" if alpha is None else f"alpha_{attr_suffix(alpha)}"
                span = "wide_range" if wide else "normal_range"
                name = f"test_swish_{label}_{span}_{dt}"
                rng = rng_for(name)
                x = as_dtype(_value_range(rng, (2, 3, 8), wide), dt)
                attrs = {} if alpha is None else {"alpha": alpha}
                cases.append(Case(
                    name, "Swish",
                    f"alpha {'default (1.0)' if alpha is None else alpha}, inputs in "
                    f"{'[-30, 30] (saturated gate)' if wide else '[-6, 6]'}",
                    ["function", "activation", dt], 24,
                    [helper.make_node("Swish", ["X"], ["Y"], **attrs)], [("X", x)], [("Y", elem_of(dt))]))
    return cases


def swiglu() -> list:
    """SwiGLU-28 (a standard operator since opset 28 in onnx 1.23): Y = Swish_alpha(A) * B."""
    cases = []
    for alpha in (None, 1.702, 0.5):
        for wide in (False, True):
            for dt in FLOATS:
                label = "alpha_default" if alpha is None else f"alpha_{attr_suffix(alpha)}"
                span = "wide_range" if wide else "normal_range"
                name = f"test_swiglu_{label}_{span}_{dt}"
                rng = rng_for(name)
                a = as_dtype(_value_range(rng, (2, 4, 16), wide), dt)
                b = as_dtype(rng.uniform(-3.0, 3.0, (2, 4, 16)), dt)
                attrs = {} if alpha is None else {"alpha": alpha}
                cases.append(Case(
                    name, "SwiGLU",
                    f"alpha {'default (1.0)' if alpha is None else alpha}, gate in "
                    f"{'[-30, 30]' if wide else '[-6, 6]'}",
                    ["function", "activation", dt], 28,
                    [helper.make_node("SwiGLU", ["A", "B"], ["Y"], **attrs)], [("A", a), ("B", b)],
                    [("Y", elem_of(dt))]))
    return cases


# (label, axis, scale shape as a function of the normalised shape, description)
_RMS_SCALES = {
    "scale_full": (lambda norm: list(norm), "scale of the full normalised shape"),
    "scale_last": (lambda norm: [norm[-1]], "scale over the last axis only, broadcast over the others"),
    "scale_one": (lambda norm: [1], "one-element scale broadcast over everything"),
}


def rms_normalization() -> list:
    """RMSNormalization-23 over X [2, 3, 4, 8]: axis (incl. negative) x scale
    broadcast, plus epsilon and stash_type. X and scale share a dtype: the
    schema types Y as V (scale's type) while its text and function body
    compute Mul(Normalized cast back to X's type, Scale), so a scale of
    another type has no single meaning yet."""
    shape = (2, 3, 4, 8)
    matrix = []  # (feature label, axis or None, scale kind, extra attrs)
    for axis in (None, -1, -2, -3, 0, 1, 3):
        kinds = ["scale_full", "scale_one"] if axis in (None, -1, 3) else ["scale_full", "scale_last", "scale_one"]
        for kind in kinds:
            matrix.append((f"axis_{'default' if axis is None else attr_suffix(axis)}_{kind}", axis, kind, {}))
    matrix.append(("epsilon_0p1", -1, "scale_full", {"epsilon": 0.1}))
    matrix.append(("epsilon_1e_8", -2, "scale_full", {"epsilon": 1e-8}))
    matrix.append(("stash_type_float", -1, "scale_full", {"stash_type": 1}))
    matrix.append(("stash_type_input", -1, "scale_full", {"stash_type": "input"}))
    cases = []
    for label, axis, kind, attrs in matrix:
        for dt in FLOATS:
            if attrs.get("stash_type") == "input" and dt == "float32":
                continue  # the same as stash_type_float
            name = f"test_rmsnormalization_{label}_{dt}"
            rng = rng_for(name)
            node_attrs = dict(attrs)
            if node_attrs.get("stash_type") == "input":
                node_attrs["stash_type"] = elem_of(dt)
            if axis is not None:
                node_attrs["axis"] = axis
            norm = shape[(axis if axis is not None else -1) % len(shape):]
            scale_shape = _RMS_SCALES[kind][0](norm)
            x = as_dtype(rng.normal(0.3, 1.5, shape), dt)
            scale = as_dtype(rng.uniform(0.5, 1.5, scale_shape) * rng.choice([-1.0, 1.0], scale_shape), dt)
            feature = (f"axis {axis if axis is not None else 'default (-1)'}, {_RMS_SCALES[kind][1]}"
                       + "".join(f", {k}={v}" for k, v in node_attrs.items() if k != "axis"))
            cases.append(Case(
                name, "RMSNormalization", feature, ["function", "normalization", dt], 23,
                [helper.make_node("RMSNormalization", ["X", "scale"], ["Y"], **node_attrs)],
                [("X", x), ("scale", scale)], [("Y", elem_of(dt))]))
    return cases


def _rope_angles(positions: np.ndarray, rotary_dim: int) -> np.ndarray:
    inv_freq = 10000.0 ** (-np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
    return positions[..., None].astype(np.float64) * inv_freq


def rotary_embedding() -> list:
    """RotaryEmbedding-23: layout (3-D with num_heads, 4-D) x interleaved x
    rotary dim (full, partial) x position_ids (given, absent)."""
    batch, seq, heads, head_size, max_pos = 2, 5, 3, 8, 16
    cases = []
    for layout in ("3d", "4d"):
        for interleaved in (0, 1):
            for rot in ("full", "partial"):
                for with_pos in (True, False):
                    for dt in FLOATS:
                        label = (f"{layout}_{'interleaved' if interleaved else 'half_split'}_rotary_{rot}_"
                                 f"{'position_ids' if with_pos else 'no_position_ids'}")
                        name = f"test_rotaryembedding_{label}_{dt}"
                        rng = rng_for(name)
                        rotary_dim = head_size if rot == "full" else head_size // 2
                        shape = (batch, seq, heads * head_size) if layout == "3d" else (batch, heads, seq, head_size)
                        x = as_dtype(rng.uniform(-2.0, 2.0, shape), dt)
                        attrs = {"interleaved": interleaved}
                        if layout == "3d":
                            attrs["num_heads"] = heads
                        if rot == "partial":
                            attrs["rotary_embedding_dim"] = rotary_dim
                        inputs = [("X", x)]
                        if with_pos:
                            angles = _rope_angles(np.arange(max_pos), rotary_dim)
                            # Each batch starts at its own offset, as in a batch of decodes.
                            starts = rng.integers(0, max_pos - seq + 1, batch)
                            pos = (starts[:, None] + np.arange(seq)[None, :]).astype(np.int64)
                        else:
                            pos = None
                            starts = rng.integers(0, 50, batch)
                            angles = _rope_angles(starts[:, None] + np.arange(seq)[None, :], rotary_dim)
                        inputs += [("cos_cache", as_dtype(np.cos(angles), dt)), ("sin_cache", as_dtype(np.sin(angles), dt))]
                        if with_pos:
                            inputs.append(("position_ids", pos))
                        feature = (f"{'3-D input with num_heads' if layout == '3d' else '4-D input'}, "
                                   f"{'interleaved pairs' if interleaved else 'half-split pairs'}, "
                                   f"rotary_embedding_dim {'full' if rot == 'full' else f'{rotary_dim} of {head_size}'}, "
                                   f"{'2-D caches indexed by position_ids' if with_pos else '3-D caches per batch and position'}")
                        cases.append(Case(
                            name, "RotaryEmbedding", feature, ["function", "positional", dt], 23,
                            [helper.make_node("RotaryEmbedding", [n for n, _ in inputs], ["Y"], **attrs)],
                            inputs, [("Y", elem_of(dt))]))
    return cases


# (label, cache shape, update length, axis attribute or None for the default)
_SCATTER_LAYOUTS = [
    ("3d_axis_default", (3, 8, 4), 3, None),
    ("3d_axis_last", (3, 4, 8), 3, 2),
    ("4d_axis_2", (3, 2, 6, 3), 2, 2),
    ("4d_axis_1", (3, 6, 2, 3), 2, 1),
]


def _scatter_indices(kind: str, max_len: int, length: int, batch: int):
    """write_indices for each mode case, or None for an absent input."""
    if kind == "linear_no_indices":
        return None
    if kind == "linear_per_batch_offsets":
        return np.array([0, 1, max_len - length - 1][:batch], dtype=np.int64)
    if kind == "linear_fill_to_end":
        return np.array([max_len - length, 0, max_len - length][:batch], dtype=np.int64)
    if kind == "circular_no_wrap":
        return np.array([1, 0, max_len - length][:batch], dtype=np.int64)
    if kind == "circular_wrap":
        return np.array([max_len - 1, 2, max_len - length + 1][:batch], dtype=np.int64)
    if kind == "circular_full_length":
        return np.array([2, 0, max_len - 1][:batch], dtype=np.int64)
    raise ValueError(kind)


_SCATTER_FEATURES = {
    "linear_no_indices": "linear, write_indices absent (write at 0)",
    "linear_per_batch_offsets": "linear, a different write index per batch",
    "linear_fill_to_end": "linear, a write that ends exactly at max_sequence_length",
    "circular_no_wrap": "circular, writes that fit without wrapping",
    "circular_wrap": "circular, writes that wrap around the end of the cache",
    "circular_full_length": "circular, an update as long as the cache starting mid-way (a rotation)",
}


def tensor_scatter() -> list:
    """TensorScatter-24: cache layout and axis x mode and write indices."""
    cases = []
    for layout, cache_shape, length, axis in _SCATTER_LAYOUTS:
        ax = axis if axis is not None else len(cache_shape) - 2
        for kind, description in _SCATTER_FEATURES.items():
            for dt in FLOATS:
                name = f"test_tensorscatter_{kind}_{layout}_{dt}"
                rng = rng_for(name)
                upd_len = cache_shape[ax] if kind == "circular_full_length" else length
                update_shape = list(cache_shape)
                update_shape[ax] = upd_len
                cache = as_dtype(rng.uniform(-4.0, 4.0, cache_shape), dt)
                update = as_dtype(rng.uniform(5.0, 9.0, update_shape) * rng.choice([-1.0, 1.0], update_shape), dt)
                indices = _scatter_indices(kind, cache_shape[ax], upd_len, cache_shape[0])
                attrs = {"mode": "circular" if kind.startswith("circular") else "linear"}
                if axis is not None:
                    attrs["axis"] = axis
                inputs = [("past_cache", cache), ("update", update)]
                if indices is not None:
                    inputs.append(("write_indices", indices))
                cases.append(Case(
                    name, "TensorScatter",
                    f"{description}; cache {list(cache_shape)}, axis {ax}"
                    + (" (default)" if axis is None else ""),
                    ["function", "kv-cache", dt], 24,
                    [helper.make_node("TensorScatter", [n for n, _ in inputs], ["present_cache"], **attrs)],
                    inputs, [("present_cache", elem_of(dt))]))
    return cases


def qdq_matmul() -> list:
    """DequantizeLinear -> MatMul -> QuantizeLinear (opset 23): int8 and
    uint8, per-tensor and per-axis (per output column) scales, with only the
    weight quantized or both operands quantized."""
    m, k, n = 4, 16, 8
    cases = []
    for qtype in ("int8", "uint8"):
        for granularity in ("per_tensor", "per_axis"):
            for pattern in ("weight_only", "both_operands"):
                for dt in FLOATS:
                    name = f"test_qdq_matmul_{pattern}_{qtype}_{granularity}_{dt}"
                    cases.append(_qdq_case(name, qtype, granularity, pattern, dt, m, k, n))
    return cases


def _qdq_case(name, qtype, granularity, pattern, dt, m, k, n) -> Case:
    rng = rng_for(name)
    np_q = np.int8 if qtype == "int8" else np.uint8
    lo, hi = (-128, 127) if qtype == "int8" else (0, 255)
    mid = 0 if qtype == "int8" else 128
    per_axis = granularity == "per_axis"

    def zero_point(shape):
        return (mid + rng.integers(-6, 7, shape)).astype(np_q)

    w_q = rng.integers(lo, hi + 1, (k, n)).astype(np_q)
    w_scale = as_dtype(rng.uniform(0.005, 0.02, (n,) if per_axis else ()), dt)
    w_zp = zero_point((n,) if per_axis else ())
    nodes, inputs, inits = [], [], [("w_q", w_q), ("w_scale", w_scale), ("w_zero_point", w_zp)]
    axis_attr = {"axis": 1} if per_axis else {}
    nodes.append(helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero_point"], ["w"], **axis_attr))
    if pattern == "both_operands":
        a_q = rng.integers(lo, hi + 1, (m, k)).astype(np_q)
        a_scale = as_dtype(rng.uniform(0.01, 0.03), dt)
        a_zp = zero_point(())
        inits += [("a_scale", a_scale), ("a_zero_point", a_zp)]
        inputs.append(("a_q", a_q))
        nodes.append(helper.make_node("DequantizeLinear", ["a_q", "a_scale", "a_zero_point"], ["a"]))
        a_float = (a_q.astype(np.float64) - float(a_zp)) * float(a_scale)
    else:
        a_float = rng.uniform(-2.0, 2.0, (m, k))
        inputs.append(("a", as_dtype(a_float, dt)))
    nodes.append(helper.make_node("MatMul", ["a", "w"], ["y_float"]))
    # An output scale that spreads the float result over most of the integer
    # range, so that the quantized output is neither saturated nor near zero.
    w_float = (w_q.astype(np.float64) - w_zp.astype(np.float64)) * w_scale.astype(np.float64)
    y_float = a_float @ w_float
    span = np.abs(y_float).max(axis=0) if per_axis else np.abs(y_float).max()
    y_scale = as_dtype(np.maximum(span, 1e-3) / 100.0, dt)
    y_zp = zero_point((n,) if per_axis else ())
    inits += [("y_scale", y_scale), ("y_zero_point", y_zp)]
    nodes.append(helper.make_node("QuantizeLinear", ["y_float", "y_scale", "y_zero_point"], ["y"], **axis_attr))
    feature = (f"DequantizeLinear -> MatMul -> QuantizeLinear, {qtype}, {granularity.replace('_', '-')} scales"
               f"{' (axis 1: per output column)' if per_axis else ''}, "
               f"{'weight quantized, activation float' if pattern == 'weight_only' else 'both operands quantized'}, "
               f"{dt} scales")
    return Case(name, "QuantizeLinear", feature, ["function", "qdq", "pattern", qtype, dt], 23,
                nodes, inputs, [("y", TensorProto.INT8 if qtype == "int8" else TensorProto.UINT8)], inits)
