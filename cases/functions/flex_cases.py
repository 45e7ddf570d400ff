"""Case matrix of FlexAttention (ai.onnx.preview 1, with ai.onnx 26): no
hooks, explicit scale, grouped-query heads, a value head size of its own,
score_mod hooks (relative position bias, causal mask by Where, soft cap by
Tanh), prob_mod hooks, both hooks at once and an explicit softmax_precision,
in float32 and float16. Hooks are whole-tensor graphs that find positions
from Shape and Range, as in spec/functions/flex_attention.md."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from case_common import Case, as_dtype, elem_of, rng_for

FLEX_DTYPES = ("float32", "float16")
OPSET = 26
DOMAIN = "ai.onnx.preview"


def _positions(prefix):
    """Nodes and initializers giving q_idx [L, 1] and k_idx [1, S] (int64)
    from the shape of the hook's input `x`."""
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in
             ((f"{prefix}zero", 0), (f"{prefix}one", 1), (f"{prefix}two", 2), (f"{prefix}three", 3),
              (f"{prefix}q_shape", [-1, 1]), (f"{prefix}k_shape", [1, -1]))]
    nodes = [helper.make_node("Shape", ["x"], ["x_shape"]),
             helper.make_node("Gather", ["x_shape", f"{prefix}two"], ["L"], axis=0),
             helper.make_node("Gather", ["x_shape", f"{prefix}three"], ["S"], axis=0),
             helper.make_node("Range", [f"{prefix}zero", "L", f"{prefix}one"], ["q_range"]),
             helper.make_node("Reshape", ["q_range", f"{prefix}q_shape"], ["q_idx"]),
             helper.make_node("Range", [f"{prefix}zero", "S", f"{prefix}one"], ["k_range"]),
             helper.make_node("Reshape", ["k_range", f"{prefix}k_shape"], ["k_idx"])]
    return nodes, inits


def _hook(name, kind):
    """A one-input, one-output float graph (the softmax precision of float32
    and float16 inputs is float32). Kinds:
      relative_bias: x + 0.25 * (q_idx - k_idx)
      causal: Where(q_idx >= k_idx, x, -inf)
      softcap: 4 * tanh(x / 4)
      scale_half: 0.5 * x (prob_mod: weights no longer sum to 1)
      drop_first_key: Where(k_idx == 0, 0, x) (prob_mod: key 0 dropped, no renormalisation)."""
    f = lambda n, v: numpy_helper.from_array(np.array(v, dtype=np.float32), n)  # noqa: E731
    nodes, inits = [], []
    if kind in ("relative_bias", "causal", "drop_first_key"):
        nodes, inits = _positions("c_")
    if kind == "relative_bias":
        inits.append(f("slope", 0.25))
        nodes += [helper.make_node("Sub", ["q_idx", "k_idx"], ["rel"]),
                  helper.make_node("Cast", ["rel"], ["rel_f"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", ["rel_f", "slope"], ["bias"]),
                  helper.make_node("Add", ["x", "bias"], ["y"])]
    elif kind == "causal":
        inits.append(f("neg_inf", -np.inf))
        nodes += [helper.make_node("GreaterOrEqual", ["q_idx", "k_idx"], ["keep"]),
                  helper.make_node("Where", ["keep", "x", "neg_inf"], ["y"])]
    elif kind == "softcap":
        inits.append(f("cap", 4.0))
        nodes += [helper.make_node("Div", ["x", "cap"], ["scaled"]), helper.make_node("Tanh", ["scaled"], ["t"]),
                  helper.make_node("Mul", ["t", "cap"], ["y"])]
    elif kind == "scale_half":
        inits.append(f("half", 0.5))
        nodes.append(helper.make_node("Mul", ["x", "half"], ["y"]))
    elif kind == "drop_first_key":
        inits.append(f("zero_f", 0.0))
        nodes += [helper.make_node("Equal", ["k_idx", "c_zero"], ["first"]),
                  helper.make_node("Where", ["first", "zero_f", "x"], ["y"])]
    else:
        raise ValueError(f"unknown hook kind {kind}")
    dims = ["B", "H", "L", "S"]
    return helper.make_graph(nodes, f"{name}_{kind}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)], initializer=inits)


BASE = {"batch": 2, "q_heads": 4, "kv_heads": 4, "q_len": 3, "kv_len": 5, "head": 8, "v_head": 8, "score_mod": None,
        "prob_mod": None, "attrs": {}}


def _f(description, **changes):
    cfg = dict(BASE)
    cfg.update(changes)
    cfg["description"] = description
    return cfg


FEATURES = {
    "no_hooks": _f("no hooks, default scale 1/sqrt(8), cross attention (L 3, S 5)"),
    "scale_0p25": _f("explicit scale 0.25, no hooks", attrs={"scale": 0.25}),
    "gqa": _f("grouped-query heads (4 query, 2 key/value), no hooks", kv_heads=2),
    "mqa": _f("multi-query (one key/value head), no hooks", kv_heads=1),
    "diff_head_sizes": _f("value head size 6 differs from the query/key head size 8", v_head=6),
    "score_mod_relative_bias": _f("score_mod adds 0.25 * (i - j), a relative position bias", q_len=5,
                                  score_mod="relative_bias"),
    "score_mod_causal": _f("score_mod masks j > i with Where(..., -inf): causal, self attention of 5", q_len=5,
                           score_mod="causal"),
    "score_mod_causal_gqa": _f("causal score_mod with grouped-query heads (4/2), self attention of 6", kv_heads=2,
                               q_len=6, kv_len=6, score_mod="causal"),
    "score_mod_softcap": _f("score_mod 4 * tanh(scores / 4) with scale 1.0 (scores well past the cap)",
                            score_mod="softcap", attrs={"scale": 1.0}),
    "prob_mod_scale_half": _f("prob_mod 0.5 * probs (no renormalisation)", prob_mod="scale_half"),
    "prob_mod_drop_first_key": _f("prob_mod sets the weight of key 0 to 0 (no renormalisation)",
                                  prob_mod="drop_first_key"),
    "both_hooks_gqa": _f("causal score_mod and prob_mod 0.5 * probs, grouped-query (4/2), self attention of 5",
                         kv_heads=2, q_len=5, score_mod="causal", prob_mod="scale_half"),
    "softmax_precision_float": _f("explicit softmax_precision 1 (float) with a relative-bias score_mod",
                                  score_mod="relative_bias", attrs={"softmax_precision": 1}),
}


def _case(name, dt, cfg) -> Case:
    rng = rng_for(name)
    b, qh, kvh, q_len, kv_len, e, ev = (cfg[k] for k in ("batch", "q_heads", "kv_heads", "q_len", "kv_len", "head",
                                                         "v_head"))
    inputs = [("Q", as_dtype(rng.normal(0.0, 1.0, (b, qh, q_len, e)), dt)),
              ("K", as_dtype(rng.normal(0.0, 1.0, (b, kvh, kv_len, e)), dt)),
              ("V", as_dtype(rng.uniform(-2.0, 2.0, (b, kvh, kv_len, ev)), dt))]
    attrs = dict(cfg["attrs"])
    tags = ["function", "flex-attention", dt, "preview"]
    for hook in ("score_mod", "prob_mod"):
        if cfg[hook]:
            attrs[hook] = _hook(hook, cfg[hook])
            tags.append(hook)
    if kvh < qh:
        tags.append("grouped-query")
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain=DOMAIN, **attrs)
    return Case(name, "FlexAttention", cfg["description"], tags, OPSET, [node], inputs, [("Y", elem_of(dt))],
                domains=[(DOMAIN, 1)])


def flex() -> list:
    return [_case(f"test_flex_attention_{label}_{dt}", dt, cfg) for label, cfg in FEATURES.items()
            for dt in FLEX_DTYPES]
