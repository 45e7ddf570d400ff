"""Tests of parity_protocol: value conversion in process, and the serve loop
through a small adapter run as a real worker process over pipes."""

import os
import sys
import tempfile
import textwrap
import unittest

import ml_dtypes
import numpy as np
import onnx

import parity_protocol as protocol
import parity_worker_pb2 as pb
from parity_worker_client import WorkerClient, WorkerDied

PYTHON = os.environ.get("PARITY_PYTHON", sys.executable)

# An adapter that echoes its inputs, adds one to "x", and misbehaves on cue:
# it prints to stdout and writes to fd 1 behind Python's back, raises on a
# model that says "boom", refuses a model that says "unsupported".
ECHO_ADAPTER = textwrap.dedent('''
    import os, sys
    import numpy as np
    import parity_protocol as protocol

    class EchoAdapter(protocol.Adapter):
        creations = 0

        def info(self):
            if os.environ.get("ECHO_INFO_FAILS"):
                raise RuntimeError("no backend here")
            return protocol.AdapterInfo("echo", "0.1", "none", [("cpu", "cpu", "the test CPU"), ("npu", "npu", "")])

        def capabilities(self, device):
            if device == "npu":
                return protocol.Capabilities(operators=["ai.onnx:Add"], data_types=[1], can_forbid_fallback=True)
            return None

        def create_session(self, model, options):
            print("noise from print in create_session")
            os.write(1, b"noise written to fd 1")
            if model == b"boom":
                raise ValueError("boom in create_session")
            self.creations += 1
            if model == b"fail-on-warm" and self.creations > 1:
                raise protocol.AdapterError(protocol.OUT_OF_MEMORY, "no memory for a second session")
            if model == b"unsupported":
                raise protocol.AdapterError(protocol.UNSUPPORTED, "no kernel for Boom")
            report = protocol.SessionReport(variants=[("e0", "main")], placement=[("n0", options.device)])
            return {"model": model, "device": options.device, "fallback": options.allow_fallback}, report

        def run(self, session, inputs):
            print("noise from print in run", flush=True)
            if "raise" in inputs:
                raise KeyError("raise requested")
            outputs = [(name, value) for name, value in sorted(inputs.items())]
            if "x" in inputs:
                outputs.append(("x_plus_one", inputs["x"] + 1))
            outputs.append(("device", np.array(session["device"] + ("" if session["fallback"] else "!"), dtype=object)))
            return outputs

        def release(self, session):
            print("released", session["model"], file=sys.stderr, flush=True)

    if __name__ == "__main__":
        protocol.serve(EchoAdapter())
''')


def tensor(name, array):
    return protocol.value_to_proto(name, array)


class ValueConversionTest(unittest.TestCase):
    def roundtrip(self, value):
        return protocol.value_from_proto(protocol.value_to_proto("v", value))

    def test_tensor_dtypes_survive(self):
        for dtype in (np.float32, np.float16, np.int64, np.uint8, np.bool_, ml_dtypes.bfloat16,
                      ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2fnuz, ml_dtypes.int4, ml_dtypes.uint4):
            with self.subTest(dtype=np.dtype(dtype).name):
                array = np.array([[1, 0, 1], [0, 1, 1]]).astype(dtype)
                back = self.roundtrip(array)
                self.assertEqual(back.dtype, np.dtype(dtype))
                np.testing.assert_array_equal(back.astype(np.float32), array.astype(np.float32))

    def test_bfloat16_keeps_its_onnx_type(self):
        proto = protocol.value_to_proto("b", np.array([1.5], dtype=ml_dtypes.bfloat16))
        self.assertEqual(proto.tensor.data_type, onnx.TensorProto.BFLOAT16)

    def test_strings_and_scalars(self):
        back = self.roundtrip(np.array(["a", "é"], dtype=object))
        self.assertEqual(list(back), ["a", "é"])
        back = self.roundtrip(np.array(["text"]))  # numpy unicode dtype
        self.assertEqual(list(back), ["text"])
        scalar = self.roundtrip(np.float64(2.5))
        self.assertEqual(scalar.shape, ())
        self.assertEqual(scalar.dtype, np.float64)

    def test_sequences(self):
        proto = protocol.value_to_proto("s", [np.zeros(2, np.float32), np.ones(3, np.float32)])
        self.assertEqual(proto.sequence.elem_type, onnx.SequenceProto.TENSOR)
        back = protocol.value_from_proto(proto)
        self.assertEqual([a.shape for a in back], [(2,), (3,)])
        nested = self.roundtrip([[np.zeros(1, np.int32)], []])
        self.assertEqual(len(nested), 2)
        self.assertEqual(nested[1], [])
        untyped_empty = pb.Value(name="u", sequence=onnx.SequenceProto(name="u"))
        self.assertEqual(protocol.value_from_proto(untyped_empty), [])
        maps = pb.Value(name="m", sequence=onnx.SequenceProto(name="m", elem_type=onnx.SequenceProto.MAP))
        with self.assertRaises(protocol.AdapterError) as raised:
            protocol.value_from_proto(maps)
        self.assertEqual(raised.exception.code, protocol.UNSUPPORTED)
        empty = protocol.value_to_proto("e", [])
        self.assertTrue(empty.HasField("sequence"))
        self.assertEqual(empty.sequence.elem_type, onnx.SequenceProto.TENSOR)

    def test_optionals(self):
        empty = protocol.value_to_proto("o", None)
        self.assertTrue(empty.HasField("optional"))
        self.assertEqual(empty.optional.elem_type, onnx.OptionalProto.TENSOR)
        self.assertIsNone(protocol.value_from_proto(empty))
        empty_seq = protocol.value_to_proto("o", protocol.OptionalValue(None, "sequence"))
        self.assertEqual(empty_seq.optional.elem_type, onnx.OptionalProto.SEQUENCE)
        full = protocol.value_to_proto("o", protocol.OptionalValue(np.array([3], np.int8)))
        self.assertEqual(full.optional.elem_type, onnx.OptionalProto.TENSOR)
        self.assertEqual(protocol.value_from_proto(full).tolist(), [3])

    def test_empty_value_is_invalid_argument(self):
        with self.assertRaises(protocol.AdapterError) as raised:
            protocol.value_from_proto(pb.Value(name="nothing"))
        self.assertEqual(raised.exception.code, protocol.INVALID_ARGUMENT)
        self.assertIn("nothing", raised.exception.message)


class ServeLoopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.adapter = os.path.join(cls.folder.name, "echo_adapter.py")
        with open(cls.adapter, "w") as f:
            f.write(ECHO_ADAPTER)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def start(self, **env):
        worker = WorkerClient([PYTHON, self.adapter], env=dict(os.environ, **env), timeout=30)
        self.addCleanup(worker.close)
        return worker

    def assertOk(self, response):
        self.assertEqual(response.status.code, pb.OK, response.status.message)

    def test_hello_reports_the_adapter(self):
        worker = self.start()
        response = worker.hello()
        self.assertOk(response)
        info = response.info
        self.assertEqual((info.protocol_version, info.name, info.version, info.backend_version), (1, "echo", "0.1", "none"))
        self.assertEqual([(d.name, d.kind, d.description) for d in info.devices],
                         [("cpu", "cpu", "the test CPU"), ("npu", "npu", "")])
        self.assertEqual(info.pid, worker.process.pid)
        self.assertGreater(response.peak_rss_kb, 0)
        self.assertEqual(worker.finish(), (0, ""))

    def test_protocol_version_mismatch_is_invalid_argument(self):
        worker = self.start()
        response = worker.hello(version=2)
        self.assertEqual(response.status.code, pb.INVALID_ARGUMENT)
        self.assertEqual(response.status.message, "hello asks for protocol version 2; this worker speaks version 1")
        self.assertOk(worker.hello())  # the worker lives on
        self.assertEqual(worker.finish()[0], 0)

    def test_capabilities(self):
        worker = self.start()
        undeclared = worker.capabilities("")  # the default device, cpu
        self.assertOk(undeclared)
        self.assertTrue(undeclared.capabilities.HasField("declared"))
        self.assertFalse(undeclared.capabilities.declared)
        declared = worker.capabilities("npu").capabilities
        self.assertTrue(declared.declared)
        self.assertEqual(list(declared.operators), ["ai.onnx:Add"])
        self.assertEqual(list(declared.data_types), [1])
        self.assertTrue(declared.can_forbid_fallback)
        absent = worker.capabilities("gpu")
        self.assertEqual(absent.status.code, pb.DEVICE_UNAVAILABLE)
        self.assertIn("'gpu'", absent.status.message)
        worker.finish()

    def test_create_run_release_shutdown(self):
        worker = self.start()
        created = worker.create(b"model", device="npu", allow_fallback=False, warm_repeats=3)
        self.assertOk(created)
        session = created.session
        self.assertEqual(session.session_id, 1)
        self.assertGreater(session.load_ms_cold, 0)
        self.assertEqual(len(session.load_ms_warm), 3)
        self.assertEqual([(v.entry, v.chosen) for v in session.variants], [("e0", "main")])
        self.assertEqual([(p.node, p.device) for p in session.placement], [("n0", "npu")])

        x = np.array([[1.5, -2]], dtype=ml_dtypes.bfloat16)
        inputs = [tensor("x", x), protocol.value_to_proto("s", [np.arange(3, dtype=np.int64)]),
                  protocol.value_to_proto("none", None)]
        ran = worker.run(1, inputs)
        self.assertOk(ran)
        self.assertGreaterEqual(ran.run.run_ms, 0)
        outputs = {v.name: protocol.value_from_proto(v) for v in ran.run.outputs}
        self.assertEqual([v.name for v in ran.run.outputs], ["none", "s", "x", "x_plus_one", "device"])
        self.assertIsNone(outputs["none"])
        self.assertEqual(outputs["s"][0].tolist(), [0, 1, 2])
        self.assertEqual(outputs["x"].dtype, np.dtype(ml_dtypes.bfloat16))
        np.testing.assert_array_equal(outputs["x_plus_one"].astype(np.float32), [[2.5, -1]])
        self.assertEqual(outputs["device"].tolist(), "npu!")

        self.assertOk(worker.release(1))
        gone = worker.run(1, inputs)
        self.assertEqual(gone.status.code, pb.INVALID_ARGUMENT)
        self.assertEqual(gone.status.message, "run: no open session has id 1")
        self.assertEqual(worker.release(1).status.code, pb.INVALID_ARGUMENT)

        self.assertOk(worker.create(b"second"))
        self.assertEqual(worker.create(b"third").session.session_id, 3)
        self.assertOk(worker.shutdown())
        status, log = worker.finish()
        self.assertEqual(status, 0)
        # Warm sessions and, at shutdown, the open ones are released.
        self.assertEqual(log.count("released b'model'"), 4)
        self.assertIn("released b'second'", log)
        self.assertIn("released b'third'", log)
        # Prints and raw writes to fd 1 went to the log, not into the frames.
        self.assertIn("noise from print in create_session", log)
        self.assertIn("noise written to fd 1", log)
        self.assertIn("noise from print in run", log)

    def test_default_device_is_the_first(self):
        worker = self.start()
        self.assertOk(worker.create(b"model"))
        ran = worker.run(1, [])
        self.assertEqual(protocol.value_from_proto(ran.run.outputs[-1]).tolist(), "cpu")
        unknown = worker.create(b"model", device="tpu")
        self.assertEqual(unknown.status.code, pb.DEVICE_UNAVAILABLE)
        worker.finish()

    def test_adapter_exceptions_become_statuses(self):
        worker = self.start()
        boom = worker.create(b"boom")
        self.assertEqual(boom.status.code, pb.INTERNAL)
        self.assertIn("ValueError: boom in create_session", boom.status.message)
        refused = worker.create(b"unsupported")
        self.assertEqual(refused.status.code, pb.UNSUPPORTED)
        self.assertEqual(refused.status.message, "no kernel for Boom")
        self.assertOk(worker.create(b"model"))
        failed = worker.run(1, [tensor("raise", np.zeros(1))])
        self.assertEqual(failed.status.code, pb.INTERNAL)
        self.assertIn("KeyError", failed.status.message)
        self.assertOk(worker.run(1, []))  # the worker and the session survive
        status, log = worker.finish()
        self.assertEqual(status, 0)
        self.assertIn("Traceback", log)  # the log keeps the details

    def test_warm_repeat_failure_releases_the_cold_session(self):
        worker = self.start()
        failed = worker.create(b"fail-on-warm", warm_repeats=2)
        self.assertEqual(failed.status.code, pb.OUT_OF_MEMORY)
        self.assertEqual(failed.status.message, "no memory for a second session")
        self.assertEqual(worker.run(1, []).status.code, pb.INVALID_ARGUMENT)  # no session was kept
        status, log = worker.finish()
        self.assertEqual(log.count("released b'fail-on-warm'"), 1)

    def test_clean_end_of_input_exits_zero(self):
        worker = self.start()
        self.assertOk(worker.create(b"open"))
        status, log = worker.finish()
        self.assertEqual(status, 0)
        self.assertIn("released b'open'", log)

    def test_corrupt_length_prefix_exits_with_a_message(self):
        worker = self.start()
        self.assertOk(worker.hello())
        worker.send_bytes((0xFFFFFFF0).to_bytes(4, "little"))
        with self.assertRaises(WorkerDied):
            worker.receive()
        status, log = worker.finish()
        self.assertEqual(status, protocol.EXIT_PROTOCOL_BROKEN)
        self.assertIn("4294967280 bytes, over the limit", log)
        self.assertIn("corrupt stream", log)

    def test_frame_that_is_not_a_request_is_answered(self):
        worker = self.start()
        worker.send_bytes(b"\x03\x00\x00\x00\xff\xff\xff")
        response = worker.receive()
        self.assertEqual(response.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("not a valid parity.protocol.Request", response.status.message)
        self.assertOk(worker.hello())  # the stream is still in step
        self.assertEqual(worker.finish()[0], 0)

    def test_several_kinds_in_one_value_is_invalid_argument(self):
        worker = self.start()
        self.assertOk(worker.create(b"model"))
        value = tensor("x", np.zeros(1, np.float32))
        value.sequence.elem_type = onnx.SequenceProto.TENSOR
        response = worker.run(1, [value])
        self.assertEqual(response.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("input 'x' sets more than one", response.status.message)
        worker.finish()

    def test_too_many_warm_repeats_is_invalid_argument(self):
        worker = self.start()
        response = worker.create(b"model", warm_repeats=1001)
        self.assertEqual(response.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("at most 1000", response.status.message)
        worker.finish()

    def test_frame_cut_short_exits_with_a_message(self):
        worker = self.start()
        worker.send_bytes(b"\x10\x00\x00\x00abc")
        status, log = worker.finish()
        self.assertEqual(status, protocol.EXIT_PROTOCOL_BROKEN)
        self.assertIn("inside a frame (3 of 16 bytes)", log)

    def test_failing_info_exits_before_any_request(self):
        worker = self.start(ECHO_INFO_FAILS="1")
        status, log = worker.finish()
        self.assertEqual(status, protocol.EXIT_LOAD_FAILED)
        self.assertIn("info() raised RuntimeError: no backend here", log)

    def stateful_run(self, worker, session_id, inputs, keep=(("x_plus_one", "x"),), return_kept=True):
        run = pb.Run(session_id=session_id, inputs=inputs, return_kept=return_kept,
                     keep=[pb.StateBinding(output=output, input=input) for output, input in keep])
        return worker.call(pb.Request(run=run))

    def test_stateful_session_keeps_bound_outputs_as_next_inputs(self):
        worker = self.start()
        self.assertOk(worker.create(b"model"))
        step0 = self.stateful_run(worker, 1, [tensor("x", np.array([1, 2], np.float32))])
        self.assertOk(step0)
        # Unbound outputs in the adapter's (graph) order, then the kept ones.
        self.assertEqual([v.name for v in step0.run.outputs], ["x", "device", "x_plus_one"])
        self.assertEqual(protocol.value_from_proto(step0.run.outputs[2]).tolist(), [2, 3])
        # x is left out: the kept x_plus_one feeds it. Without return_kept it stays in the worker.
        step1 = self.stateful_run(worker, 1, [], return_kept=False)
        self.assertOk(step1)
        self.assertEqual([v.name for v in step1.run.outputs], ["x", "device"])
        self.assertEqual(protocol.value_from_proto(step1.run.outputs[0]).tolist(), [2, 3])
        step2 = self.stateful_run(worker, 1, [])
        self.assertEqual(protocol.value_from_proto(step2.run.outputs[-1]).tolist(), [4, 5])
        # An input sent anyway replaces the kept value.
        restart = self.stateful_run(worker, 1, [tensor("x", np.array([10, 20], np.float32))])
        self.assertEqual(protocol.value_from_proto(restart.run.outputs[-1]).tolist(), [11, 21])
        for response in (step0, step1, step2):
            self.assertGreater(response.run.rss_kb, 0)
            self.assertTrue(response.run.HasField("run_peak_rss_kb"), "this kernel allows /proc/self/clear_refs")
            self.assertGreaterEqual(response.run.run_peak_rss_kb, response.run.rss_kb)
            # Each run resets the high-water mark; the worker's peak over its life is kept.
            self.assertLessEqual(response.run.run_peak_rss_kb, response.peak_rss_kb)
        worker.finish()

    def test_stateful_session_refuses_changed_or_clashing_bindings(self):
        worker = self.start()
        self.assertOk(worker.create(b"model"))
        x = [tensor("x", np.array([1], np.float32))]
        twice = self.stateful_run(worker, 1, x, keep=[("x_plus_one", "x"), ("device", "x")])
        self.assertEqual(twice.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("input 'x' is bound twice", twice.status.message)
        unnamed = self.stateful_run(worker, 1, x, keep=[("x_plus_one", "")])
        self.assertEqual(unnamed.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("must name both", unnamed.status.message)
        self.assertOk(self.stateful_run(worker, 1, x))
        none = worker.run(1, [])
        self.assertEqual(none.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("this one names none", none.status.message)
        other = self.stateful_run(worker, 1, [], keep=[("device", "x")])
        self.assertEqual(other.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("leaves out 'x_plus_one'->'x'", other.status.message)
        self.assertIn("adds 'device'->'x'", other.status.message)
        # The refusals left the state alone: the kept [2] becomes [3].
        self.assertEqual(protocol.value_from_proto(self.stateful_run(worker, 1, []).run.outputs[-1]).tolist(), [3])
        self.assertOk(worker.create(b"second"))
        absent = self.stateful_run(worker, 2, x, keep=[("nope", "x")])
        self.assertEqual(absent.status.code, pb.INVALID_ARGUMENT)
        self.assertIn("run returned no output 'nope'", absent.status.message)
        worker.finish()

    def test_stateless_run_reports_memory_too(self):
        worker = self.start()
        self.assertOk(worker.create(b"model"))
        ran = worker.run(1, [])
        self.assertGreater(ran.run.rss_kb, 0)
        self.assertGreaterEqual(ran.run.run_peak_rss_kb, ran.run.rss_kb)
        worker.finish()

    def test_empty_request_is_answered(self):
        worker = self.start()
        response = worker.call(pb.Request())
        self.assertEqual(response.status.code, pb.INVALID_ARGUMENT)
        self.assertOk(worker.hello())
        worker.finish()


if __name__ == "__main__":
    unittest.main()
