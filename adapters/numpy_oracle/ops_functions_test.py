"""Tests of the numpy oracle's Swish, SwiGLU, RMSNormalization,
RotaryEmbedding and TensorScatter (ops_functions.py) on hand-checkable inputs."""
import math
import unittest

import numpy as np

from oracle_testing import run_node
from values import OracleError


class ActivationTest(unittest.TestCase):
    def test_swish_at_log3_and_in_the_tails(self):
        # sigmoid(ln 3) = 3/4, so Swish(ln 3) = 0.75 ln 3; alpha 2 at ln(3)/2 gives the same gate.
        x = np.array([math.log(3), -800.0, 800.0, 0.0])
        [y] = run_node("Swish", {"x": x}, ["y"], opset=24)
        np.testing.assert_allclose(y, [0.75 * math.log(3), 0.0, 800.0, 0.0], rtol=1e-15, atol=0)
        [y] = run_node("Swish", {"x": x[:1] / 2}, ["y"], opset=24, alpha=2.0)
        self.assertAlmostEqual(float(y[0]), 0.375 * math.log(3), places=15)

    def test_swiglu_gates_b_and_refuses_broadcasting(self):
        a = np.array([math.log(3), 0.0], np.float32)
        b = np.array([4.0, 5.0], np.float32)
        [y] = run_node("SwiGLU", {"a": a, "b": b}, ["y"], opset=28)
        self.assertEqual(y.dtype, np.float32)
        np.testing.assert_array_equal(y, np.array([3 * math.log(3), 0.0]).astype(np.float32))
        with self.assertRaisesRegex(OracleError, "same shape"):
            run_node("SwiGLU", {"a": a, "b": b[:1]}, ["y"], opset=28)


class RMSNormalizationTest(unittest.TestCase):
    def test_rows_over_the_last_axis_with_a_broadcast_scale(self):
        # Row [3, 4]: mean square 12.5; row [1, -1]: 1. epsilon 0 keeps it exact.
        x = np.array([[3.0, 4.0], [1.0, -1.0]])
        scale = np.array([1.0, -2.0])
        [y] = run_node("RMSNormalization", {"x": x, "scale": scale}, ["y"], epsilon=0.0)
        r = 1 / math.sqrt(12.5)
        np.testing.assert_allclose(y, [[3 * r, -8 * r], [1.0, 2.0]], rtol=1e-15)

    def test_axis_zero_normalises_everything(self):
        x = np.array([[1.0, 1.0], [1.0, 5.0]])  # mean square 7
        [y] = run_node("RMSNormalization", {"x": x, "scale": np.array([1.0])}, ["y"], axis=0, epsilon=0.0)
        np.testing.assert_allclose(y, x / math.sqrt(7), rtol=1e-15)

    def test_scale_that_does_not_broadcast_one_way(self):
        with self.assertRaisesRegex(OracleError, "does not broadcast one way"):
            run_node("RMSNormalization", {"x": np.ones((2, 2)), "scale": np.ones((3, 2, 2))}, ["y"])


class RotaryEmbeddingTest(unittest.TestCase):
    def test_quarter_turn_half_split_and_interleaved(self):
        # One token, one head of size 4, angle 90 degrees for both pairs:
        # (x1, x2) -> (-x2, x1). Half-split pairs are (0, 2) and (1, 3);
        # interleaved pairs are (0, 1) and (2, 3).
        x = np.array([[[[1.0, 2.0, 3.0, 4.0]]]])  # [B=1, H=1, S=1, D=4]
        cos, sin = np.zeros((1, 2)), np.ones((1, 2))
        pos = np.zeros((1, 1), np.int64)
        inputs = {"x": x, "cos": cos, "sin": sin, "pos": pos}
        [y] = run_node("RotaryEmbedding", inputs, ["y"])
        np.testing.assert_array_equal(y, [[[[-3.0, -4.0, 1.0, 2.0]]]])
        [y] = run_node("RotaryEmbedding", inputs, ["y"], interleaved=1)
        np.testing.assert_array_equal(y, [[[[-2.0, 1.0, -4.0, 3.0]]]])

    def test_partial_rotation_3d_input_and_position_ids(self):
        # 3-D [B=1, S=2, 2 heads * 4], rotary_embedding_dim 2: only (d0, d1) of
        # each head turns, by the angle of its position (0: none, 1: 90 degrees).
        x = np.arange(16, dtype=np.float64).reshape(1, 2, 8)
        cos, sin = np.array([[1.0], [0.0]]), np.array([[0.0], [1.0]])
        pos = np.array([[0, 1]], np.int64)
        [y] = run_node("RotaryEmbedding", {"x": x, "cos": cos, "sin": sin, "pos": pos}, ["y"], num_heads=2,
                       rotary_embedding_dim=2)
        expected = x.copy()
        expected[0, 1, [0, 1, 4, 5]] = [-9.0, 8.0, -13.0, 12.0]
        np.testing.assert_array_equal(y, expected)


class TensorScatterTest(unittest.TestCase):
    def test_linear_and_circular_writes_per_batch(self):
        cache = np.zeros((2, 4, 1))  # [B, max_len 4, D]; axis -2 is the sequence
        update = np.array([[[1.0], [2.0]], [[3.0], [4.0]]])
        indices = np.array([1, 3], np.int64)
        [y] = run_node("TensorScatter", {"c": cache, "u": update, "i": indices}, ["y"], opset=24, mode="circular")
        np.testing.assert_array_equal(y[..., 0], [[0, 1, 2, 0], [4, 0, 0, 3]])  # batch 1 wraps to row 0
        with self.assertRaisesRegex(OracleError, "leaves \\[0, 4\\)"):
            run_node("TensorScatter", {"c": cache, "u": update, "i": indices}, ["y"], opset=24)

    def test_axis_one_of_four_and_no_indices(self):
        cache = np.zeros((1, 3, 2, 1))
        update = np.ones((1, 1, 2, 1))
        [y] = run_node("TensorScatter", {"c": cache, "u": update}, ["y"], opset=24, axis=1)
        np.testing.assert_array_equal(y[0, :, :, 0], [[1, 1], [0, 0], [0, 0]])


if __name__ == "__main__":
    unittest.main()
