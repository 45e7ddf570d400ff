"""Tests of the flash_attention adapter run as a worker process, the way the
harness runs it (adapter.json's command, in the adapter's folder): what it
refuses and why, and the shapes and types of what it returns."""

import os
import unittest

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

import parity_protocol as protocol
import parity_worker_pb2 as pb
from parity_worker_client import start_adapter_worker

HERE = os.path.dirname(os.path.abspath(__file__))


def attention_model(opset=24, inputs=("Q", "K", "V"), outputs=("Y",), op_type="Attention", elem=TensorProto.FLOAT16,
                    q_shape=(1, 3, 32), kv_shape=(1, 5, 16), **attributes):
    node = helper.make_node(op_type, list(inputs), list(outputs), name="attention0", **attributes)
    shapes = {"Q": q_shape, "K": kv_shape, "V": kv_shape, "past_key": None, "past_value": None}
    graph_inputs = [helper.make_tensor_value_info(n, elem, shapes.get(n)) for n in inputs if n]
    graph_outputs = [helper.make_tensor_value_info(n, elem, None) for n in outputs if n]
    graph = helper.make_graph([node], "attention", graph_inputs, graph_outputs)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def start_worker(**environment):
    _, worker, info = start_adapter_worker(HERE, environment, drop_prefix="PARITY_FLASH_")
    return worker, info


def values(**named):
    return [protocol.value_to_proto(name, value) for name, value in named.items()]


class FlashAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.worker, cls.info = start_worker()

    @classmethod
    def tearDownClass(cls):
        cls.worker.shutdown()
        status, log = cls.worker.finish()
        assert status == 0, log

    def create(self, model):
        created = self.worker.create(model)
        self.assertEqual(created.status.code, pb.OK, created.status.message)
        self.addCleanup(self.worker.release, created.session.session_id)
        return created.session

    def refusal(self, model):
        return self.worker.create(model).status

    def test_info(self):
        self.assertEqual(self.info.name, "flash_attention")
        self.assertEqual([d.name for d in self.info.devices], ["cpu"])

    def test_grouped_heads_with_past_in_3d_layout(self):
        model = attention_model(inputs=("Q", "K", "V", "", "past_key", "past_value"),
                                outputs=("Y", "present_key", "present_value", "qk_matmul_output"),
                                q_num_heads=4, kv_num_heads=2, is_causal=1, qk_matmul_output_mode=3)
        session = self.create(model)
        self.assertEqual([(p.node, p.device) for p in session.placement], [("attention0", "cpu")])
        rng = np.random.default_rng(3)
        inputs = dict(Q=rng.uniform(-1, 1, (1, 3, 32)), K=rng.uniform(-1, 1, (1, 5, 16)),
                      V=rng.uniform(-1, 1, (1, 5, 16)), past_key=rng.uniform(-1, 1, (1, 2, 4, 8)),
                      past_value=rng.uniform(-1, 1, (1, 2, 4, 8)))
        ran = self.worker.run(session.session_id, values(**{k: v.astype(np.float16) for k, v in inputs.items()}))
        self.assertEqual(ran.status.code, pb.OK, ran.status.message)
        outputs = {v.name: protocol.value_from_proto(v) for v in ran.run.outputs}
        self.assertEqual(outputs["Y"].shape, (1, 3, 32))
        self.assertEqual(outputs["present_key"].shape, (1, 2, 9, 8))
        self.assertEqual(outputs["qk_matmul_output"].shape, (1, 4, 3, 9))
        self.assertEqual({v.dtype for v in outputs.values()}, {np.dtype(np.float16)})
        np.testing.assert_array_equal(outputs["present_key"][:, :, :4], inputs["past_key"].astype(np.float16))
        # Causal with a past of 4: query row 0 sees keys 0..4, and its weights sum to one.
        probs = outputs["qk_matmul_output"].astype(np.float64)
        np.testing.assert_array_equal(probs[0, :, 0, 5:], 0)
        np.testing.assert_allclose(probs.sum(axis=-1), 1, atol=4e-3)

    def test_bfloat16_outputs_keep_their_type(self):
        session = self.create(attention_model(elem=TensorProto.BFLOAT16, q_num_heads=4, kv_num_heads=2))
        q = np.ones((1, 3, 32), ml_dtypes.bfloat16)
        kv = np.ones((1, 5, 16), ml_dtypes.bfloat16)
        ran = self.worker.run(session.session_id, values(Q=q, K=kv, V=kv))
        self.assertEqual(ran.status.code, pb.OK, ran.status.message)
        [y] = [protocol.value_from_proto(v) for v in ran.run.outputs]
        self.assertEqual(y.dtype, np.dtype(ml_dtypes.bfloat16))
        np.testing.assert_array_equal(y, 1)

    def test_what_is_not_one_attention_node_is_unsupported(self):
        status = self.refusal(attention_model(op_type="Softmax"))
        self.assertEqual(status.code, pb.UNSUPPORTED, status.message)
        self.assertIn("ai.onnx:Softmax", status.message)
        status = self.refusal(attention_model(opset=22))
        self.assertEqual(status.code, pb.UNSUPPORTED, status.message)
        self.assertIn("opset 22", status.message)
        status = self.refusal(attention_model(elem=TensorProto.INT8))
        self.assertEqual(status.code, pb.UNSUPPORTED, status.message)
        self.assertIn("INT8", status.message)

    def test_what_the_schema_forbids_is_an_invalid_argument(self):
        for model, words in ((attention_model(qk_matmul_output_mode=4), "qk_matmul_output_mode 4"),
                             (attention_model(opset=24, left_window_size=2), "no attribute 'left_window_size'"),
                             (attention_model(opset=25, softmax_precision=7), "softmax_precision 7"),
                             (attention_model(outputs=("Y", "present_key")), "present_key and present_value")):
            status = self.refusal(model)
            self.assertEqual(status.code, pb.INVALID_ARGUMENT, status.message)
            self.assertIn(words, status.message)

    def test_bad_shapes_at_run_name_the_problem(self):
        session = self.create(attention_model(q_num_heads=3, kv_num_heads=2))
        ran = self.worker.run(session.session_id, values(Q=np.ones((1, 3, 32), np.float16),
                                                         K=np.ones((1, 5, 16), np.float16),
                                                         V=np.ones((1, 5, 16), np.float16)))
        self.assertEqual(ran.status.code, pb.INVALID_ARGUMENT, ran.status.message)
        self.assertIn("hidden size 32 is not a multiple of 3 heads", ran.status.message)


class FaultSettingTest(unittest.TestCase):
    def test_unknown_fault_fails_session_creation(self):
        worker, _ = start_worker(PARITY_FLASH_FAULT="scale_of")
        try:
            status = worker.create(attention_model(q_num_heads=4, kv_num_heads=2)).status
            self.assertEqual(status.code, pb.INVALID_ARGUMENT, status.message)
            self.assertIn("PARITY_FLASH_FAULT='scale_of' is not a known fault", status.message)
        finally:
            worker.shutdown()
            worker.finish()


if __name__ == "__main__":
    unittest.main()
