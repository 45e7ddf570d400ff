"""Case matrix of Attention opset 25: the sliding window (left_window_size,
right_window_size) alone and with is_causal, a past cache, an external cache
(nonpad_kv_seqlen), a float mask and grouped-query heads, in 3-D and 4-D and
the three float dtypes. The rest of opset 25 equals 24 (attention_cases.py)."""
from __future__ import annotations

from attention_cases import FEATURES_23, _case, _f
from case_common import DTYPES


def _w(left, right):
    return {"left_window_size": left, "right_window_size": right}


FEATURES_25 = {
    "mha_4d": FEATURES_23["mha_4d"],
    "window_left2_right0_4d": _f("left_window_size 2, right_window_size 0, is_causal 0: the current key and two "
                                 "before it (q_len 3, kv_len 5, offset 0)", attrs=_w(2, 0)),
    "window_left2_right1_4d": _f("asymmetric bidirectional window: left 2, right 1 (the schema's example, q_len 4, "
                                 "kv_len 6)", q_len=4, kv_len=6, attrs=_w(2, 1)),
    "window_left1_right2_3d": _f("left 1, right 2, self attention q_len = kv_len = 6, 3-D", layout="3d", q_len=6,
                                 kv_len=6, attrs=_w(1, 2)),
    "window_right_only_4d": _f("left_window_size -1 (unbounded), right_window_size 1, self attention of 6", q_len=6,
                               kv_len=6, attrs=_w(-1, 1)),
    "window_left_only_3d": _f("left_window_size 2, right_window_size -1 (unbounded), grouped-query 4/2, 3-D",
                              layout="3d", kv_heads=2, q_len=6, kv_len=6, attrs=_w(2, -1)),
    "window_diagonal_4d": _f("left 0 and right 0: each query sees only its own position (self attention of 5)",
                             q_len=5, attrs=_w(0, 0)),
    "window_left3_causal_4d": _f("is_causal 1 with left_window_size 3 (right -1): a causal sliding window, self "
                                 "attention of 7", q_len=7, kv_len=7, attrs={"is_causal": 1, **_w(3, -1)}),
    "window_left2_causal_gqa_3d": _f("is_causal 1 with left 2, right 0, grouped-query 4/2, 3-D, self attention of 6",
                                     layout="3d", kv_heads=2, q_len=6, kv_len=6,
                                     attrs={"is_causal": 1, **_w(2, 0)}),
    "window_causal_past_4d": _f("is_causal 1, left 3, with past of 4 and present outputs (absolute query position "
                                "= past length + index)", q_len=2, kv_len=2, past=4,
                                attrs={"is_causal": 1, **_w(3, -1)}),
    "window_past_noncausal_3d": _f("is_causal 0, left 2, right 1, with past of 4, 3-D grouped-query (the window "
                                   "follows the offset of the cache)", layout="3d", kv_heads=2, q_len=2, kv_len=2,
                                   past=4, attrs=_w(2, 1)),
    "window_nonpad_causal_4d": _f("is_causal 1, left 2, external cache of 6 with nonpad_kv_seqlen [4, 6] "
                                  "(offset nonpad - q_len per batch)", q_len=2, kv_len=6, nonpad=[4, 6],
                                  attrs={"is_causal": 1, **_w(2, -1)}),
    "window_float_mask_4d": _f("left 1, right 1 with a float mask [q, total] added inside the window", q_len=5,
                               mask=("float", "qt"), attrs=_w(1, 1)),
    "window_softcap_qk_mode_3_4d": _f("left 2, right 0, softcap 3.0, qk_matmul_output_mode 3 (probabilities after "
                                      "the window)", q_len=5, attrs={"softcap": 3.0, "qk_matmul_output_mode": 3,
                                                                      **_w(2, 0)}),
}


def attention25() -> list:
    return [_case(f"test_attention_opset25_{label}_{dt}", 25, dt, cfg)
            for label, cfg in FEATURES_25.items() for dt in DTYPES]
