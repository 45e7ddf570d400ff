"""External data for Python adapters: the containment rule a model's external
tensors must meet before any runtime reads them (spec/protocol/README.md,
"External data"), the same rule as the reference's ResolveExternalDataPath
(reference/model/tensor_io.cc), with the same words in its refusals.

A tensor whose data_location is EXTERNAL names a `location` relative to the
model's folder (CreateSession.model_dir). It is refused when the location is
an absolute path, contains '..', resolves (through symbolic links) outside
the model's folder or to something that is not a regular file, or when its
offset and length do not lie inside that file.
"""

from __future__ import annotations

import os
from typing import Iterator

import onnx

import parity_protocol as protocol

# Element types stored with fewer than 8 bits, packed (onnx.proto, TensorProto.raw_data).
_PACKED_BITS = {"INT4": 4, "UINT4": 4, "FLOAT4E2M1": 4, "INT2": 2, "UINT2": 2, "FLOAT6E2M3": 6, "FLOAT6E3M2": 6}


def _refused(what: str) -> protocol.AdapterError:
    return protocol.AdapterError(protocol.INVALID_ARGUMENT, what)


def resolve_external_data_path(model_dir: str, location: str) -> str:
    """The real path of `location`, which must name a regular file inside
    `model_dir`; raises AdapterError (INVALID_ARGUMENT) naming the rule broken."""
    if not location:
        raise _refused("external data location is empty")
    if os.path.isabs(location) or os.path.splitdrive(location)[0]:
        raise _refused(f"external data location '{location}' is an absolute path; "
                       "only paths inside the model's folder are allowed")
    if ".." in location.split(os.sep):
        raise _refused(f"external data location '{location}' contains '..'; "
                       "only paths inside the model's folder are allowed")
    if not os.path.isdir(model_dir):
        raise _refused(f"model folder '{model_dir}' is not a folder")
    base = os.path.realpath(model_dir)
    resolved = os.path.realpath(os.path.join(base, location))
    if not os.path.exists(resolved):
        raise _refused(f"external data file '{location}' not found in '{model_dir}'")
    # A symbolic link may lead anywhere: the real path must stay inside.
    if os.path.commonpath([base, resolved]) != base:
        raise _refused(f"external data location '{location}' resolves to '{resolved}', outside the model's folder")
    if not os.path.isfile(resolved):
        raise _refused(f"external data location '{location}' is not a regular file")
    return resolved


def _tensor_bytes(tensor: onnx.TensorProto):
    """The bytes the tensor's elements take, or None for a type without a fixed size."""
    name = onnx.TensorProto.DataType.Name(tensor.data_type) if tensor.data_type in \
        onnx.TensorProto.DataType.values() else None
    if name in (None, "UNDEFINED", "STRING"):
        return None
    count = 1
    for dim in tensor.dims:
        count *= dim
    bits = _PACKED_BITS.get(name)
    if bits is None:
        bits = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize * 8
    return (count * bits + 7) // 8


def check_external_tensor(tensor: onnx.TensorProto, model_dir: str) -> None:
    """Checks, without reading it, that one external tensor lies inside
    `model_dir` and that its range lies inside its file."""
    where = f"tensor '{tensor.name}'"
    location, offset, length = "", 0, None
    for entry in tensor.external_data:
        if entry.key == "location":
            location = entry.value
        elif entry.key in ("offset", "length"):
            if not (entry.value.isascii() and entry.value.isdigit()):
                raise _refused(f"{where}: external data {entry.key} '{entry.value}' is not a non-negative decimal integer")
            if entry.key == "offset":
                offset = int(entry.value)
            else:
                length = int(entry.value)
    if not location:
        raise _refused(f"{where}: external data has no location")
    if not model_dir:
        raise _refused(f"{where}: external data '{location}' but the model was not loaded from a folder")
    try:
        path = resolve_external_data_path(model_dir, location)
    except protocol.AdapterError as error:
        raise _refused(f"{where}: {error.message}") from None
    size = os.path.getsize(path)
    needed = _tensor_bytes(tensor)
    if length is None:
        length = needed if needed is not None else size - offset
    if needed is not None and length != needed:
        raise _refused(f"{where}: external data length {length} but the tensor needs {needed} bytes")
    if offset > size or length > size - offset:
        raise _refused(f"{where}: external data range at offset {offset}, {length} bytes long, lies beyond the end "
                       f"of '{location}' ({size} bytes)")


def _tensors_of_nodes(nodes) -> Iterator[onnx.TensorProto]:
    for node in nodes:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            for sparse in ([attribute.sparse_tensor] if attribute.HasField("sparse_tensor") else []) + \
                    list(attribute.sparse_tensors):
                yield sparse.values
                yield sparse.indices
            if attribute.HasField("g"):
                yield from _tensors_of_graph(attribute.g)
            for graph in attribute.graphs:
                yield from _tensors_of_graph(graph)


def _tensors_of_graph(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    yield from _tensors_of_nodes(graph.node)


def external_tensors(model: onnx.ModelProto) -> list:
    """Every tensor of the model whose data_location is EXTERNAL: initializers
    and sparse initializers of every graph, tensor attributes of every node
    (model functions' included)."""
    tensors = list(_tensors_of_graph(model.graph))
    for function in model.functions:
        tensors.extend(_tensors_of_nodes(function.node))
    return [t for t in tensors if t.data_location == onnx.TensorProto.EXTERNAL]


def check_external_data(model: onnx.ModelProto, model_dir: str) -> bool:
    """Applies the containment rule to every external tensor of `model`
    (raising AdapterError, INVALID_ARGUMENT, at the first that breaks it).
    Returns whether the model has external data at all."""
    tensors = external_tensors(model)
    for tensor in tensors:
        check_external_tensor(tensor, model_dir)
    return bool(tensors)


def read_model(model_bytes: bytes, model_dir: str, who: str) -> onnx.ModelProto:
    """The model of a CreateSession request with its external data loaded
    into its tensors, read only from inside `model_dir` (the containment
    rule first). A model that does not parse, or external data that breaks
    the rule or cannot be read, raises AdapterError INVALID_ARGUMENT; `who`
    names the reader in that message ("onnx 1.23.2")."""
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(model_bytes)
    except DecodeError as error:
        raise protocol.AdapterError(protocol.INVALID_ARGUMENT, f"the model is not a valid ModelProto: {error}") \
            from error
    if check_external_data(model, model_dir):
        try:
            onnx.external_data_helper.load_external_data_for_model(model, model_dir)
        except Exception as error:  # noqa: BLE001 - a file that cannot be read becomes a status
            raise protocol.AdapterError(protocol.INVALID_ARGUMENT, f"{who} could not load the external data: "
                                        f"{type(error).__name__}: {error}") from error
    return model
