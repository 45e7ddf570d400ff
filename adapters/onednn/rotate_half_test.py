#!/usr/bin/env python3
"""The oneDNN region of rotate_half.cc: the rotary embedding written as
Mul, Split, Neg, Concat, Mul, Add, run as one kernel. Each case is written
here, its expected outputs by the reference (`parity expect`), then run with
`parity run --adapter onednn`: every case must PASS, a fused case with its six
nodes as one kernel on the device (also with --no-fallback), and the
patterns the region must not take (halves concatenated the other way, an
intermediate that is also a graph output) must still run, node by node."""
import os
import sys
import tempfile
import unittest

from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eltwise_test import ADAPTER_BUILT, DTYPES, data, expect_and_run_all_pass, run, write_case  # noqa: E402


def rotate_half(x, cos, sin, y, opset, split_first=False, swapped=False, concat=("neg", "x1"), tag=""):
    """The six nodes; split_first puts the Split before x * cos, swapped
    writes every Mul and the Add with their operands exchanged; `tag`
    prefixes the intermediate values' names (two rotations in one graph)."""
    x1, x2, xc, neg, r, rs = (tag + n for n in ("x1", "x2", "xc", "neg", "r", "rs"))
    split = (helper.make_node("Split", [x], [x1, x2], axis=-1, num_outputs=2) if opset >= 18
             else helper.make_node("Split", [x], [x1, x2], axis=-1))
    mul_cos = helper.make_node("Mul", [cos, x] if swapped else [x, cos], [xc])
    rest = [helper.make_node("Neg", [x2], [neg]),
            helper.make_node("Concat", [tag + c for c in concat], [r], axis=-1),
            helper.make_node("Mul", [sin, r] if swapped else [r, sin], [rs]),
            helper.make_node("Add", [rs, xc] if swapped else [xc, rs], [y])]
    return [split, mul_cos] + rest if split_first else [mul_cos, split] + rest


def write_corpus(root):
    """(case name, fused): fused cases must make one kernel, all on the device."""
    cases = []
    for dtype in DTYPES:
        elem = DTYPES[dtype][1]

        def x(name, shape, special=False):
            return data(name, dtype, shape, special=special, low=-1.0, high=1.0)

        def case(name, fused, nodes, shapes, outputs=None, opset=21, special=False):
            inputs = [("x", x(name + "x", shapes[0], special=special), None), ("cos", x(name + "cos", shapes[1]), None),
                      ("sin", x(name + "sin", shapes[2]), None)]
            write_case(root, name, nodes, inputs, outputs or [("y", elem)], opset=opset)
            cases.append((name, fused))

        heads = [[1, 4, 8, 16], [1, 1, 8, 16], [1, 1, 8, 16]]  # [batch, heads, seq, size], cos and sin per position
        # Special values in float32, whose arithmetic the region keeps rounding for rounding.
        case(f"rotate_half_{dtype}", True, rotate_half("x", "cos", "sin", "y", 21), heads, special=dtype == "float32")
        case(f"rotate_half_split_first_swapped_{dtype}", True,
             rotate_half("x", "cos", "sin", "y", 21, split_first=True, swapped=True), heads)
        case(f"rotate_half_opset13_{dtype}", True, rotate_half("x", "cos", "sin", "y", 13), heads, opset=13)
        case(f"rotate_half_trig_broadcast_{dtype}", True, rotate_half("x", "cos", "sin", "y", 21),
             [[2, 3, 5, 8], [5, 1], [3, 5, 1]])
        case(f"rotate_half_other_way_not_fused_{dtype}", False,
             rotate_half("x", "cos", "sin", "y", 21, concat=("x1", "neg")), heads)
        case(f"rotate_half_neg_read_outside_not_fused_{dtype}", False, rotate_half("x", "cos", "sin", "y", 21), heads,
             outputs=[("y", elem), ("neg", elem)])
    return cases


@unittest.skipUnless(ADAPTER_BUILT, "the oneDNN adapter is not built")
class OneDnnRotateHalfTest(unittest.TestCase):
    maxDiff = None

    def test_rotate_half_is_one_kernel_and_passes(self):
        with tempfile.TemporaryDirectory(prefix="parity-onednn-rotate-half-test-") as tmp:
            corpus = os.path.join(tmp, "cases")
            cases = write_corpus(corpus)
            rows = expect_and_run_all_pass(self, corpus, [name for name, _ in cases], os.path.join(tmp, "run"))
            for name, fused in cases:
                row = rows[name]
                kernels = row["kernels_compiled"] + row["kernels_deferred"]
                if fused:
                    self.assertEqual(list(row["placement"]), ["cpu"], name)
                    self.assertEqual(kernels, 1, name)
                else:
                    # The Split has no lowering of its own: it runs on the reference.
                    self.assertIn("reference", row["placement"], name)
                    self.assertGreater(kernels, 1, name)
            # Fused, nothing is left to fall back.
            fused_only = os.path.join(tmp, "fused")
            os.makedirs(fused_only)
            for name, fused in cases:
                if fused:
                    os.symlink(os.path.join(corpus, name), os.path.join(fused_only, name))
            rows, proc = run(fused_only, os.path.join(tmp, "run_no_fallback"), "--no-fallback")
            self.assertEqual({r["state"] for r in rows.values()}, {"PASS"}, proc.stdout + proc.stderr)


if __name__ == "__main__":
    unittest.main()
