#!/usr/bin/env python3
"""Tests of the oneDNN lowerings of quantized.cc on the forms the ONNX node
corpus lacks: QDQ regions (DequantizeLinear of both operands feeding MatMul
or Conv, with and without QuantizeLinear), int8 against uint8 operands,
per-channel weight scales and zero points, groups, requantization ties with
an odd zero point, and the claims that must be refused. Each case is a small
model written here with its inputs; its expected outputs come from the
reference evaluator (`parity expect`) running the graph as written, and
`parity run --adapter onednn` must end PASS with the placement written
beside the case.

  quantized_test.py   (PARITY_BIN names the parity binary; default build/parity)
"""
from __future__ import annotations

import os
import sys
import unittest

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placed_cases import PlacedCases  # noqa: E402
from case_common import Case, rng_for  # noqa: E402  (placed_cases put cases/functions on the path)

ELEM = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "float32": TensorProto.FLOAT,
        "int32": TensorProto.INT32}
CASES: list[tuple[Case, dict]] = []


def ints(name, shape, dtype):
    rng = rng_for(name + str(shape))
    low, high = (0, 256) if dtype == "uint8" else (-128, 128)
    return rng.integers(low, high, size=shape).astype(dtype)


def add(name, operator, nodes, inputs, outputs, placement, opset=21, initializers=()):
    CASES.append((Case(name=name, operator=operator, feature="onednn", tags=["onednn"], opset=opset, nodes=nodes,
                       inputs=inputs, outputs=outputs, initializers=list(initializers)), placement))


def scalar(value, dtype):
    return np.array(value, dtype=dtype)


# --- QDQ regions -------------------------------------------------------------

def qdq_matmul(tag, x_type, w_type, x_shape, w_shape, per_column=False, quantize=True, placement=None):
    name = f"onednn_qdq_matmul_{tag}"
    n = w_shape[-1]
    w_scale = (rng_for(name).uniform(0.002, 0.01, size=[n]).astype(np.float32) if per_column
               else scalar(0.0047, np.float32))
    w_zero = ints(name + "wz", [n], w_type) if per_column else scalar(3, w_type)
    inits = [("w", ints(name + "w", w_shape, w_type)), ("w_scale", w_scale), ("w_zero", w_zero),
             ("x_scale", scalar(0.031, np.float32)), ("x_zero", scalar(7, x_type))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wf"],
                              axis=len(w_shape) - 1),
             helper.make_node("MatMul", ["xf", "wf"], ["yf" if quantize else "y"])]
    out_type = TensorProto.FLOAT
    if quantize:
        inits += [("y_scale", scalar(0.05, np.float32)), ("y_zero", scalar(121, np.uint8))]
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero"], ["y"]))
        out_type = TensorProto.UINT8
    add(name, "MatMul", nodes, [("x", ints(name, x_shape, x_type))], [("y", out_type)],
        placement or {"cpu": len(nodes)}, initializers=inits)


qdq_matmul("u8_s8_q", "uint8", "int8", [3, 5, 16], [16, 7])
qdq_matmul("s8_u8_float", "int8", "uint8", [4, 9], [9, 6], quantize=False)
qdq_matmul("s8_s8_per_column", "int8", "int8", [2, 3, 12], [2, 12, 5], per_column=True)
qdq_matmul("u8_u8_per_column_broadcast", "uint8", "uint8", [1, 3, 12], [2, 12, 5], per_column=True, quantize=False)


def qdq_conv(tag, x_type, w_type, x_shape, w_shape, group=1, quantize=True, bias=True, **attrs):
    name = f"onednn_qdq_conv_{tag}"
    m = w_shape[0]
    rng = rng_for(name)
    inits = [("w", ints(name + "w", w_shape, w_type)),
             ("w_scale", rng.uniform(0.002, 0.01, size=[m]).astype(np.float32)),
             ("w_zero", ints(name + "wz", [m], w_type)),
             ("x_scale", scalar(0.021, np.float32)), ("x_zero", scalar(-5 if x_type == "int8" else 130, x_type))]
    conv_inputs = ["xf", "wf"]
    if bias:
        inits.append(("b", rng.uniform(-1, 1, size=[m]).astype(np.float32)))
        conv_inputs.append("b")
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wf"], axis=0),
             helper.make_node("Conv", conv_inputs, ["yf" if quantize else "y"], group=group, **attrs)]
    out_type = TensorProto.FLOAT
    if quantize:
        inits += [("y_scale", scalar(0.04, np.float32)), ("y_zero", scalar(-3, np.int8))]
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero"], ["y"]))
        out_type = TensorProto.INT8
    add(name, "Conv", nodes, [("x", ints(name, x_shape, x_type))], [("y", out_type)], {"cpu": len(nodes)},
        initializers=inits)


qdq_conv("u8_u8_q", "uint8", "uint8", [1, 4, 7, 6], [6, 4, 3, 3], pads=[1, 1, 1, 1])
qdq_conv("s8_s8_group_float", "int8", "int8", [2, 6, 5, 5], [4, 3, 2, 2], group=2, quantize=False, strides=[2, 1])
qdq_conv("s8_u8_1d_nobias", "int8", "uint8", [2, 3, 11], [5, 3, 3], bias=False, dilations=[2], pads=[2, 1])


# --- The integer operators ---------------------------------------------------

def qlinear_matmul(tag, a_type, b_type, a_shape, b_shape, b_scale, y_zero, a_scale=0.5, y_scale=1.0, placement=None):
    name = f"onednn_qlinearmatmul_{tag}"
    node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale",
                                              "y_zero"], ["y"])
    inputs = [("a", ints(name + "a", a_shape, a_type)), ("a_scale", scalar(a_scale, np.float32)),
              ("a_zero", scalar(1, a_type)), ("b", ints(name + "b", b_shape, b_type)),
              ("b_scale", np.asarray(b_scale, dtype=np.float32)), ("b_zero", scalar(2, b_type)),
              ("y_scale", scalar(y_scale, np.float32)), ("y_zero", scalar(y_zero, a_type))]
    add(name, "QLinearMatMul", [node], inputs, [("y", ELEM[a_type])], placement or {"cpu": 1})


# Scales 1/2 and 1/2^k: every sum lands on an integer or a tie, and an odd
# zero point tells rounding before adding it from rounding after.
qlinear_matmul("ties_odd_zero", "int8", "int8", [4, 3], [3, 5], 0.0078125, y_zero=3, y_scale=0.0078125)
qlinear_matmul("per_column_u8", "uint8", "uint8", [2, 3, 8], [8, 4], [0.01, 0.02, 0.005, 0.03], y_zero=128,
               a_scale=0.02, y_scale=0.07)
qlinear_matmul("s8_u8_1d", "int8", "uint8", [8], [8, 3], 0.01, y_zero=-2, a_scale=0.03, y_scale=0.1)


def int_case(name, op, nodes_inputs, inputs, out, placement=None, **attrs):
    node = helper.make_node(op, nodes_inputs, ["y"], **attrs)
    add(name, op, [node], inputs, [("y", out)], placement or {"cpu": 1}, opset=10 if "Integer" in op else 21)


int_case("onednn_matmulinteger_s8_batched", "MatMulInteger", ["a", "b", "az", "bz"],
         [("a", ints("mia", [2, 1, 3, 5], "int8")), ("b", ints("mib", [4, 5, 2], "int8")),
          ("az", scalar(-3, np.int8)), ("bz", scalar(5, np.int8))], TensorProto.INT32)
int_case("onednn_matmulinteger_per_column_zero", "MatMulInteger", ["a", "b", "az", "bz"],
         [("a", ints("mia4", [2, 3, 6], "uint8")), ("b", ints("mib4", [6, 4], "uint8")),
          ("az", scalar(9, np.uint8)), ("bz", ints("mibz4", [4], "uint8"))], TensorProto.INT32)
int_case("onednn_matmulinteger_u8_s8", "MatMulInteger", ["a", "b"],
         [("a", ints("mia2", [3, 6], "uint8")), ("b", ints("mib2", [6, 2], "int8"))], TensorProto.INT32)
# Refused: a per-row zero point of A (oneDNN takes one per tensor).
int_case("onednn_matmulinteger_per_row_zero", "MatMulInteger", ["a", "b", "az"],
         [("a", ints("mia3", [3, 4], "uint8")), ("b", ints("mib3", [4, 2], "uint8")),
          ("az", np.array([1, 2, 3], dtype=np.uint8))], TensorProto.INT32, placement={"reference": 1})
int_case("onednn_convinteger_s8_u8_group", "ConvInteger", ["x", "w", "xz", "wz"],
         [("x", ints("cix", [2, 4, 6, 5], "int8")), ("w", ints("ciw", [6, 2, 3, 2], "uint8")),
          ("xz", scalar(-7, np.int8)), ("wz", ints("ciwz", [6], "uint8"))], TensorProto.INT32,
         group=2, strides=[1, 2], pads=[1, 0, 1, 1])
int_case("onednn_qlinearconv_s8_bias", "QLinearConv",
         ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
         [("x", ints("qcx", [1, 3, 6, 6], "int8")), ("xs", scalar(0.02, np.float32)), ("xz", scalar(4, np.int8)),
          ("w", ints("qcw", [4, 3, 2, 2], "int8")), ("ws", np.array([0.01, 0.004, 0.02, 0.008], np.float32)),
          ("wz", np.zeros([4], np.int8)), ("ys", scalar(0.3, np.float32)), ("yz", scalar(-9, np.int8)),
          ("b", rng_for("qcb").integers(-2000, 2000, size=[4]).astype(np.int32))], TensorProto.INT8,
         auto_pad="SAME_UPPER", strides=[2, 2])


class OneDnnQuantizedTest(PlacedCases, unittest.TestCase):
    CASES = CASES
    DYNAMIC = {}


if __name__ == "__main__":
    unittest.main()
