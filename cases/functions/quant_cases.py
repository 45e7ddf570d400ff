"""Case matrix of the QDQ patterns beyond basic_cases.qdq_matmul: MatMul with
int4, uint4, float8e4m3fn and float8e5m2 (and blocked int8/uint8) weights at
per-tensor, per-axis and blocked granularity, float8 saturation, and
Attention with dequantized Q, K, V and a quantized output."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

from case_common import DTYPES, Case, as_dtype, rng_for

# name -> (numpy type, ONNX element type, integer range or None for float8,
#          the zero point at the middle of the range)
QTYPES = {
    "int8": (np.int8, TensorProto.INT8, (-128, 127), 0),
    "uint8": (np.uint8, TensorProto.UINT8, (0, 255), 128),
    "int4": (ml_dtypes.int4, TensorProto.INT4, (-8, 7), 0),
    "uint4": (ml_dtypes.uint4, TensorProto.UINT4, (0, 15), 8),
    "float8e4m3fn": (ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN, None, 0),
    "float8e5m2": (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2, None, 0),
}
# Largest finite magnitude of each float8 type (saturation bound).
FLOAT8_MAX = {"float8e4m3fn": 448.0, "float8e5m2": 57344.0}


def _is_float8(qtype):
    return QTYPES[qtype][2] is None


def _quantized(rng, qtype, shape):
    """Random stored values: the full integer range, or float8 values spread
    over about five binades around 1 with both signs."""
    np_q, _, bounds, _ = QTYPES[qtype]
    if bounds is None:
        mag = np.exp2(rng.uniform(-3.0, 3.0, shape)) * rng.choice([-1.0, 1.0], shape)
        return mag.astype(np_q)
    return rng.integers(bounds[0], bounds[1] + 1, shape).astype(np_q)


def _zero_point(rng, qtype, shape):
    """Near the middle of the range for integers (a spread of ±2 for 4-bit,
    ±6 for 8-bit); always 0 for float8, as the schema requires."""
    np_q, _, bounds, mid = QTYPES[qtype]
    if bounds is None:
        return np.zeros(shape, dtype=np_q)
    spread = 2 if bounds[1] - bounds[0] < 20 else 6
    return (mid + rng.integers(-spread, spread + 1, shape)).astype(np_q)


def _dequantize(q, scale, zp, axis=None, block=None):
    """The float64 value of a DequantizeLinear, for sizing the output scale."""
    s = scale.astype(np.float64)
    z = zp.astype(np.float64)
    if block:
        s = np.repeat(s, block, axis=axis)
        z = np.repeat(z, block, axis=axis)
    elif s.ndim == 1 and q.ndim > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    return (q.astype(np.float64) - z) * s


def _out_scale(span, qtype, dt, headroom=1.0):
    """An output scale that maps `span` onto most of the quantized range (for
    float8, onto about a quarter of its finite range times `headroom`)."""
    bounds = QTYPES[qtype][2]
    reach = (FLOAT8_MAX[qtype] / 4.0 * headroom) if bounds is None else 0.8 * (bounds[1] - bounds[0]) / 2.0
    return as_dtype(np.maximum(span, 1e-3) / reach, dt)


# Granularity of the weight (and of the output) quantization:
#   per_tensor: scalar scales; per_axis: one per output column (axis 1);
#   blocked: weight scales [K / 4, N] along axis 0 (block_size 4), output
#   scales [M, N / 4] along axis 1 (block_size 4).
def _qdq_matmul_case(name, qtype, granularity, dt, opset, m=4, k=16, n=8) -> Case:
    rng = rng_for(name)
    block = 4
    w_q = _quantized(rng, qtype, (k, n))
    if granularity == "per_tensor":
        w_shape, w_attrs = (), {}
    elif granularity == "per_axis":
        w_shape, w_attrs = (n,), {"axis": 1}
    else:
        w_shape, w_attrs = (k // block, n), {"axis": 0, "block_size": block}
    base = 0.05 if _is_float8(qtype) else (0.08 if "4" in qtype else 0.01)
    w_scale = as_dtype(rng.uniform(0.5 * base, 1.5 * base, w_shape), dt)
    w_zp = _zero_point(rng, qtype, w_shape)
    a = as_dtype(rng.uniform(-2.0, 2.0, (m, k)), dt)
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero_point"], ["w"], **w_attrs),
             helper.make_node("MatMul", ["a", "w"], ["y_float"])]
    w = _dequantize(w_q, w_scale, w_zp, w_attrs.get("axis"), w_attrs.get("block_size"))
    y = a.astype(np.float64) @ w
    if granularity == "per_tensor":
        y_scale, y_attrs = _out_scale(np.abs(y).max(), qtype, dt), {}
    elif granularity == "per_axis":
        y_scale, y_attrs = _out_scale(np.abs(y).max(axis=0), qtype, dt), {"axis": 1}
    else:
        span = np.abs(y).reshape(m, n // block, block).max(axis=2)
        y_scale, y_attrs = _out_scale(span, qtype, dt), {"axis": 1, "block_size": block}
    y_zp = _zero_point(rng, qtype, y_scale.shape)
    nodes.append(helper.make_node("QuantizeLinear", ["y_float", "y_scale", "y_zero_point"], ["y"], **y_attrs))
    inits = [("w_q", w_q), ("w_scale", w_scale), ("w_zero_point", w_zp), ("y_scale", y_scale), ("y_zero_point", y_zp)]
    gran_text = {"per_tensor": "per-tensor scales", "per_axis": "per-axis scales (axis 1: per output column)",
                 "blocked": "blocked scales (weight: axis 0, block_size 4; output: axis 1, block_size 4)"}[granularity]
    feature = (f"DequantizeLinear -> MatMul -> QuantizeLinear (opset {opset}), {qtype} weight and output, "
               f"{gran_text}, float activation, {dt} scales")
    tags = ["function", "qdq", "pattern", qtype, granularity, dt, f"opset{opset}"]
    return Case(name, "QuantizeLinear", feature, tags, opset, nodes, [("a", a)], [("y", QTYPES[qtype][1])], inits)


def qdq_matmul_more() -> list:
    cases = []
    for qtype in ("int4", "uint4", "float8e4m3fn", "float8e5m2"):
        for granularity in ("per_tensor", "per_axis", "blocked"):
            for dt in DTYPES:
                cases.append(_qdq_matmul_case(f"test_qdq_matmul_{qtype}_{granularity}_{dt}", qtype, granularity, dt,
                                              23))
    for qtype in ("int8", "uint8"):
        for dt in DTYPES:
            cases.append(_qdq_matmul_case(f"test_qdq_matmul_{qtype}_blocked_{dt}", qtype, "blocked", dt, 23))
    # Blocked quantization is new in opset 21: the same pattern there.
    for qtype in ("int4", "uint4", "int8"):
        for dt in DTYPES:
            cases.append(_qdq_matmul_case(f"test_qdq_matmul_opset21_{qtype}_blocked_{dt}", qtype, "blocked", dt, 21))
    return cases


def _saturate_case(name, qtype, saturate, dt) -> Case:
    """QuantizeLinear to float8 of values up to 1.5 times the largest finite
    float8 (a third of them beyond it): saturate=1 clamps them to ±max, saturate=0 gives NaN
    (e4m3fn has no infinity) or ±inf (e5m2)."""
    rng = rng_for(name)
    fmax = FLOAT8_MAX[qtype]
    x = as_dtype(rng.uniform(-4.0, 4.0, (4, 8)), dt)
    scale = as_dtype(4.0 / (1.5 * fmax), dt)  # |x / scale| reaches 1.5 * max: a third saturates
    zp = np.zeros((), dtype=QTYPES[qtype][0])
    node = helper.make_node("QuantizeLinear", ["x", "y_scale", "y_zero_point"], ["y"], saturate=saturate)
    feature = (f"QuantizeLinear to {qtype} with saturate={saturate}, values up to 1.5 times the largest finite "
               f"{qtype} ({'clamped to ±max' if saturate else ('NaN' if qtype == 'float8e4m3fn' else '±inf')}), "
               f"{dt} input")
    return Case(name, "QuantizeLinear", feature, ["function", "qdq", qtype, "saturate", dt, "opset23"], 23, [node],
                [("x", x)], [("y", QTYPES[qtype][1])], [("y_scale", scale), ("y_zero_point", zp)])


def float8_saturation() -> list:
    return [_saturate_case(f"test_quantize_linear_{q}_saturate_{s}_{dt}", q, s, dt)
            for q in ("float8e4m3fn", "float8e5m2") for s in (1, 0) for dt in DTYPES]


def _qdq_attention_case(name, qtype, granularity, dt, opset=23) -> Case:
    """3-D Q, K, V [B, S, H * E] stored quantized, each dequantized, then
    Attention (grouped-query 4/2 heads, causal), then Y quantized per tensor.
    Granularity of the inputs: per_tensor; per_axis along the hidden axis 2
    (one scale per channel); blocked along axis 2 with block_size = head size
    (one scale per token and head, [B, S, H])."""
    rng = rng_for(name)
    b, q_len, kv_len, qh, kvh, e = 2, 4, 4, 4, 2, 8
    inputs, inits, nodes = [], [], []
    names = []
    for tensor, heads, seq in (("Q", qh, q_len), ("K", kvh, kv_len), ("V", kvh, kv_len)):
        shape = (b, seq, heads * e)
        q = _quantized(rng, qtype, shape)
        if granularity == "per_tensor":
            s_shape, attrs = (), {}
        elif granularity == "per_axis":
            s_shape, attrs = (heads * e,), {"axis": 2}
        else:
            s_shape, attrs = (b, seq, heads), {"axis": 2, "block_size": e}
        # Dequantized magnitudes around 1 (Q, K) or 2 (V) whatever the type's range.
        reach = 2.0 if _is_float8(qtype) else (QTYPES[qtype][2][1] - QTYPES[qtype][2][0]) / 2.0
        target = 2.0 if tensor == "V" else 1.2
        scale = as_dtype(rng.uniform(0.7, 1.3, s_shape) * target / reach, dt)
        zp = _zero_point(rng, qtype, s_shape)
        inputs.append((f"{tensor}_q", q))
        inits += [(f"{tensor}_scale", scale), (f"{tensor}_zero_point", zp)]
        nodes.append(helper.make_node("DequantizeLinear", [f"{tensor}_q", f"{tensor}_scale", f"{tensor}_zero_point"],
                                      [tensor], **attrs))
        names.append(tensor)
    nodes.append(helper.make_node("Attention", names, ["Y_float"], q_num_heads=qh, kv_num_heads=kvh, is_causal=1))
    # Y is a convex combination of V rows, so |Y| <= max |V|; size the output
    # scale on that bound.
    v_q, v_scale, v_zp = inputs[2][1], inits[4][1], inits[5][1]
    v = _dequantize(v_q, v_scale, v_zp, 2, e if granularity == "blocked" else None)
    y_scale = _out_scale(np.abs(v).max(), qtype, dt)
    y_zp = _zero_point(rng, qtype, ())
    inits += [("Y_scale", y_scale), ("Y_zero_point", y_zp)]
    nodes.append(helper.make_node("QuantizeLinear", ["Y_float", "Y_scale", "Y_zero_point"], ["Y"]))
    gran_text = {"per_tensor": "per-tensor scales", "per_axis": "per-axis scales along the hidden axis 2",
                 "blocked": "blocked scales along axis 2 with block_size = head size (one per token and head)"}
    feature = (f"DequantizeLinear on Q, K, V -> Attention (3-D, grouped-query 4/2 heads, is_causal) -> QuantizeLinear "
               f"(per tensor), {qtype}, inputs with {gran_text[granularity]}, {dt} scales")
    return Case(name, "Attention", feature, ["function", "qdq", "pattern", "attention", qtype, granularity, dt,
                                             f"opset{opset}"], opset, nodes, inputs, [("Y", QTYPES[qtype][1])], inits)


def qdq_attention() -> list:
    cases = []
    for qtype in ("int8", "uint8", "int4", "float8e4m3fn"):
        for granularity in ("per_tensor", "per_axis", "blocked"):
            for dt in DTYPES:
                cases.append(_qdq_attention_case(f"test_qdq_attention_{qtype}_{granularity}_{dt}", qtype, granularity,
                                                 dt))
    return cases


def quant() -> list:
    return qdq_matmul_more() + float8_saturation() + qdq_attention()
