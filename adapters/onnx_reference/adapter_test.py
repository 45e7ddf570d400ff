"""Tests of the onnx reference adapter, run as a worker process the way the
harness runs it (adapter.json's command, in the adapter's folder)."""

import os
import sys
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper

import parity_protocol as protocol
import parity_worker_pb2 as pb
from parity_worker_client import start_adapter_worker

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import adapter as reference_adapter  # noqa: E402 - the module under test, for its error mapping

IR_VERSION = 10
OPSET = 21


def make_model(nodes, inputs, outputs, opsets=(("", OPSET),)):
    graph = helper.make_graph(nodes, "test", inputs, outputs)
    model = helper.make_model(graph, ir_version=IR_VERSION,
                              opset_imports=[helper.make_opsetid(domain, version) for domain, version in opsets])
    return model.SerializeToString()


def tensor_info(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def values(**named):
    return [protocol.value_to_proto(name, value) for name, value in named.items()]


def outputs_of(response):
    return [(v.name, protocol.value_from_proto(v)) for v in response.run.outputs]


ADD_MODEL = make_model([helper.make_node("Add", ["a", "b"], ["c"], name="add0")],
                       [tensor_info("a", TensorProto.FLOAT, [2, 3]), tensor_info("b", TensorProto.FLOAT, [2, 3])],
                       [tensor_info("c", TensorProto.FLOAT, [2, 3])])


class OnnxReferenceAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.manifest, cls.worker, cls.info = start_adapter_worker(HERE)

    @classmethod
    def tearDownClass(cls):
        cls.worker.shutdown()
        cls.status, cls.log = cls.worker.finish()
        assert cls.status == 0, cls.log

    def assertOk(self, response):
        self.assertEqual(response.status.code, pb.OK, response.status.message)

    def create(self, model, **options):
        created = self.worker.create(model, **options)
        self.assertOk(created)
        self.addCleanup(self.worker.release, created.session.session_id)
        return created.session

    def test_manifest_and_info(self):
        self.assertEqual(self.manifest["name"], "onnx_reference")
        self.assertEqual(self.info.name, "onnx_reference")
        self.assertEqual(self.info.backend_version, onnx.__version__)
        self.assertEqual([d.name for d in self.info.devices], ["cpu"])

    def test_capabilities_declare_nothing(self):
        response = self.worker.capabilities("cpu")
        self.assertOk(response)
        self.assertFalse(response.capabilities.declared)

    def test_add_float32_matches_numpy(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
        b = np.full((2, 3), 0.25, dtype=np.float32)
        session = self.create(ADD_MODEL, warm_repeats=2)
        self.assertEqual(len(session.load_ms_warm), 2)
        self.assertEqual([(p.node, p.device) for p in session.placement], [("add0", "cpu")])
        ran = self.worker.run(session.session_id, values(a=a, b=b))
        self.assertOk(ran)
        [(name, c)] = outputs_of(ran)
        self.assertEqual(name, "c")
        self.assertEqual(c.dtype, np.float32)
        np.testing.assert_array_equal(c, a + b)

    def test_unnamed_nodes_are_placed_by_op_type(self):
        model = make_model([helper.make_node("Neg", ["a"], ["b"]), helper.make_node("Abs", ["b"], ["c"])],
                           [tensor_info("a", TensorProto.FLOAT, [2])], [tensor_info("c", TensorProto.FLOAT, [2])])
        session = self.create(model)
        self.assertEqual([(p.node, p.device) for p in session.placement], [("Neg#0", "cpu"), ("Abs#1", "cpu")])

    def test_unknown_domain_op_is_unsupported(self):
        model = make_model([helper.make_node("Frobnicate", ["a"], ["b"], domain="org.example.madeup")],
                           [tensor_info("a", TensorProto.FLOAT, [1])], [tensor_info("b", TensorProto.FLOAT, [1])],
                           opsets=(("", OPSET), ("org.example.madeup", 1)))
        response = self.worker.create(model)
        self.assertEqual(response.status.code, pb.UNSUPPORTED, response.status.message)
        self.assertIn("Frobnicate", response.status.message)

    def test_malformed_model_and_unknown_input_are_invalid_arguments(self):
        self.assertEqual(self.worker.create(b"not a model").status.code, pb.INVALID_ARGUMENT)
        session = self.create(ADD_MODEL)
        unknown = self.worker.run(session.session_id, values(a=np.ones((2, 3), np.float32), z=np.ones(1, np.float32)))
        self.assertEqual(unknown.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("'z'", unknown.status.message)

    def test_failure_inside_an_op_is_internal_with_the_message(self):
        # Reshape to a shape of another size: numpy raises inside the evaluator.
        model = make_model([helper.make_node("Reshape", ["a", "shape"], ["b"])],
                           [tensor_info("a", TensorProto.FLOAT, [6]), tensor_info("shape", TensorProto.INT64, [1])],
                           [tensor_info("b", TensorProto.FLOAT, None)])
        session = self.create(model)
        ran = self.worker.run(session.session_id, values(a=np.ones(6, np.float32), shape=np.array([4], np.int64)))
        self.assertEqual(ran.status.code, pb.INTERNAL, ran.status.message)
        self.assertIn("ReferenceEvaluator", ran.status.message)


class StatusMappingTest(unittest.TestCase):
    """How the evaluator's exceptions become codes."""

    def code(self, error):
        return reference_adapter._status_of(error).code

    def test_codes(self):
        self.assertEqual(self.code(NotImplementedError("stash_type != 1 is not implemented")), pb.UNSUPPORTED)
        self.assertEqual(self.code(RuntimeError("Node type 'X' from domain 'd' is unknown, known functions: [].")),
                         pb.UNSUPPORTED)
        self.assertEqual(self.code(ValueError("operands could not be broadcast together")), pb.INTERNAL)
        self.assertEqual(self.code(MemoryError()), pb.OUT_OF_MEMORY)

    def test_message_names_the_evaluator_and_the_exception(self):
        error = reference_adapter._status_of(TypeError("bad"))
        self.assertEqual(error.message, f"onnx {onnx.__version__} ReferenceEvaluator TypeError: bad")


if __name__ == "__main__":
    unittest.main()
