"""What a variant-graph case is, and how one becomes a model: the main graph
and the model-local functions in ONNX text syntax, then the equivalent_subgraph
entries attached through the patched schema (parity_onnx, spec/proto/variants.delta)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import onnx
import onnx.parser
from onnx import TensorProto, helper, numpy_helper

# Names of spec/variants.md (reference/variants/variants.h).
TARGET_KEY = "ai.onnx.variant.target"
PRIORITY_KEY = "ai.onnx.variant.priority"
PORTABLE = "portable"
REFERENCE = "org.onnxparity.reference"  # the target whose Compiled blobs the reference runs
REFERENCE_IDENTIFIER = "org.onnxparity.reference.function/1"
NPU = "com.example.npu"  # a target nobody has: its blobs cannot run anywhere
NPU_IDENTIFIER = "com.example.npu.blob/3"
LOCAL = "org.onnxparity.local"  # the domain of the model-local functions entries call

OPSET = 21
IR_VERSION = 10  # the IR that carries metadata_props and overload, hence entries (VAR-IR)

# The target lists every valid case pins a selection for, as case.json keys
# (targets joined by ","). NPU may be left out where an NPU entry would be
# selected: nobody can run its blob, so no adapter can claim that selection.
REQUIRED_TARGET_LISTS = ["", REFERENCE, PORTABLE, f"{REFERENCE},{PORTABLE}", NPU]

_NUMPY_TYPES = {
    TensorProto.FLOAT: np.float32,
    TensorProto.FLOAT16: np.float16,
    TensorProto.DOUBLE: np.float64,
    TensorProto.INT64: np.int64,
    TensorProto.BOOL: np.bool_,
}


@dataclass
class Entry:
    """One equivalent_subgraph entry. `graph` is where it lives: "" for the
    main graph, else the path of the node and attribute holding the
    subgraph, as in entry ids ("loop_0.body", "if_0.then_branch/if_1.else_branch")."""
    inputs: list
    outputs: list
    op_type: str
    domain: str = ""
    overload: str = ""
    attributes: list = field(default_factory=list)  # onnx.AttributeProto
    metadata: list = field(default_factory=list)  # (key, value), in order
    graph: str = ""


@dataclass
class VariantCase:
    """One model. `graph` is the main graph in ONNX text syntax; its inputs
    named in `weights` become initializers. `select` maps a target list to
    the entry ids the spec selects for it, worked out by hand. An invalid
    case has `check` = (rule, message substring) and no data set."""
    name: str
    kind: str  # case.json feature "variants.<kind>"
    why: str  # one line: what the case shows
    graph: str
    weights: dict = field(default_factory=dict)  # name -> array
    entries: list = field(default_factory=list)
    functions: list = field(default_factory=list)  # FunctionProto text
    select: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)  # graph input -> array, where a seeded draw will not do
    # Data sets after test_data_set_0, each a dict like `inputs` (other inputs
    # drawn as for data set 0): another value of a condition, so that every branch runs.
    more_inputs: list = field(default_factory=list)
    opset: int = OPSET
    ir_version: int = IR_VERSION
    not_imported: tuple = ()  # entry domains left out of opset_import on purpose (VAR-CALL)
    stamp: Optional[bool] = None  # run `parity stamp`; None: when a Compiled entry has an empty __hash__
    after_stamp: Optional[Callable] = None  # edits the parity_onnx ModelProto after stamping
    check: Optional[tuple] = None  # (rule, message substring) of an invalid case
    max_bytes: int = 0  # a valid case's model.onnx must stay under this (0: no limit)
    # case.json "operator": the tolerance family outputs are compared under
    # (spec/tolerance.json); without it the harness takes the most frequent op.
    operator: str = ""
    tolerance: Optional[dict] = None  # case.json "tolerance" override, with its reason


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by the case name alone, so a case is the same whatever else is written."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little"))


def matrix(rng: np.random.Generator, rows: int, cols: int, dtype=np.float32) -> np.ndarray:
    """A weight scaled by 1/sqrt(rows), so products of unit inputs stay near unit size."""
    return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(dtype)


def vector(rng: np.random.Generator, n: int, dtype=np.float32, scale: float = 0.5, offset: float = 0.0) -> np.ndarray:
    return (offset + scale * rng.standard_normal(n)).astype(dtype)


def function(text: str, domain: str = LOCAL, overload: str = "", opset: int = OPSET) -> str:
    """A model-local function in ONNX text syntax, given its signature and body."""
    header = f'domain: "{domain}", opset_import: ["": {opset}]'
    if overload:
        header += f', overload: "{overload}"'
    return f"<{header}>\n{text}"


def string_attribute(name: str, value: bytes | str) -> onnx.AttributeProto:
    attr = onnx.AttributeProto(name=name, type=onnx.AttributeProto.STRING)
    attr.s = value.encode() if isinstance(value, str) else value
    return attr


def binary_attribute(blob: bytes, dims: tuple = (), data_type: int = TensorProto.STRING) -> onnx.AttributeProto:
    """__binary__: a scalar STRING tensor holding the blob (dims/data_type
    other than the default make the invalid variants)."""
    tensor = TensorProto(data_type=data_type, dims=list(dims))
    if data_type == TensorProto.STRING:
        tensor.string_data.append(blob)
    else:
        tensor.raw_data = blob
    return onnx.AttributeProto(name="__binary__", type=onnx.AttributeProto.TENSOR, t=tensor)


def reference_blob(text: str) -> bytes:
    """A blob the reference runs (LowerReferenceCompiled): a serialized
    FunctionProto computing the region, its signature and body in text."""
    return onnx.parser.parse_function(function(text, domain=REFERENCE)).SerializeToString()


def npu_blob(name: str, size: int = 96) -> bytes:
    """Bytes nobody can run, seeded by the case name."""
    return b"NPUBLOB3" + rng_for(name + "/blob").integers(0, 256, size, dtype=np.uint8).tobytes()


def compiled(inputs: list, outputs: list, target: str, blob: bytes, graph: str = "", priority: Optional[int] = None,
             domain: Optional[str] = None, identifier: Optional[str] = None, metadata: tuple = ()) -> Entry:
    """A Compiled entry with an empty __hash__ (`parity stamp` fills it).
    Its domain is the target's, which the model then imports."""
    if identifier is None:
        identifier = REFERENCE_IDENTIFIER if target == REFERENCE else NPU_IDENTIFIER
    attributes = [string_attribute("__hash__", ""), string_attribute("__identifier__", identifier),
                  binary_attribute(blob)]
    meta = [(TARGET_KEY, target)] if target else []
    if priority is not None:
        meta.append((PRIORITY_KEY, str(priority)))
    return Entry(inputs, outputs, "Compiled", domain=target if domain is None else domain, attributes=attributes,
                 metadata=meta + list(metadata), graph=graph)


def call(inputs: list, outputs: list, op_type: str, target: str = "", priority: Optional[int] = None,
         domain: str = LOCAL, overload: str = "", graph: str = "", attributes: tuple = (),
         metadata: tuple = ()) -> Entry:
    """An entry calling a model-local function (or, with domain "", a standard op)."""
    meta = [(TARGET_KEY, target)] if target else []
    if priority is not None:
        meta.append((PRIORITY_KEY, str(priority)))
    return Entry(inputs, outputs, op_type, domain=domain, overload=overload, attributes=list(attributes),
                 metadata=meta + list(metadata), graph=graph)


def entry_ids(case: VariantCase) -> list:
    """The id of each entry of the case, in the order given: "e<index>" in
    the main graph, "<graph path>/e<index>" in a subgraph."""
    counts: dict = {}
    ids = []
    for entry in case.entries:
        index = counts.get(entry.graph, 0)
        counts[entry.graph] = index + 1
        ids.append(f"e{index}" if not entry.graph else f"{entry.graph}/e{index}")
    return ids


def _array_matches(value_info: onnx.ValueInfoProto, array: np.ndarray) -> bool:
    tensor = value_info.type.tensor_type
    dims = [d.dim_value for d in tensor.shape.dim]
    return _NUMPY_TYPES.get(tensor.elem_type) == array.dtype.type and dims == list(array.shape)


def build_main_model(case: VariantCase) -> onnx.ModelProto:
    """The model without entries, checked by ONNX's shape inference (strict)
    and checker: a main graph ONNX rejects is a generator bug, not a case."""
    graph = onnx.parser.parse_graph(case.graph)
    declared = {i.name: i for i in graph.input}
    for name, array in case.weights.items():
        if name not in declared:
            raise ValueError(f"weight '{name}' is not an input of the graph text")
        if not _array_matches(declared[name], array):
            raise ValueError(f"weight '{name}' ({array.dtype}{list(array.shape)}) differs from its declared type")
    kept = [i for i in graph.input if i.name not in case.weights]
    del graph.input[:]
    graph.input.extend(kept)
    graph.initializer.extend(numpy_helper.from_array(a, n) for n, a in case.weights.items())
    functions = [onnx.parser.parse_function(text) for text in case.functions]
    domains = {f.domain for f in functions}
    domains |= {e.domain for e in case.entries if e.domain not in ("", "ai.onnx")}
    domains -= set(case.not_imported)
    opsets = [helper.make_opsetid("", case.opset)] + [helper.make_opsetid(d, 1) for d in sorted(domains)]
    model = helper.make_model(graph, opset_imports=opsets, functions=functions, producer_name="onnx-parity-variants")
    model.ir_version = case.ir_version
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def find_graph(graph, path: str):
    """The subgraph at `path` ("node.attribute/node.attribute...") below `graph`."""
    if not path:
        return graph
    for step in path.split("/"):
        node_name, _, attr_name = step.partition(".")
        nodes = [n for n in graph.node if n.name == node_name]
        if len(nodes) != 1:
            raise ValueError(f"graph path '{path}': {len(nodes)} nodes named '{node_name}'")
        attrs = [a for a in nodes[0].attribute if a.name == attr_name and a.HasField("g")]
        if len(attrs) != 1:
            raise ValueError(f"graph path '{path}': node '{node_name}' has no graph attribute '{attr_name}'")
        graph = attrs[0].g
    return graph


def attach_entries(model: onnx.ModelProto, entries: list, schema):
    """The model as a parity_onnx ModelProto with `entries` appended to the
    equivalent_subgraph lists of their graphs (`schema` is parity_onnx.onnx_ml_pb2)."""
    patched = schema.ModelProto.FromString(model.SerializeToString())
    for entry in entries:
        proto = find_graph(patched.graph, entry.graph).equivalent_subgraph.add()
        proto.input.extend(entry.inputs)
        proto.output.extend(entry.outputs)
        proto.op_type = entry.op_type
        if entry.domain:
            proto.domain = entry.domain
        if entry.overload:
            proto.overload = entry.overload
        for attr in entry.attributes:
            proto.attribute.add().ParseFromString(attr.SerializeToString())
        for key, value in entry.metadata:
            prop = proto.metadata_props.add()
            prop.key, prop.value = key, value
    return patched


def data_set_inputs(case: VariantCase, model: onnx.ModelProto, given: Optional[dict] = None) -> list:
    """(name, array) for each graph input: `given` (default the case's
    `inputs`), else a seeded draw from the declared type (floats standard
    normal, bools true), the same draw in every data set."""
    given = case.inputs if given is None else given
    rng = rng_for(case.name + "/inputs")
    inputs = []
    for value_info in model.graph.input:
        if value_info.name in given:
            inputs.append((value_info.name, given[value_info.name]))
            continue
        tensor = value_info.type.tensor_type
        dtype = _NUMPY_TYPES[tensor.elem_type]
        shape = [d.dim_value for d in tensor.shape.dim]
        if dtype == np.bool_:
            array = np.ones(shape, dtype=np.bool_)
        else:
            array = rng.standard_normal(shape).astype(dtype)
        inputs.append((value_info.name, array))
    return inputs


def compiled_entries(patched) -> list:
    """Every Compiled entry proto of a parity_onnx model, in all graphs."""
    found = []

    def visit(graph):
        found.extend(e for e in graph.equivalent_subgraph if e.op_type == "Compiled")
        for node in graph.node:
            for attr in node.attribute:
                if attr.HasField("g"):
                    visit(attr.g)
                for g in attr.graphs:
                    visit(g)

    visit(patched.graph)
    return found


def needs_stamp(case: VariantCase, patched) -> bool:
    if case.stamp is not None:
        return case.stamp
    return any(a.name == "__hash__" and not a.s for e in compiled_entries(patched) for a in e.attribute)
