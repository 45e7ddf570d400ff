"""The numpy oracle's org.onnxparity.contrib normalisations, version 1:
SimplifiedLayerNormalization, SkipLayerNormalization and
SkipSimplifiedLayerNormalization, as their pages in spec/functions/ define
them, in float64; the graph walk rounds each output to its type."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ops_basic import require_inputs, same_type
from ops_functions import first_axis, float_inputs, one_way_broadcast, root_mean_square_inverse
from values import Tensor, float_attribute, is_float

DOMAIN = "org.onnxparity.contrib"
FLOAT = TensorProto.FLOAT


def _simplified_layer_normalization(ctx, values):
    require_inputs(ctx, values, 2)
    float_inputs(ctx, values)
    x, scale = values
    axis = first_axis(ctx, ctx.attr("axis", -1), x.data.ndim)
    epsilon = ctx.attr("epsilon", float_attribute(1e-5))
    stash = ctx.attr("stash_type", FLOAT)
    if not is_float(stash):
        raise ctx.error(f"stash_type {stash} is not a float type")
    inverse = root_mean_square_inverse(x.data, axis, epsilon)
    gamma = one_way_broadcast(ctx, scale.data, x.shape, "scale")
    # Y is typed as the scale (V); inv_std_var as stash_type (U).
    return [Tensor(x.data * inverse * gamma, scale.elem), Tensor(inverse, stash)]


def _skip_inputs(ctx, values, with_beta: bool):
    """input + skip (+ bias) in float64, with gamma and beta (None when absent)."""
    most = 5 if with_beta else 4
    require_inputs(ctx, values, 3, most)
    float_inputs(ctx, values)
    present = [v for v in values if v is not None]
    elem = same_type(ctx, present)
    x, skip, gamma = values[:3]
    beta = values[3] if with_beta and len(values) > 3 else None
    bias = values[most - 1] if len(values) == most else None
    if x.data.ndim < 1:
        raise ctx.error("input must have rank 1 or more")
    hidden = x.shape[-1]
    for name, value in (("gamma", gamma), ("beta", beta), ("bias", bias)):
        if value is not None and value.shape != (hidden,):
            raise ctx.error(f"{name} must be [{hidden}] (the last axis of input), is {list(value.shape)}")
    total = x.data + one_way_broadcast(ctx, skip.data, x.shape, "skip")
    if bias is not None:
        total = total + bias.data
    return elem, total, gamma.data, None if beta is None else beta.data


def _skip_layer_normalization(ctx, values):
    elem, total, gamma, beta = _skip_inputs(ctx, values, with_beta=True)
    epsilon = ctx.attr("epsilon", float_attribute(1e-12))
    mean = total.mean(axis=-1, keepdims=True)
    centred = total - mean
    inverse = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + epsilon)  # population variance
    output = centred * inverse * gamma + (0.0 if beta is None else beta)
    return [Tensor(output, elem), Tensor(mean, FLOAT), Tensor(inverse, FLOAT), Tensor(total, elem)]


def _skip_simplified_layer_normalization(ctx, values):
    elem, total, gamma, _ = _skip_inputs(ctx, values, with_beta=False)
    epsilon = ctx.attr("epsilon", float_attribute(1e-12))
    inverse = root_mean_square_inverse(total, total.ndim - 1, epsilon)
    # mean is defined as zeros: the slot keeps SkipLayerNormalization's positions.
    return [Tensor(total * inverse * gamma, elem), Tensor(np.zeros_like(inverse), FLOAT), Tensor(inverse, FLOAT),
            Tensor(total, elem)]


def register(registry) -> None:
    registry.add(DOMAIN, "SimplifiedLayerNormalization", _simplified_layer_normalization, versions=(1,))
    registry.add(DOMAIN, "SkipLayerNormalization", _skip_layer_normalization, versions=(1,))
    registry.add(DOMAIN, "SkipSimplifiedLayerNormalization", _skip_simplified_layer_normalization, versions=(1,))
