"""Tests of the numpy oracle's rounding from double (values.py)."""
import unittest

import ml_dtypes
import numpy as np
from onnx import TensorProto

import oracle_testing  # noqa: F401 - puts the oracle's folder on sys.path
from values import FLOAT_FORMATS, OracleError, Tensor, from_numpy, round_to_format, rounded, to_numpy

F32, F16, BF16 = (FLOAT_FORMATS[t] for t in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16))
E4M3, E5M2 = FLOAT_FORMATS[TensorProto.FLOAT8E4M3FN], FLOAT_FORMATS[TensorProto.FLOAT8E5M2]


def near_ties(rng, storage, count):
    """Doubles at, just above and just below midpoints between neighbours of
    `storage`, over many binades (subnormals and the overflow edge included)."""
    info = np.finfo(storage)
    unsigned = np.uint16 if info.bits == 16 else np.uint32
    bits = rng.integers(0, np.iinfo(unsigned).max, count).astype(unsigned)
    lower = bits.view(storage)
    lower = lower[np.isfinite(lower)].astype(np.float64)
    upper = np.nextafter(lower.astype(storage), np.array(np.inf, dtype=storage)).astype(np.float64)
    middle = (lower + upper) / 2  # exact in double
    return np.concatenate([middle, np.nextafter(middle, np.inf), np.nextafter(middle, -np.inf),
                           rng.normal(0, 1, count) * 10.0 ** rng.integers(-40, 40, count)])


class RoundToFormatTest(unittest.TestCase):
    def test_float32_and_float16_match_numpys_correctly_rounded_casts(self):
        # numpy converts double to float32 and float16 in one correctly rounded step.
        rng = np.random.default_rng(1)
        for storage, fmt in ((np.float32, F32), (np.float16, F16)):
            with np.errstate(over="ignore"):
                x = near_ties(rng, storage, 20000)
                expected = x.astype(storage).astype(np.float64)
            np.testing.assert_array_equal(round_to_format(x, fmt), expected, err_msg=str(storage))

    def test_bfloat16_ties_go_to_even_from_double(self):
        # bfloat16 keeps 8 significand bits: near 1 the step is 2^-7.
        step = 2.0 ** -7
        self.assertEqual(round_to_format(1 + step / 2, BF16), 1.0)  # tie, 1 is even
        self.assertEqual(round_to_format(1 + 3 * step / 2, BF16), 1 + 2 * step)  # tie, 1 + 2 step is even
        # Just above the tie rounds up: a double-rounding path through float32
        # (1 + 2^-8 + 2^-40 -> float32 1 + 2^-8, a tie -> 1) would give 1.
        self.assertEqual(round_to_format(1 + step / 2 + 2.0 ** -40, BF16), 1 + step)
        self.assertEqual(round_to_format(-(1 + step / 2 + 2.0 ** -40), BF16), -(1 + step))

    def test_subnormals_and_overflow(self):
        self.assertEqual(round_to_format(2.0 ** -24, F16), 2.0 ** -24)  # smallest float16 subnormal
        self.assertEqual(round_to_format(2.0 ** -25, F16), 0.0)  # a tie with 0: to even
        self.assertEqual(round_to_format(1.5 * 2.0 ** -25, F16), 2.0 ** -24)
        self.assertEqual(round_to_format(65519.99, F16), 65504.0)
        self.assertEqual(round_to_format(65520.0, F16), np.inf)  # the tie above the largest goes to inf
        self.assertEqual(round_to_format(-1e300, BF16), -np.inf)
        self.assertTrue(np.isnan(round_to_format(np.nan, F32)))
        self.assertEqual(np.signbit(round_to_format(-1e-60, F32)), True)  # -0 keeps its sign

    def test_float8_overflow_rules(self):
        # e4m3fn: 448 is the largest; [x] is x rounded to 3 mantissa bits.
        self.assertEqual(round_to_format(464.0, E4M3, "ieee"), 448.0)  # tie between 448 and 480: to even
        self.assertTrue(np.isnan(round_to_format(470.0, E4M3, "ieee")))  # [x] = 480 > 448, no inf: NaN
        self.assertEqual(round_to_format(470.0, E4M3, "saturate"), 448.0)
        self.assertEqual(round_to_format(-np.inf, E4M3, "saturate"), -448.0)
        # e5m2: 57344 is the largest, its step 8192; the tie 61440 goes to even 65536 > max.
        self.assertEqual(round_to_format(61439.0, E5M2, "ieee"), 57344.0)
        self.assertEqual(round_to_format(61440.0, E5M2, "ieee"), np.inf)
        self.assertEqual(round_to_format(-61440.0, E5M2, "saturate"), -57344.0)
        # Each agrees with ml_dtypes' own encoding of the value.
        for value in (448.0, -0.0625, 2.0 ** -9):
            self.assertEqual(float(np.float64(value).astype(ml_dtypes.float8_e4m3fn)),
                             round_to_format(value, E4M3))


class TensorTest(unittest.TestCase):
    def test_round_trip_keeps_types(self):
        for array in (np.array([1.5, -2.25], np.float16), np.array([1, -8], ml_dtypes.int4),
                      np.array([0.5], ml_dtypes.bfloat16), np.array([True, False]), np.array([7], np.int64)):
            tensor = from_numpy(array)
            out = to_numpy(tensor)
            self.assertEqual(out.dtype, array.dtype)
            np.testing.assert_array_equal(out, array)

    def test_rounded_rounds_floats_only(self):
        self.assertEqual(rounded(Tensor(np.array(1 + 2.0 ** -12), TensorProto.FLOAT16)).data, 1.0)
        self.assertEqual(rounded(Tensor(np.array(5), TensorProto.INT64)).data, 5)

    def test_unknown_numpy_type_is_unsupported(self):
        with self.assertRaises(OracleError) as raised:
            from_numpy(np.array([1 + 2j]))
        self.assertTrue(raised.exception.unsupported)


if __name__ == "__main__":
    unittest.main()
