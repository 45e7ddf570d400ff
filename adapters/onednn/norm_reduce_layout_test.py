#!/usr/bin/env python3
"""Tests of the oneDNN lowerings of norm.cc, reduce.cc and layout.cc on the
forms the ONNX node corpus lacks: 16-bit types, axes given as initializers,
broadcast scales, groups of one element, empty reductions, optional outputs,
integer data movement, and the claims that must be refused. Each case is a
small model written here with its inputs; its expected outputs come from
the reference evaluator (`parity expect`), and `parity run --adapter onednn`
must end PASS with the placement written beside the case.

  norm_reduce_layout_test.py   (PARITY_BIN names the parity binary; default build/parity)
"""
from __future__ import annotations

import os
import sys
import unittest

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from placed_cases import ELEM, NP, PlacedCases, data  # noqa: E402,F401
from case_common import Case, rng_for  # noqa: E402,F401  (placed_cases put cases/functions on the path)

CONTRIB = ("org.onnxparity.contrib", 1)

# Every case, with the placement its run must report: {"cpu": n} when all
# of its n nodes are lowered, {"reference": n} for a claim that is refused.
CASES: list[tuple[Case, dict]] = []
# Inputs whose dims the model leaves unknown ({case: {input: [dim positions]}}):
# the lowering claims them and makes its primitive at the first run.
DYNAMIC: dict[str, dict[str, list[int]]] = {}


def add(case_name, operator, nodes, inputs, outputs, placement, opset=18, initializers=(), domains=()):
    CASES.append((Case(name=case_name, operator=operator, feature="onednn", tags=["onednn"], opset=opset,
                       nodes=nodes, inputs=inputs, outputs=outputs, initializers=list(initializers),
                       domains=list(domains)), placement))


# --- Reduce ----------------------------------------------------------------

REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare"]


def reduce_case(op, dtype, shape, axes, keepdims=1, noop=None, opset=18, placement=None, tag=""):
    name = f"onednn_{op.lower()}_{dtype}_{'x'.join(map(str, shape))}_{tag or 'axes'}"
    # Positive inputs near 1: products stay finite and logs defined.
    x = data(name, shape, dtype, 0.5, 1.5) if op in ("ReduceProd", "ReduceLogSum") else data(name, shape, dtype)
    attrs = {"keepdims": keepdims}
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    inits, node_inputs = [], ["x"]
    axes_as_input = opset >= (13 if op == "ReduceSum" else 18)
    if axes is not None and axes_as_input:
        inits.append(("axes", np.array(axes, dtype=np.int64)))
        node_inputs.append("axes")
    elif axes is not None:
        attrs["axes"] = axes
    node = helper.make_node(op, node_inputs, ["y"], **attrs)
    add(name, op, [node], [("x", x)], [("y", ELEM[dtype])], placement or {"cpu": 1}, opset=opset, initializers=inits)


for op in ("ReduceMax", "ReduceMin"):  # oneDNN loses NaN: ONEDNN-41
    reduce_case(op, "float32", [3, 4, 5], [0, 2], placement={"reference": 1})
for op in REDUCE_OPS:
    reduce_case(op, "float32", [3, 4, 5], [0, 2])
    reduce_case(op, "bfloat16", [3, 4, 5], [-1], keepdims=0)
    reduce_case(op, "float16", [2, 3, 4], None, tag="default_axes")
    # Every group one element (noop_with_empty_axes): oneDNN's reduction
    # refuses this identity, so the lowering runs f(x) as an eltwise or a copy.
    reduce_case(op, "float32", [2, 3], [], noop=1, tag="noop")
    # Reduced dims of size 1 only: groups of one element again.
    reduce_case(op, "float16", [3, 1, 4], [1], tag="size_one_axis")
    # Reduced dim of size 0: every group empty, the reduction's identity.
    reduce_case(op, "float32", [2, 0, 4], [1], tag="empty_set")
reduce_case("ReduceSum", "float32", [0, 3], [1], tag="empty_output")
reduce_case("ReduceSum", "float32", [], None, tag="scalar")
reduce_case("ReduceL2", "float16", [4, 6], [0], tag="dynamic")
DYNAMIC["onednn_reducel2_float16_4x6_dynamic"] = {"x": [0, 1]}
reduce_case("ReduceMean", "float32", [3, 4, 2], [1], opset=13, tag="axes_attribute")
reduce_case("ReduceSum", "float32", [3, 4], [1], opset=11, tag="axes_attribute")
# Refused: ReduceLogSumExp (the reference's max-shifted form has no oneDNN
# primitive), ReduceLogSum (oneDNN's log errs near 1: ONEDNN-40) and
# integers (oneDNN accumulates them in float32).
reduce_case("ReduceLogSumExp", "float32", [3, 4], [1], placement={"reference": 1})
reduce_case("ReduceLogSum", "float32", [3, 4], [1], placement={"reference": 1})
reduce_case("ReduceSum", "int32", [3, 4], [1], placement={"reference": 1})


def reduce_runtime_axes_case():
    name = "onednn_reducesum_runtime_axes"
    x = data(name, [3, 4], "float32")
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"])
    # Axes as a graph input: unknown at creation, so the primitive is made at the run.
    add(name, "ReduceSum", [node], [("x", x), ("axes", np.array([1], dtype=np.int64))],
        [("y", TensorProto.FLOAT, [3, 1])], {"cpu": 1})


reduce_runtime_axes_case()


# --- Normalisations ----------------------------------------------------------

def layer_norm_case(dtype, shape, axis, scale_shape, bias=True, stats=0, placement=None, tag=""):
    name = f"onednn_layernorm_{dtype}_{'x'.join(map(str, shape))}_axis{axis}_{tag or 'plain'}"
    inputs = [("x", data(name, shape, dtype, -3, 5)), ("scale", data(name + "s", scale_shape, dtype))]
    if bias:
        inputs.append(("bias", data(name + "b", scale_shape, dtype)))
    outs = ["y", "mean", "inv_std"][:1 + stats]
    node = helper.make_node("LayerNormalization", [n for n, _ in inputs], outs, axis=axis, epsilon=1e-3)
    out_types = [("y", ELEM[dtype])] + [(o, TensorProto.FLOAT) for o in outs[1:]]
    add(name, "LayerNormalization", [node], inputs, out_types, placement or {"cpu": 1}, opset=17)


layer_norm_case("float32", [2, 3, 8], -1, [8], stats=2)
layer_norm_case("bfloat16", [2, 3, 8], -1, [8], stats=2)
layer_norm_case("float16", [2, 3, 8], 1, [3, 8], stats=1)
layer_norm_case("float16", [4, 6], 0, [4, 6], bias=False)
# Refused: a scale that broadcasts inside the normalised block (oneDNN takes
# one per element), and statistics kept in another type than float32.
layer_norm_case("float32", [3, 8], 0, [8], placement={"reference": 1}, tag="scale_broadcast")
layer_norm_case("bfloat16", [5, 8], -1, [8], stats=2, tag="dynamic_batch")
DYNAMIC["onednn_layernorm_bfloat16_5x8_axis-1_dynamic_batch"] = {"x": [0]}
# An unknown dim inside the block under a scale dim of 1 may broadcast the
# scale there: refused.
layer_norm_case("float32", [2, 3, 4], 1, [1, 4], bias=False, placement={"reference": 1}, tag="dynamic_block")
DYNAMIC["onednn_layernorm_float32_2x3x4_axis1_dynamic_block"] = {"x": [1]}


def layer_norm_stash_case():
    name = "onednn_layernorm_stash_double"
    x = data(name, [2, 8], "float32")
    node = helper.make_node("LayerNormalization", ["x", "scale"], ["y"], stash_type=TensorProto.DOUBLE)
    add(name, "LayerNormalization", [node], [("x", x), ("scale", data(name + "s", [8], "float32"))],
        [("y", TensorProto.FLOAT)], {"reference": 1}, opset=17)


layer_norm_stash_case()


def batch_norm_case(dtype, shape, param_dtypes, placement=None, training=0):
    name = f"onednn_batchnorm_{dtype}_{'x'.join(map(str, shape))}_{'_'.join(param_dtypes)}_t{training}"
    c = shape[1]
    inputs = [("x", data(name, shape, dtype)), ("scale", data(name + "s", [c], param_dtypes[0])),
              ("b", data(name + "b", [c], param_dtypes[0])), ("mean", data(name + "m", [c], param_dtypes[1])),
              ("var", data(name + "v", [c], param_dtypes[1], 0.5, 2.0))]
    # Training mode has the running mean and variance as outputs too.
    outs = [("y", ELEM[dtype])] + ([("running_mean", ELEM[param_dtypes[1]]), ("running_var", ELEM[param_dtypes[1]])]
                                   if training else [])
    node = helper.make_node("BatchNormalization", [n for n, _ in inputs], [n for n, _ in outs], epsilon=1e-4,
                            training_mode=training)
    add(name, "BatchNormalization", [node], inputs, outs, placement or {"cpu": 1}, opset=15)


batch_norm_case("float32", [4, 3], ["float32", "float32"])
batch_norm_case("bfloat16", [2, 3, 2, 2, 2], ["float32", "float16"])
batch_norm_case("float16", [2, 5, 7], ["float16", "float16"])
batch_norm_case("float32", [2, 3, 4], ["float32", "float32"], placement={"reference": 1}, training=1)


def rms_case(dtype, shape, axis, scale_shape):
    name = f"onednn_rms_{dtype}_{'x'.join(map(str, shape))}_axis{axis}_scale{'x'.join(map(str, scale_shape))}"
    inputs = [("x", data(name, shape, dtype)), ("scale", data(name + "s", scale_shape, dtype))]
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=axis, epsilon=1e-4)
    add(name, "RMSNormalization", [node], inputs, [("y", ELEM[dtype])], {"cpu": 1}, opset=23)


rms_case("float32", [2, 3, 8], 1, [3, 8])
rms_case("float16", [2, 3, 8], 1, [8])       # scale broadcast inside the block
rms_case("bfloat16", [2, 3, 8], 0, [1])      # one scale for all
rms_case("bfloat16", [4, 1], -1, [1])        # blocks of one element: an eltwise, not a reduction


def simplified_case(x_dtype, scale_dtype, inv_std):
    name = f"onednn_simplified_ln_{x_dtype}_{scale_dtype}_{'inv' if inv_std else 'y'}"
    inputs = [("x", data(name, [3, 2, 8], x_dtype)), ("scale", data(name + "s", [8], scale_dtype))]
    outs = ["y", "inv_std_var"][:1 + inv_std]
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], outs, domain=CONTRIB[0], axis=-1,
                            epsilon=1e-5)
    out_types = [("y", ELEM[scale_dtype], [3, 2, 8])] + ([("inv_std_var", TensorProto.FLOAT, [3, 2, 1])] if inv_std
                                                           else [])
    add(name, "SimplifiedLayerNormalization", [node], inputs, out_types, {"cpu": 1}, opset=23, domains=[CONTRIB])


simplified_case("bfloat16", "float32", 1)
simplified_case("float16", "float16", 0)


def skip_case(simplified, dtype, skip_shape, bias, outputs):
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    name = f"onednn_{op.lower()}_{dtype}_skip{'x'.join(map(str, skip_shape))}_bias{int(bias)}_out{outputs}"
    shape, hidden = [2, 3, 16], 16
    inputs = [("input", data(name, shape, dtype)), ("skip", data(name + "k", skip_shape, dtype)),
              ("gamma", data(name + "g", [hidden], dtype))]
    node_inputs = ["input", "skip", "gamma"]
    if not simplified:
        inputs.append(("beta", data(name + "be", [hidden], dtype)))
        node_inputs.append("beta")
    if bias:
        inputs.append(("bias", data(name + "bi", [hidden], dtype)))
        node_inputs.append("bias")
    names = ["output", "mean", "inv_std_var", "input_skip_bias_sum"][:outputs]
    stat = [2, 3, 1]
    types = [ELEM[dtype], TensorProto.FLOAT, TensorProto.FLOAT, ELEM[dtype]]
    shapes = [shape, stat, stat, shape]
    node = helper.make_node(op, node_inputs, names, domain=CONTRIB[0], epsilon=1e-5)
    add(name, op, [node], inputs, [(n, types[i], shapes[i]) for i, n in enumerate(names)], {"cpu": 1}, opset=23,
        domains=[CONTRIB])


skip_case(False, "float32", [2, 3, 16], True, 4)
skip_case(False, "bfloat16", [3, 16], False, 3)
skip_case(False, "float16", [2, 3, 16], True, 1)
skip_case(True, "float16", [2, 3, 16], True, 4)
skip_case(True, "bfloat16", [1, 3, 16], False, 1)


# --- Layout ------------------------------------------------------------------

def concat_case(dtype, shapes, axis):
    name = f"onednn_concat_{dtype}_axis{axis}_{'_'.join('x'.join(map(str, s)) for s in shapes)}"
    inputs = [(f"x{i}", data(name + str(i), s, dtype)) for i, s in enumerate(shapes)]
    node = helper.make_node("Concat", [n for n, _ in inputs], ["y"], axis=axis)
    add(name, "Concat", [node], inputs, [("y", ELEM[dtype])], {"cpu": 1}, opset=13)


concat_case("bfloat16", [[2, 1, 3], [2, 0, 3], [2, 4, 3]], 1)   # an empty input adds nothing
concat_case("int8", [[2, 3], [2, 5]], -1)
concat_case("int32", [[1, 2, 2], [3, 2, 2]], 0)
concat_case("float16", [[0, 2], [0, 2]], 0)                     # every input empty
concat_case("float32", [[2, 3]], 1)                             # one input
concat_case("uint8", [[2, 0], [2, 3], [2, 0]], 1)               # one input with elements


def transpose_case(dtype, shape, perm):
    perm_name = "default" if perm is None else "".join(map(str, perm))
    name = f"onednn_transpose_{dtype}_{'x'.join(map(str, shape))}_{perm_name}"
    attrs = {} if perm is None else {"perm": perm}
    node = helper.make_node("Transpose", ["x"], ["y"], **attrs)
    add(name, "Transpose", [node], [("x", data(name, shape, dtype))], [("y", ELEM[dtype])], {"cpu": 1}, opset=13)


transpose_case("int8", [2, 3, 1, 4, 2], [4, 0, 3, 1, 2])
transpose_case("float16", [3, 5], None)
transpose_case("uint8", [2, 3, 4], [1, 2, 0])
transpose_case("bfloat16", [2, 0, 3], [2, 1, 0])


def view_chain_case():
    # Reshape (an initializer shape with 0 and -1), Unsqueeze and Squeeze
    # with axes inputs, Flatten and Identity: views, each on "cpu", between
    # two computing nodes, so that the whole graph is one device region.
    name = "onednn_view_chain"
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
             helper.make_node("Reshape", ["t", "shape"], ["r"]),
             helper.make_node("Unsqueeze", ["r", "uaxes"], ["u"]),
             helper.make_node("Squeeze", ["u", "saxes"], ["s"]),
             helper.make_node("Flatten", ["s"], ["f"], axis=0),
             helper.make_node("Identity", ["f"], ["i"]),
             helper.make_node("ReduceSum", ["i", "raxes"], ["y"], keepdims=0)]
    inits = [("shape", np.array([0, -1], dtype=np.int64)), ("raxes", np.array([1], dtype=np.int64))]
    inputs = [("x", data(name, [2, 3, 4], "float32")), ("uaxes", np.array([0, -1], dtype=np.int64)),
              ("saxes", np.array([-1], dtype=np.int64))]
    add(name, "Reshape", nodes, inputs, [("y", TensorProto.FLOAT, [1])], {"cpu": 7}, opset=18, initializers=inits)


view_chain_case()



class OneDnnNormReduceLayoutTest(PlacedCases, unittest.TestCase):
    CASES = CASES
    DYNAMIC = DYNAMIC


if __name__ == "__main__":
    unittest.main()
