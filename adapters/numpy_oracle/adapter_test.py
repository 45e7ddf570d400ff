"""Tests of the numpy oracle adapter as the harness runs it: a worker process
started by adapter.json's command in the adapter's folder. The oracle's
maths is tested beside each module (values_test.py, ops_*_test.py)."""
import math
import os
import sys
import unittest

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

import parity_protocol as protocol
import parity_worker_pb2 as pb
from parity_worker_client import start_adapter_worker

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from oracle_testing import model_of  # noqa: E402



def values(**named):
    return [protocol.value_to_proto(name, value) for name, value in named.items()]


def outputs_of(response):
    return [(v.name, protocol.value_from_proto(v)) for v in response.run.outputs]


X_BF16 = np.array([math.log(3), 0.0, -1.0], ml_dtypes.bfloat16)
SWISH_MODEL = model_of([helper.make_node("Swish", ["x"], ["y"], name="swish0")], {"x": X_BF16},
                       [("y", TensorProto.BFLOAT16)], opset=24).SerializeToString()


class NumpyOracleAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.manifest, cls.worker, cls.info = start_adapter_worker(HERE)

    @classmethod
    def tearDownClass(cls):
        cls.worker.shutdown()
        cls.status, cls.log = cls.worker.finish()
        assert cls.status == 0, cls.log

    def create(self, model):
        created = self.worker.create(model)
        self.assertEqual(created.status.code, pb.OK, created.status.message)
        self.addCleanup(self.worker.release, created.session.session_id)
        return created.session

    def test_manifest_info_and_capabilities(self):
        self.assertEqual(self.manifest["name"], "numpy_oracle")
        self.assertEqual(self.info.name, "numpy_oracle")
        self.assertEqual(self.info.backend_version, np.__version__)
        self.assertEqual([d.name for d in self.info.devices], ["cpu"])
        self.assertFalse(self.worker.capabilities("cpu").capabilities.declared)

    def test_bfloat16_swish_is_computed_in_double_and_rounded_once(self):
        session = self.create(SWISH_MODEL)
        self.assertEqual([(p.node, p.device) for p in session.placement], [("swish0", "cpu")])
        ran = self.worker.run(session.session_id, values(x=X_BF16))
        self.assertEqual(ran.status.code, pb.OK, ran.status.message)
        [(name, y)] = outputs_of(ran)
        self.assertEqual(name, "y")
        self.assertEqual(y.dtype, ml_dtypes.bfloat16)
        x = X_BF16.astype(np.float64)
        exact = x / (1 + np.exp(-x))
        # Rounded to nearest: within half a bfloat16 step of the exact value
        # (8 significand bits: the step in [2^e, 2^(e+1)) is 2^(e-7)).
        half_step = np.exp2(np.floor(np.log2(np.abs(exact) + (exact == 0))) - 8)
        self.assertTrue(np.all(np.abs(y.astype(np.float64) - exact) <= half_step), y)

    def test_an_operator_the_oracle_lacks_is_unsupported_by_name(self):
        model = model_of([helper.make_node("Frobnicate", ["x"], ["y"], domain="org.example")], {"x": X_BF16}, ["y"],
                         domains=[("org.example", 1)]).SerializeToString()
        response = self.worker.create(model)
        self.assertEqual(response.status.code, pb.UNSUPPORTED, response.status.message)
        self.assertIn("org.example:Frobnicate", response.status.message)

    def test_bad_model_bad_input_name_and_bad_values_are_invalid_arguments(self):
        self.assertEqual(self.worker.create(b"not a model").status.code, pb.INVALID_ARGUMENT)
        session = self.create(SWISH_MODEL)
        unknown = self.worker.run(session.session_id, values(x=X_BF16, z=X_BF16))
        self.assertEqual(unknown.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("'z'", unknown.status.message)
        wrong_type = self.worker.run(session.session_id, values(x=X_BF16.astype(np.float32)))
        self.assertEqual(wrong_type.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("input 'x' is FLOAT, declared BFLOAT16", wrong_type.status.message)


if __name__ == "__main__":
    unittest.main()
