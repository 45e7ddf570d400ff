"""Stress cases of Attention (opsets 23 and 24): logits up to about 2e4, so
that a softmax without the max subtraction overflows; more fully masked rows;
key sequences of 4096 and more. The models come from the Attention builder
of attention_cases.py; only the inputs are shaped here, each from the
generator seeded by the case name. The 16-bit cancellation cases are in
cancel_cases.py."""
from __future__ import annotations

import numpy as np

from attention_cases import _case as attention_case
from attention_cases import _f
from case_common import DTYPES, as_dtype, rng_for

FLOAT16_MAX = 65504.0


def replace_input(case, name: str, array: np.ndarray) -> None:
    """Puts `array` in place of the case's input `name`, which the builder
    drew with the same shape and type."""
    names = [n for n, _ in case.inputs]
    if name not in names:
        raise ValueError(f"{case.name}: no input named {name!r} (inputs: {', '.join(names)})")
    index = names.index(name)
    old = case.inputs[index][1]
    if old.shape != array.shape or old.dtype != array.dtype:
        raise ValueError(f"{case.name}: input {name!r} replaced by {array.dtype}{list(array.shape)}, "
                         f"the model declares {old.dtype}{list(old.shape)}")
    case.inputs[index] = (name, array)


def input_of(case, name: str) -> np.ndarray:
    return dict(case.inputs)[name]


def to_layout(x: np.ndarray, layout: str) -> np.ndarray:
    """[B, H, S, D] as the case's layout takes it ([B, S, H*D] for 3-D)."""
    if layout == "4d":
        return x
    b, h, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, h * d)


# ---------------------------------------------------------------------------
# Large logits. Each key/value head splits the 16 channels at random into 12
# "size" channels, carrying signs u, and 4 "spread" channels, carrying signs
# v: Q_i = alpha_i u + delta_i v and K_j = beta_j u + gamma_j v, so
# Q_i . K_j = 12 alpha_i beta_j + 4 delta_i gamma_j. |alpha beta| sets the
# size of the score (up to `peak_raw`); three keys share the top beta = +1
# and three the bottom -1, and the small delta gamma term spreads the tied
# scores by about 2 after scaling, so the softmax mixes a few keys instead of
# picking one. The spread lives on its own channels, so bfloat16 keeps it.
# Every product of elements and every partial sum keeps the sign of alpha
# beta, so none exceeds peak_raw: a kernel that forms Q K^T in float16 stays
# finite; only exp() of the unshifted scores overflows (exp(88.7) is
# float32's largest). Elements are multiples of 1/8 (and stay so in
# bfloat16), so every product and partial sum, below 2^16, is exact in
# float32: a float32 kernel gets the scores exactly, and the case measures
# the softmax, not the conditioning of a score of 2e4.
LARGE = {"batch": 2, "q_heads": 2, "kv_heads": 2, "q_len": 4, "kv_len": 16, "head": 16, "v_head": 16}


def _large_logit_qk(rng, cfg, peak_raw, scale, positive_rows=(), mixed=True):
    b, qh, kvh, s, kv = cfg["batch"], cfg["q_heads"], cfg["kv_heads"], cfg["q_len"], cfg["past"] + cfg["kv_len"]
    group = qh // kvh
    magnitude = np.sqrt(peak_raw / 12.0)  # alpha and beta at most this
    beta = rng.uniform(0.2, 0.8, kv) * rng.choice([-1.0, 1.0], kv)
    top = rng.choice(kv, 6, replace=False)
    beta[top[:3]], beta[top[3:]] = 1.0, -1.0
    if not mixed:
        # Every key a different magnitude, evenly spaced in [0.2, 1]: among
        # any keys a row sees, one leads by hundreds of units, so the softmax
        # is one-hot even after the scores round to a 16-bit type (spacing
        # 16 in float16 and 128 in bfloat16 near 2e4): a conventional 16-bit
        # run stays exact, and the case judges a kernel, not the rounding.
        levels = np.linspace(0.2, 1.0, kv)[rng.permutation(kv)]
        beta = levels * rng.choice([-1.0, 1.0], kv)
    delta = 0.5 / scale  # scale * 4 * delta * gamma = 2 gamma
    q, k = np.zeros((b, qh, s, 16)), np.zeros((b, kvh, kv, 16))
    for bi in range(b):
        for kh in range(kvh):
            channels = rng.permutation(16)
            u, v = np.zeros(16), np.zeros(16)
            u[channels[:12]] = rng.choice([-1.0, 1.0], 12)
            v[channels[12:]] = rng.choice([-1.0, 1.0], 4)
            k[bi, kh] = np.outer(beta * magnitude, u) + np.outer(rng.normal(0.0, 0.6, kv), v)
            for h in range(kh * group, (kh + 1) * group):
                sign = rng.choice([-1.0, 1.0], s)
                sign[list(positive_rows)] = 1.0
                alpha = magnitude * rng.choice([0.75, 1.0], s) * sign
                q[bi, h] = np.outer(alpha, u) + np.outer(rng.choice([-1.0, 1.0], s) * delta, v)
    return np.round(q * 8.0) / 8.0, np.round(k * 8.0) / 8.0, beta


def _check_large(case, q, k, scale, least_peak):
    """The case is what it claims: products and raw dot products finite in
    float16, scores reaching `least_peak`."""
    group = q.shape[1] // k.shape[1]
    kk = np.repeat(k.astype(np.float64), group, axis=1)
    products = q.astype(np.float64)[:, :, :, None, :] * kk[:, :, None, :, :]
    raw = np.cumsum(products, axis=-1)
    if np.abs(raw).max() > 0.8 * FLOAT16_MAX:
        raise ValueError(f"{case.name}: a partial dot product reaches {np.abs(raw).max():g}, near float16's limit")
    peak = np.abs(raw[..., -1]).max() * scale
    if peak < least_peak:
        raise ValueError(f"{case.name}: the largest score is {peak:g}, below {least_peak:g}")


def _large_case(opset, label, cfg, dt, peak_raw, scale):
    name = f"test_attention_opset{opset}_{label}_{dt}"
    case = attention_case(name, opset, dt, cfg)
    case.tags.append("large-logits")
    rng = rng_for(name + "/large-logits")
    kind = cfg["mask"][0] if cfg["mask"] else None
    # With a bool mask, query 1 keeps only keys of negative beta, and its
    # alpha is positive: every score it keeps is below -1000, so a softmax
    # without the max subtraction underflows to 0/0 there.
    positive_rows = (1,) if kind == "bool" else ()
    # float32 mixes two or three keys per row at scores near 2e4; the 16-bit
    # types keep one winner per row (_large_logit_qk).
    q, k, beta = _large_logit_qk(rng, cfg, peak_raw, scale, positive_rows, mixed=dt == "float32")
    q, k = as_dtype(q, dt), as_dtype(k, dt)
    _check_large(case, q, k, scale, least_peak=0.5 * peak_raw * scale)
    replace_input(case, "Q", to_layout(q, cfg["layout"]))
    replace_input(case, "K", to_layout(k, cfg["layout"]))
    if kind == "bool":
        mask = input_of(case, "attn_mask").copy()
        mask[..., 1, :] = beta < 0
        replace_input(case, "attn_mask", mask)
    elif kind == "float":
        # Finite offsets in [-3, 0.5] in steps of 1/8 (so that score + mask
        # stays exact in float32), and -1e4 on about a third of the keys:
        # large, and finite in every dtype.
        mask = np.round(rng.uniform(-3.0, 0.5, input_of(case, "attn_mask").shape) * 8.0) / 8.0
        mask[rng.random(mask.shape) < 0.3] = -1e4
        replace_input(case, "attn_mask", as_dtype(mask, dt))
    return case


def _large(description, **changes):
    return _f(description, **{**LARGE, **changes})


# (label, config, largest raw dot product, scale)
LARGE_FEATURES = [
    ("large_logits_4d", _large("scores up to 2e4 (scale 1.0), no mask"), 20480.0, 1.0),
    ("large_logits_bool_mask_4d", _large("scores up to 2e4, bool mask [B, 1, q, T]; query 1 keeps only keys "
                                         "scored below -1000", mask=("bool", "b1qt")), 20480.0, 1.0),
    ("large_logits_float_mask_4d", _large("scores up to 2e4, float mask [B, H, q, T] in [-3, 0.5] with -1e4 on "
                                          "a third of the keys", mask=("float", "bhqt")), 20480.0, 1.0),
    ("large_logits_causal_4d", _large("scores up to 2e4, is_causal=1, self attention of 12", q_len=12, kv_len=12,
                                      attrs={"is_causal": 1}), 20480.0, 1.0),
    ("large_logits_gqa_3d", _large("scores up to 1.2e4 with the default scale 1/4 (raw products up to 4.9e4), "
                                   "grouped-query 4/2 heads, 3-D", layout="3d", q_heads=4), 49152.0, 0.25),
    # Softcap 100: the capped scores reach 100, past float32's exp limit, and
    # tanh(200) must saturate (a tanh written with exp(2x) gives inf / inf).
    ("large_logits_softcap_4d", _large("scores up to 2e4 through softcap 100 (scale 1.0)",
                                       attrs={"softcap": 100.0}), 20480.0, 1.0),
]


def large_logits() -> list:
    cases = []
    for opset in (23, 24):
        for label, cfg, peak_raw, scale in LARGE_FEATURES:
            if scale != 0.25:
                cfg = {**cfg, "attrs": {**cfg["attrs"], "scale": scale}}
            for dt in DTYPES:
                cases.append(_large_case(opset, label, cfg, dt, peak_raw, scale))
    return cases


# ---------------------------------------------------------------------------
# Fully masked rows: each gives a zero row of Y (and of mode-3 probabilities),
# spec/functions/attention.md, step 7.
def _mask_rows_bool_b1qt(case, rng):
    mask = input_of(case, "attn_mask").copy()  # [2, 1, 4, T]
    mask[0, 0, 0, :] = False
    mask[1, 0, 1, :] = False
    mask[1, 0, 3, :] = False
    replace_input(case, "attn_mask", mask)


def _mask_rows_float_neginf(case, rng):
    mask = input_of(case, "attn_mask").astype(np.float64)  # [2, 4, 3, T]
    blocked = rng.random(mask.shape) < 0.25
    blocked[..., 0] = False
    mask[blocked] = -np.inf
    for b, h, i in ((0, 0, 1), (0, 3, 2), (1, 1, 0), (1, 2, 1)):
        mask[b, h, i, :] = -np.inf
    replace_input(case, "attn_mask", mask.astype(input_of(case, "attn_mask").dtype))


def _mask_rows_causal_and_mask(case, rng):
    # Past 2, so query i sees keys j <= i + 2 of 5. Rows 0 and 1 of the mask
    # keep only keys the causal rule blocks: neither masks the row alone.
    mask = input_of(case, "attn_mask").copy()  # [3, 5]
    mask[0, :] = [False, False, False, True, True]
    mask[1, :] = [False, False, False, False, True]
    replace_input(case, "attn_mask", mask)


MASKED_FEATURES = [
    ((23, 24), "fully_masked_rows_bool_mask_gqa_3d",
     _f("bool mask [B, 1, q, T] with rows all false (batch 0 row 0, batch 1 rows 1 and 3), grouped-query 4/2, 3-D",
        layout="3d", kv_heads=2, q_len=4, kv_len=6, mask=("bool", "b1qt")), _mask_rows_bool_b1qt),
    ((23,), "fully_masked_rows_float_mask_neginf_4d",
     _f("float mask [B, H, q, T] with four rows all -inf and -inf on a quarter of the other keys",
        mask=("float", "bhqt")), _mask_rows_float_neginf),
    ((24,), "fully_masked_rows_float_mask_neginf_qk_mode_3_4d",
     _f("float mask [B, H, q, T] with four rows all -inf, qk_matmul_output_mode 3 (zero probability rows)",
        mask=("float", "bhqt"), attrs={"qk_matmul_output_mode": 3}), _mask_rows_float_neginf),
    ((23, 24), "fully_masked_rows_causal_and_bool_mask_4d",
     _f("is_causal=1 with past 2 and a bool mask [q, T] whose rows 0 and 1 keep only keys the causal rule "
        "blocks", q_len=3, kv_len=3, past=2, mask=("bool", "qt"), attrs={"is_causal": 1}),
     _mask_rows_causal_and_mask),
    ((24,), "fully_masked_rows_nonpad_zero_gqa_3d",
     _f("nonpad_kv_seqlen [0, 5]: batch 0 has no key at all, grouped-query 4/2, 3-D", layout="3d", kv_heads=2,
        kv_len=6, nonpad=[0, 5]), None),
    ((24,), "fully_masked_rows_nonpad_zero_causal_4d",
     _f("nonpad_kv_seqlen [0, 6] with is_causal=1: batch 0 empty (offset -3), batch 1 offset 3", kv_len=6,
        nonpad=[0, 6], attrs={"is_causal": 1}), None),
    ((24,), "fully_masked_rows_causal_negative_offset_gqa_3d",
     _f("nonpad_kv_seqlen [1, 6] with is_causal=1 and q_len 4: batch 0 offset -3 leaves rows 0-2 empty and row 3 "
        "key 0; grouped-query 4/2, 3-D", layout="3d", kv_heads=2, q_len=4, kv_len=6, nonpad=[1, 6],
        attrs={"is_causal": 1}), None),
]


def fully_masked_rows() -> list:
    cases = []
    for opsets, label, cfg, shape_mask in MASKED_FEATURES:
        for opset in opsets:
            for dt in DTYPES:
                name = f"test_attention_opset{opset}_{label}_{dt}"
                case = attention_case(name, opset, dt, cfg)
                if shape_mask is not None:
                    shape_mask(case, rng_for(name + "/mask"))
                cases.append(case)
    return cases


# ---------------------------------------------------------------------------
# Long key sequences: one head of 16 (two query heads for grouped-query), so
# a float32 cache of 4096 keys is 256 KiB per tensor. V is a per-column
# offset in [-2, 2] plus noise in [-1, 1]: the output is near the offsets, so
# an error in the softmax's sum over 4096 keys scales it visibly instead of
# hiding in an output near zero.
LONG = {"batch": 1, "q_heads": 1, "kv_heads": 1, "q_len": 1, "kv_len": 4096, "head": 16, "v_head": 16}


def _long(description, **changes):
    return _f(description, **{**LONG, **changes})


LONG_FEATURES = [
    (23, "long_decode_4d", _long("decode: 1 query over 4096 keys, one head of 16")),
    (23, "long_decode_gqa_3d", _long("decode: 1 query over 4096 keys, 2 query heads on 1 key/value head, 3-D",
                                     layout="3d", q_heads=2)),
    # Past and present go together (the schema: "They shall be used
    # together"), so this case also writes the two 4096-key present outputs.
    (23, "long_prefill_chunk_causal_past_4d",
     _long("a chunk of 4 queries after a past of 4092 keys (T = 4096), is_causal=1, with present outputs",
           q_len=4, kv_len=4, past=4092, attrs={"is_causal": 1})),
    (24, "long_decode_nonpad_4d", _long("decode: 1 query over an external cache of 4352 keys, nonpad_kv_seqlen [4100]",
                                        kv_len=4352, nonpad=[4100])),
    (24, "long_prefill_chunk_causal_nonpad_4d",
     _long("a chunk of 4 queries over an external cache of 4352, nonpad_kv_seqlen [4096] with is_causal=1 (offset "
           "4092)", q_len=4, kv_len=4352, nonpad=[4096], attrs={"is_causal": 1})),
]


def long_sequences() -> list:
    cases = []
    for opset, label, cfg in LONG_FEATURES:
        for dt in DTYPES:
            name = f"test_attention_opset{opset}_{label}_{dt}"
            case = attention_case(name, opset, dt, cfg)
            case.tags.append("long-sequence")
            rng = rng_for(name + "/values")
            for key in ("V", "past_value"):
                if key in dict(case.inputs):
                    shape = input_of(case, key).shape
                    offsets = rng.uniform(-2.0, 2.0, shape[-1])
                    replace_input(case, key, as_dtype(offsets + rng.uniform(-1.0, 1.0, shape), dt))
            cases.append(case)
    return cases


def stress() -> list:
    return large_logits() + fully_masked_rows() + long_sequences()
