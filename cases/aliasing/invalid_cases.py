"""Models whose alias annotations break one rule of reference/aliasing/
aliasing.h each, and nothing else: every model passes onnx.checker, so only
our rule refuses it. The read-after-write cases (hazard_*) also carry a data
set, so that `parity eval --check-aliasing` can show the in-place run
giving another result than the functional one."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from alias_model import (CheckCase, alias_value, annotate, const_i64, make_model, rng_for, tensor_in)

B, H, S, D, L = 1, 2, 1, 4, 6
MUST_SCATTER = alias_value("past_key", "must", "scatter")


def cache_model(name, key_alias=MUST_SCATTER, extra_aliases=None, extra_nodes=(), extra_outputs=(),
                initializers=None, key_cache="past_key", opset=24, metadata=None):
    """present_key/value = TensorScatter(past, new, write_indices), y = Attention-24
    over them. `key_alias`: the annotation of present_key (None: none).
    `metadata`: raw (key, value) pairs added after the annotations."""
    inputs = [tensor_in("q", np.float32, [B, H, S, D]), tensor_in("k", np.float32, [B, H, S, D]),
              tensor_in("v", np.float32, [B, H, S, D]), tensor_in("write_indices", np.int64, [B]),
              tensor_in("nonpad_kv_seqlen", np.int64, [B]),
              tensor_in("past_key", np.float32, [B, H, L, D]), tensor_in("past_value", np.float32, [B, H, L, D])]
    nodes = list(extra_nodes) + [
        helper.make_node("TensorScatter", [key_cache, "k", "write_indices"], ["present_key"]),
        helper.make_node("TensorScatter", ["past_value", "v", "write_indices"], ["present_value"]),
        helper.make_node("Attention", ["q", "present_key", "present_value", "", "", "", "nonpad_kv_seqlen"], ["y"]),
    ]
    aliases = {} if key_alias is None else {"present_key": key_alias}
    aliases.update(extra_aliases or {})
    model = make_model(name, nodes, inputs, ["y", "present_key", "present_value"] + list(extra_outputs),
                       initializers=initializers, aliases=aliases, opset=opset)
    for key, value in metadata or ():
        model.graph.metadata_props.add(key=key, value=value)
    return model


def cache_inputs(name):
    rng = rng_for(name)
    return {"q": rng.normal(0, 1, (B, H, S, D)).astype(np.float32), "k": rng.normal(0, 1, (B, H, S, D)).astype(np.float32),
            "v": rng.normal(0, 1, (B, H, S, D)).astype(np.float32), "write_indices": np.array([2], np.int64),
            "nonpad_kv_seqlen": np.array([3], np.int64),
            "past_key": rng.normal(0, 1, (B, H, L, D)).astype(np.float32),
            "past_value": rng.normal(0, 1, (B, H, L, D)).astype(np.float32)}


def state_model(name, nodes, outputs, aliases, state_dtype=np.float32, extra_inputs=(), **kwargs):
    """Small whole-buffer models: x [2, 3] and state_in [2, 3]."""
    inputs = [tensor_in("x", np.float32, [2, 3]), tensor_in("state_in", state_dtype, [2, 3])] + list(extra_inputs)
    return make_model(name, nodes, inputs, outputs, aliases=aliases, **kwargs)


def _key_cases():
    rule = "ALIAS-KEY"
    return [
        CheckCase("key_unknown_field", rule, "color", "a field that is not input, mode or region",
                  cache_model("key_unknown_field", "input=past_key;color=red")),
        CheckCase("key_field_twice", rule, "mode", "the field mode given twice",
                  cache_model("key_field_twice", "input=past_key;mode=may;mode=must")),
        CheckCase("key_no_input", rule, "present_key", "no input field",
                  cache_model("key_no_input", "mode=must;region=scatter")),
        CheckCase("key_bad_mode", rule, "always", "mode neither may nor must",
                  cache_model("key_bad_mode", "input=past_key;mode=always")),
        CheckCase("key_bad_region", rule, "rows", "region neither whole nor scatter",
                  cache_model("key_bad_region", "input=past_key;region=rows")),
        CheckCase("key_output_annotated_twice", rule, "present_key",
                  "two metadata entries with the key of present_key (one output, two annotations)",
                  cache_model("key_output_annotated_twice",
                              metadata=[("ai.onnx.alias.present_key", "input=past_key;mode=may")])),
    ]


def _names_cases():
    rule = "ALIAS-NAMES"
    rng = rng_for("names")
    bias = rng.normal(0, 1, (2, 3)).astype(np.float32)
    return [
        CheckCase("names_not_an_output", rule, "present_cache", "the annotated output is not a graph output",
                  cache_model("names_not_an_output", None,
                              extra_aliases={"present_cache": alias_value("past_key", "must", "scatter")})),
        # region=whole: with scatter, the writer's past_cache would not be
        # the named input either (ALIAS-SCATTER).
        CheckCase("names_not_an_input", rule, "past_keys", "the aliased input is not a graph input",
                  cache_model("names_not_an_input", alias_value("past_keys", "may", "whole"))),
        CheckCase("names_input_with_initializer", rule, "past_value",
                  "the aliased input has an initializer (a default later runs would see changed)",
                  cache_model("names_input_with_initializer", None,
                              extra_aliases={"present_value": alias_value("past_value", "must", "scatter")},
                              initializers={"past_value": rng.normal(0, 1, (B, H, L, D)).astype(np.float32)})),
        CheckCase("names_output_is_initializer", rule, "bias",
                  "the annotated output is an initializer, computed by no node",
                  state_model("names_output_is_initializer", [helper.make_node("Add", ["x", "bias"], ["y"])],
                              ["y", tensor_in("bias", np.float32, [2, 3])],
                              {"bias": alias_value("state_in")}, initializers={"bias": bias})),
    ]


def _type_cases():
    rule = "ALIAS-TYPE"
    return [
        CheckCase("type_dtype", rule, "total_out", "a float output aliasing a double input",
                  state_model("type_dtype", [helper.make_node("Cast", ["state_in"], ["state_f"], to=TensorProto.FLOAT),
                                             helper.make_node("Add", ["state_f", "x"], ["total_out"])],
                              ["total_out"], {"total_out": alias_value("state_in")}, state_dtype=np.float64)),
        CheckCase("type_shape", rule, "grown", "an output [4, 3] aliasing an input [2, 3]",
                  state_model("type_shape", [helper.make_node("Concat", ["state_in", "x"], ["grown"], axis=0)],
                              ["grown"], {"grown": alias_value("state_in")})),
        CheckCase("type_rank", rule, "lifted", "an output of rank 3 aliasing an input of rank 2",
                  state_model("type_rank", [const_i64("axes", [0]),
                                            helper.make_node("Add", ["state_in", "x"], ["summed"]),
                                            helper.make_node("Unsqueeze", ["summed", "axes"], ["lifted"])],
                              ["lifted"], {"lifted": alias_value("state_in")})),
    ]


def _twice_cases():
    nodes = [helper.make_node("Add", ["state_in", "x"], ["summed"]),
             helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", 1, [], [2.0])),
             helper.make_node("Constant", [], ["three"], value=helper.make_tensor("three", 1, [], [3.0])),
             helper.make_node("Mul", ["summed", "two"], ["doubled"]),
             helper.make_node("Mul", ["summed", "three"], ["tripled"])]
    model = state_model("twice", nodes, ["doubled", "tripled"],
                        {"doubled": alias_value("state_in"), "tripled": alias_value("state_in", "must")})
    return [CheckCase("twice", "ALIAS-TWICE", "state_in", "two outputs alias one input (each read after the "
                      "only reader of the input, so no other rule applies)", model)]


def _branch(name, op, output):
    """A graph with no inputs computing `output` = op(state_in, x) from the outer scope."""
    return helper.make_graph([helper.make_node(op, ["state_in", "x"], [output])], name, [],
                             [helper.make_tensor_value_info(output, TensorProto.FLOAT, [2, 3])])


def _control_flow_cases():
    rule = "ALIAS-CONTROL-FLOW"
    cond = tensor_in("use_sum", np.bool_, [])
    then_graph, else_graph = _branch("then_branch", "Add", "branch_sum"), _branch("else_branch", "Sub", "branch_diff")
    annotate(then_graph, {"branch_sum": alias_value("state_in")})
    in_branch = state_model("control_flow_annotation_in_branch",
                            [helper.make_node("If", ["use_sum"], ["total_out"], then_branch=then_graph,
                                              else_branch=else_graph)], ["total_out"], {}, extra_inputs=[cond])
    writer_is_if = state_model("control_flow_writer_is_if",
                               [helper.make_node("If", ["use_sum"], ["total_out"],
                                                 then_branch=_branch("then_branch", "Add", "branch_sum"),
                                                 else_branch=_branch("else_branch", "Sub", "branch_diff"))],
                               ["total_out"], {"total_out": alias_value("state_in")}, extra_inputs=[cond])
    function = helper.make_function("org.onnxparity.test", "Accumulate", ["acc_in", "delta"], ["acc_out"],
                                    [helper.make_node("Add", ["acc_in", "delta"], ["acc_out"])],
                                    [helper.make_opsetid("", 24)])
    function.metadata_props.add(key="ai.onnx.alias.acc_out", value=alias_value("acc_in"))
    in_function = make_model("control_flow_annotation_in_function",
                             [helper.make_node("Accumulate", ["state_in", "x"], ["total_out"],
                                               domain="org.onnxparity.test")],
                             [tensor_in("x", np.float32, [2, 3]), tensor_in("state_in", np.float32, [2, 3])],
                             [tensor_in("total_out", np.float32, [2, 3])], functions=[function], infer=False,
                             extra_opsets={"org.onnxparity.test": 1})
    return [
        CheckCase("control_flow_annotation_in_branch", rule, "branch_sum",
                  "the annotation sits on an If branch, not on the main graph", in_branch),
        CheckCase("control_flow_writer_is_if", rule, "total_out",
                  "the annotated output is written by an If: the buffer would cross into its branches",
                  writer_is_if),
        CheckCase("control_flow_annotation_in_function", rule, "acc_out",
                  "the annotation sits on a model-local function's body", in_function),
    ]


def _scatter_cases():
    rule = "ALIAS-SCATTER"
    running_sum = state_model("scatter_writer_is_add", [helper.make_node("Add", ["state_in", "x"], ["total_out"])],
                              ["total_out"], {"total_out": alias_value("state_in", "may", "scatter")})
    copied = cache_model("scatter_past_cache_is_a_copy",
                         extra_nodes=[helper.make_node("Identity", ["past_key"], ["past_key_copy"])],
                         key_cache="past_key_copy")
    return [
        CheckCase("scatter_writer_is_add", rule, "total_out", "region=scatter on an output an Add writes",
                  running_sum),
        CheckCase("scatter_past_cache_is_a_copy", rule, "present_key",
                  "region=scatter on a TensorScatter whose past_cache is a copy of the aliased input, not it",
                  copied),
    ]


def _hazard_cases():
    """Read after write, with data sets: in place, the reader sees the new rows."""
    rule = "ALIAS-READ-AFTER-WRITE"
    stale = cache_model("hazard_stale_read",
                        extra_nodes=[const_i64("last_axis", [-1]),
                                     helper.make_node("ReduceMax", ["past_key", "last_axis"], ["past_key_rowmax"],
                                                      keepdims=0)],
                        extra_outputs=["past_key_rowmax"])
    passthrough = cache_model("hazard_input_is_output",
                              extra_outputs=[tensor_in("past_key", np.float32, [B, H, L, D])])
    probe = helper.make_graph([helper.make_node("ReduceSum", ["past_key"], ["probe_sum"], keepdims=0)], "probe", [],
                              [helper.make_tensor_value_info("probe_sum", TensorProto.FLOAT, [])])
    skip = helper.make_graph([helper.make_node("Constant", [], ["probe_zero"],
                                               value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0]))],
                             "skip", [], [helper.make_tensor_value_info("probe_zero", TensorProto.FLOAT, [])])
    in_branch = cache_model("hazard_stale_read_in_branch",
                            extra_nodes=[helper.make_node("Constant", [], ["probe_on"],
                                                          value=helper.make_tensor("on", TensorProto.BOOL, [], [1])),
                                         helper.make_node("If", ["probe_on"], ["past_key_sum"], then_branch=probe,
                                                          else_branch=skip)],
                            extra_outputs=[tensor_in("past_key_sum", np.float32, [])])
    return [
        CheckCase("hazard_stale_read", rule, "past_key", "ReduceMax reads past_key beside the TensorScatter that "
                  "overwrites it in place", stale, cache_inputs("hazard_stale_read"), ["hazard"]),
        CheckCase("hazard_input_is_output", rule, "past_key", "the aliased input is also a graph output",
                  passthrough, cache_inputs("hazard_input_is_output"), ["hazard"]),
        CheckCase("hazard_stale_read_in_branch", rule, "past_key", "an If branch reads past_key from the outer "
                  "scope, independent of the TensorScatter", in_branch, cache_inputs("hazard_stale_read_in_branch"),
                  ["hazard"]),
    ]


def ir_case():
    model = state_model("ir_before_10", [helper.make_node("Add", ["state_in", "x"], ["total_out"])], ["total_out"],
                        {"total_out": alias_value("state_in")}, opset=20, ir_version=9)
    return CheckCase("ir_before_10", "ALIAS-IR", "total_out",
                     "an annotation at IR 9, before GraphProto.metadata_props existed", model)


def invalid_cases() -> list:
    return (_key_cases() + [ir_case()] + _names_cases() + _twice_cases() + _type_cases() + _control_flow_cases() +
            _scatter_cases())


def hazard_cases() -> list:
    return _hazard_cases()
