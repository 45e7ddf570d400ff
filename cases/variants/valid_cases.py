"""The valid variant-graph cases: one model each, with the selection
spec/variants.md demands for each target list, worked out by hand from the
rules in reference/variants/variants.h:
  1. eligible: the entry's target is listed, or it has none and "portable" is;
  2. ranked by (position of the target in the list, priority descending,
     graph then entry order);
  3. taken greedily; an entry sharing a region node with one taken is skipped;
     a taken set whose rewrite would be cyclic drops its lowest-ranked member;
  4. entries inside a node that a taken entry replaced are not taken.
The reasoning for each pinned list is written beside it."""
from __future__ import annotations

import numpy as np

import local_functions as fn
from variant_model import (NPU, PORTABLE, REFERENCE, VariantCase, call, compiled, matrix, npu_blob, reference_blob,
                           rng_for, vector)

BOTH = f"{REFERENCE},{PORTABLE}"
PORTABLE_FIRST = f"{PORTABLE},{REFERENCE}"
F16 = {"float32": ("float", np.float32), "float16": ("float16", np.float16)}
# The float16 cases chain several operators, each rounded to float16.
FLOAT16_TOLERANCE = {
    "atol": 0.0009765625,
    "reason": "a float16 graph of several operators: a backend that accumulates a float16 MatMul in another "
              "order is 1 ULP off at the scale of the weights' products (about 1, where a float16 ULP is 2^-10), "
              "and Add (which cancels), Tanh and loop iterations carry that absolute difference into smaller "
              "outputs, several ULP of theirs (ONNX Runtime 1.31 CPU: up to 9)"}


def selection(reference: list, portable: list, both: list, portable_first: list | None = None,
              npu: list | None = None) -> dict:
    """The pinned lists; `npu` None leaves com.example.npu out (where an NPU
    blob would be selected and nobody can run it)."""
    pinned = {"": [], REFERENCE: reference, PORTABLE: portable, BOTH: both}
    if portable_first is not None:
        pinned[PORTABLE_FIRST] = portable_first
    if npu is not None:
        pinned[NPU] = npu
    return pinned


def one_node_layernorm() -> VariantCase:
    rng = rng_for("one_node_layernorm")
    return VariantCase(
        name="one_node_layernorm", kind="one_node", operator="LayerNormalization",
        why="the smallest cut: one LayerNormalization node, replaced by a decomposed local function",
        graph="""main (float[4,8] x, float[8,8] W, float[8] gamma, float[8] beta) => (float[4,8] y) {
          [matmul_0] h = MatMul(x, W)
          [layernorm_0] n = LayerNormalization <axis = -1, epsilon = 0.00001> (h, gamma, beta)
          [relu_0] y = Relu(n)
        }""",
        weights={"W": matrix(rng, 8, 8), "gamma": vector(rng, 8, offset=1.0), "beta": vector(rng, 8)},
        functions=[fn.LAYER_NORM_DECOMPOSED],
        entries=[call(["h", "gamma", "beta"], ["n"], "LayerNormalization", target=REFERENCE)],
        # e0 is the only entry; only a list naming the reference takes it.
        select=selection(reference=["e0"], portable=[], both=["e0"], npu=[]))


def chain(dtype: str) -> VariantCase:
    type_name, np_type = F16[dtype]
    name = f"chain_linear_tanh_{dtype}"
    rng = rng_for(name)
    return VariantCase(
        name=name, kind="chain", tolerance=FLOAT16_TOLERANCE if dtype == "float16" else None, operator="Softmax",
        why=f"a chain of four nodes (MatMul, Add, Mul, Tanh) replaced by one call, {dtype}",
        graph=f"""main ({type_name}[4,8] x, {type_name}[8,8] W, {type_name}[8] B, {type_name}[8] s)
                  => ({type_name}[4,8] y) {{
          [matmul_0] t = MatMul(x, W)
          [add_0] u = Add(t, B)
          [mul_0] v = Mul(u, s)
          [tanh_0] w = Tanh(v)
          [softmax_0] y = Softmax <axis = -1> (w)
        }}""",
        weights={"W": matrix(rng, 8, 8, np_type), "B": vector(rng, 8, np_type),
                 "s": vector(rng, 8, np_type, offset=1.0)},
        functions=[fn.SCALED_LINEAR_TANH],
        entries=[call(["x", "W", "B", "s"], ["w"], "ScaledLinearTanh")],
        # A portable entry: taken by any list naming "portable".
        select=selection(reference=[], portable=["e0"], both=["e0"], npu=[]))


def diamond(dtype: str) -> VariantCase:
    type_name, np_type = F16[dtype]
    name = f"diamond_{dtype}"
    rng = rng_for(name)
    return VariantCase(
        name=name, kind="diamond", tolerance=FLOAT16_TOLERANCE if dtype == "float16" else None, operator="MatMul",
        why=f"a region that forks and joins (MatMul feeding Relu and Sigmoid, joined by Mul), {dtype}",
        graph=f"""main ({type_name}[4,8] x, {type_name}[8,8] W) => ({type_name}[4,8] y) {{
          [matmul_0] a = MatMul(x, W)
          [relu_0] l = Relu(a)
          [sigmoid_0] r = Sigmoid(a)
          [mul_0] m = Mul(l, r)
          [add_0] y = Add(m, x)
        }}""",
        weights={"W": matrix(rng, 8, 8, np_type)},
        functions=[fn.DIAMOND_GATE],
        entries=[call(["x", "W"], ["m"], "DiamondGate", target=REFERENCE)],
        select=selection(reference=["e0"], portable=[], both=["e0"], npu=[]))


def intermediate_kept() -> VariantCase:
    rng = rng_for("intermediate_kept")
    return VariantCase(
        name="intermediate_kept", kind="intermediate_kept", operator="MatMul",
        why="values inside the cut used elsewhere: t is read by tanh_0 and u is a graph output, so "
            "matmul_0 and add_0 stay beside the call; only relu_0 goes",
        graph="""main (float[4,8] x, float[8,8] W, float[8] B) => (float[4,8] y, float[4,8] u, float[4,8] z) {
          [matmul_0] t = MatMul(x, W)
          [add_0] u = Add(t, B)
          [relu_0] a = Relu(u)
          [softmax_0] y = Softmax <axis = -1> (a)
          [tanh_0] z = Tanh(t)
        }""",
        weights={"W": matrix(rng, 8, 8), "B": vector(rng, 8)},
        functions=[fn.LINEAR_RELU],
        entries=[call(["x", "W", "B"], ["a"], "LinearRelu")],
        select=selection(reference=[], portable=["e0"], both=["e0"], npu=[]))


def overlap_targets() -> VariantCase:
    rng = rng_for("overlap_targets")
    return VariantCase(
        name="overlap_targets", kind="overlap", operator="MatMul",
        why="two entries for one region, one portable and one for the reference: the earlier target in "
            "the backend's list wins",
        graph="""main (float[4,8] x, float[8,8] W, float[8] B) => (float[4,8] y) {
          [matmul_0] t = MatMul(x, W)
          [add_0] u = Add(t, B)
          [relu_0] a = Relu(u)
          [mul_0] y = Mul(a, x)
        }""",
        weights={"W": matrix(rng, 8, 8), "B": vector(rng, 8)},
        functions=[fn.LINEAR_RELU, fn.BIAS_FIRST_LINEAR_RELU],
        entries=[call(["x", "W", "B"], ["a"], "LinearRelu"),
                 call(["x", "W", "B"], ["a"], "BiasFirstLinearRelu", target=REFERENCE)],
        # reference first: e1 ranks first, e0 overlaps it. portable first: e0, then e1 overlaps.
        select=selection(reference=["e1"], portable=["e0"], both=["e1"], portable_first=["e0"], npu=[]))


def overlap_priority() -> VariantCase:
    rng = rng_for("overlap_priority")
    return VariantCase(
        name="overlap_priority", kind="overlap", operator="Softmax",
        why="partly overlapping entries of one target ranked by priority (5 over 1, a negative one "
            "disjoint from both), and a portable entry of priority 9 that loses to target order",
        graph="""main (float[4,8] x, float[8,8] W1, float[8,8] W2, float[8] B2) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W1)
          [relu_0] b = Relu(a)
          [matmul_1] c = MatMul(b, W2)
          [add_0] d = Add(c, B2)
          [softmax_0] y = Softmax <axis = -1> (d)
        }""",
        weights={"W1": matrix(rng, 8, 8), "W2": matrix(rng, 8, 8), "B2": vector(rng, 8)},
        functions=[fn.MATMUL_RELU, fn.RELU_MATMUL, fn.TWO_LAYER, fn.SOFTMAX_DECOMPOSED],
        entries=[call(["x", "W1"], ["b"], "MatMulRelu", target=REFERENCE, priority=1),  # matmul_0, relu_0
                 call(["a", "W2"], ["c"], "ReluMatMul", target=REFERENCE, priority=5),  # relu_0, matmul_1
                 call(["x", "W1", "W2", "B2"], ["d"], "TwoLayer", priority=9),  # matmul_0 .. add_0
                 call(["d"], ["y"], "Softmax", target=REFERENCE, priority=-2)],  # softmax_0
        # reference: e1 (5), e0 (1) shares relu_0 with e1, e3 (-2) is disjoint.
        # both: the reference's e1, e0, e3 first, then e2 overlaps e1.
        # portable first: e2 (9), then e1 and e0 overlap it, e3 is disjoint.
        select=selection(reference=["e1", "e3"], portable=["e2"], both=["e1", "e3"],
                         portable_first=["e2", "e3"], npu=[]))


def overlap_tie_order() -> VariantCase:
    rng = rng_for("overlap_tie_order")
    return VariantCase(
        name="overlap_tie_order", kind="overlap", operator="Softmax",
        why="two entries of one target and one priority for the same region: the first in the list "
            "wins; a third, disjoint, is taken too",
        graph="""main (float[4,8] x, float[8,8] W) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [softmax_0] b = Softmax <axis = -1> (a)
          [mul_0] c = Mul(b, x)
          [relu_0] y = Relu(c)
        }""",
        weights={"W": matrix(rng, 8, 8)},
        functions=[fn.MATMUL_SOFTMAX, fn.GEMM_SOFTMAX, fn.MUL_RELU],
        entries=[call(["x", "W"], ["b"], "MatMulSoftmax", target=REFERENCE, priority=2),
                 call(["x", "W"], ["b"], "GemmSoftmax", target=REFERENCE, priority=2),
                 call(["b", "x"], ["y"], "MulRelu", target=REFERENCE, priority=2)],
        # e0 and e1 tie on target and priority: e0 by order, e1 overlaps it; e2 is disjoint.
        select=selection(reference=["e0", "e2"], portable=[], both=["e0", "e2"], npu=[]))


def nested() -> VariantCase:
    rng = rng_for("nested")
    return VariantCase(
        name="nested", kind="nested", operator="LayerNormalization",
        why="one region inside another: the inner LayerNormalization for the reference, the outer "
            "MatMul-LayerNormalization-Softmax portable; whichever ranks first excludes the other",
        graph="""main (float[4,8] x, float[8,8] W, float[8] gamma, float[8] beta) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [layernorm_0] n = LayerNormalization <axis = -1, epsilon = 0.00001> (a, gamma, beta)
          [softmax_0] s = Softmax <axis = -1> (n)
          [mul_0] y = Mul(s, x)
        }""",
        weights={"W": matrix(rng, 8, 8), "gamma": vector(rng, 8, offset=1.0), "beta": vector(rng, 8)},
        functions=[fn.LAYER_NORM_DECOMPOSED, fn.MATMUL_LAYER_NORM_SOFTMAX],
        entries=[call(["a", "gamma", "beta"], ["n"], "LayerNormalization", target=REFERENCE),
                 call(["x", "W", "gamma", "beta"], ["s"], "MatMulLayerNormSoftmax")],
        select=selection(reference=["e0"], portable=["e1"], both=["e0"], portable_first=["e1"], npu=[]))


CYCLE_GRAPH = """main ({t}[4,8] x, {t}[4,8] z, {t}[8,8] Wa, {t}[8,8] Wb) => ({t}[4,8] p, {t}[4,8] q) {{
          [matmul_a] a1 = MatMul(x, Wa)
          [matmul_b] b1 = MatMul(z, Wb)
          [mul_a] a2 = Mul(a1, b1)
          [add_b] b2 = Add(b1, a1)
          [tanh_a] p = Tanh(a2)
          [tanh_b] q = Tanh(b2)
        }}"""


def cycle_targets(dtype: str) -> VariantCase:
    type_name, np_type = F16[dtype]
    name = f"cycle_targets_{dtype}"
    rng = rng_for(name)
    return VariantCase(
        name=name, kind="cycle", tolerance=FLOAT16_TOLERANCE if dtype == "float16" else None, operator="MatMul",
        why=f"two disjoint, convex entries wired across (A reads b1 from B's region, B reads a1 from A's): "
            f"taken together the calls would form a cycle, so the lower-ranked one is dropped; {dtype}",
        graph=CYCLE_GRAPH.format(t=type_name),
        weights={"Wa": matrix(rng, 8, 8, np_type), "Wb": matrix(rng, 8, 8, np_type)},
        functions=[fn.CROSS_A, fn.CROSS_B],
        entries=[call(["x", "Wa", "b1"], ["a1", "a2"], "CrossA", target=REFERENCE),  # matmul_a, mul_a
                 call(["z", "Wb", "a1"], ["b1", "b2"], "CrossB")],  # matmul_b, add_b
        # both: e0 (reference) ranks first, e1 would close the cycle and is dropped;
        # portable first: the other way round.
        select=selection(reference=["e0"], portable=["e1"], both=["e0"], portable_first=["e1"], npu=[]))


def cycle_priority() -> VariantCase:
    rng = rng_for("cycle_priority")
    return VariantCase(
        name="cycle_priority", kind="cycle", operator="MatMul",
        why="the cross-wired pair of cycle_targets, both for the reference: the higher priority (e1, 3) "
            "stays and e0 is dropped although it comes first",
        graph=CYCLE_GRAPH.format(t="float"),
        weights={"Wa": matrix(rng, 8, 8), "Wb": matrix(rng, 8, 8)},
        functions=[fn.CROSS_A, fn.CROSS_B],
        entries=[call(["x", "Wa", "b1"], ["a1", "a2"], "CrossA", target=REFERENCE, priority=0),
                 call(["z", "Wb", "a1"], ["b1", "b2"], "CrossB", target=REFERENCE, priority=3)],
        select=selection(reference=["e1"], portable=[], both=["e1"], npu=[]))


def resort_region_input() -> VariantCase:
    rng = rng_for("resort_region_input")
    return VariantCase(
        name="resort_region_input", kind="resort", operator="MatMul",
        why="the region (matmul_0, mul_0) reads s, made by sigmoid_0 between its nodes: the call, placed "
            "at matmul_0's position, must move after sigmoid_0",
        graph="""main (float[4,8] x, float[4,8] z, float[8,8] W) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [sigmoid_0] s = Sigmoid(z)
          [mul_0] g = Mul(a, s)
          [tanh_0] y = Tanh(g)
        }""",
        weights={"W": matrix(rng, 8, 8)},
        functions=[fn.GATED_LINEAR],
        entries=[call(["x", "W", "s"], ["g"], "GatedLinear")],
        select=selection(reference=[], portable=["e0"], both=["e0"], npu=[]))


def resort_extra_input() -> VariantCase:
    rng = rng_for("resort_extra_input")
    return VariantCase(
        name="resort_extra_input", kind="resort", operator="Softmax",
        why="a reference-compiled entry that takes an extra input (s) the region does not read, made by "
            "sigmoid_0, listed after softmax_0 which makes the entry's output: the call moves after it",
        graph="""main (float[4,8] x, float[4,8] z, float[8,8] W) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [softmax_0] b = Softmax <axis = -1> (a)
          [sigmoid_0] s = Sigmoid(z)
          [mul_0] y = Mul(b, s)
        }""",
        weights={"W": matrix(rng, 8, 8)},
        entries=[compiled(["x", "W", "s"], ["b"], REFERENCE, reference_blob("""
          region (X, W, S) => (Y) {
            A = MatMul(X, W)
            Y = Softmax <axis = -1> (A)
          }"""))],
        select=selection(reference=["e0"], portable=[], both=["e0"], npu=[]))


def if_branches() -> VariantCase:
    rng = rng_for("if_branches")
    return VariantCase(
        name="if_branches", kind="subgraph_if", operator="MatMul",
        why="entries in the then and else branches of two If nodes, reading outer-scope values (x and the "
            "weights); data set 0 (c true) runs if_0's then and if_1's else branch, data set 1 (c false) "
            "the other two, so every entry's branch executes",
        graph="""main (float[4,8] x, bool c, float[8,8] W1, float[8,8] W2) => (float[4,8] y) {
          [not_0] nc = Not(c)
          [if_0] r0 = If(c) <
            then_branch = then0 () => (float[4,8] t0_out) {
              [then0_matmul] t0_a = MatMul(x, W1)
              [then0_relu] t0_out = Relu(t0_a)
            },
            else_branch = else0 () => (float[4,8] e0_out) {
              [else0_matmul] e0_a = MatMul(x, W2)
              [else0_softmax] e0_out = Softmax <axis = -1> (e0_a)
            }>
          [if_1] r1 = If(nc) <
            then_branch = then1 () => (float[4,8] t1_out) {
              [then1_matmul] t1_a = MatMul(x, W2)
              [then1_tanh] t1_out = Tanh(t1_a)
            },
            else_branch = else1 () => (float[4,8] e1_out) {
              [else1_matmul] e1_a = MatMul(x, W1)
              [else1_sigmoid] e1_out = Sigmoid(e1_a)
            }>
          [add_0] y = Add(r0, r1)
        }""",
        weights={"W1": matrix(rng, 8, 8), "W2": matrix(rng, 8, 8)},
        inputs={"c": np.array(True)},
        more_inputs=[{"c": np.array(False)}],
        functions=[fn.MATMUL_RELU, fn.MATMUL_SOFTMAX, fn.MATMUL_TANH, fn.MATMUL_SIGMOID],
        entries=[call(["x", "W1"], ["t0_out"], "MatMulRelu", graph="if_0.then_branch"),
                 call(["x", "W2"], ["e0_out"], "MatMulSoftmax", target=REFERENCE, graph="if_0.else_branch"),
                 call(["x", "W2"], ["t1_out"], "MatMulTanh", graph="if_1.then_branch"),
                 call(["x", "W1"], ["e1_out"], "MatMulSigmoid", target=REFERENCE, graph="if_1.else_branch")],
        # Each branch holds one entry, disjoint from all others: eligibility alone decides.
        select=selection(reference=["if_0.else_branch/e0", "if_1.else_branch/e0"],
                         portable=["if_0.then_branch/e0", "if_1.then_branch/e0"],
                         both=["if_0.else_branch/e0", "if_0.then_branch/e0", "if_1.else_branch/e0",
                               "if_1.then_branch/e0"], npu=[]))


def loop_body(dtype: str) -> VariantCase:
    type_name, np_type = F16[dtype]
    name = f"loop_body_{dtype}"
    rng = rng_for(name)
    return VariantCase(
        name=name, kind="subgraph_loop", tolerance=FLOAT16_TOLERANCE if dtype == "float16" else None, operator="MatMul",
        why=f"two entries in a Loop body, one reading Wm (computed in the main graph) and B from the outer "
            f"scope, one reading the first's output; three iterations, both carried (no scan output, whose "
            f"rank onnx's reference gets wrong: spec/findings.md LOOP-1), {dtype}",
        graph=f"""main ({type_name}[4,8] x, {type_name}[8,8] W, {type_name}[8,8] Wscale, {type_name}[8] B,
                        int64 M, bool keep) => ({type_name}[4,8] h_final, {type_name}[4,8] s_final) {{
          [mul_w] Wm = Mul(W, Wscale)
          [loop_0] h_final, s_final = Loop(M, keep, x, x) <
            body = body (int64 it, bool cond_in, {type_name}[4,8] h_in, {type_name}[4,8] s_in)
                   => (bool cond_out, {type_name}[4,8] h_out, {type_name}[4,8] s_out) {{
              [body_matmul] t = MatMul(h_in, Wm)
              [body_add] u = Add(t, B)
              [body_tanh] h_out = Tanh(u)
              [body_softmax] s_out = Softmax <axis = -1> (h_out)
              [body_cond] cond_out = Identity(cond_in)
            }}>
        }}""",
        weights={"W": matrix(rng, 8, 8, np_type), "Wscale": (1.0 + 0.1 * rng.standard_normal((8, 8))).astype(np_type),
                 "B": vector(rng, 8, np_type), "M": np.array(3, dtype=np.int64), "keep": np.array(True)},
        functions=[fn.LINEAR_TANH, fn.SOFTMAX_DECOMPOSED],
        entries=[call(["h_in", "Wm", "B"], ["h_out"], "LinearTanh", graph="loop_0.body"),
                 call(["h_out"], ["s_out"], "Softmax", target=REFERENCE, graph="loop_0.body")],
        select=selection(reference=["loop_0.body/e1"], portable=["loop_0.body/e0"],
                         both=["loop_0.body/e0", "loop_0.body/e1"], npu=[]))


def region_with_if() -> VariantCase:
    rng = rng_for("region_with_if")
    return VariantCase(
        name="region_with_if", kind="region_with_if", operator="MatMul",
        why="a region holding an If node whose branches read a (made by matmul_0, in the region) from the "
            "outer scope, and a portable entry inside its then branch that goes when the If is replaced",
        graph="""main (float[4,8] x, bool c, float[8,8] W, float zero) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [if_0] r = If(c) <
            then_branch = then0 () => (float[4,8] r_then) {
              [then_relu] r_then = Relu(a)
            },
            else_branch = else0 () => (float[4,8] r_else) {
              [else_sigmoid] r_else = Sigmoid(a)
            }>
          [add_0] y = Add(r, x)
        }""",
        weights={"W": matrix(rng, 8, 8), "zero": np.array(0.0, dtype=np.float32)},
        inputs={"c": np.array(True)},
        functions=[fn.GATE_BY_CONDITION],
        entries=[call(["x", "W", "c"], ["r"], "GateByCondition", target=REFERENCE),
                 call(["a", "zero"], ["r_then"], "Clip", domain="", graph="if_0.then_branch")],
        # Whenever e0 is taken, if_0 is gone and the entry in its then branch with it,
        # whatever its rank (resolution step 6: subgraphs of the nodes that remain).
        select=selection(reference=["e0"], portable=["if_0.then_branch/e0"], both=["e0"],
                         portable_first=["e0"], npu=[]))


def nested_entry_reads_region_value() -> VariantCase:
    rng = rng_for("nested_entry_reads_region_value")
    return VariantCase(
        name="nested_entry_reads_region_value", kind="nested_entry_read", operator="MatMul",
        why="a value inside a main-graph cut (a, made by matmul_0) that only an entry of an If branch reads, as "
            "an extra input its region does not read: when both entries are taken, matmul_0 must stay for it",
        graph="""main (float[4,8] x, bool c, float[8,8] W) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [relu_0] b = Relu(a)
          [if_0] r = If(c) <
            then_branch = then0 () => (float[4,8] r_then) {
              [then_tanh] r_then = Tanh(x)
            },
            else_branch = else0 () => (float[4,8] r_else) {
              [else_sigmoid] r_else = Sigmoid(x)
            }>
          [add_0] y = Add(b, r)
        }""",
        weights={"W": matrix(rng, 8, 8)},
        inputs={"c": np.array(True)},
        functions=[fn.MATMUL_RELU],
        entries=[call(["x", "W"], ["b"], "MatMulRelu"),  # matmul_0, relu_0
                 compiled(["x", "a"], ["r_then"], REFERENCE, reference_blob("""
                   region (X, A) => (Y) {
                     Y = Tanh(X)
                   }"""), graph="if_0.then_branch")],  # then_tanh; a is read by no region node
        # The two entries live in different graphs and if_0 is outside e0's region: eligibility
        # alone decides. Taken together, e0 removes relu_0 but keeps matmul_0, whose a the
        # blob in if_0 (which stays) reads (resolution step 6).
        select=selection(reference=["if_0.then_branch/e0"], portable=["e0"], both=["e0", "if_0.then_branch/e0"],
                         portable_first=["e0", "if_0.then_branch/e0"], npu=[]))


LAYER_NORM_CHAIN = """main (float[4,8] x, float[8,8] W, float[8] gamma, float[8] beta) => (float[4,8] y) {
          [matmul_0] a = MatMul(x, W)
          [layernorm_0] n = LayerNormalization <axis = -1, epsilon = 0.00001> (a, gamma, beta)
          [relu_0] y = Relu(n)
        }"""


def compiled_reference() -> VariantCase:
    rng = rng_for("compiled_reference")
    blob = reference_blob("""
      region (X, W, G, B) => (Y) {
        A = MatMul(X, W)
        N = LayerNormalization <axis = -1, epsilon = 0.00001> (A, G, B)
        Y = Relu(N)
      }""")
    return VariantCase(
        name="compiled_reference", kind="compiled_reference", operator="LayerNormalization",
        why="a Compiled entry the reference can run (its blob a FunctionProto) beside a portable "
            "local-function alternative of the same region",
        graph=LAYER_NORM_CHAIN,
        weights={"W": matrix(rng, 8, 8), "gamma": vector(rng, 8, offset=1.0), "beta": vector(rng, 8)},
        functions=[fn.MATMUL_LAYER_NORM_RELU],
        entries=[compiled(["x", "W", "gamma", "beta"], ["y"], REFERENCE, blob),
                 call(["x", "W", "gamma", "beta"], ["y"], "MatMulLayerNormRelu")],
        select=selection(reference=["e0"], portable=["e1"], both=["e0"], portable_first=["e1"], npu=[]))


def compiled_npu() -> VariantCase:
    rng = rng_for("compiled_npu")
    return VariantCase(
        name="compiled_npu", kind="compiled_foreign", operator="LayerNormalization",
        why="Compiled entries only for com.example.npu, which no adapter has: every backend runs the main "
            "graph (com.example.npu is not pinned, its blob cannot run)",
        graph=LAYER_NORM_CHAIN,
        weights={"W": matrix(rng, 8, 8), "gamma": vector(rng, 8, offset=1.0), "beta": vector(rng, 8)},
        entries=[compiled(["x", "W", "gamma", "beta"], ["y"], NPU, npu_blob("compiled_npu/e0")),
                 compiled(["a", "gamma", "beta"], ["n"], NPU, npu_blob("compiled_npu/e1", 40), priority=4)],
        select=selection(reference=[], portable=[], both=[]))


STALE_GRAPH = """main (float[4,8] x, float[8,8] W, float[8] B) => (float[4,8] y) {
          [gemm_0] g = Gemm <alpha = 1.0, beta = 1.0> (x, W, B)
          [leaky_0] y = LeakyRelu <alpha = 0.1> (g)
        }"""


def compiled_fresh_entries(name: str) -> list:
    blob = reference_blob("""
      region (X, W, B) => (Y) {
        G = Gemm <alpha = 1.0, beta = 1.0> (X, W, B)
        Y = LeakyRelu <alpha = 0.1> (G)
      }""")
    return [compiled(["x", "W", "B"], ["y"], REFERENCE, blob),
            compiled(["x", "W", "B"], ["y"], NPU, npu_blob(f"{name}/e1"))]


def compiled_fresh() -> VariantCase:
    rng = rng_for("compiled_fresh")
    return VariantCase(
        name="compiled_fresh", kind="compiled_reference", operator="Gemm",
        why="the valid twin of invalid/compiled_stale: Compiled entries whose __hash__ matches the region "
            "they replace",
        graph=STALE_GRAPH,
        weights={"W": matrix(rng, 8, 8), "B": vector(rng, 8)},
        entries=compiled_fresh_entries("compiled_fresh"),
        select=selection(reference=["e0"], portable=[], both=["e0"]))


def shared_weight() -> VariantCase:
    rng = rng_for("shared_weight")
    return VariantCase(
        name="shared_weight_1mib", kind="shared_weight", operator="Softmax",
        why="three alternatives of a block reading one 1 MiB weight by name: the file holds the weight once "
            "(the generator fails it above 1 MiB + 64 KiB)",
        graph="""main (float[2,512] x, float[512,512] W, float[512] B) => (float[2,512] y) {
          [matmul_0] h = MatMul(x, W)
          [add_0] a = Add(h, B)
          [relu_0] r = Relu(a)
          [softmax_0] y = Softmax <axis = -1> (r)
        }""",
        weights={"W": matrix(rng, 512, 512), "B": vector(rng, 512)},
        functions=[fn.LINEAR_RELU, fn.BIAS_FIRST_LINEAR_RELU, fn.LINEAR_RELU_SOFTMAX],
        entries=[call(["x", "W", "B"], ["r"], "LinearRelu"),
                 call(["x", "W", "B"], ["r"], "BiasFirstLinearRelu", target=REFERENCE),
                 call(["x", "W", "B"], ["y"], "LinearReluSoftmax", target=REFERENCE, priority=2)],
        # reference: e2 (priority 2) first, e1 overlaps it. portable first: e0, then both overlap.
        select=selection(reference=["e2"], portable=["e0"], both=["e2"], portable_first=["e0"], npu=[]),
        max_bytes=1024 * 1024 + 64 * 1024)


def local_overload() -> VariantCase:
    rng = rng_for("local_overload")
    return VariantCase(
        name="local_overload", kind="local_function", operator="MatMul",
        why="entries calling the model-local function GatedMLP without an overload (portable) and its "
            "overload 'v2' (reference)",
        graph="""main (float[4,8] x, float[8,8] W, float[8,8] V) => (float[4,8] y) {
          [matmul_g] g = MatMul(x, W)
          [matmul_v] v = MatMul(x, V)
          [sigmoid_0] sg = Sigmoid(g)
          [mul_0] sw = Mul(g, sg)
          [mul_1] y = Mul(sw, v)
        }""",
        weights={"W": matrix(rng, 8, 8), "V": matrix(rng, 8, 8)},
        functions=[fn.GATED_MLP, fn.GATED_MLP_V2],
        entries=[call(["x", "W", "V"], ["y"], "GatedMLP"),
                 call(["x", "W", "V"], ["y"], "GatedMLP", overload="v2", target=REFERENCE)],
        select=selection(reference=["e1"], portable=["e0"], both=["e1"], portable_first=["e0"], npu=[]))


def portable_disjoint() -> VariantCase:
    rng = rng_for("portable_disjoint")
    return VariantCase(
        name="portable_disjoint", kind="portable", operator="LayerNormalization",
        why="three disjoint portable entries taken together: a standard Gemm for MatMul+Add, a decomposed "
            "LayerNormalization (priority 1) and a decomposed Softmax",
        graph="""main (float[4,8] x, float[8,8] W, float[8] B, float[8] gamma, float[8] beta) => (float[4,8] y) {
          [matmul_0] t = MatMul(x, W)
          [add_0] u = Add(t, B)
          [layernorm_0] n = LayerNormalization <axis = -1, epsilon = 0.00001> (u, gamma, beta)
          [mul_0] m = Mul(n, x)
          [softmax_0] y = Softmax <axis = -1> (m)
        }""",
        weights={"W": matrix(rng, 8, 8), "B": vector(rng, 8), "gamma": vector(rng, 8, offset=1.0),
                 "beta": vector(rng, 8)},
        functions=[fn.LAYER_NORM_DECOMPOSED, fn.SOFTMAX_DECOMPOSED],
        entries=[call(["x", "W", "B"], ["u"], "Gemm", domain=""),
                 call(["u", "gamma", "beta"], ["n"], "LayerNormalization", priority=1),
                 call(["m"], ["y"], "Softmax")],
        select=selection(reference=[], portable=["e0", "e1", "e2"], both=["e0", "e1", "e2"], npu=[]))


def valid_cases() -> list:
    return [one_node_layernorm(), chain("float32"), chain("float16"), diamond("float32"), diamond("float16"),
            intermediate_kept(), overlap_targets(), overlap_priority(), overlap_tie_order(), nested(),
            cycle_targets("float32"), cycle_targets("float16"), cycle_priority(), resort_region_input(),
            resort_extra_input(), if_branches(), loop_body("float32"), loop_body("float16"), region_with_if(),
            nested_entry_reads_region_value(),
            compiled_reference(), compiled_npu(), compiled_fresh(), shared_weight(), local_overload(),
            portable_disjoint()]
