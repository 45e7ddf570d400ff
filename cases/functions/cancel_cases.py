"""16-bit cases whose sums cancel: the exact result is small next to its
terms, so a backend that sums in float16 or bfloat16, or in another order
with a rounding in between, loses most of its digits where one that sums in
float32 keeps them. Attention whose value rows cancel in pairs,
SkipLayerNormalization and SkipSimplifiedLayerNormalization
(org.onnxparity.contrib) whose input + skip + bias cancels, and
RMSNormalization after the same residual sum written as two Adds."""
from __future__ import annotations

import numpy as np
from onnx import helper

from attention_cases import _case as attention_case
from attention_cases import _f
from case_common import Case, as_dtype, elem_of, rng_for
from contrib_cases import _signed_gamma, _skip_case
from stress_cases import input_of, replace_input

SIXTEEN_BIT = ("float16", "bfloat16")


def _large_terms(rng, shape):
    """Magnitudes in [32, 64) of either sign: float16 keeps steps of 1/32
    there, bfloat16 steps of 1/4."""
    return rng.uniform(32.0, 64.0, shape) * rng.choice([-1.0, 1.0], shape)


def _cancelling_partner(rng, x, dt, spread):
    """-x + r rounded to the dtype, r ~ N(0, spread): x plus it is r to within
    x's spacing, and that sum is exact in the dtype (Sterbenz: the two are
    within a factor 2 of each other), so the cancellation is in the data,
    not in how the generator rounded."""
    return as_dtype(-x.astype(np.float64) + rng.normal(0.0, spread, x.shape), dt)


# Attention: keys 2i and 2i+1 are equal, so they get the same weight, and
# value rows 2i and 2i+1 cancel to within about 0.5: Y = sum over pairs of
# p (V_2i + V_2i+1) is a few tenths where |V| is 32 to 64.
CANCEL_ATTENTION = [
    (23, "cancelling_values_4d", _f("value rows of magnitude 32-64 cancel in pairs over duplicated keys (Y about 1% "
                                    "of |V|), 4-D", batch=1, q_heads=2, kv_heads=2, q_len=4, kv_len=16, head=16,
                                    v_head=16)),
    (24, "cancelling_values_gqa_3d", _f("value rows of magnitude 32-64 cancel in pairs over duplicated keys, "
                                        "grouped-query 4/2 heads, 3-D", layout="3d", batch=1, q_heads=4,
                                        kv_heads=2, q_len=4, kv_len=16, head=16, v_head=16)),
]


def _pair_up(array, seq_axis, odd):
    """A copy of `array` whose odd positions along `seq_axis` are `odd`."""
    out = np.moveaxis(array.copy(), seq_axis, 0)
    out[1::2] = odd
    return np.moveaxis(out, 0, seq_axis)


def cancelling_attention() -> list:
    cases = []
    for opset, label, cfg in CANCEL_ATTENTION:
        for dt in SIXTEEN_BIT:
            name = f"test_attention_opset{opset}_{label}_{dt}"
            case = attention_case(name, opset, dt, cfg)
            case.tags.append("cancellation")
            rng = rng_for(name + "/cancel")
            seq_axis = 2 if cfg["layout"] == "4d" else 1
            k = input_of(case, "K")
            replace_input(case, "K", _pair_up(k, seq_axis, np.moveaxis(k, seq_axis, 0)[0::2]))
            v_shape = list(input_of(case, "V").shape)
            v_shape[seq_axis] //= 2
            even = as_dtype(_large_terms(rng, v_shape), dt)
            odd = _cancelling_partner(rng, even, dt, 0.5)
            v = np.repeat(even, 2, axis=seq_axis)
            replace_input(case, "V", _pair_up(v, seq_axis, np.moveaxis(odd, seq_axis, 0)))
            cases.append(case)
    return cases


def cancelling_skip_normalization() -> list:
    """input of magnitude 32-64, skip = -input + r (r ~ N(0, 1)), bias in
    [-0.5, 0.5]: the sum is about 1. Adding bias to input first, in the
    dtype, would round at input's spacing (1/32 in float16, 1/4 in bfloat16)."""
    cases = []
    for op, with_beta in (("SkipLayerNormalization", True), ("SkipSimplifiedLayerNormalization", False)):
        for dt in SIXTEEN_BIT:
            case = _skip_case(op, with_beta, "cancelling_sum_bias", dt, (2, 4, 32), (2, 4, 32), with_beta, True,
                              "all_outputs", {})
            case.feature = "skip = -input + r: input + skip + bias cancels to about 1 from terms of 32-64; " + case.feature
            case.tags.append("cancellation")
            rng = rng_for(case.name + "/cancel")
            x = as_dtype(_large_terms(rng, (2, 4, 32)), dt)
            replace_input(case, "input", x)
            replace_input(case, "skip", _cancelling_partner(rng, x, dt, 1.0))
            cases.append(case)
    return cases


def cancelling_rms_normalization() -> list:
    """The residual sum of a pre-norm block as two Adds, then
    RMSNormalization: X + skip + bias cancels to about 1, as above."""
    cases = []
    shape, hidden = (2, 4, 32), 32
    for dt in SIXTEEN_BIT:
        name = f"test_rmsnormalization_cancelling_residual_sum_{dt}"
        rng = rng_for(name)
        x = as_dtype(_large_terms(rng, shape), dt)
        inputs = [("X", x), ("skip", _cancelling_partner(rng, x, dt, 1.0)),
                  ("bias", as_dtype(rng.uniform(-0.5, 0.5, [hidden]), dt)),
                  ("scale", _signed_gamma(rng, [hidden], dt))]
        nodes = [helper.make_node("Add", ["X", "skip"], ["residual"]),
                 helper.make_node("Add", ["residual", "bias"], ["summed"]),
                 helper.make_node("RMSNormalization", ["summed", "scale"], ["Y"])]
        cases.append(Case(name, "RMSNormalization",
                          "Add(Add(X, skip), bias) then RMSNormalization over the last axis: X [2, 4, 32] of "
                          "magnitude 32-64, skip = -X + r, the sum about 1",
                          ["function", "normalization", dt, "cancellation"], 23, nodes, inputs,
                          [("Y", elem_of(dt))]))
    return cases


def cancel() -> list:
    return cancelling_attention() + cancelling_skip_normalization() + cancelling_rms_normalization()
