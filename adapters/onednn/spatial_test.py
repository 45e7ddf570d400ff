#!/usr/bin/env python3
"""Tests of the oneDNN lowerings of conv.cc, pool.cc and resize.cc on the
forms the ONNX node corpus lacks: 16-bit types, groups with dilations,
ConvTranspose blocks no product reaches, unknown dims (the primitive made at
the first run), NaN in a max pool, resize sizes and scales given as
initializers, and the claims that must be refused. Each case is a small model
written here with its inputs; its expected outputs come from the reference
evaluator (`parity expect`), and `parity run --adapter onednn` must end PASS
with the placement written beside the case.

  spatial_test.py   (PARITY_BIN names the parity binary; default build/parity)
"""
from __future__ import annotations

import os
import sys
import unittest

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placed_cases import ELEM, NP, PlacedCases, data  # noqa: E402,F401
from case_common import Case, rng_for  # noqa: E402,F401  (placed_cases put cases/functions on the path)

# Every case, with the placement its run must report: {"cpu": n} when all
# of its n nodes are lowered, {"reference": n} for a claim that is refused.
CASES: list[tuple[Case, dict]] = []
# Inputs whose dims the model leaves unknown ({case: {input: [dim positions]}}).
DYNAMIC: dict[str, dict[str, list[int]]] = {}


def add(case_name, operator, nodes, inputs, outputs, placement, opset=22, initializers=()):
    CASES.append((Case(name=case_name, operator=operator, feature="onednn", tags=["onednn"], opset=opset,
                       nodes=nodes, inputs=inputs, outputs=outputs, initializers=list(initializers)), placement))


# --- Conv and ConvTranspose ------------------------------------------------

def conv_case(tag, dtype, x_shape, w_shape, bias=True, placement=None, transposed=False, **attrs):
    name = f"onednn_{'convtranspose' if transposed else 'conv'}_{tag}_{dtype}"
    op = "ConvTranspose" if transposed else "Conv"
    names = ["x", "w"] + (["b"] if bias else [])
    node = helper.make_node(op, names, ["y"], **attrs)
    out_channels = w_shape[1] * attrs.get("group", 1) if transposed else w_shape[0]
    inputs = [("x", data(name, x_shape, dtype)), ("w", data(name + "w", w_shape, dtype, -1, 1))]
    if bias:
        inputs.append(("b", data(name + "b", [out_channels], dtype)))
    add(name, op, [node], inputs, [("y", ELEM[dtype])], placement or {"cpu": 1})
    return name


for dt in ("float32", "float16", "bfloat16"):
    conv_case("2d_group_dilated", dt, [2, 6, 9, 8], [4, 3, 3, 2], group=2, dilations=[2, 3], strides=[2, 1],
              pads=[1, 0, 2, 1])
    conv_case("3d_same_lower", dt, [1, 2, 5, 6, 4], [3, 2, 2, 3, 2], auto_pad="SAME_LOWER", strides=[2, 2, 1])
    conv_case("1d_depthwise", dt, [2, 4, 11], [4, 1, 3], bias=False, group=4, pads=[2, 0])
    # output_padding past the end pad: the last column receives no product,
    # only the bias.
    conv_case("2d_output_padding", dt, [1, 2, 3, 4], [2, 3, 3, 2], transposed=True, strides=[3, 2],
              output_padding=[2, 1])
    conv_case("1d_group_dilated", dt, [2, 4, 5], [4, 3, 3], transposed=True, group=2, dilations=[2],
              strides=[2], pads=[1, 2])
# output_shape larger than the natural extent: a first row (SAME_UPPER) or
# a last row no product reaches.
conv_case("2d_output_shape_upper", "float32", [1, 1, 3, 3], [1, 2, 3, 3], transposed=True, strides=[2, 2],
          output_shape=[8, 9], auto_pad="SAME_UPPER")
conv_case("2d_output_shape", "float32", [1, 1, 3, 3], [1, 2, 3, 3], transposed=True, strides=[2, 2],
          output_shape=[8, 9])
conv_case("3d_transposed_same_upper", "float16", [1, 2, 3, 2, 3], [2, 1, 2, 2, 3], transposed=True,
          auto_pad="SAME_UPPER", strides=[2, 1, 2])
DYNAMIC[conv_case("2d_dynamic", "float32", [2, 3, 7, 6], [5, 3, 3, 3], pads=[1, 1, 1, 1])] = {"x": [0, 2, 3]}
# Refused: a 4-D spatial convolution, float64.
conv_case("4d", "float32", [1, 1, 3, 3, 3, 3], [1, 1, 2, 2, 2, 2], placement={"reference": 1})
CASES.append((Case(name="onednn_conv_float64", operator="Conv", feature="onednn", tags=["onednn"], opset=19,
                   nodes=[helper.make_node("Conv", ["x", "w"], ["y"])],
                   inputs=[("x", np.ones([1, 1, 3, 3])), ("w", np.ones([1, 1, 2, 2]))],
                   outputs=[("y", TensorProto.DOUBLE)]), {"reference": 1}))


# --- Pools -----------------------------------------------------------------

def pool_case(tag, op, dtype, shape, placement=None, x=None, **attrs):
    name = f"onednn_{op.lower()}_{tag}_{dtype}"
    outputs = ["y", "i"] if tag.startswith("indices") else ["y"]
    node = helper.make_node(op, ["x"], outputs, **attrs)
    out_types = [("y", ELEM[dtype])] + ([("i", TensorProto.INT64)] if len(outputs) == 2 else [])
    add(name, op, [node], [("x", data(name, shape, dtype) if x is None else x)], out_types, placement or {"cpu": 1})
    return name


for dt in ("float32", "float16", "bfloat16"):
    pool_case("ceil_dilated", "MaxPool", dt, [1, 3, 9, 8], kernel_shape=[3, 2], strides=[2, 3], dilations=[2, 1],
              ceil_mode=1, pads=[1, 0, 0, 1])
    pool_case("ceil_exclude", "AveragePool", dt, [2, 2, 7, 6], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1,
              pads=[1, 1, 0, 0])
    pool_case("3d_include", "AveragePool", dt, [1, 2, 4, 5, 6], kernel_shape=[2, 3, 2], count_include_pad=1,
              pads=[1, 1, 0, 0, 1, 1])
    pool_case("global", "GlobalAveragePool", dt, [2, 3, 5, 7])
    pool_case("global", "GlobalMaxPool", dt, [2, 3, 4])
pool_case("1d_int8", "MaxPool", "int8", [2, 3, 10], kernel_shape=[3], strides=[2], pads=[1, 1])
# ceil_mode whose last window starts in the input but runs past the end pad:
# with count_include_pad ONNX leaves those positions out of the divisor.
pool_case("ceil_include_past_pad", "AveragePool", "float32", [1, 1, 6, 6], placement={"reference": 1},
          kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, count_include_pad=1)
# The same with the last window inside the end pad: claimed.
pool_case("ceil_include_in_pad", "AveragePool", "float32", [1, 1, 6, 6], kernel_shape=[3, 3], strides=[2, 2],
          ceil_mode=1, count_include_pad=1, pads=[0, 0, 1, 1])
# A dilated window with pads whose taps all miss the input (ONNX: NaN).
pool_case("empty_window", "AveragePool", "float32", [1, 1, 2, 2], placement={"reference": 1}, kernel_shape=[2, 2],
          dilations=[3, 3], pads=[1, 1, 1, 1])
pool_case("indices_requested", "MaxPool", "float32", [1, 1, 4, 4], placement={"reference": 1}, kernel_shape=[2, 2])
DYNAMIC[pool_case("dynamic", "MaxPool", "float32", [2, 3, 8, 8], kernel_shape=[3, 3], strides=[2, 2],
                  ceil_mode=1)] = {"x": [0, 2, 3]}
# NaN in a window: ONNX's maximum is NaN.
nan_x = data("nan", [1, 2, 4, 4], "float32")
nan_x[0, 0, 1, 2] = np.nan
nan_x[0, 1, 3, 0] = np.nan
pool_case("nan", "MaxPool", "float32", [1, 2, 4, 4], x=nan_x, kernel_shape=[2, 2], strides=[1, 1])
pool_case("nan", "GlobalMaxPool", "float32", [1, 2, 4, 4], x=nan_x)
pool_case("nan_dilated", "MaxPool", "float16", [1, 2, 4, 4], x=nan_x.astype(np.float16), kernel_shape=[2, 2],
          dilations=[2, 1], pads=[1, 0, 0, 1], strides=[1, 2])
pool_case("nan", "MaxPool", "bfloat16", [1, 2, 4, 4], x=nan_x.astype(ml_dtypes.bfloat16), kernel_shape=[3, 3],
          strides=[2, 2], ceil_mode=1)


# --- Resize ----------------------------------------------------------------

def resize_case(tag, dtype, shape, placement=None, scales=None, sizes=None, opset=19, **attrs):
    name = f"onednn_resize_{tag}_{dtype}"
    inits = []
    if opset < 11:
        names = ["x", "scales"]
        inits.append(("scales", np.array(scales, dtype=np.float32)))
    else:
        names = ["x", "", "scales" if scales is not None else "", "sizes" if sizes is not None else ""]
        if scales is not None:
            inits.append(("scales", np.array(scales, dtype=np.float32)))
        if sizes is not None:
            inits.append(("sizes", np.array(sizes, dtype=np.int64)))
    node = helper.make_node("Resize", names, ["y"], **attrs)
    add(name, "Resize", [node], [("x", data(name, shape, dtype))], [("y", ELEM[dtype])], placement or {"cpu": 1},
        opset=opset, initializers=inits)


for dt in ("float32", "float16", "bfloat16"):
    # Integer upsampling: half-pixel nearest has no ties, so every rounding agrees.
    resize_case("nearest_up_2x3", dt, [1, 2, 3, 4], scales=[1, 1, 2, 3], opset=22 if dt == "bfloat16" else 19)
    resize_case("linear_sizes", dt, [2, 2, 4, 4], sizes=[2, 2, 7, 5], mode="linear",
                opset=22 if dt == "bfloat16" else 19)
# Downsampling by 2: every half-pixel coordinate is a tie; oneDNN rounds it
# up, as round_prefer_ceil does.
resize_case("nearest_down_ceil", "float32", [1, 1, 6, 8], scales=[1, 1, 0.5, 0.5], nearest_mode="round_prefer_ceil")
resize_case("nearest_down_floor", "float32", [1, 1, 6, 8], placement={"reference": 1}, scales=[1, 1, 0.5, 0.5])
resize_case("nearest_axes_sizes", "float32", [1, 2, 3, 5], sizes=[9, 10], axes=[2, 3])
resize_case("nearest_3d_not_larger", "float32", [1, 1, 2, 3, 4], sizes=[4, 7, 8], axes=[2, 3, 4],
            keep_aspect_ratio_policy="not_larger", nearest_mode="round_prefer_ceil")
resize_case("linear_1d_scales", "float32", [2, 3, 6], scales=[1, 1, 1.5], mode="linear")
resize_case("linear_opset10_up", "float32", [1, 1, 3, 3], placement={"reference": 1}, scales=[1, 1, 2, 2],
            mode="linear", opset=10)
resize_case("nearest_opset10_up", "float32", [1, 1, 3, 3], scales=[1, 1, 2, 3], opset=10)
# 0.6 (as float32) is 3 / 5 within float32 rounding: ONNX's coordinates and
# oneDNN's agree to far below a weight's ULP.
resize_case("linear_scale_near_ratio", "float32", [1, 1, 5, 5], scales=[1, 1, 0.6, 0.6], mode="linear")
# Refused: a scale that is not out / in (ONNX's coordinates use the scale,
# 0.7 where out / in is 3 / 5), align_corners, cubic, resizing the channel axis.
resize_case("linear_scale_not_ratio", "float32", [1, 1, 5, 5], placement={"reference": 1}, scales=[1, 1, 0.7, 0.7],
            mode="linear")
resize_case("linear_align_corners", "float32", [1, 1, 4, 4], placement={"reference": 1}, scales=[1, 1, 2, 2],
            mode="linear", coordinate_transformation_mode="align_corners")
resize_case("cubic", "float32", [1, 1, 4, 4], placement={"reference": 1}, scales=[1, 1, 2, 2], mode="cubic")
resize_case("channels", "float32", [1, 2, 4, 4], placement={"reference": 1}, scales=[1, 2, 1, 1])



class OneDnnSpatialTest(PlacedCases, unittest.TestCase):
    CASES = CASES
    DYNAMIC = DYNAMIC


if __name__ == "__main__":
    unittest.main()
