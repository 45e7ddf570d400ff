"""What the numpy oracle's tests share: one-node (or few-node) models built
with onnx.helper and run through the oracle's graph walk in process."""
from __future__ import annotations

import os
import sys

import numpy as np
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from adapter import REGISTRY  # noqa: E402
from graph import Model  # noqa: E402
from values import from_numpy, to_numpy  # noqa: E402

CONTRIB = "org.onnxparity.contrib"


def elem_of(array: np.ndarray) -> int:
    return from_numpy(array).elem


def model_of(nodes, inputs: dict, outputs, opset: int = 23, domains=(), initializers=None):
    """A model of `nodes` whose graph inputs are `inputs` (name -> array, for
    their types and shapes) and whose outputs are `outputs`, a list of
    (name, elem type) or names (then untyped)."""
    graph_inputs = [helper.make_tensor_value_info(n, elem_of(a), list(a.shape)) for n, a in inputs.items()]
    graph_outputs = [helper.make_tensor_value_info(o[0], o[1], None) if isinstance(o, tuple)
                     else helper.make_value_info(o, helper.TypeProto()) for o in outputs]
    inits = [numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()]
    graph = helper.make_graph(nodes, "oracle_test", graph_inputs, graph_outputs, initializer=inits)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    return helper.make_model(graph, opset_imports=opsets)


def run_model(model, inputs: dict) -> list:
    """The oracle's outputs as numpy arrays of their types."""
    return [to_numpy(t) for t in Model(model, REGISTRY).run(inputs)]


def run_node(op_type: str, inputs: dict, outputs, opset: int = 23, domain: str = "", node_inputs=None,
             initializers=None, **attrs) -> list:
    """Runs one node; `node_inputs` may name inputs positionally ("" for an absent one)."""
    names = node_inputs if node_inputs is not None else list(inputs)
    out_names = [o[0] if isinstance(o, tuple) else o for o in outputs]
    node = helper.make_node(op_type, names, out_names, domain=domain, **attrs)
    domains = [(domain, 1)] if domain else []
    model = model_of([node], inputs, [o for o in outputs if (o[0] if isinstance(o, tuple) else o)], opset, domains,
                     initializers)
    return run_model(model, inputs)
