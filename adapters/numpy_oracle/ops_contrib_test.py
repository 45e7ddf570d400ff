"""Tests of the numpy oracle's org.onnxparity.contrib operators
(ops_contrib_norm.py, ops_contrib_attention.py) on hand-checkable inputs."""
import math
import unittest

import numpy as np
from onnx import TensorProto

from oracle_testing import CONTRIB, run_node
from values import OracleError

F32 = TensorProto.FLOAT


def contrib(op_type, inputs, outputs, node_inputs=None, **attrs):
    return run_node(op_type, inputs, outputs, domain=CONTRIB, node_inputs=node_inputs, **attrs)


class NormalisationTest(unittest.TestCase):
    def test_simplified_layer_normalization_with_inv_std_var(self):
        x = np.array([[3.0, 4.0]], np.float32)  # mean square 12.5
        scale = np.array([2.0, 1.0], np.float32)
        y, inv = contrib("SimplifiedLayerNormalization", {"x": x, "s": scale}, ["y", ("inv", F32)], epsilon=0.0)
        r = 1 / math.sqrt(12.5)
        np.testing.assert_array_equal(y, np.array([[6 * r, 4 * r]], np.float32))
        np.testing.assert_array_equal(inv, np.array([[r]], np.float32))

    def test_skip_layer_normalization_all_outputs(self):
        # input + skip + bias = [0, 2, 4]: mean 2, population variance 8/3.
        x = np.array([[1.0, 1.0, 1.0]], np.float32)
        skip = np.array([[-2.0, 0.0, 2.0]], np.float32)
        gamma = np.array([1.0, 2.0, 3.0], np.float32)
        beta = np.array([0.5, 0.5, 0.5], np.float32)
        bias = np.array([1.0, 1.0, 1.0], np.float32)
        out, mean, inv, total = contrib("SkipLayerNormalization",
                                        {"x": x, "skip": skip, "gamma": gamma, "beta": beta, "bias": bias},
                                        ["out", ("mean", F32), ("inv", F32), "sum"], epsilon=0.0)
        r = 1 / math.sqrt(8 / 3)
        np.testing.assert_array_equal(total, [[0.0, 2.0, 4.0]])
        np.testing.assert_array_equal(mean, [[2.0]])
        np.testing.assert_array_equal(inv, np.array([[r]], np.float32))
        np.testing.assert_array_equal(out, np.array([[-2 * r + 0.5, 0.5, 6 * r + 0.5]], np.float32))

    def test_skip_simplified_bias_is_the_fourth_input_and_mean_is_zero(self):
        x = np.array([[3.0, 0.0]], np.float32)
        skip = np.array([[0.0, 0.0]], np.float32)
        gamma = np.array([1.0, 1.0], np.float32)
        bias = np.array([0.0, 4.0], np.float32)  # sum [3, 4]: mean square 12.5
        out, mean, inv, total = contrib("SkipSimplifiedLayerNormalization",
                                        {"x": x, "skip": skip, "gamma": gamma, "bias": bias},
                                        ["out", ("mean", F32), ("inv", F32), "sum"], epsilon=0.0)
        r = 1 / math.sqrt(12.5)
        np.testing.assert_array_equal(out, np.array([[3 * r, 4 * r]], np.float32))
        np.testing.assert_array_equal(mean, [[0.0]])
        np.testing.assert_array_equal(total, [[3.0, 4.0]])

    def test_skip_that_does_not_broadcast(self):
        x, gamma = np.ones((2, 3), np.float32), np.ones(3, np.float32)
        with self.assertRaisesRegex(OracleError, "skip \\[3, 3\\] does not broadcast"):
            contrib("SkipLayerNormalization", {"x": x, "skip": np.ones((3, 3), np.float32), "g": gamma}, ["y"])


class MultiHeadAttentionTest(unittest.TestCase):
    def test_padding_lengths_and_unidirectional_with_filter_value(self):
        # One head of size 1, zero scores: weights follow the mask only.
        # Batch 0 keeps 1 key (lengths [1, 2]); batch 1 is causal over 2 keys.
        q = np.zeros((2, 2, 1), np.float32)
        k = np.zeros((2, 2, 1), np.float32)
        v = np.array([[[2.0], [6.0]], [[2.0], [6.0]]], np.float32)
        lengths = np.array([1, 2], np.int32)
        [y] = contrib("MultiHeadAttention", {"q": q, "k": k, "v": v, "m": lengths}, ["y"],
                      node_inputs=["q", "k", "v", "", "m"], num_heads=1, unidirectional=1)
        np.testing.assert_array_equal(y[:, :, 0], [[2.0, 2.0], [2.0, 4.0]])

    def test_a_filter_value_is_added_not_minus_infinity(self):
        # mask_filter_value -ln 3 on key 1: weights 3/4, 1/4.
        q, k = np.zeros((1, 1, 1), np.float32), np.zeros((1, 2, 1), np.float32)
        v = np.array([[[4.0], [8.0]]], np.float32)
        flags = np.array([[1, 0]], np.int32)
        [y] = contrib("MultiHeadAttention", {"q": q, "k": k, "v": v, "m": flags}, ["y"],
                      node_inputs=["q", "k", "v", "", "m"], num_heads=1, mask_filter_value=-math.log(3))
        filter_value = float(np.float32(-math.log(3)))
        w = 1 / (1 + math.exp(filter_value))
        self.assertEqual(float(y[0, 0, 0]), float(np.float32(4 * w + 8 * (1 - w))))

    def test_bias_input_is_refused(self):
        x = np.zeros((1, 1, 2), np.float32)
        with self.assertRaisesRegex(OracleError, "bias"):
            contrib("MultiHeadAttention", {"q": x, "k": x, "v": x, "b": np.zeros(6, np.float32)}, ["y"], num_heads=1)


class GroupQueryAttentionTest(unittest.TestCase):
    def test_present_rows_and_the_window(self):
        # Batch of 1, 1 query, 1 kv head of size 1, buffer of 3 rows of which
        # seqlens_k + 1 - 1 = 1 is valid: the new row goes to row 1, row 2 is zero.
        q = np.zeros((1, 1, 1), np.float32)
        k_new, v_new = np.array([[[5.0]]], np.float32), np.array([[[10.0]]], np.float32)
        past_k = np.array([[[[1.0], [7.0], [7.0]]]], np.float32)
        past_v = np.array([[[[2.0], [7.0], [7.0]]]], np.float32)
        inputs = {"q": q, "k": k_new, "v": v_new, "pk": past_k, "pv": past_v, "seq": np.array([1], np.int32),
                  "total": np.array(2, np.int32)}
        y, present_k, present_v = contrib("GroupQueryAttention", inputs, ["y", "pk_out", "pv_out"], num_heads=1,
                                          kv_num_heads=1)
        np.testing.assert_array_equal(present_k[0, 0, :, 0], [1.0, 5.0, 0.0])
        np.testing.assert_array_equal(present_v[0, 0, :, 0], [2.0, 10.0, 0.0])
        self.assertEqual(float(y[0, 0, 0]), 6.0)  # zero scores: the mean of values 2 and 10
        [y, _, _] = contrib("GroupQueryAttention", inputs, ["y", "pk_out", "pv_out"], num_heads=1, kv_num_heads=1,
                            local_window_size=1)
        self.assertEqual(float(y[0, 0, 0]), 10.0)  # a window of 1 keeps the query's own key

    def test_seqlens_outside_the_buffer_are_refused(self):
        x = np.zeros((1, 1, 1), np.float32)
        inputs = {"q": x, "k": x, "v": x, "pk": np.zeros((1, 1, 2, 1), np.float32),
                  "pv": np.zeros((1, 1, 2, 1), np.float32), "seq": np.array([5], np.int32),
                  "total": np.array(6, np.int32)}
        with self.assertRaisesRegex(OracleError, "batch entry 0"):
            contrib("GroupQueryAttention", inputs, ["y"], num_heads=1, kv_num_heads=1)


class PagedAttentionTest(unittest.TestCase):
    def test_writes_go_to_table_slots_and_reads_stop_at_the_token(self):
        # 2 blocks of 2 slots, 1 head of size 1. One sequence with 1 cached
        # key whose table is [1, 0]: position j lives in slot 2 * table[j // 2] + j % 2.
        # Two new tokens at positions 1 and 2: slots 3 and 0.
        query = np.zeros((2, 1), np.float32)
        key = np.array([[1.0], [2.0]], np.float32)
        value = np.array([[10.0], [20.0]], np.float32)
        key_cache = np.zeros((2, 2, 1, 1), np.float32)
        value_cache = np.full((2, 2, 1, 1), -1.0, np.float32)
        value_cache[1, 0, 0, 0] = 4.0  # slot 2: position 0, the cached key
        inputs = {"q": query, "k": key, "v": value, "kc": key_cache, "vc": value_cache,
                  "cum": np.array([0, 2], np.int32), "past": np.array([1], np.int32),
                  "table": np.array([[1, 0]], np.int32)}
        y, kc, vc = contrib("PagedAttention", inputs, ["y", "kc_out", "vc_out"], num_heads=1, kv_num_heads=1)
        np.testing.assert_array_equal(vc.reshape(-1), [20.0, -1.0, 4.0, 10.0])
        np.testing.assert_array_equal(kc.reshape(-1), [2.0, 0.0, 0.0, 1.0])
        # Zero scores: token 0 averages positions 0-1 (4, 10), token 1 positions 0-2 (4, 10, 20).
        np.testing.assert_allclose(y[:, 0], [7.0, 34 / 3], rtol=1e-7)

    def test_two_tokens_on_one_slot_are_refused(self):
        x = np.zeros((2, 1), np.float32)
        cache = np.zeros((1, 2, 1, 1), np.float32)
        inputs = {"q": x, "k": x, "v": x, "kc": cache, "vc": cache, "cum": np.array([0, 1, 2], np.int32),
                  "past": np.array([0, 0], np.int32), "table": np.array([[0], [0]], np.int32)}
        with self.assertRaisesRegex(OracleError, "write the same cache slot"):
            contrib("PagedAttention", inputs, ["y"], num_heads=1, kv_num_heads=1)


if __name__ == "__main__":
    unittest.main()
