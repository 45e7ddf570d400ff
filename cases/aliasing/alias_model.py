"""What an aliasing case is, and the helpers its builders share: seeded
generators, graph building with alias annotations (reference/aliasing/
aliasing.h), and the checks every model passes before it is written."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# ONNX Runtime 1.31 reads models up to IR 10; onnx 1.23's make_model stamps 14.
# IR 10 is also the first that has GraphProto.metadata_props (ALIAS-IR).
IR_VERSION = 10
OPSET = 24  # TensorScatter and Attention's nonpad_kv_seqlen
ALIAS_PREFIX = "ai.onnx.alias."

ELEM = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}
FLOATS = {"float32": np.float32, "float16": np.float16}


@dataclass
class Carry:
    output: str  # graph output of step k ...
    input: str   # ... that is this graph input of step k+1


@dataclass
class StatefulCase:
    """A model run over several steps in one session. `steps[k]` holds the
    inputs of step k that are not carried (name -> array); `initial` the
    carried inputs of step 0. Every other carried input is the previous
    step's output, filled in by the writer from the reference's results."""
    name: str
    operator: str
    feature: str
    tags: list
    model: onnx.ModelProto
    carry: list                # [Carry]
    initial: dict              # carried input name -> array, step 0
    steps: list                # [{input name -> array}]
    # For bench cases: leave out the carried inputs of steps >= 1 and the
    # carried outputs' expected files of every step but the last.
    prune_carried: bool = False


@dataclass
class CheckCase:
    """A model whose annotations break one rule. `inputs`: a data set, for
    the hazard cases that `parity eval --check-aliasing` runs; None for a
    model-only case."""
    name: str
    rule: str
    message: str  # a substring of the problem: the offending value's name
    why: str
    model: onnx.ModelProto
    inputs: dict | None = None
    tags: list = field(default_factory=list)


def seed_for(name: str) -> int:
    """A seed from the case name alone, so any case can be rebuilt by itself."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(seed_for(name))


def elem_type(dtype) -> int:
    return ELEM[np.dtype(dtype)]


def tensor_in(name: str, dtype, shape) -> onnx.ValueInfoProto:
    """A graph input; `shape` entries are ints or symbolic names (str)."""
    return helper.make_tensor_value_info(name, elem_type(dtype), list(shape))


def annotate(graph: onnx.GraphProto, aliases: dict) -> None:
    """Adds one metadata entry per aliased output: output -> annotation value."""
    for output, value in aliases.items():
        graph.metadata_props.add(key=ALIAS_PREFIX + output, value=value)


def alias_value(input_name: str, mode: str | None = None, region: str | None = None) -> str:
    parts = [f"input={input_name}"]
    if mode:
        parts.append(f"mode={mode}")
    if region:
        parts.append(f"region={region}")
    return ";".join(parts)


def make_model(name: str, nodes: list, inputs: list, outputs: list, initializers: dict | None = None,
               aliases: dict | None = None, opset: int = OPSET, ir_version: int = IR_VERSION,
               functions: list | None = None, infer: bool = True,
               extra_opsets: dict | None = None) -> onnx.ModelProto:
    """A checked model. `outputs`: names (types inferred by ONNX, strict) or
    ValueInfoProtos. `aliases`: output -> annotation value on the main graph."""
    outs = [o if isinstance(o, onnx.ValueInfoProto) else helper.make_empty_tensor_value_info(o) for o in outputs]
    inits = [numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()]
    graph = helper.make_graph(nodes, name, inputs, outs, initializer=inits)
    annotate(graph, aliases or {})
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] +
                              [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()],
                              producer_name="onnx-parity-aliasing", functions=functions or [])
    model.ir_version = ir_version
    if infer:
        # A model ONNX's schemas reject is a generator bug, not a test.
        model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def const_i64(name: str, values) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(values, np.int64), name))


def rope_caches(max_pos: int, head: int) -> tuple:
    """cos/sin caches [max_pos, head/2] of the usual frequencies, in float32."""
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, head, 2, dtype=np.float64) / head))
    angles = np.arange(max_pos, dtype=np.float64)[:, None] * inv_freq[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
