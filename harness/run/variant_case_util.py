"""Small cases whose model carries variant entries (spec/variants.md), for the
end-to-end tests of `parity run`: y = Relu(x + b) with three entries, written
through parity_onnx (the schema with GraphProto.equivalent_subgraph)."""
import json
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from parity_onnx import onnx_ml_pb2

TEST_DOMAIN = "org.onnxparity.test"
REFERENCE_TARGET = "org.onnxparity.reference"
NPU_TARGET = "com.example.npu"
TARGET_KEY = "ai.onnx.variant.target"

# entry id -> what the reference reports as "chosen" when it selects it.
CALLS = {"e0": TEST_DOMAIN + ":FusedAddRelu", "e1": TEST_DOMAIN + ":FusedAddReluNpu", "e2": "ai.onnx:Add"}


def _function(name):
    return helper.make_function(TEST_DOMAIN, name, ["a", "b"], ["y"],
                                [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
                                [helper.make_opsetid("", 21)])


def variant_model_bytes():
    """The model: e0 (the whole cut, for the reference), e1 (the whole cut, for
    com.example.npu) and e2 (the Add alone, portable: no target)."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["s"], name="add0"), helper.make_node("Relu", ["s"], ["y"], name="relu0")],
        "main",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, ir_version=10, functions=[_function("FusedAddRelu"), _function("FusedAddReluNpu")],
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(TEST_DOMAIN, 1)])
    patched = onnx_ml_pb2.ModelProto.FromString(model.SerializeToString())

    def entry(domain, op_type, inputs, outputs, target):
        e = patched.graph.equivalent_subgraph.add()
        e.domain, e.op_type = domain, op_type
        e.input.extend(inputs)
        e.output.extend(outputs)
        if target:
            e.metadata_props.add(key=TARGET_KEY, value=target)

    entry(TEST_DOMAIN, "FusedAddRelu", ["x", "b"], ["y"], REFERENCE_TARGET)
    entry(TEST_DOMAIN, "FusedAddReluNpu", ["x", "b"], ["y"], NPU_TARGET)
    entry("", "Add", ["x", "b"], ["s"], None)
    return patched.SerializeToString()


def write_variant_case(root, name, case_json=None, suite="variants", with_entries=True):
    """A case folder root/suite/name: the model (without its entries unless
    `with_entries`), one data set with the main graph's outputs, and
    case.json when given. Returns the suite folder."""
    folder = os.path.join(root, suite, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data)
    model = variant_model_bytes()
    if not with_entries:
        stripped = onnx_ml_pb2.ModelProto.FromString(model)
        del stripped.graph.equivalent_subgraph[:]
        model = stripped.SerializeToString()
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    y = np.maximum(x + b, np.float32(0))
    for file_name, array in (("input_0.pb", x), ("input_1.pb", b), ("output_0.pb", y)):
        with open(os.path.join(data, file_name), "wb") as f:
            f.write(numpy_helper.from_array(array).SerializeToString())
    if case_json is not None:
        with open(os.path.join(folder, "case.json"), "w") as f:
            json.dump(case_json, f)
    return os.path.join(root, suite)

