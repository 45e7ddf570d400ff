"""Case matrices of the org.onnxparity.contrib normalisations (version 1):
SimplifiedLayerNormalization, SkipLayerNormalization and
SkipSimplifiedLayerNormalization, the ONNX Runtime contrib operators proposed
for standardisation (spec/functions/*_layer_normalization.md). Models import
the default domain at 23 and org.onnxparity.contrib at 1; ONNX has no schema
for that domain, so every graph output carries its shape."""
from __future__ import annotations

from onnx import TensorProto, helper

from case_common import DTYPES, Case, as_dtype, elem_of, rng_for

FLOATS = list(DTYPES)
DOMAIN = "org.onnxparity.contrib"
DOMAINS = [(DOMAIN, 1)]
TAGS = ["function", "normalization", "contrib"]


def _signed_gamma(rng, shape, dt):
    # |gamma| in [0.5, 1.5] with either sign, so no output is near a constant.
    return as_dtype(rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape), dt)


def simplified_layer_normalization() -> list:
    """SimplifiedLayerNormalization over X [2, 3, 4, 8]: axis x scale shape,
    epsilon, inv_std_var requested or not, stash_type float64, and a float32
    scale for float16/bfloat16 X (Y takes the scale's type)."""
    shape = (2, 3, 4, 8)
    # (label, axis or None, scale shape, attributes, inv_std_var requested)
    matrix = [
        ("axis_default", None, [8], {}, False),
        ("axis_default_inv_std_var", None, [8], {}, True),
        ("axis_neg2_scale_last_inv_std_var", -2, [8], {}, True),
        ("axis_1_scale_full_inv_std_var", 1, [3, 4, 8], {}, True),
        ("epsilon_0p1_inv_std_var", -1, [8], {"epsilon": 0.1}, True),
        ("epsilon_1e_8", -1, [8], {"epsilon": 1e-8}, False),
        ("stash_type_double_inv_std_var", -1, [8], {"stash_type": TensorProto.DOUBLE}, True),
    ]
    cases = []
    for label, axis, scale_shape, attrs, with_inv in matrix:
        for dt in FLOATS:
            cases.append(_simplified_case(f"test_simplifiedlayernormalization_{label}_{dt}", shape, axis,
                                          scale_shape, attrs, with_inv, dt, dt))
    for dt in ("float16", "bfloat16"):
        cases.append(_simplified_case(f"test_simplifiedlayernormalization_scale_float32_{dt}", shape, None, [8],
                                      {}, True, dt, "float32"))
    return cases


def _simplified_case(name, shape, axis, scale_shape, attrs, with_inv, dt, scale_dt) -> Case:
    rng = rng_for(name)
    node_attrs = dict(attrs)
    if axis is not None:
        node_attrs["axis"] = axis
    first = (axis if axis is not None else -1) % len(shape)
    stat_shape = list(shape[:first]) + [1] * (len(shape) - first)
    stash = attrs.get("stash_type", TensorProto.FLOAT)
    x = as_dtype(rng.normal(0.3, 1.5, shape), dt)
    scale = _signed_gamma(rng, scale_shape, scale_dt)
    outputs = [("Y", elem_of(scale_dt), list(shape))]
    if with_inv:
        outputs.append(("inv_std_var", stash, stat_shape))
    feature = (f"axis {axis if axis is not None else 'default (-1)'}, scale {scale_shape} {scale_dt}"
               + "".join(f", {k}={v}" for k, v in attrs.items())
               + (", inv_std_var requested" if with_inv else ", Y only"))
    node = helper.make_node("SimplifiedLayerNormalization", ["X", "scale"], [o[0] for o in outputs],
                            domain=DOMAIN, **node_attrs)
    return Case(name, "SimplifiedLayerNormalization", feature, TAGS + [dt], 23, [node],
                [("X", x), ("scale", scale)], outputs, domains=DOMAINS)


# Output selections of the Skip operators: positional outputs, "" where one
# in the middle is left out.
_ALL = ("output", "mean", "inv_std_var", "input_skip_bias_sum")
_OUTPUT_SETS = {
    "all_outputs": _ALL,
    "output_only": ("output",),
    "sum_only": ("output", "", "", "input_skip_bias_sum"),
}


def _skip_case(op, with_beta_input, label, dt, input_shape, skip_shape, beta, bias, outputs, attrs) -> Case:
    name = f"test_{op.lower()}_{label}_{dt}"
    rng = rng_for(name)
    hidden = input_shape[-1]
    stat_shape = list(input_shape[:-1]) + [1]
    inputs = [("input", as_dtype(rng.normal(0.0, 1.0, input_shape), dt)),
              ("skip", as_dtype(rng.normal(0.0, 1.0, skip_shape), dt)),
              ("gamma", _signed_gamma(rng, [hidden], dt))]
    names = ["input", "skip", "gamma"]
    if with_beta_input:
        if beta:
            inputs.append(("beta", as_dtype(rng.uniform(-0.5, 0.5, [hidden]), dt)))
        names.append("beta" if beta else "")
    if bias:
        inputs.append(("bias", as_dtype(rng.uniform(-0.5, 0.5, [hidden]), dt)))
        names.append("bias")
    while names and names[-1] == "":
        names.pop()
    node_outputs = list(_OUTPUT_SETS[outputs])
    types = {"output": (elem_of(dt), list(input_shape)), "mean": (TensorProto.FLOAT, stat_shape),
             "inv_std_var": (TensorProto.FLOAT, stat_shape),
             "input_skip_bias_sum": (elem_of(dt), list(input_shape))}
    graph_outputs = [(o, *types[o]) for o in node_outputs if o]
    feature = (f"input {list(input_shape)}, skip {list(skip_shape)}"
               + (", beta" if beta else "") + (", bias" if bias else ", no bias")
               + "".join(f", {k}={v}" for k, v in attrs.items())
               + f", outputs: {', '.join(o for o in node_outputs if o)}")
    node = helper.make_node(op, names, node_outputs, domain=DOMAIN, **attrs)
    return Case(name, op, feature, TAGS + [dt], 23, [node], inputs, graph_outputs, domains=DOMAINS)


_SKIP_SHAPES = {"skip_full": (2, 3, 16), "skip_batch1": (1, 3, 16), "skip_2d": (3, 16)}


def skip_layer_normalization() -> list:
    """SkipLayerNormalization over input [2, 3, 16]: skip [2, 3, 16], [1, 3, 16]
    and [3, 16] x beta x bias with all four outputs; then the output alone,
    output and sum only, epsilon 1e-5, and a 2-D input."""
    op = "SkipLayerNormalization"
    cases = []
    for dt in FLOATS:
        for skip_label, skip_shape in _SKIP_SHAPES.items():
            for beta in (False, True):
                for bias in (False, True):
                    label = f"{skip_label}_{'beta' if beta else 'no_beta'}_{'bias' if bias else 'no_bias'}"
                    cases.append(_skip_case(op, True, label, dt, (2, 3, 16), skip_shape, beta, bias,
                                            "all_outputs", {}))
        cases += _skip_extras(op, True, dt)
    return cases


def skip_simplified_layer_normalization() -> list:
    """SkipSimplifiedLayerNormalization over input [2, 3, 16]: the three skip
    shapes x bias with all four outputs (mean is zero by definition); then the
    output alone, output and sum only, epsilon 1e-5, and a 2-D input."""
    op = "SkipSimplifiedLayerNormalization"
    cases = []
    for dt in FLOATS:
        for skip_label, skip_shape in _SKIP_SHAPES.items():
            for bias in (False, True):
                label = f"{skip_label}_{'bias' if bias else 'no_bias'}"
                cases.append(_skip_case(op, False, label, dt, (2, 3, 16), skip_shape, False, bias,
                                        "all_outputs", {}))
        cases += _skip_extras(op, False, dt)
    return cases


def _skip_extras(op, with_beta_input, dt) -> list:
    beta = with_beta_input
    return [
        _skip_case(op, with_beta_input, "output_only", dt, (2, 3, 16), (2, 3, 16), beta, True, "output_only", {}),
        _skip_case(op, with_beta_input, "sum_only", dt, (2, 3, 16), (3, 16), beta, True, "sum_only", {}),
        _skip_case(op, with_beta_input, "epsilon_1e_5", dt, (2, 3, 16), (2, 3, 16), beta, True, "all_outputs",
                   {"epsilon": 1e-5}),
        _skip_case(op, with_beta_input, "input_2d", dt, (6, 16), (6, 16), beta, True, "all_outputs", {}),
    ]


def contrib() -> list:
    return simplified_layer_normalization() + skip_layer_normalization() + skip_simplified_layer_normalization()
