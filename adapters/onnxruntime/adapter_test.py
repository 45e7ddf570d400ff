"""Tests of the ONNX Runtime adapter, run as a worker process the way the
harness runs it (adapter.json's command, in the adapter's folder)."""

import os
import sys
import unittest

import ml_dtypes
import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

import parity_protocol as protocol
import parity_worker_pb2 as pb
from parity_worker_client import start_adapter_worker

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import adapter as ort_adapter  # noqa: E402 - the module under test, for its error mapping
HAS_CUDA = "CUDAExecutionProvider" in onnxruntime.get_available_providers()

# IR 10 / opset 21: models every ONNX Runtime of the last two years reads.
IR_VERSION = 10
OPSET = 21


def make_model(nodes, inputs, outputs, opsets=(("", OPSET),), initializers=()):
    graph = helper.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, ir_version=IR_VERSION,
                              opset_imports=[helper.make_opsetid(domain, version) for domain, version in opsets])
    return model.SerializeToString()


def tensor_info(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def optional_info(name, elem_type, shape):
    return helper.make_value_info(name, helper.make_optional_type_proto(helper.make_tensor_type_proto(elem_type, shape)))


def values(**named):
    return [protocol.value_to_proto(name, value) for name, value in named.items()]


def outputs_of(response):
    return [(v.name, protocol.value_from_proto(v)) for v in response.run.outputs]


ADD_MODEL = make_model([helper.make_node("Add", ["a", "b"], ["c"], name="add0")],
                       [tensor_info("a", TensorProto.FLOAT, [2, 3]), tensor_info("b", TensorProto.FLOAT, [2, 3])],
                       [tensor_info("c", TensorProto.FLOAT, [2, 3])])


# SkipLayerNormalization in our contrib domain (spec/functions/skip_layer_normalization.md),
# asking for outputs 0 and 3 (output and input_skip_bias_sum).
SKIP_LN_MODEL = make_model(
    [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y", "", "", "sum"], name="sln0",
                      domain="org.onnxparity.contrib", epsilon=1e-5)],
    [tensor_info("x", TensorProto.FLOAT, [2, 3, 4]), tensor_info("skip", TensorProto.FLOAT, [2, 3, 4]),
     tensor_info("gamma", TensorProto.FLOAT, [4]), tensor_info("beta", TensorProto.FLOAT, [4])],
    [tensor_info("y", TensorProto.FLOAT, [2, 3, 4]), tensor_info("sum", TensorProto.FLOAT, [2, 3, 4])],
    opsets=(("", OPSET), ("org.onnxparity.contrib", 1)))


def skip_layer_norm_inputs():
    rng = np.random.default_rng(7)
    return tuple(rng.uniform(-2, 2, shape).astype(np.float32) for shape in ((2, 3, 4), (2, 3, 4), (4,), (4,)))


def skip_layer_norm_numpy(x, skip, gamma, beta, epsilon=1e-5):
    total = x.astype(np.float64) + skip
    mean = total.mean(axis=-1, keepdims=True)
    variance = ((total - mean) ** 2).mean(axis=-1, keepdims=True)
    return (total - mean) / np.sqrt(variance + epsilon) * gamma + beta


class OnnxRuntimeAdapterTest(unittest.TestCase):
    extra_env = {}

    @classmethod
    def setUpClass(cls):
        # Contrib twins on, whatever the caller's environment says (ContribTwinsOffTest turns them off).
        cls.manifest, cls.worker, cls.info = start_adapter_worker(HERE, {ort_adapter.TWINS_ENV: "1", **cls.extra_env})

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

    def run_model(self, model, **inputs):
        session = self.create(model)
        ran = self.worker.run(session.session_id, values(**inputs))
        self.assertOk(ran)
        return outputs_of(ran)

    def test_manifest_and_info(self):
        self.assertEqual(self.manifest["name"], "onnxruntime")
        self.assertEqual(self.info.name, "onnxruntime")
        self.assertEqual(self.info.backend_version, onnxruntime.__version__)
        devices = [d.name for d in self.info.devices]
        self.assertEqual(devices[0], "cpu")
        self.assertEqual("cuda" in devices, HAS_CUDA)

    def test_capabilities_declare_nothing_but_can_forbid_fallback(self):
        response = self.worker.capabilities("cpu")
        self.assertOk(response)
        self.assertFalse(response.capabilities.declared)
        self.assertTrue(response.capabilities.can_forbid_fallback)

    def test_add_float32_matches_numpy(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
        b = np.full((2, 3), 0.25, dtype=np.float32)
        session = self.create(ADD_MODEL, warm_repeats=2)
        self.assertEqual(len(session.load_ms_warm), 2)
        self.assertGreater(session.load_ms_cold, 0)
        self.assertEqual([(p.node, p.device) for p in session.placement], [("add0", "cpu")])
        ran = self.worker.run(session.session_id, values(a=a, b=b))
        self.assertOk(ran)
        [(name, c)] = outputs_of(ran)
        self.assertEqual(name, "c")
        self.assertEqual(c.dtype, np.float32)
        np.testing.assert_array_equal(c, a + b)

    def test_sequence_in_and_out(self):
        model = make_model(
            [helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
             helper.make_node("SequenceAt", ["s", "i"], ["picked"]),
             helper.make_node("SequenceLength", ["given"], ["n"])],
            [tensor_info("x", TensorProto.INT64, [2]), tensor_info("y", TensorProto.INT64, [3]),
             tensor_info("i", TensorProto.INT64, []),
             helper.make_tensor_sequence_value_info("given", TensorProto.FLOAT, None)],
            [helper.make_tensor_sequence_value_info("s", TensorProto.INT64, None),
             tensor_info("picked", TensorProto.INT64, None), tensor_info("n", TensorProto.INT64, [])])
        x, y = np.array([1, 2], np.int64), np.array([3, 4, 5], np.int64)
        given = [np.zeros(1, np.float32), np.zeros(4, np.float32), np.ones(2, np.float32)]
        outputs = dict(self.run_model(model, x=x, y=y, i=np.array(-1, np.int64), given=given))
        self.assertEqual([a.tolist() for a in outputs["s"]], [[1, 2], [3, 4, 5]])
        self.assertEqual(outputs["picked"].tolist(), [3, 4, 5])
        self.assertEqual(outputs["n"].tolist(), 3)

    def test_optional_in_and_out(self):
        model = make_model(
            [helper.make_node("OptionalHasElement", ["maybe"], ["has"]),
             helper.make_node("Optional", ["x"], ["wrapped"]),
             helper.make_node("Optional", [], ["nothing"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, None))],
            [optional_info("maybe", TensorProto.FLOAT, [2]), tensor_info("x", TensorProto.FLOAT, [2])],
            [tensor_info("has", TensorProto.BOOL, []), optional_info("wrapped", TensorProto.FLOAT, [2]),
             optional_info("nothing", TensorProto.FLOAT, None)],
            opsets=(("", 18),))
        session = self.create(model)
        x = np.array([1.5, -1], np.float32)
        for maybe, expected in ((x, True), (None, False)):
            with self.subTest(maybe=maybe):
                ran = self.worker.run(session.session_id, values(maybe=maybe, x=x))
                self.assertOk(ran)
                by_name = {v.name: v for v in ran.run.outputs}
                self.assertEqual(protocol.value_from_proto(by_name["has"]).tolist(), expected)
                self.assertTrue(by_name["wrapped"].HasField("optional"))
                np.testing.assert_array_equal(protocol.value_from_proto(by_name["wrapped"]), x)
                self.assertTrue(by_name["nothing"].HasField("optional"))
                self.assertFalse(by_name["nothing"].optional.HasField("tensor_value"))
                self.assertEqual(by_name["nothing"].optional.elem_type, onnx.OptionalProto.TENSOR)

    def test_types_numpy_lacks_cross_as_raw_bytes(self):
        # Cast float -> bfloat16 -> float8e4m3fn, and int4 through QuantizeLinear:
        # ONNX Runtime's numpy bridge refuses or mislabels all three.
        model = make_model(
            [helper.make_node("Cast", ["x"], ["bf"], to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["bf"], ["f8"], to=TensorProto.FLOAT8E4M3FN),
             helper.make_node("Identity", ["bf_in"], ["bf_out"]),
             helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q4"])],
            [tensor_info("x", TensorProto.FLOAT, [5]), tensor_info("bf_in", TensorProto.BFLOAT16, [2])],
            [tensor_info("bf", TensorProto.BFLOAT16, [5]), tensor_info("f8", TensorProto.FLOAT8E4M3FN, [5]),
             tensor_info("bf_out", TensorProto.BFLOAT16, [2]), tensor_info("q4", TensorProto.INT4, [5])],
            initializers=[helper.make_tensor("scale", TensorProto.FLOAT, [], [1.0]),
                          helper.make_tensor("zero", TensorProto.INT4, [], [0])])
        x = np.array([1.001, -2.5, 3.3, 7.9, -100], np.float32)
        bf_in = np.array([0.1, 300], dtype=ml_dtypes.bfloat16)
        outputs = dict(self.run_model(model, x=x, bf_in=bf_in))
        self.assertEqual(outputs["bf"].dtype, np.dtype(ml_dtypes.bfloat16))
        np.testing.assert_array_equal(outputs["bf"], x.astype(ml_dtypes.bfloat16))
        self.assertEqual(outputs["f8"].dtype, np.dtype(ml_dtypes.float8_e4m3fn))
        np.testing.assert_array_equal(outputs["f8"].astype(np.float32),
                                      x.astype(ml_dtypes.bfloat16).astype(ml_dtypes.float8_e4m3fn).astype(np.float32))
        np.testing.assert_array_equal(outputs["bf_out"], bf_in)
        self.assertEqual(outputs["q4"].dtype, np.dtype(ml_dtypes.int4))
        self.assertEqual(outputs["q4"].astype(np.int32).tolist(), [1, -2, 3, 7, -8])  # round half to even, saturate

    def test_strings(self):
        model = make_model([helper.make_node("Identity", ["s"], ["t"])], [tensor_info("s", TensorProto.STRING, [2])],
                           [tensor_info("t", TensorProto.STRING, [2])])
        [(_, t)] = self.run_model(model, s=np.array(["ab", "ü"], dtype=object))
        self.assertEqual(t.tolist(), ["ab", "ü"])

    def test_op_onnx_runtime_lacks_is_unsupported(self):
        model = make_model([helper.make_node("Frobnicate", ["a"], ["b"], domain="org.example.madeup")],
                           [tensor_info("a", TensorProto.FLOAT, [1])], [tensor_info("b", TensorProto.FLOAT, [1])],
                           opsets=(("", OPSET), ("org.example.madeup", 1)))
        response = self.worker.create(model)
        self.assertEqual(response.status.code, pb.UNSUPPORTED, response.status.message)
        self.assertIn("Frobnicate", response.status.message)

    def test_missing_kernel_is_unsupported(self):
        # Add-1 is a valid ONNX op whose kernel ONNX Runtime no longer has.
        model = make_model([helper.make_node("Add", ["a", "b"], ["c"])],
                           [tensor_info("a", TensorProto.FLOAT, [1]), tensor_info("b", TensorProto.FLOAT, [1])],
                           [tensor_info("c", TensorProto.FLOAT, [1])], opsets=(("", 1),))
        response = self.worker.create(model)
        self.assertEqual(response.status.code, pb.UNSUPPORTED, response.status.message)
        self.assertIn("NotImplemented", response.status.message)

    def test_skip_layer_normalization_in_our_domain_runs_as_its_twin(self):
        x, skip, gamma, beta = skip_layer_norm_inputs()
        session = self.create(SKIP_LN_MODEL)
        # Placement names the node as the case wrote it, on the device that ran it.
        self.assertEqual([(p.node, p.device) for p in session.placement], [("sln0", "cpu")])
        ran = self.worker.run(session.session_id, values(x=x, skip=skip, gamma=gamma, beta=beta))
        self.assertOk(ran)
        [(name, y), (_, total)] = outputs_of(ran)
        self.assertEqual(name, "y")
        np.testing.assert_allclose(total, x + skip, rtol=1e-6)
        np.testing.assert_allclose(y, skip_layer_norm_numpy(x, skip, gamma, beta), rtol=1e-5, atol=1e-5)

    def test_op_of_our_domain_without_a_twin_stays_unsupported(self):
        model = make_model([helper.make_node("NoSuchTwin", ["a"], ["b"], domain=ort_adapter.CONTRIB_DOMAIN)],
                           [tensor_info("a", TensorProto.FLOAT, [1])], [tensor_info("b", TensorProto.FLOAT, [1])],
                           opsets=(("", OPSET), (ort_adapter.CONTRIB_DOMAIN, 1)))
        response = self.worker.create(model)
        self.assertEqual(response.status.code, pb.UNSUPPORTED, response.status.message)
        self.assertNotIn("contrib twin", response.status.message)

    def test_fallback_forbidden_on_cpu_still_runs(self):
        session = self.create(ADD_MODEL, device="cpu", allow_fallback=False)
        self.assertEqual({p.device for p in session.placement}, {"cpu"})
        ran = self.worker.run(session.session_id, values(a=np.ones((2, 3), np.float32), b=np.ones((2, 3), np.float32)))
        self.assertOk(ran)
        np.testing.assert_array_equal(outputs_of(ran)[0][1], np.full((2, 3), 2, np.float32))

    def test_malformed_model_and_inputs_are_invalid_arguments(self):
        self.assertEqual(self.worker.create(b"not a model").status.code, pb.INVALID_ARGUMENT)
        session = self.create(ADD_MODEL)
        wrong_shape = self.worker.run(session.session_id, values(a=np.ones((3, 3), np.float32),
                                                                 b=np.ones((2, 3), np.float32)))
        self.assertEqual(wrong_shape.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("invalid dimensions", wrong_shape.status.message)
        unknown = self.worker.run(session.session_id, values(a=np.ones((2, 3), np.float32), z=np.ones(1, np.float32)))
        self.assertEqual(unknown.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("'z'", unknown.status.message)
        missing = self.worker.run(session.session_id, values(a=np.ones((2, 3), np.float32)))
        self.assertEqual(missing.status.code, pb.INVALID_ARGUMENT)

    @unittest.skipIf(HAS_CUDA, "this ONNX Runtime has the CUDA execution provider")
    def test_cuda_absent_is_device_unavailable(self):
        response = self.worker.create(ADD_MODEL, device="cuda")
        self.assertEqual(response.status.code, pb.DEVICE_UNAVAILABLE)

    @unittest.skipUnless(HAS_CUDA, "this ONNX Runtime lacks the CUDA execution provider")
    def test_cuda_places_nodes_on_the_gpu(self):
        created = self.worker.create(ADD_MODEL, device="cuda", allow_fallback=False)
        if created.status.code == pb.DEVICE_UNAVAILABLE:
            self.skipTest(created.status.message)
        self.assertOk(created)
        self.addCleanup(self.worker.release, created.session.session_id)
        self.assertIn(("add0", "cuda"), [(p.node, p.device) for p in created.session.placement])


class ContribTwinsOffTest(unittest.TestCase):
    """The same worker with PARITY_ORT_CONTRIB_TWINS=0: our domain reaches ONNX Runtime untouched."""

    extra_env = {ort_adapter.TWINS_ENV: "0"}

    @classmethod
    def setUpClass(cls):
        OnnxRuntimeAdapterTest.setUpClass.__func__(cls)

    @classmethod
    def tearDownClass(cls):
        cls.worker.shutdown()
        cls.status, _ = cls.worker.finish()
        assert cls.status == 0

    def test_skip_layer_normalization_in_our_domain_is_unsupported(self):
        response = self.worker.create(SKIP_LN_MODEL)
        self.assertEqual(response.status.code, pb.UNSUPPORTED, response.status.message)
        self.assertIn(ort_adapter.CONTRIB_DOMAIN, response.status.message)


class TranslationTest(unittest.TestCase):
    """translate_contrib_twins on models, without ONNX Runtime."""

    def translate(self, model_bytes):
        translated, moved = ort_adapter.translate_contrib_twins(model_bytes)
        model = onnx.ModelProto()
        model.ParseFromString(translated)
        return model, moved

    def test_domains_and_opset_imports(self):
        domain = ort_adapter.CONTRIB_DOMAIN
        nodes = [helper.make_node("SkipLayerNormalization", ["x", "s", "g"], ["y"], domain=domain, name="skip"),
                 helper.make_node("SimplifiedLayerNormalization", ["y", "g"], ["z"], domain=domain, epsilon=1e-3),
                 helper.make_node("NoSuchTwin", ["z"], ["w"], domain=domain, name="other")]
        model_bytes = make_model(nodes, [tensor_info(n, TensorProto.FLOAT, [2, 4]) for n in ("x", "s")] +
                                 [tensor_info("g", TensorProto.FLOAT, [4])], [tensor_info("w", TensorProto.FLOAT, [2, 4])],
                                 opsets=(("", OPSET), (domain, 1)))
        model, moved = self.translate(model_bytes)
        self.assertEqual([n.domain for n in model.graph.node], ["com.microsoft", "", domain])
        self.assertEqual(model.graph.node[1].attribute[0].f, np.float32(1e-3))  # attributes travel unchanged
        self.assertEqual({o.domain: o.version for o in model.opset_import}, {"": OPSET, domain: 1, "com.microsoft": 1})
        self.assertEqual(len(moved), 2)
        self.assertIn("skip: ", moved[0])

    def test_other_versions_and_domains_are_left_alone(self):
        node = helper.make_node("SkipLayerNormalization", ["x", "s", "g"], ["y"], domain=ort_adapter.CONTRIB_DOMAIN)
        args = ([tensor_info(n, TensorProto.FLOAT, [4]) for n in ("x", "s", "g")], [tensor_info("y", TensorProto.FLOAT, [4])])
        model_bytes = make_model([node], *args, opsets=(("", OPSET), (ort_adapter.CONTRIB_DOMAIN, 2)))
        self.assertEqual(ort_adapter.translate_contrib_twins(model_bytes), (model_bytes, []))
        self.assertEqual(ort_adapter.translate_contrib_twins(ADD_MODEL), (ADD_MODEL, []))

    def test_switch(self):
        saved = os.environ.pop(ort_adapter.TWINS_ENV, None)
        try:
            self.assertTrue(ort_adapter.contrib_twins_enabled([]))
            self.assertFalse(ort_adapter.contrib_twins_enabled([ort_adapter.NO_TWINS_FLAG]))
            os.environ[ort_adapter.TWINS_ENV] = "0"
            self.assertFalse(ort_adapter.contrib_twins_enabled([]))
        finally:
            os.environ.pop(ort_adapter.TWINS_ENV, None)
            if saved is not None:
                os.environ[ort_adapter.TWINS_ENV] = saved


class StatusMappingTest(unittest.TestCase):
    """How ONNX Runtime's exceptions become codes; the messages are ONNX Runtime's own."""

    def code(self, error, allow_fallback=True):
        return ort_adapter._status_of(error, allow_fallback).code

    def test_codes(self):
        fallback = ("This session contains graph nodes that are assigned to the default CPU EP, but fallback to CPU EP "
                    "has been explicitly disabled by the user.")
        self.assertEqual(self.code(ort_errors.Fail(fallback), allow_fallback=False), pb.FALLBACK_REQUIRED)
        self.assertEqual(self.code(ort_errors.NotImplemented("Could not find an implementation for Foo(1)")),
                         pb.UNSUPPORTED)
        self.assertEqual(self.code(ort_errors.Fail("Unsupported model IR version: 14, max supported IR version: 13")),
                         pb.UNSUPPORTED)
        self.assertEqual(self.code(ort_errors.InvalidGraph("This is an invalid model. Type Error")),
                         pb.INVALID_ARGUMENT)
        self.assertEqual(self.code(ort_errors.InvalidProtobuf("protobuf parsing failed")), pb.INVALID_ARGUMENT)
        self.assertEqual(self.code(ort_errors.Fail("Failed to allocate memory for requested buffer")),
                         pb.OUT_OF_MEMORY)
        self.assertEqual(self.code(ort_errors.RuntimeException("ReduceMax is not defined for empty set")), pb.INTERNAL)
        self.assertEqual(self.code(ort_errors.Fail("Type parameter (T) bound to different types")), pb.INTERNAL)

    def test_message_names_the_runtime_and_the_exception(self):
        error = ort_adapter._status_of(ort_errors.EPFail("the EP failed"), True)
        self.assertEqual(error.message, "ONNX Runtime EPFail: the EP failed")
        self.assertEqual(error.code, pb.INTERNAL)  # fallback allowed: an EP failure is not a refusal to fall back


if __name__ == "__main__":
    unittest.main()
