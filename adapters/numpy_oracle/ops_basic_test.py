"""Tests of the numpy oracle's graph walk (graph.py) and its small standard
operators (ops_basic.py), on hand-checkable inputs."""
import unittest

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

from oracle_testing import model_of, run_model, run_node
from values import OracleError

F16, BF16, F32 = TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT


class GraphWalkTest(unittest.TestCase):
    def test_each_node_output_is_rounded_to_its_type(self):
        # 1 + 2^-11 is a tie between float16's 1 and 1 + 2^-10: the Add
        # rounds it to 1, so the Sub gives 0. Computed in double to the end
        # it would give 2^-11.
        a, b = np.array([1.0], np.float16), np.array([2.0 ** -11], np.float16)
        nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Sub", ["s", "a"], ["d"])]
        [d] = run_model(model_of(nodes, {"a": a, "b": b}, [("d", F16)]), {"a": a, "b": b})
        self.assertEqual(d.dtype, np.float16)
        self.assertEqual(float(d[0]), 0.0)

    def test_unknown_operator_is_unsupported_and_named(self):
        x = np.ones(2, np.float32)
        with self.assertRaises(OracleError) as raised:
            run_node("Softplus", {"x": x}, ["y"])
        self.assertTrue(raised.exception.unsupported)
        self.assertIn("ai.onnx:Softplus", raised.exception.message)

    def test_operator_version_outside_the_oracles_is_unsupported(self):
        x = np.ones((1, 1, 1, 2), np.float32)
        with self.assertRaises(OracleError) as raised:
            run_node("Swish", {"x": x}, ["y"], opset=23)  # Swish is new in 24
        self.assertIn("Swish", raised.exception.message)

    def test_declared_type_that_the_operator_does_not_give_is_an_error(self):
        x = np.ones(2, np.float32)
        with self.assertRaises(OracleError) as raised:
            run_node("Neg", {"x": x}, [("y", F16)])
        self.assertFalse(raised.exception.unsupported)
        self.assertIn("declared FLOAT16", raised.exception.message)

    def test_missing_and_mistyped_inputs(self):
        x = np.ones(2, np.float32)
        model = model_of([helper.make_node("Neg", ["x"], ["y"])], {"x": x}, ["y"])
        with self.assertRaisesRegex(OracleError, "no value for graph input 'x'"):
            run_model(model, {})
        with self.assertRaisesRegex(OracleError, "input 'x' is FLOAT16, declared FLOAT"):
            run_model(model, {"x": x.astype(np.float16)})


class ShapeOpsTest(unittest.TestCase):
    def test_positions_as_a_hook_builds_them(self):
        # q_idx - k_idx from Shape, Gather, Range, Reshape, Sub: [[0, -1], [1, 0], [2, 1]].
        x = np.zeros((1, 1, 3, 2), np.float32)
        consts = {"two": np.array(2, np.int64), "three": np.array(3, np.int64), "zero": np.array(0, np.int64),
                  "one": np.array(1, np.int64), "col": np.array([-1, 1], np.int64), "row": np.array([1, -1], np.int64)}
        nodes = [helper.make_node("Shape", ["x"], ["s"]),
                 helper.make_node("Gather", ["s", "two"], ["L"], axis=0),
                 helper.make_node("Gather", ["s", "three"], ["S"], axis=0),
                 helper.make_node("Range", ["zero", "L", "one"], ["ql"]),
                 helper.make_node("Range", ["zero", "S", "one"], ["kl"]),
                 helper.make_node("Reshape", ["ql", "col"], ["q"]),
                 helper.make_node("Reshape", ["kl", "row"], ["k"]),
                 helper.make_node("Sub", ["q", "k"], ["rel"]),
                 helper.make_node("Unsqueeze", ["rel", "zero"], ["out"])]
        [out] = run_model(model_of(nodes, {"x": x}, ["out"], initializers=consts), {"x": x})
        np.testing.assert_array_equal(out, [[[0, -1], [1, 0], [2, 1]]])
        self.assertEqual(out.dtype, np.int64)

    def test_where_compare_cast_tanh(self):
        x = np.array([-1.0, 0.0, 2.0], np.float32)
        zero = np.array(0.0, np.float32)
        nodes = [helper.make_node("Greater", ["x", "zero"], ["pos"]),
                 helper.make_node("Tanh", ["x"], ["t"]),
                 helper.make_node("Where", ["pos", "t", "zero"], ["w"]),
                 helper.make_node("Cast", ["pos"], ["c"], to=TensorProto.INT64)]
        w, c = run_model(model_of(nodes, {"x": x}, ["w", "c"], initializers={"zero": zero}), {"x": x})
        np.testing.assert_array_equal(w, np.array([0.0, 0.0, np.tanh(2.0)], np.float32))
        np.testing.assert_array_equal(c, [0, 0, 1])

    def test_shape_start_end_and_squeeze(self):
        x = np.zeros((2, 1, 3), np.float32)
        [s] = run_node("Shape", {"x": x}, ["s"], opset=15, start=-2)
        np.testing.assert_array_equal(s, [1, 3])
        [y] = run_node("Squeeze", {"x": x}, ["y"])
        self.assertEqual(y.shape, (2, 3))


class QuantizationTest(unittest.TestCase):
    def test_quantize_rounds_half_to_even_then_adds_zero_point_and_saturates(self):
        x = np.array([2.5, 3.5, -2.5, 300.0, -0.5], np.float32)
        scale, zero = np.array(1.0, np.float32), np.array(1, np.int8)
        [y] = run_node("QuantizeLinear", {"x": x}, ["y"], initializers={"s": scale, "z": zero},
                       node_inputs=["x", "s", "z"])
        np.testing.assert_array_equal(y, [3, 5, -1, 127, 1])  # round(x) + 1, 301 saturates to 127
        self.assertEqual(y.dtype, np.int8)

    def test_quotient_is_rounded_to_the_scale_type_first(self):
        # x / scale = 84.1 rounds to 84 in bfloat16 (the scale's type, 8 bits),
        # a tie between e4m3fn's 80 and 88 that goes to the even 80; the
        # unrounded quotient would give 88.
        x = np.array([84.1], np.float32)
        inits = {"s": np.array(1.0, ml_dtypes.bfloat16), "z": np.zeros((), ml_dtypes.float8_e4m3fn)}
        [y] = run_node("QuantizeLinear", {"x": x}, ["y"], initializers=inits, node_inputs=["x", "s", "z"])
        self.assertEqual(float(y[0]), 80.0)
        # With a float32 division (the precision attribute) the quotient stays above the tie.
        [y] = run_node("QuantizeLinear", {"x": x}, ["y"], initializers=inits, node_inputs=["x", "s", "z"],
                       precision=TensorProto.FLOAT)
        self.assertEqual(float(y[0]), 88.0)

    def test_float8_saturate_flag(self):
        x = np.array([470.0, -1000.0, 10.0], np.float32)
        scale, zero = np.array(1.0, np.float32), np.zeros((), ml_dtypes.float8_e4m3fn)
        for saturate, expected in ((1, [448.0, -448.0, 10.0]), (0, [np.nan, np.nan, 10.0])):
            [y] = run_node("QuantizeLinear", {"x": x}, ["y"], initializers={"s": scale, "z": zero},
                           node_inputs=["x", "s", "z"], saturate=saturate)
            np.testing.assert_array_equal(y.astype(np.float64), expected)

    def test_dequantize_blocked_int4(self):
        # x [4, 2] int4, block_size 2 along axis 0: rows 0-1 use scale row 0, rows 2-3 row 1.
        x = np.array([[1, -2], [3, 7], [-8, 0], [2, 2]], ml_dtypes.int4)
        scale = np.array([[0.5, 1.0], [2.0, 0.25]], np.float16)
        zero = np.array([[1, 0], [0, -2]], ml_dtypes.int4)
        [y] = run_node("DequantizeLinear", {"x": x}, ["y"], initializers={"s": scale, "z": zero},
                       node_inputs=["x", "s", "z"], axis=0, block_size=2)
        np.testing.assert_array_equal(y, np.array([[0.0, -2.0], [1.0, 7.0], [-16.0, 0.5], [4.0, 1.0]], np.float16))
        self.assertEqual(y.dtype, np.float16)

    def test_per_axis_scales_and_a_wrong_scale_shape(self):
        x = np.array([[10, 20], [30, 40]], np.uint8)
        scale = np.array([0.5, 2.0], np.float32)
        [y] = run_node("DequantizeLinear", {"x": x}, ["y"], initializers={"s": scale}, node_inputs=["x", "s"], axis=1)
        np.testing.assert_array_equal(y, [[5.0, 40.0], [15.0, 80.0]])
        with self.assertRaisesRegex(OracleError, "per-axis x_scale must be 1-D of length 2"):
            run_node("DequantizeLinear", {"x": x}, ["y"], initializers={"s": np.ones(3, np.float32)},
                     node_inputs=["x", "s"], axis=1)

    def test_qdq_matmul_chain_rounds_between_nodes(self):
        # The float16 product 1 + 2^-11 (a tie) is rounded to 1 before it is
        # quantized with scale 2^-14: 16384, not (1 + 2^-11) * 2^14 = 16392.
        a = np.array([[1.0, 2.0 ** -11]], np.float16)
        nodes = [helper.make_node("MatMul", ["a", "w"], ["p"]),
                 helper.make_node("QuantizeLinear", ["p", "s", "z"], ["q"])]
        inits = {"w": np.array([[1.0], [1.0]], np.float16), "s": np.array(2.0 ** -14, np.float16),
                 "z": np.array(0, np.int16)}
        [q] = run_model(model_of(nodes, {"a": a}, [("q", TensorProto.INT16)], initializers=inits), {"a": a})
        self.assertEqual(int(q[0, 0]), 2 ** 14)

if __name__ == "__main__":
    unittest.main()
