"""The numpy oracle's graph walk: a model's nodes run one by one in their
order, each operator computing in float64 and each node output rounded to
its element type (README.md, "Rules"); subgraphs (FlexAttention's hooks)
run the same way, seeing the enclosing scope's values."""
from __future__ import annotations

import collections

import onnx
from onnx import helper, numpy_helper

from values import OracleError, from_numpy, rounded, type_name

DEFAULT_DOMAINS = ("", "ai.onnx")


class NodeContext:
    """What an operator sees of its node besides the input values."""

    def __init__(self, node: onnx.NodeProto, version: int, graph: "Graph", index: int):
        self.node = node
        self.version = version
        self.label = f"node {node.name or f'#{index}'} ({node.op_type})"
        self.outputs = list(node.output)  # "" where an optional output is not asked for
        self.attrs = {a.name: a for a in node.attribute}
        self.scope = None  # the values of the enclosing graph while the node runs
        self._subgraphs = {}
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                self._subgraphs[attribute.name] = Graph(attribute.g, graph.opsets, graph.registry,
                                                        f"{self.label} attribute '{attribute.name}'",
                                                        outer_names=graph.visible_names())

    def attr(self, name: str, default=None):
        if name not in self.attrs:
            return default
        return helper.get_attribute_value(self.attrs[name])

    def has(self, name: str) -> bool:
        return name in self.attrs

    def subgraph(self, name: str):
        return self._subgraphs.get(name)

    def error(self, text: str) -> OracleError:
        return OracleError(f"{self.label}: {text}")


class Registry:
    """Operators by (domain, op_type): the function, and the operator
    versions it implements (None: every version from `min_version` on)."""

    def __init__(self):
        self._ops = {}

    def add(self, domain: str, op_type: str, fn, versions=None, min_version: int = 1):
        self._ops[(domain, op_type)] = (fn, None if versions is None else frozenset(versions), min_version)

    def names(self) -> list:
        return sorted(f"{d or 'ai.onnx'}:{o}" for d, o in self._ops)

    def resolve(self, node: onnx.NodeProto, opsets: dict, where: str):
        """(fn, version in effect) for a node, or an UNSUPPORTED error naming the operator."""
        domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
        shown = f"{node.domain or 'ai.onnx'}:{node.op_type}"
        if domain not in opsets:
            raise OracleError(f"{where}: {shown} is in a domain the model does not import")
        entry = self._ops.get((domain, node.op_type))
        if entry is None:
            raise OracleError(f"{where}: the numpy oracle has no operator {shown} (it has: "
                              f"{', '.join(self.names())})", unsupported=True)
        fn, versions, min_version = entry
        version = _version_in_effect(node, domain, opsets[domain])
        if versions is not None and version not in versions:
            raise OracleError(f"{where}: the numpy oracle implements {shown} at version(s) "
                              f"{', '.join(map(str, sorted(versions)))}, not {version}", unsupported=True)
        if version < min_version:
            raise OracleError(f"{where}: the numpy oracle implements {shown} from version {min_version} on, "
                              f"not {version}", unsupported=True)
        return fn, version


def _version_in_effect(node: onnx.NodeProto, domain: str, opset: int) -> int:
    """The operator version an opset import selects: the schema's since_version
    for the domains ONNX defines, the import itself for other domains."""
    try:
        return onnx.defs.get_schema(node.op_type, opset, domain).since_version
    except onnx.defs.SchemaError:
        if domain in ("", "ai.onnx.preview"):
            raise OracleError(f"{node.domain or 'ai.onnx'}:{node.op_type} does not exist at opset {opset}")
        return opset


class Graph:
    """One graph, checked once: every node's operator is known at its
    version and names only values defined before it."""

    def __init__(self, graph: onnx.GraphProto, opsets: dict, registry: Registry, where: str = "graph",
                 outer_names: frozenset = frozenset()):
        self.proto = graph
        self.opsets = opsets
        self.registry = registry
        self.where = where
        self.inputs = [(v.name, _declared_elem(v)) for v in graph.input]
        self.outputs = [(v.name, _declared_elem(v)) for v in graph.output]
        self.declared = {v.name: _declared_elem(v) for v in list(graph.value_info) + list(graph.input)
                         + list(graph.output)}
        self.initializers = {}
        for tensor in graph.initializer:
            self.initializers[tensor.name] = from_numpy(numpy_helper.to_array(tensor))
        self._outer_names = outer_names
        self._defined = set(outer_names) | {n for n, _ in self.inputs} | set(self.initializers)
        self.nodes = []
        for index, node in enumerate(graph.node):
            context = NodeContext(node, 0, self, index)
            fn, version = registry.resolve(node, opsets, f"{where}, {context.label}")
            context.version = version
            for name in node.input:
                if name and name not in self._defined:
                    raise OracleError(f"{where}, {context.label}: input '{name}' is not defined before the node")
            self._defined.update(n for n in node.output if n)
            self.nodes.append((context, fn))
        for name, _ in self.outputs:
            if name not in self._defined:
                raise OracleError(f"{where}: graph output '{name}' is computed by no node")

    def visible_names(self) -> frozenset:
        """Names a subgraph of this graph may read: those defined so far (before its node)."""
        return frozenset(self._defined)

    def run(self, feeds: dict, outer=None) -> list:
        """Output tensors in graph order; `feeds` maps input names to Tensors."""
        env = collections.ChainMap(dict(self.initializers), outer if outer is not None else {})
        for name, elem in self.inputs:
            if name in feeds:
                value = feeds[name]
                if elem is not None and value.elem != elem:
                    raise OracleError(f"{self.where}: input '{name}' is {type_name(value.elem)}, declared "
                                      f"{type_name(elem)}")
                env[name] = value
            elif name not in self.initializers:
                raise OracleError(f"{self.where}: no value for graph input '{name}'")
        for context, fn in self.nodes:
            values = [env[name] if name else None for name in context.node.input]
            context.scope = env  # what the node's subgraphs see
            results = fn(context, values)
            if len(results) < len(context.outputs):
                raise OracleError(f"{self.where}, {context.label}: asked for {len(context.outputs)} outputs, "
                                  f"the operator has {len(results)}")
            for name, result in zip(context.outputs, results):
                if not name:
                    continue
                if result is None:
                    raise OracleError(f"{self.where}, {context.label}: output '{name}' is not computed")
                declared = self.declared.get(name)
                if declared is not None and declared != result.elem:
                    raise OracleError(f"{self.where}, {context.label}: output '{name}' is declared "
                                      f"{type_name(declared)}, the operator gives {type_name(result.elem)}")
                env[name] = rounded(result)
        return [env[name] for name, _ in self.outputs]


def _declared_elem(value: onnx.ValueInfoProto):
    """The element type a value_info declares for a tensor, None when it declares none."""
    kind = value.type.WhichOneof("value")
    if kind is None:
        return None
    if kind != "tensor_type":
        raise OracleError(f"value '{value.name}' is a {kind}; the numpy oracle computes tensors only", unsupported=True)
    return value.type.tensor_type.elem_type or None


class Model:
    """A model's main graph with its opset imports."""

    def __init__(self, model: onnx.ModelProto, registry: Registry):
        opsets = {}
        for entry in model.opset_import:
            opsets["" if entry.domain in DEFAULT_DOMAINS else entry.domain] = entry.version
        if model.functions:
            names = ", ".join(f"{f.domain}:{f.name}" for f in model.functions)
            raise OracleError(f"the model defines local functions ({names}); the numpy oracle runs only its "
                              "own operators", unsupported=True)
        self.graph = Graph(model.graph, opsets, registry)

    def run(self, inputs: dict) -> list:
        feeds = {name: from_numpy(value) for name, value in inputs.items()}
        return self.graph.run(feeds)
