"""Tests of the numpy oracle's Attention and FlexAttention (ops_attention.py)
on inputs whose softmax weights can be written by hand."""
import math
import unittest

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from oracle_testing import model_of, run_model, run_node
from values import OracleError

F32 = TensorProto.FLOAT


def attention(opset=23, **inputs_and_attrs):
    """Runs Attention on the named inputs (Q, K, V, attn_mask, past_key,
    past_value, nonpad_kv_seqlen), every output asked for."""
    order = ["Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"]
    inputs = {n: inputs_and_attrs.pop(n) for n in order if n in inputs_and_attrs}
    names = [n if n in inputs else "" for n in order]
    while names[-1] == "":
        names.pop()
    outputs = ["Y", "present_key", "present_value", "qk"]
    return run_node("Attention", inputs, outputs, opset=opset, node_inputs=names, **inputs_and_attrs)


def one_head(rows):
    return np.array(rows, dtype=np.float64)[None, None]


class AttentionTest(unittest.TestCase):
    def test_equal_scores_average_the_values(self):
        q = one_head([[1.0, 0.0]])
        k = one_head([[0.0, 1.0], [0.0, -1.0]])  # both scores 0
        v = one_head([[2.0], [4.0]])
        y, present_k, _, qk = attention(Q=q, K=k, V=v)
        self.assertEqual(float(y[0, 0, 0, 0]), 3.0)
        np.testing.assert_array_equal(present_k, k)
        np.testing.assert_array_equal(qk, [[[[0.0, 0.0]]]])

    def test_scores_scale_softcap_and_the_four_qk_modes(self):
        # Scores [ln 3 * 2, 0] * scale 0.5 = [ln 3, 0]; softmax [3/4, 1/4].
        q = one_head([[math.log(3)]])
        k = one_head([[2.0], [0.0]])
        v = one_head([[1.0], [0.0]])
        mask = np.array([[0.0, -1.0]])
        results = [attention(Q=q, K=k, V=v, attn_mask=mask, scale=0.5, softcap=4.0, qk_matmul_output_mode=m)
                   for m in range(4)]
        capped = 4 * math.tanh(math.log(3) / 4)
        weights = np.array([math.exp(capped), math.exp(-1.0)])
        weights /= weights.sum()
        np.testing.assert_allclose(results[0][3][0, 0, 0], [math.log(3), 0.0], rtol=1e-15)
        np.testing.assert_allclose(results[1][3][0, 0, 0], [capped, 0.0], rtol=1e-15)
        np.testing.assert_allclose(results[2][3][0, 0, 0], [capped, -1.0], rtol=1e-15)
        np.testing.assert_allclose(results[3][3][0, 0, 0], weights, rtol=1e-15)
        self.assertAlmostEqual(float(results[0][0][0, 0, 0, 0]), weights[0], places=15)

    def test_causal_offset_is_the_past_length(self):
        # Past 2 and 2 new keys: query 0 sits at position 2 and sees keys 0-2,
        # query 1 at position 3 sees all four. Equal scores: plain averages.
        q = one_head([[0.0], [0.0]])
        k = one_head([[0.0], [0.0]])
        v = one_head([[8.0], [4.0]])
        past_k, past_v = one_head([[0.0], [0.0]]), one_head([[0.0], [2.0]])
        y, present_k, present_v, _ = attention(Q=q, K=k, V=v, past_key=past_k, past_value=past_v, is_causal=1,
                                               qk_matmul_output_mode=3)
        np.testing.assert_allclose(y[0, 0, :, 0], [(0 + 2 + 8) / 3, (0 + 2 + 8 + 4) / 4], rtol=1e-15)
        np.testing.assert_array_equal(present_v[0, 0, :, 0], [0.0, 2.0, 8.0, 4.0])
        self.assertEqual(present_k.shape, (1, 1, 4, 1))

    def test_fully_masked_row_is_zero_in_y_and_probabilities(self):
        q = one_head([[1.0], [1.0]])
        k = one_head([[1.0], [2.0]])
        v = one_head([[5.0], [7.0]])
        mask = np.array([[True, False], [False, False]])
        y, _, _, qk = attention(Q=q, K=k, V=v, attn_mask=mask, qk_matmul_output_mode=3)
        np.testing.assert_array_equal(y[0, 0, :, 0], [5.0, 0.0])
        np.testing.assert_array_equal(qk[0, 0], [[1.0, 0.0], [0.0, 0.0]])

    def test_short_mask_is_padded_with_minus_infinity(self):
        q, k, v = one_head([[0.0]]), one_head([[0.0], [0.0], [0.0]]), one_head([[3.0], [5.0], [100.0]])
        [y, *_] = attention(opset=24, Q=q, K=k, V=v, attn_mask=np.array([[0.0, 0.0]]))
        self.assertEqual(float(y[0, 0, 0, 0]), 4.0)  # key 2 padded out

    def test_grouped_heads_repeat_interleave_in_3d(self):
        # 4 query heads over 2 key/value heads of size 1: heads 0, 1 read kv head 0 (value 10),
        # heads 2, 3 read kv head 1 (value 20). One key, so each weight is 1.
        q = np.zeros((1, 1, 4))
        k = np.zeros((1, 1, 2))
        v = np.array([[[10.0, 20.0]]])
        [y, present_k, *_] = attention(Q=q, K=k, V=v, q_num_heads=4, kv_num_heads=2)
        np.testing.assert_array_equal(y, [[[10.0, 10.0, 20.0, 20.0]]])
        self.assertEqual(present_k.shape, (1, 2, 1, 1))  # present outputs are 4-D

    def test_nonpad_external_cache_offsets_and_windows(self):
        # Cache of 4 keys, 2 valid; 2 queries at positions 0 and 1 (offset 2 - 2).
        q, k = one_head([[0.0], [0.0]]), one_head([[0.0]] * 4)
        v = one_head([[1.0], [3.0], [50.0], [70.0]])
        [y, *_] = attention(opset=24, Q=q, K=k, V=v, nonpad_kv_seqlen=np.array([2], np.int64), is_causal=1)
        np.testing.assert_array_equal(y[0, 0, :, 0], [1.0, 2.0])
        # Opset 25, no cache: left 1, right 0 keeps keys i-1 .. i.
        q3 = one_head([[0.0]] * 3)
        k3, v3 = one_head([[0.0]] * 3), one_head([[1.0], [3.0], [9.0]])
        [y, *_] = attention(opset=25, Q=q3, K=k3, V=v3, left_window_size=1, right_window_size=0)
        np.testing.assert_array_equal(y[0, 0, :, 0], [1.0, 2.0, 6.0])
        [y, *_] = attention(opset=25, Q=q3, K=k3, V=v3, left_window_size=-1, right_window_size=1)
        np.testing.assert_allclose(y[0, 0, :, 0], [2.0, 13 / 3, 13 / 3], rtol=1e-15)

    def test_bad_heads_and_mask_are_named(self):
        with self.assertRaisesRegex(OracleError, "not a multiple"):
            attention(Q=np.zeros((1, 3, 1, 2)), K=np.zeros((1, 2, 1, 2)), V=np.zeros((1, 2, 1, 2)))
        with self.assertRaisesRegex(OracleError, "does not broadcast"):
            attention(Q=one_head([[0.0]]), K=one_head([[0.0]]), V=one_head([[0.0]]), attn_mask=np.zeros((3, 1)))


def _hook_graph(nodes, initializers=()):
    return helper.make_graph(nodes, "hook", [helper.make_tensor_value_info("x", F32, None)],
                             [helper.make_tensor_value_info("y", F32, None)],
                             initializer=[numpy_helper.from_array(a, n) for n, a in initializers])


def flex(q, k, v, **attrs):
    model = model_of([helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **attrs)],
                     {"Q": q, "K": k, "V": v}, ["Y"], opset=26, domains=[("ai.onnx.preview", 1)])
    return run_model(model, {"Q": q, "K": k, "V": v})[0]


class FlexAttentionTest(unittest.TestCase):
    def test_score_mod_adds_a_bias_and_prob_mod_is_not_renormalised(self):
        q = np.zeros((1, 1, 1, 2), np.float32)
        k = np.zeros((1, 1, 2, 2), np.float32)
        v = np.array([[[[1.0], [0.0]]]], np.float32)
        bias = np.array([math.log(3), 0.0], np.float32)  # weights [3/4, 1/4] (bias rounded to float32)
        score_mod = _hook_graph([helper.make_node("Add", ["x", "b"], ["y"])], [("b", bias)])
        prob_mod = _hook_graph([helper.make_node("Mul", ["x", "h"], ["y"])], [("h", np.array(0.5, np.float32))])
        y = flex(q, k, v, score_mod=score_mod, prob_mod=prob_mod)
        b = float(bias[0])
        expected = 0.5 * float(np.float32(math.exp(b) / (math.exp(b) + 1)))
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(float(y[0, 0, 0, 0]), float(np.float32(expected)))

    def test_a_row_masked_by_the_hook_is_nan(self):
        q = np.zeros((1, 1, 1, 1), np.float16)
        k = np.zeros((1, 1, 2, 1), np.float16)
        v = np.ones((1, 1, 2, 1), np.float16)
        score_mod = _hook_graph([helper.make_node("Add", ["x", "m"], ["y"])],
                                [("m", np.array(-np.inf, np.float32))])
        self.assertTrue(np.isnan(flex(q, k, v, score_mod=score_mod)[0, 0, 0, 0]))

    def test_hook_sees_scores_rounded_to_float32(self):
        # Q K^T * scale = 1 + 2^-30 in double; handed to the hook as float32 1,
        # and the hook returns x - 1 = 0 for both keys: equal weights.
        q = np.array([[[[1.0]]]])
        k = np.array([[[[1.0 + 2.0 ** -30], [0.0]]]])
        v = np.array([[[[2.0], [4.0]]]])
        score_mod = _hook_graph([helper.make_node("Sub", ["x", "one"], ["y"])], [("one", np.array(1.0, np.float32))])
        # Key 1's score 0 becomes -1: weights e^0 : e^-1 for keys 0 and 1.
        y = flex(q, k, v, score_mod=score_mod, scale=1.0, softmax_precision=TensorProto.FLOAT)
        w0 = 1 / (1 + math.exp(-1))
        self.assertAlmostEqual(float(y[0, 0, 0, 0]), 2 * w0 + 4 * (1 - w0), places=15)

    def test_hook_of_another_type_is_refused(self):
        q = np.zeros((1, 1, 1, 1), np.float32)
        hook = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "hook",
                                 [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)],
                                 [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
        with self.assertRaisesRegex(OracleError, "softmax precision is FLOAT"):
            flex(q, q, q, score_mod=hook)


if __name__ == "__main__":
    unittest.main()
