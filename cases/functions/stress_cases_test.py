"""Checks that the stress and cancellation cases are what their features
claim, on the generated inputs alone (no parity binary): scores that
overflow an unshifted softmax yet stay exact in float32, the fully masked
rows, the long caches, and sums that cancel."""
from __future__ import annotations

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cancel_cases  # noqa: E402
import stress_cases  # noqa: E402

FLOAT16_MAX = 65504.0


def _heads(case, name):
    """Input `name` as [B, H, S, D] in float64."""
    x = stress_cases.input_of(case, name).astype(np.float64)
    if x.ndim == 4:
        return x
    attrs = {a.name: a.i for a in case.nodes[0].attribute}
    heads = attrs["q_num_heads"] if name == "Q" else attrs["kv_num_heads"]
    b, s, hd = x.shape
    return x.reshape(b, s, heads, hd // heads).transpose(0, 2, 1, 3)


def _float_attr(case, name, default):
    for a in case.nodes[0].attribute:
        if a.name == name:
            return a.f
    return default


def _scores(case):
    """Q K^T * scale per head, float64, and the per-channel products."""
    q, k = _heads(case, "Q"), _heads(case, "K")
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    products = q[:, :, :, None, :] * k[:, :, None, :, :]
    scale = _float_attr(case, "scale", 1.0 / np.sqrt(q.shape[-1]))
    return products.sum(-1) * scale, products, q, k


class LargeLogitsTest(unittest.TestCase):
    cases = stress_cases.large_logits()

    def test_scores_are_large_and_products_finite_in_float16(self):
        for case in self.cases:
            scores, products, _, _ = _scores(case)
            self.assertGreater(np.abs(scores).max(), 1e4, case.name)
            self.assertGreater(np.median(np.abs(scores)), 1e3, case.name)
            self.assertLess(np.abs(np.cumsum(products, axis=-1)).max(), FLOAT16_MAX, case.name)

    def test_float32_scores_are_exact(self):
        for case in self.cases:
            scores, _, q, k = _scores(case)
            q32, k32 = q.astype(np.float32), k.astype(np.float32)
            total = np.zeros(scores.shape, np.float32)
            for d in range(q.shape[-1]):  # one channel at a time, each sum rounded to float32
                total = total + q32[:, :, :, None, d] * k32[:, :, None, :, d]
            np.testing.assert_array_equal(total.astype(np.float64), np.einsum("bhsd,bhtd->bhst", q, k), case.name)

    def test_unshifted_float32_exp_overflows(self):
        for case in self.cases:
            scores, _, _, _ = _scores(case)
            cap = _float_attr(case, "softcap", 0.0)
            capped = cap * np.tanh(scores / cap) if cap else scores
            with np.errstate(over="ignore"):
                self.assertTrue(np.isinf(np.exp(capped.astype(np.float32))).any(), case.name)

    def test_bool_mask_row_keeps_only_very_negative_scores(self):
        for case in (c for c in self.cases if "bool_mask" in c.name):
            scores, _, _, _ = _scores(case)
            mask = np.broadcast_to(stress_cases.input_of(case, "attn_mask"), scores.shape)
            kept = scores[:, :, 1, :][mask[:, :, 1, :]]
            self.assertGreater(kept.size, 0, case.name)
            self.assertLess(kept.max(), -1000.0, case.name)


class FullyMaskedRowsTest(unittest.TestCase):
    def test_masks_empty_the_rows_they_claim(self):
        by_label = {}
        for case in stress_cases.fully_masked_rows():
            by_label.setdefault(case.name.rsplit("_", 1)[0], case)
        for name, case in by_label.items():
            inputs = dict(case.inputs)
            if "bool_mask_gqa" in name:
                empty = ~inputs["attn_mask"].any(axis=-1)
                self.assertEqual(sorted(zip(*np.nonzero(empty[:, 0]))), [(0, 0), (1, 1), (1, 3)], name)
            elif "float_mask_neginf" in name:
                empty = np.isneginf(inputs["attn_mask"].astype(np.float64)).all(axis=-1)
                self.assertEqual(int(empty.sum()), 4, name)
            elif "causal_and_bool_mask" in name:
                past = inputs["past_key"].shape[2]
                for i in (0, 1):  # every key the mask keeps lies after i + past
                    self.assertTrue(all(j > i + past for j in np.nonzero(inputs["attn_mask"][i])[0]), name)
            else:  # no key for a batch, or (causal) fewer keys than queries: offset < 0
                q_len = _heads(case, "Q").shape[2]
                causal = any(a.name == "is_causal" and a.i == 1 for a in case.nodes[0].attribute)
                shortest = inputs["nonpad_kv_seqlen"].min()
                self.assertTrue(shortest == 0 or (causal and shortest < q_len), name)


class LongSequencesTest(unittest.TestCase):
    def test_caches_are_long_and_small(self):
        for case in stress_cases.long_sequences():
            inputs = dict(case.inputs)
            past = inputs["past_key"].shape[2] if "past_key" in inputs else 0
            self.assertGreaterEqual(_heads(case, "K").shape[2] + past, 4096, case.name)
            self.assertEqual(_heads(case, "K").shape[-1], 16, case.name)
            self.assertLessEqual(sum(a.nbytes for _, a in case.inputs), 600 * 1024, case.name)


class CancellationTest(unittest.TestCase):
    def test_attention_output_is_small_next_to_values(self):
        for case in cancel_cases.cancelling_attention():
            scores, _, _, _ = _scores(case)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            weights /= weights.sum(-1, keepdims=True)
            v = _heads(case, "V")
            y = weights @ np.repeat(v, weights.shape[1] // v.shape[1], axis=1)
            self.assertLess(np.abs(y).max(), 0.02 * np.abs(v).max(), case.name)
            self.assertGreater(np.abs(y).max(), 1e-3 * np.abs(v).max(), case.name)

    def test_residual_sums_cancel_exactly_in_the_dtype(self):
        cases = cancel_cases.cancelling_skip_normalization() + cancel_cases.cancelling_rms_normalization()
        for case in cases:
            inputs = dict(case.inputs)
            x = inputs.get("input", inputs.get("X"))
            pair = x.astype(np.float64) + inputs["skip"].astype(np.float64)
            # Sterbenz: the pair's sum is a value of the dtype, so the data, not
            # the generator's rounding, carries the cancellation.
            np.testing.assert_array_equal(pair.astype(x.dtype).astype(np.float64), pair, case.name)
            total = pair + inputs["bias"].astype(np.float64)
            self.assertLess(np.median(np.abs(total) / np.abs(x.astype(np.float64))), 0.05, case.name)


if __name__ == "__main__":
    unittest.main()
