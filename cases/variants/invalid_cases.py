"""The invalid variant-graph cases: a valid main graph and an entry that
breaks one rule of spec/variants.md ("Validity"). `parity check --cases`
must refuse each with a problem that starts with the rule id and contains
the message substring: the name of the offending value, key or attribute.
Compiled entries are stamped first and broken after, so that the one rule
broken is the one the case is about."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import local_functions as fn
import valid_cases  # the graph and entries of compiled_fresh, the stale case's valid twin
from variant_model import (PRIORITY_KEY, REFERENCE, TARGET_KEY, VariantCase, binary_attribute, call, compiled,
                           function, matrix, reference_blob, rng_for, string_attribute, vector)

# Distinctive value names, so that a message naming one cannot match by accident.
BASE_GRAPH = """main (float[4,8] features, float[8,8] proj_weight, float[8] proj_bias) => (float[4,8] probs) {
          [matmul_0] projected = MatMul(features, proj_weight)
          [add_0] biased = Add(projected, proj_bias)
          [relu_0] activation = Relu(biased)
          [softmax_0] probs = Softmax <axis = -1> (activation)
        }"""
GOOD_INPUTS = ["features", "proj_weight", "proj_bias"]
LINEAR_RELU_BLOB_TEXT = """
  region (X, W, B) => (Y) {
    T = MatMul(X, W)
    U = Add(T, B)
    Y = Relu(U)
  }"""


def base_weights(name: str) -> dict:
    rng = rng_for(name)
    return {"proj_weight": matrix(rng, 8, 8), "proj_bias": vector(rng, 8)}


def invalid(name: str, rule: str, message: str, why: str, entries: list, functions: tuple = (fn.LINEAR_RELU,),
            graph: str = BASE_GRAPH, weights: dict | None = None, **extra) -> VariantCase:
    return VariantCase(name=name, kind=rule.lower().removeprefix("var-").replace("-", "_"), why=why, graph=graph,
                       weights=base_weights(name) if weights is None else weights, entries=entries,
                       functions=list(functions), check=(rule, message), **extra)


def linear_relu(inputs=None, outputs=None, op_type="LinearRelu", **kwargs):
    return call(GOOD_INPUTS if inputs is None else inputs, ["activation"] if outputs is None else outputs, op_type,
                **kwargs)


# --- Compiled entries broken after stamping. ---------------------------------------------------

def _entry(model, index=0):
    return model.graph.equivalent_subgraph[index]


def _drop_attribute(name):
    def edit(model):
        entry = _entry(model)
        kept = [a for a in entry.attribute if a.name != name]
        del entry.attribute[:]
        entry.attribute.extend(kept)
    return edit


def _replace_binary(dims=None, data_type=TensorProto.STRING):
    """__binary__ rewritten with other dims or type; dims None: one per byte of the blob."""
    def edit(model):
        entry = _entry(model)
        blob = next(a for a in entry.attribute if a.name == "__binary__").t.string_data[0]
        _drop_attribute("__binary__")(model)
        shape = (len(blob),) if dims is None else dims
        entry.attribute.add().ParseFromString(binary_attribute(blob, shape, data_type).SerializeToString())
    return edit


def _drop_metadata(key):
    def edit(model):
        entry = _entry(model)
        kept = [(p.key, p.value) for p in entry.metadata_props if p.key != key]
        del entry.metadata_props[:]
        for k, v in kept:
            prop = entry.metadata_props.add()
            prop.key, prop.value = k, v
    return edit


def _add_string_attribute(name, value):
    def edit(model):
        _entry(model).attribute.add().ParseFromString(string_attribute(name, value).SerializeToString())
    return edit


def _uppercase_hash(model):
    for attr in _entry(model).attribute:
        if attr.name == "__hash__":
            attr.s = attr.s.upper()


def _set_node_float(node_name, attr_name, value):
    """Edits a main-graph node after stamping: what a tool that rewrites the graph does."""
    def edit(model):
        node = next(n for n in model.graph.node if n.name == node_name)
        next(a for a in node.attribute if a.name == attr_name).f = value
    return edit


def _set_entry_domain(domain):
    def edit(model):
        _entry(model).domain = domain
    return edit


def reference_compiled(**kwargs):
    return compiled(GOOD_INPUTS, ["activation"], REFERENCE, reference_blob(LINEAR_RELU_BLOB_TEXT), **kwargs)


def compiled_cases() -> list:
    def case(name, message, why, edit=None, stamp=None, entry=None):
        return invalid(name, "VAR-COMPILED", message, why, [entry or reference_compiled()], functions=(),
                       after_stamp=edit, stamp=stamp)
    return [
        case("compiled_missing_binary", "__binary__", "a Compiled entry without __binary__",
             _drop_attribute("__binary__")),
        case("compiled_binary_not_scalar", "__binary__", "__binary__ a STRING tensor of shape [1], not []",
             _replace_binary(dims=(1,))),
        case("compiled_binary_not_string", "__binary__", "__binary__ a UINT8 tensor of raw bytes, not a STRING",
             _replace_binary(data_type=TensorProto.UINT8)),
        case("compiled_missing_target", TARGET_KEY, "a Compiled entry without ai.onnx.variant.target",
             _drop_metadata(TARGET_KEY)),
        case("compiled_missing_identifier", "__identifier__", "a Compiled entry without __identifier__",
             _drop_attribute("__identifier__")),
        case("compiled_unstamped", "__hash__", "a Compiled entry whose __hash__ was never stamped (empty)",
             stamp=False),
        case("compiled_malformed_hash", "__hash__", "a __hash__ in uppercase hex, not sha256:<64 lowercase hex>",
             _uppercase_hash),
        case("compiled_reserved_attribute", "__cache__", "an attribute __cache__: names __x__ are reserved",
             _add_string_attribute("__cache__", "warm")),
    ]


def stale() -> VariantCase:
    rng = rng_for("compiled_stale")
    return VariantCase(
        name="compiled_stale", kind="stale",
        why="the twin of valid/compiled_fresh after a tool changed leaky_0's alpha (0.1 to 0.2): the stamped "
            "__hash__ no longer matches its region",
        graph=valid_cases.STALE_GRAPH, weights={"W": matrix(rng, 8, 8), "B": vector(rng, 8)},
        entries=valid_cases.compiled_fresh_entries("compiled_stale"),
        after_stamp=_set_node_float("leaky_0", "alpha", 0.2), check=("VAR-STALE", "__hash__"))


OPEN_CUT_GRAPH = """main (float[4,8] features, float[8] bias_in, float[8,8] proj_weight) => (float[4,8] probs) {
          [matmul_0] projected = MatMul(features, proj_weight)
          [add_0] biased = Add(projected, bias_in)
          [relu_0] activation = Relu(biased)
          [softmax_0] probs = Softmax <axis = -1> (activation)
        }"""

OUTER_OPEN_CUT_GRAPH = """main (float[4,8] features, bool c, float[8,8] proj_weight) => (float[4,8] y) {
          [sigmoid_0] outer_gate = Sigmoid(features)
          [if_0] y = If(c) <
            then_branch = then0 () => (float[4,8] r_then) {
              [then_matmul] m = MatMul(features, proj_weight)
              [then_mul] r_then = Mul(m, outer_gate)
            },
            else_branch = else0 () => (float[4,8] r_else) {
              [else_id] r_else = Identity(outer_gate)
            }>
        }"""

CONVEX_GRAPH = """main (float[4,8] features) => (float[4,8] y) {
          [relu_0] rectified = Relu(features)
          [neg_0] side_value = Neg(rectified)
          [add_0] combined = Add(rectified, side_value)
          [tanh_0] y = Tanh(combined)
        }"""

LOOP_CONVEX_GRAPH = """main (float[4,8] features, int64 M, bool keep) => (float[4,8] h_final) {
          [loop_0] h_final = Loop(M, keep, features) <
            body = body (int64 it, bool cond_in, float[4,8] h_in) => (bool cond_out, float[4,8] h_out) {
              [body_relu] rect = Relu(h_in)
              [body_neg] loop_side = Neg(rect)
              [body_add] h_out = Add(rect, loop_side)
              [body_cond] cond_out = Identity(cond_in)
            }>
        }"""


# if_0's then branch holds an entry reading late_sum, made after if_0 from its output.
LATE_OUTER_GRAPH = """main (float[4,8] features, bool c) => (float[4,8] y) {
          [relu_0] early = Relu(features)
          [if_0] branch_out = If(c) <
            then_branch = then0 () => (float[4,8] r_then) {
              [then_neg] r_then = Neg(early)
            },
            else_branch = else0 () => (float[4,8] r_else) {
              [else_abs] r_else = Abs(early)
            }>
          [add_0] late_sum = Add(branch_out, features)
          [tanh_0] y = Tanh(late_sum)
        }"""

# Two If nodes; after stamping the first is renamed "If#2" and the second
# (at position 2) loses its name, so both label "If#2" and their entries share an id.
ID_CLASH_GRAPH = """main (float[4,8] features, bool c) => (float[4,8] y1, float[4,8] y2) {
          [if_a] y1 = If(c) <
            then_branch = then_a () => (float[4,8] p_a) { [then_a_neg] p_a = Neg(features) },
            else_branch = else_a () => (float[4,8] q_a) { [else_a_abs] q_a = Abs(features) }>
          [relu_0] rectified = Relu(features)
          [if_b] y2 = If(c) <
            then_branch = then_b () => (float[4,8] p_b) { [then_b_neg] p_b = Neg(rectified) },
            else_branch = else_b () => (float[4,8] q_b) { [else_b_abs] q_b = Abs(rectified) }>
        }"""


def _clash_labels(model):
    by_name = {n.name: n for n in model.graph.node}
    by_name["if_a"].name = "If#2"
    by_name["if_b"].name = ""


# A local function whose body holds an If; an entry is put into its then branch after stamping.
GATED_BRANCH = function("""
GatedBranch (X, C) => (Y) {
  Y = If(C) <
    then_branch = gated_then () => (float[4,8] T) { T = Relu(X) },
    else_branch = gated_else () => (float[4,8] E) { E = Neg(X) }>
}""")


def _entry_in_function_body(model):
    body = next(f for f in model.functions if f.name == "GatedBranch")
    branch = next(a for a in body.node[0].attribute if a.name == "then_branch").g
    entry = branch.equivalent_subgraph.add()
    entry.input.append("X")
    entry.output.append("T")
    entry.op_type = "Relu"


def _branch_graph(name: str):
    return helper.make_graph([helper.make_node("Identity", ["activation"], [f"{name}_out"])], name, [],
                             [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [4, 8])])


def scope_cases() -> list:
    """Where entries may sit and what their calls may carry."""
    return [
        invalid("names_outer_value_after_holder", "VAR-NAMES", "late_sum",
                "an entry in if_0's then branch reading late_sum, computed after if_0 from its output: not "
                "visible at the node that holds the entry", [
                    call(["early", "late_sum"], ["r_then"], "Sub", domain="", graph="if_0.then_branch")],
                functions=(), graph=LATE_OUTER_GRAPH, weights={}),
        invalid("call_subgraph_attribute", "VAR-CALL", "fusion_body",
                "an entry whose call carries a GRAPH attribute: control flow belongs in a model-local function",
                [linear_relu(attributes=[helper.make_attribute("fusion_body", _branch_graph("fusion_body"))])]),
        invalid("call_duplicate_attribute", "VAR-CALL", "fusion_mode",
                "an entry whose call gives the attribute fusion_mode twice",
                [linear_relu(attributes=[helper.make_attribute("fusion_mode", 1),
                                         helper.make_attribute("fusion_mode", 2)])]),
        invalid("place_function_body", "VAR-PLACE", "GatedBranch",
                "an entry inside the then branch of an If in the body of the local function GatedBranch",
                [], functions=(fn.LINEAR_RELU, GATED_BRANCH), after_stamp=_entry_in_function_body),
        invalid("id_collision", "VAR-ID", "If#2.then_branch/e0",
                "a node named If#2 and an unnamed If at position 2, each holding an entry: both ids read "
                "If#2.then_branch/e0", [
                    call(["features"], ["p_a"], "Neg", domain="", graph="if_a.then_branch"),
                    call(["rectified"], ["p_b"], "Neg", domain="", graph="if_b.then_branch")],
                functions=(), graph=ID_CLASH_GRAPH, weights={}, after_stamp=_clash_labels),
    ]


def invalid_cases() -> list:
    copied = base_weights("copied_weight")
    weight_attr = helper.make_attribute("weight", numpy_helper.from_array(copied["proj_weight"].copy()))
    return [
        invalid("ir_version_9", "VAR-IR", "ir_version",
                "a valid entry (a standard Gemm) in a model of IR version 9, opset 20",
                [call(["features", "proj_weight", "proj_bias"], ["biased"], "Gemm", domain="")],
                functions=(), opset=20, ir_version=9),
        invalid("call_domain_not_imported", "VAR-CALL", "com.example.absent",
                "an entry calling a domain the model does not import",
                [linear_relu(op_type="FusedBlock", domain="com.example.absent")],
                not_imported=("com.example.absent",)),
        invalid("call_unknown_op", "VAR-CALL", "FusedLinearRelu",
                "an entry calling FusedLinearRelu in the default domain, which has no such operator",
                [linear_relu(op_type="FusedLinearRelu", domain="")]),
        invalid("call_overload_missing", "VAR-CALL", "v9",
                "an entry calling LinearRelu overload v9: the model defines LinearRelu only without overload",
                [linear_relu(overload="v9")]),
        invalid("call_compiled_default_domain", "VAR-CALL", "domain",
                "a Compiled call in the default domain (ai.onnx): a vendor's domain is required",
                [reference_compiled(domain="")], functions=()),
        invalid("call_no_op_type", "VAR-CALL", "op_type", "an entry with an empty op_type",
                [linear_relu(op_type="", domain="")], functions=()),
        invalid("arity_standard_op", "VAR-ARITY", "4 inputs", "an entry calling Gemm with four inputs (it takes three)",
                [call(["features", "proj_weight", "proj_bias", "proj_bias"], ["biased"], "Gemm", domain="")],
                functions=()),
        invalid("arity_function_outputs", "VAR-ARITY", "2 outputs",
                "an entry giving LinearRelu (one output) two outputs",
                [linear_relu(outputs=["activation", "biased"])]),
        invalid("arity_duplicate_output", "VAR-ARITY", "activation", "an entry listing the output activation twice",
                [linear_relu(outputs=["activation", "activation"])]),
        invalid("arity_no_outputs", "VAR-ARITY", "no outputs", "an entry with no outputs", [linear_relu(outputs=[])]),
        invalid("names_unknown_input", "VAR-NAMES", "no_such_value", "an entry input no value of the graph has",
                [linear_relu(inputs=["features", "proj_weight", "no_such_value"])]),
        invalid("names_output_is_graph_input", "VAR-NAMES", "features",
                "an entry output that is a graph input, not made by a node",
                [call(["biased"], ["features"], "Relu", domain="")], functions=()),
        invalid("names_output_is_initializer", "VAR-NAMES", "proj_bias",
                "an entry output that is an initializer, not made by a node",
                [call(["features"], ["proj_bias"], "Relu", domain="")], functions=()),
        invalid("open_cut", "VAR-OPEN-CUT", "bias_in",
                "a region reading the graph input bias_in, which is not an entry input",
                [linear_relu(inputs=["features", "proj_weight"], op_type="MatMulRelu")],
                functions=(fn.MATMUL_RELU,), graph=OPEN_CUT_GRAPH,
                weights={"proj_weight": matrix(rng_for("open_cut"), 8, 8)}),
        invalid("open_cut_outer_scope", "VAR-OPEN-CUT", "outer_gate",
                "a region in a then branch reading outer_gate from the enclosing graph without taking it as input",
                [call(["features", "proj_weight"], ["r_then"], "MatMul", domain="", graph="if_0.then_branch")],
                functions=(), graph=OUTER_OPEN_CUT_GRAPH,
                weights={"proj_weight": matrix(rng_for("open_cut_outer_scope"), 8, 8)}),
        invalid("convex", "VAR-CONVEX", "side_value",
                "an entry input (side_value) computed from a value inside the region (rectified)",
                [call(["features", "side_value"], ["combined"], "Add", domain="")], functions=(),
                graph=CONVEX_GRAPH, weights={}),
        invalid("loop_convex", "VAR-CONVEX", "loop_side",
                "a convexity violation inside a Loop body: loop_side is computed from rect, inside the region",
                [call(["h_in", "loop_side"], ["h_out"], "Add", domain="", graph="loop_0.body")], functions=(),
                graph=LOOP_CONVEX_GRAPH, weights={"M": np.array(2, dtype=np.int64), "keep": np.array(True)}),
        invalid("metadata_key_not_reverse_dns", "VAR-METADATA", "Note", "a metadata key that is not reverse-DNS",
                [linear_relu(metadata=[("Note", "fused on 2026-01-10")])]),
        invalid("metadata_key_uppercase", "VAR-METADATA", "com.Example.note",
                "a metadata key with an uppercase label",
                [linear_relu(metadata=[("com.Example.note", "x")])]),
        invalid("metadata_unknown_variant_key", "VAR-METADATA", "ai.onnx.variant.colour",
                "a key in ai.onnx.variant. that the spec does not define",
                [linear_relu(metadata=[("ai.onnx.variant.colour", "blue")])]),
        invalid("metadata_bad_priority", "VAR-METADATA", "high", "a priority that is not a decimal integer",
                [linear_relu(metadata=[(PRIORITY_KEY, "high")])]),
        invalid("metadata_priority_out_of_range", "VAR-METADATA", "2147483648",
                "a priority one above the largest int32", [linear_relu(metadata=[(PRIORITY_KEY, "2147483648")])]),
        invalid("metadata_duplicate_key", "VAR-METADATA", "org.onnxparity.note", "a metadata key given twice",
                [linear_relu(metadata=[("org.onnxparity.note", "a"), ("org.onnxparity.note", "b")])]),
        invalid("metadata_target_not_reverse_dns", "VAR-METADATA", "NPU", "a target that is not reverse-DNS",
                [linear_relu(target="NPU")]),
        *compiled_cases(),
        stale(),
        invalid("copied_weight", "VAR-COPIED-WEIGHT", "proj_weight",
                "an entry carrying a copy of the initializer proj_weight as a TENSOR attribute instead of "
                "reading it by name", [linear_relu(inputs=["features", "proj_bias"],
                                                   op_type="LinearReluWeightAttribute", attributes=[weight_attr])],
                functions=(fn.LINEAR_RELU_WEIGHT_ATTRIBUTE,), weights=copied),
        invalid("duplicate", "VAR-DUPLICATE", "entry e0", "the same entry twice in one graph",
                [linear_relu(), linear_relu()]),
        *scope_cases(),
    ]
