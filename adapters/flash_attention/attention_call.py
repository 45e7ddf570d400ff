"""Reads a model that is one Attention node (ai.onnx, opsets 23 to 25) and turns
the values of one run into the kernel's Problem: heads split out of 3-D
inputs, the past appended, the mask turned into an additive bias. The rules
are those of spec/functions/attention.md; what the schema forbids is
INVALID_ARGUMENT, what this kernel does not do is UNSUPPORTED, each naming why.
"""

from __future__ import annotations

import dataclasses
import math

import ml_dtypes
import numpy as np
import onnx
from onnx import helper, numpy_helper

import parity_protocol as protocol
from kernel import Problem

OPSETS = (23, 24, 25)
INPUTS = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
OUTPUTS = ("Y", "present_key", "present_value", "qk_matmul_output")
# attribute -> (type, first opset that has it)
ATTRIBUTES = {
    "is_causal": (onnx.AttributeProto.INT, 23),
    "kv_num_heads": (onnx.AttributeProto.INT, 23),
    "q_num_heads": (onnx.AttributeProto.INT, 23),
    "qk_matmul_output_mode": (onnx.AttributeProto.INT, 23),
    "scale": (onnx.AttributeProto.FLOAT, 23),
    "softcap": (onnx.AttributeProto.FLOAT, 23),
    "softmax_precision": (onnx.AttributeProto.INT, 23),
    "left_window_size": (onnx.AttributeProto.INT, 25),
    "right_window_size": (onnx.AttributeProto.INT, 25),
}
FLOAT_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64))
FLOAT_ELEM_TYPES = (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT,
                    onnx.TensorProto.DOUBLE)
SOFTMAX_PRECISIONS = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE,
                      onnx.TensorProto.BFLOAT16)


def _invalid(message: str) -> protocol.AdapterError:
    return protocol.AdapterError(protocol.INVALID_ARGUMENT, f"Attention: {message}")


def _unsupported(message: str) -> protocol.AdapterError:
    return protocol.AdapterError(protocol.UNSUPPORTED, f"flash_attention: {message}")


@dataclasses.dataclass
class AttentionCall:
    """What a session knows of its model: the node's wiring and attributes."""

    opset: int
    node_name: str
    inputs: list  # per position of INPUTS: the value name, "" when absent
    outputs: list  # per position of OUTPUTS: the value name, "" when not requested
    graph_outputs: list  # (graph output name, position in OUTPUTS), in graph order
    attributes: dict
    initializers: dict  # name -> numpy array


def _default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 0


def read_call(model: onnx.ModelProto) -> AttentionCall:
    graph = model.graph
    if len(graph.node) != 1:
        ops = ", ".join(n.op_type for n in graph.node[:5]) or "none"
        raise _unsupported(f"the model has {len(graph.node)} nodes ({ops}); this adapter runs models that are one "
                           "Attention node")
    node = graph.node[0]
    if node.domain not in ("", "ai.onnx") or node.op_type != "Attention":
        raise _unsupported(f"the node is {node.domain or 'ai.onnx'}:{node.op_type}; this adapter runs only "
                           "ai.onnx Attention")
    opset = _default_opset(model)
    if opset not in OPSETS:
        raise _unsupported(f"the model imports ai.onnx opset {opset}; this adapter runs Attention at opsets "
                           f"{', '.join(map(str, OPSETS))}")
    if model.functions:
        raise _unsupported("the model holds local functions; this adapter runs one Attention node")
    input_count = 6 if opset == 23 else 7
    if len(node.input) > input_count:
        raise _invalid(f"opset {opset} takes at most {input_count} inputs, the node has {len(node.input)}")
    if len(node.output) > len(OUTPUTS):
        raise _invalid(f"the node has {len(node.output)} outputs; Attention has at most {len(OUTPUTS)}")
    if len(node.input) < 3 or not all(node.input[:3]):
        raise _invalid("Q, K and V are required inputs")
    attributes = {}
    for attribute in node.attribute:
        known = ATTRIBUTES.get(attribute.name)
        if known is None or known[1] > opset:
            raise _invalid(f"opset {opset} has no attribute '{attribute.name}'")
        if attribute.ref_attr_name:
            raise _invalid(f"attribute '{attribute.name}' refers to '{attribute.ref_attr_name}' outside a function")
        if attribute.type != known[0]:
            raise _invalid(f"attribute '{attribute.name}' has type {onnx.AttributeProto.AttributeType.Name(attribute.type)}, "
                           f"not {onnx.AttributeProto.AttributeType.Name(known[0])}")
        attributes[attribute.name] = helper.get_attribute_value(attribute)
    _check_attributes(attributes)

    inputs = list(node.input) + [""] * (len(INPUTS) - len(node.input))
    outputs = list(node.output) + [""] * (len(OUTPUTS) - len(node.output))
    if bool(outputs[1]) != bool(outputs[2]):
        raise _invalid("present_key and present_value go together")
    graph_outputs = []
    for output in graph.output:
        if not output.name or output.name not in outputs:
            raise _unsupported(f"graph output '{output.name}' is not an output of the Attention node")
        graph_outputs.append((output.name, outputs.index(output.name)))
    initializers = {}
    for tensor in graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            raise _unsupported(f"initializer '{tensor.name}' is stored in external data, which this adapter "
                               "does not read")
        initializers[tensor.name] = numpy_helper.to_array(tensor)
    for value in list(graph.input) + list(graph.output):
        tensor_type = value.type.tensor_type
        if value.name in inputs[:3] + outputs[:3] and tensor_type.elem_type not in FLOAT_ELEM_TYPES:
            name = onnx.TensorProto.DataType.Name(tensor_type.elem_type)
            raise _unsupported(f"'{value.name}' has element type {name}; Q, K, V and the outputs must be float16, "
                               "bfloat16, float32 or float64")
    return AttentionCall(opset=opset, node_name=node.name or "Attention#0", inputs=inputs, outputs=outputs,
                         graph_outputs=graph_outputs, attributes=attributes, initializers=initializers)


def _check_attributes(attributes: dict) -> None:
    mode = attributes.get("qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        raise _invalid(f"qk_matmul_output_mode {mode} is not 0, 1, 2 or 3")
    precision = attributes.get("softmax_precision")
    if precision is not None and precision not in SOFTMAX_PRECISIONS:
        raise _invalid(f"softmax_precision {precision} is not 1, 10, 11 or 16")
    for name in ("left_window_size", "right_window_size"):
        if attributes.get(name, -1) < -1:
            raise _invalid(f"{name} must be -1 or nonnegative, got {attributes[name]}")
    for name in ("scale", "softcap"):
        if name in attributes and not math.isfinite(attributes[name]):
            raise _unsupported(f"a {name} of {attributes[name]} is not finite; this kernel takes finite values only")


def _to_heads(array: np.ndarray, num_heads: int, name: str) -> np.ndarray:
    """4-D as it is; 3-D [B, S, H*D] split into [B, H, S, D]."""
    if array.ndim == 4:
        return array
    if array.ndim != 3:
        raise _invalid(f"{name} must be 3-D or 4-D, got shape {list(array.shape)}")
    if num_heads <= 0:
        raise _invalid("3-D inputs need positive q_num_heads and kv_num_heads attributes")
    batch, seq, hidden = array.shape
    if hidden % num_heads:
        raise _invalid(f"{name} hidden size {hidden} is not a multiple of {num_heads} heads")
    return array.reshape(batch, seq, num_heads, hidden // num_heads).transpose(0, 2, 1, 3)


def _append_past(current: np.ndarray, past, name: str) -> np.ndarray:
    if past is None:
        return current
    batch, heads, _, size = current.shape
    if past.ndim != 4 or past.shape[0] != batch or past.shape[1] != heads or past.shape[3] != size:
        raise _invalid(f"{name} of shape {list(past.shape)} does not match [{batch}, {heads}, past, {size}]")
    if past.dtype != current.dtype:
        raise _invalid(f"{name} is {past.dtype}, the current values {current.dtype}")
    return np.concatenate([past, current], axis=2)


def mask_bias(mask: np.ndarray, target: tuple, accumulate: np.dtype) -> np.ndarray:
    """The mask as an additive bias [Bm, Hm, Sm, T]: bool true -> 0, false -> -inf,
    any other type added as it is; the last axis padded with -inf up to T, then
    the first three axes right-aligned for broadcasting (spec step 6)."""
    if mask.ndim < 1 or mask.ndim > 4:
        raise _invalid(f"attn_mask must have rank 1 to 4, got shape {list(mask.shape)}")
    dims = (1,) * (4 - mask.ndim) + mask.shape
    total = target[3]
    if dims[3] > total:
        raise _invalid(f"attn_mask's last dimension {dims[3]} exceeds the total sequence length {total}")
    for axis in range(3):
        if dims[axis] not in (1, target[axis]):
            raise _invalid(f"attn_mask of shape {list(mask.shape)} does not broadcast to {list(target)}")
    if mask.dtype == np.bool_:
        bias = np.where(mask.reshape(dims), accumulate.type(0), accumulate.type(-np.inf))
    elif mask.dtype.kind in "iuf" or mask.dtype == ml_dtypes.bfloat16:
        bias = mask.reshape(dims).astype(accumulate)
    else:
        raise _unsupported(f"attn_mask of type {mask.dtype} is not bool, integer or float")
    padding = np.full(dims[:3] + (total - dims[3],), -np.inf, dtype=accumulate)
    return np.concatenate([bias, padding], axis=3)


@dataclasses.dataclass
class Bound:
    """One run's problem and what shaping its outputs needs."""

    problem: Problem
    three_d: bool
    out_type: np.dtype  # T1: Y and qk_matmul_output
    present_key: np.ndarray  # [B, Hkv, P+L, D]
    present_value: np.ndarray


def _accumulation_type(arrays, precision) -> np.dtype:
    """float32, as a 16-bit or float32 GPU kernel accumulates; float64 when an
    input is float64 or softmax_precision asks for double."""
    if precision == onnx.TensorProto.DOUBLE or any(a.dtype == np.float64 for a in arrays):
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def bind(call: AttentionCall, values: dict, fault: str, blocks: tuple) -> Bound:
    """The kernel's problem from one run's values (graph inputs and initializers by name)."""
    given = {}
    for position, name in enumerate(call.inputs):
        if not name:
            continue
        value = values.get(name, call.initializers.get(name))
        if value is None:
            raise _invalid(f"input '{name}' ({INPUTS[position]}) was not given")
        given[INPUTS[position]] = np.asarray(value)
    q_in, k_in, v_in = given["Q"], given["K"], given["V"]
    for role in ("Q", "K", "V", "past_key", "past_value"):
        if role in given and given[role].dtype not in FLOAT_TYPES:
            raise _unsupported(f"{role} is {given[role].dtype}; this kernel takes float16, bfloat16, float32 "
                               "and float64")
    if k_in.dtype != q_in.dtype:
        raise _invalid(f"Q is {q_in.dtype} and K is {k_in.dtype}; both are T1")
    if not q_in.ndim == k_in.ndim == v_in.ndim:
        raise _invalid(f"Q, K and V must have the same rank: shapes {list(q_in.shape)}, {list(k_in.shape)}, "
                       f"{list(v_in.shape)}")
    past_key, past_value = given.get("past_key"), given.get("past_value")
    if (past_key is None) != (past_value is None):
        raise _invalid("past_key and past_value go together")
    nonpad = given.get("nonpad_kv_seqlen")
    if nonpad is not None and (past_key is not None or call.outputs[1]):
        raise _invalid("nonpad_kv_seqlen cannot be combined with past or present key/value")
    attributes = call.attributes
    if call.opset >= 25 and q_in.ndim == 4 and ("q_num_heads" in attributes or "kv_num_heads" in attributes):
        raise _invalid("q_num_heads and kv_num_heads must not be given for 4-D inputs")

    q = _to_heads(q_in, attributes.get("q_num_heads", 0), "Q")
    k_cur = _to_heads(k_in, attributes.get("kv_num_heads", 0), "K")
    v_cur = _to_heads(v_in, attributes.get("kv_num_heads", 0), "V")
    if (k_cur.shape[0] != q.shape[0] or v_cur.shape[0] != q.shape[0] or k_cur.shape[3] != q.shape[3]
            or v_cur.shape[1] != k_cur.shape[1] or v_cur.shape[2] != k_cur.shape[2]):
        raise _invalid(f"Q, K and V shapes disagree: {list(q_in.shape)}, {list(k_in.shape)}, {list(v_in.shape)}")
    if k_cur.shape[1] <= 0 or q.shape[1] % k_cur.shape[1]:
        raise _invalid(f"q_num_heads {q.shape[1]} is not a multiple of kv_num_heads {k_cur.shape[1]}")
    k = _append_past(k_cur, past_key, "past_key")
    v = _append_past(v_cur, past_value, "past_value")
    past_length = past_key.shape[2] if past_key is not None else 0
    if past_value is not None and past_value.shape[2] != past_length:
        raise _invalid("past_key and past_value lengths differ")

    batch, q_heads, q_len, head_size = q.shape
    total = k.shape[2]
    if nonpad is not None:
        if nonpad.size != batch or nonpad.dtype.kind not in "iu":
            raise _invalid(f"nonpad_kv_seqlen must hold {batch} integers, got {nonpad.dtype} of shape "
                           f"{list(nonpad.shape)}")
        nonpad = nonpad.reshape(batch).astype(np.int64)
    accumulate = _accumulation_type((q, k, v), attributes.get("softmax_precision"))
    mask = given.get("attn_mask")
    bias = None if mask is None else mask_bias(mask, (batch, q_heads, q_len, total), accumulate)
    scale = attributes["scale"] if "scale" in attributes else 1.0 / math.sqrt(head_size)
    problem = Problem(q=q, k=k, v=v, mask=bias, past_length=past_length, nonpad=nonpad,
                      causal=attributes.get("is_causal", 0) != 0,
                      left_window=attributes.get("left_window_size", -1),
                      right_window=attributes.get("right_window_size", -1),
                      scale=scale, softcap=attributes.get("softcap", 0.0), accumulate=accumulate, fault=fault,
                      block_queries=blocks[0], block_keys=blocks[1])
    return Bound(problem=problem, three_d=q_in.ndim == 3, out_type=q_in.dtype, present_key=k, present_value=v)
