"""Tests of the flash kernel against attention written out plainly in double
(loops for the masks, one softmax per row), and of what each fault changes."""

import math
import os
import sys
import unittest

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faults  # noqa: E402
import kernel  # noqa: E402

F32 = np.dtype(np.float32)


def make_problem(rng, dtype=np.float32, batch=2, q_heads=4, kv_heads=2, q_len=5, kv_len=11, past=0, size=8,
                 v_size=6, spread=1.0, **options):
    """Random inputs in [-spread, spread] in `dtype`; options set the Problem's fields."""
    def draw(*shape):
        return (rng.uniform(-spread, spread, shape)).astype(dtype)
    fields = dict(q=draw(batch, q_heads, q_len, size), k=draw(batch, kv_heads, past + kv_len, size),
                  v=draw(batch, kv_heads, past + kv_len, v_size), mask=None, past_length=past, nonpad=None,
                  causal=False, left_window=-1, right_window=-1, scale=1 / math.sqrt(size), softcap=0.0,
                  accumulate=F32, block_queries=2, block_keys=3)
    fields.update(options)
    return kernel.Problem(**fields)


def plain_attention(p: kernel.Problem):
    """(Y, probs) in double, straight from the spec's steps (spec/functions/attention.md)."""
    q, k, v = (x.astype(np.float64) for x in (p.q, p.k, p.v))
    batch, q_heads, q_len, _ = q.shape
    kv_heads, total = k.shape[1], k.shape[2]
    group = q_heads // kv_heads
    y = np.zeros((batch, q_heads, q_len, v.shape[3]))
    probs = np.zeros((batch, q_heads, q_len, total))
    for b in range(batch):
        if p.nonpad is not None and p.past_length == 0:
            offset = int(p.nonpad[b]) - q_len
        else:
            offset = p.past_length
        for h in range(q_heads):
            kh = h // group
            for i in range(q_len):
                row = np.empty(total)
                for j in range(total):
                    score = float(q[b, h, i] @ k[b, kh, j]) * p.scale
                    if p.softcap:
                        score = p.softcap * math.tanh(score / p.softcap)
                    bias = 0.0
                    if p.mask is not None:
                        m = p.mask
                        bias += float(m[b % m.shape[0], h % m.shape[1], i % m.shape[2], j])
                    allowed = not (p.causal and j > i + offset)
                    allowed &= not (p.left_window >= 0 and (i + offset) - j > p.left_window)
                    allowed &= not (p.right_window >= 0 and j - (i + offset) > p.right_window)
                    allowed &= not (p.nonpad is not None and j >= p.nonpad[b])
                    row[j] = score + bias if allowed else -math.inf
                if np.all(np.isneginf(row)):
                    continue  # a fully masked row: zeros
                weights = np.exp(row - row.max())
                probs[b, h, i] = weights / weights.sum()
                y[b, h, i] = probs[b, h, i] @ v[b, kh]
    return y, probs


def with_fault(p: kernel.Problem, fault: str) -> kernel.Problem:
    return kernel.Problem(**{**p.__dict__, "fault": fault})


class CorrectKernelTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def assert_close(self, actual, expected, atol):
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=0, atol=atol)

    def test_float32_blocks_against_plain_double(self):
        mask = self.rng.uniform(-1, 1, (1, 4, 5, 15)).astype(np.float32)
        causal = make_problem(self.rng, past=4, causal=True, softcap=2.0, mask=mask, left_window=6)
        windowed = make_problem(self.rng, past=4, mask=mask[:, :1], left_window=2, right_window=1)
        for p in (causal, windowed):
            expected, _ = plain_attention(p)
            self.assert_close(kernel.flash_forward(p), expected, 1e-6)

    def test_block_size_changes_only_float32_rounding(self):
        p = make_problem(self.rng, kv_len=37, q_len=9)
        results = [kernel.flash_forward(kernel.Problem(**{**p.__dict__, "block_queries": bq, "block_keys": bk}))
                   for bq, bk in ((1, 1), (4, 5), (64, 64))]
        for result in results[1:]:
            self.assert_close(result, results[0].astype(np.float64), 1e-6)

    def test_sixteen_bit_probabilities_are_rounded_before_p_v(self):
        # The bfloat16 kernel differs from the same kernel without the rounding
        # of P by more than float32 rounding, and stays near the double result.
        p = make_problem(self.rng, dtype=ml_dtypes.bfloat16, kv_len=40)
        expected, _ = plain_attention(p)
        rounded = kernel.flash_forward(p)
        original = kernel._round_to
        kernel._round_to = lambda values, storage, acc: values
        try:
            unrounded = kernel.flash_forward(p)
        finally:
            kernel._round_to = original
        self.assertGreater(np.max(np.abs(rounded - unrounded)), 1e-4)
        self.assert_close(unrounded, expected, 1e-5)
        self.assert_close(rounded, expected, 2 ** -7)

    def test_fully_masked_rows_are_zero(self):
        mask = np.zeros((1, 1, 5, 11), dtype=np.float32)
        mask[..., 2, :] = -np.inf
        p = make_problem(self.rng, mask=mask)
        y = kernel.flash_forward(p)
        np.testing.assert_array_equal(y[:, :, 2], 0)
        self.assertTrue(np.all(y[:, :, 3] != 0))
        np.testing.assert_array_equal(kernel.qk_output(p, 3)[:, :, 2], 0)

    def test_large_logits_stay_finite(self):
        # Scores near 3e4: exp without the running maximum overflows float32.
        p = make_problem(self.rng, spread=60.0, scale=1.0)
        expected, _ = plain_attention(p)
        self.assert_close(kernel.flash_forward(p), expected, 1e-3 * np.max(np.abs(p.v)))

    def test_external_cache_offset_and_padding(self):
        p = make_problem(self.rng, q_len=3, kv_len=8, causal=True, nonpad=np.array([5, 2], dtype=np.int64))
        expected, _ = plain_attention(p)
        self.assert_close(kernel.flash_forward(p), expected, 1e-6)
        np.testing.assert_array_equal(kernel.flash_forward(p)[1, :, 0], 0)  # offset -1: row 0 sees no key

    def test_qk_output_modes(self):
        mask = self.rng.uniform(-1, 1, (5, 11)).astype(np.float32)[None, None]
        p = make_problem(self.rng, softcap=0.5, mask=mask, causal=True)
        q, k = p.q.astype(np.float64), np.repeat(p.k.astype(np.float64), 2, axis=1)
        scaled = q @ k.swapaxes(-1, -2) * p.scale
        capped = 0.5 * np.tanh(scaled / 0.5)
        causal = np.where(np.arange(11)[None, :] > np.arange(5)[:, None], -np.inf, 0.0)
        _, probs = plain_attention(p)
        for mode, expected in enumerate((scaled, capped, capped + mask + causal, probs)):
            self.assert_close(kernel.qk_output(p, mode), expected, 1e-6)


class FaultTest(unittest.TestCase):
    """Each fault changes the result where its feature is used, and only there."""

    def setUp(self):
        self.rng = np.random.default_rng(11)

    def differs(self, p, fault):
        correct, faulty = kernel.flash_forward(p), kernel.flash_forward(with_fault(p, fault))
        return not np.array_equal(np.isnan(correct), np.isnan(faulty)) or \
            np.nanmax(np.abs(correct - faulty)) > 1e-6

    def test_scale_off(self):
        self.assertTrue(self.differs(make_problem(self.rng), "scale_off"))

    def test_no_max_subtraction_overflows_only_on_large_logits(self):
        self.assertFalse(self.differs(make_problem(self.rng), "no_max_subtraction"))
        large = make_problem(self.rng, spread=60.0, scale=1.0)
        self.assertFalse(np.all(np.isfinite(kernel.flash_forward(with_fault(large, "no_max_subtraction")))))

    def test_softmax_fp16(self):
        self.assertTrue(self.differs(make_problem(self.rng, kv_len=64), "softmax_fp16"))

    def test_head_mod_only_with_grouped_heads(self):
        self.assertTrue(self.differs(make_problem(self.rng), "head_mod"))
        self.assertFalse(self.differs(make_problem(self.rng, kv_heads=4), "head_mod"))
        self.assertFalse(self.differs(make_problem(self.rng, kv_heads=1), "head_mod"))

    def test_causal_top_left_only_with_an_offset(self):
        self.assertTrue(self.differs(make_problem(self.rng, past=3, causal=True), "causal_top_left"))
        self.assertFalse(self.differs(make_problem(self.rng, q_len=6, kv_len=6, causal=True), "causal_top_left"))

    def test_window_off_by_one_only_with_a_left_window(self):
        self.assertTrue(self.differs(make_problem(self.rng, left_window=2), "window_off_by_one"))
        self.assertFalse(self.differs(make_problem(self.rng, right_window=2), "window_off_by_one"))

    def test_softcap_after_mask_gives_masked_keys_weight(self):
        self.assertTrue(self.differs(make_problem(self.rng, softcap=1.0, causal=True), "softcap_after_mask"))
        self.assertFalse(self.differs(make_problem(self.rng, causal=True), "softcap_after_mask"))

    def test_nan_masked_rows_only_in_fully_masked_rows(self):
        p = make_problem(self.rng, q_len=3, kv_len=8, causal=True, nonpad=np.array([8, 2], dtype=np.int64))
        y = kernel.flash_forward(with_fault(p, "nan_masked_rows"))
        self.assertTrue(np.all(np.isnan(y[1, :, 0])))
        self.assertFalse(np.any(np.isnan(y[0])))
        self.assertTrue(np.all(np.isnan(kernel.qk_output(with_fault(p, "nan_masked_rows"), 3)[1, :, 0])))

    def test_ignore_nonpad(self):
        self.assertTrue(self.differs(make_problem(self.rng, nonpad=np.array([4, 9], dtype=np.int64)),
                                     "ignore_nonpad"))


class SettingsTest(unittest.TestCase):
    def test_faults_from_the_environment(self):
        self.assertEqual(faults.fault_from_environment({}), "")
        self.assertEqual(faults.fault_from_environment({faults.FAULT_VARIABLE: "head_mod"}), "head_mod")
        with self.assertRaisesRegex(faults.SettingError, "PARITY_FLASH_FAULT='head_modulo' is not a known fault"):
            faults.fault_from_environment({faults.FAULT_VARIABLE: "head_modulo"})

    def test_blocks_from_the_environment(self):
        self.assertEqual(faults.blocks_from_environment({}), (32, 32))
        self.assertEqual(faults.blocks_from_environment({faults.BLOCK_KEYS_VARIABLE: "4"}), (32, 4))
        for bad in ("0", "-3", "four"):
            with self.assertRaisesRegex(faults.SettingError, "PARITY_FLASH_BLOCK_QUERIES.*positive integer"):
                faults.blocks_from_environment({faults.BLOCK_QUERIES_VARIABLE: bad})


if __name__ == "__main__":
    unittest.main()
