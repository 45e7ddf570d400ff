#!/usr/bin/env python3
"""The oneDNN region of projections.cc: sibling MatMuls of one input by
initializer weights, each followed by a Reshape into heads and a Transpose,
run as one kernel (one matmul, one reorder per output). Each case is written
here, its expected outputs by the reference (`parity expect`), then run with
`parity run --adapter onednn --no-fallback`: every case must PASS on the
device; a fused case is one kernel, and the cases the region must not take
(weights that are graph inputs, a lone projection, a Reshape that does not
split the last dim) run node by node. Projections rotated by one "rotate
half" rotary embedding (rotation.h) are one kernel with their rotations;
rotations the region must leave to their own regions (another sin, a
batch before the heads, the unrotated heads read elsewhere) are one kernel
each beside it."""
import os
import sys
import tempfile
import unittest

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eltwise_test import ADAPTER_BUILT, DTYPES, data, expect_and_run_all_pass, write_case  # noqa: E402
from rotate_half_test import rotate_half  # noqa: E402


def projection(a, w, shape, out, perm=(0, 2, 1, 3)):
    return [helper.make_node("MatMul", [a, w], [out + "_p"]), helper.make_node("Reshape", [out + "_p", shape], [out + "_r"]),
            helper.make_node("Transpose", [out + "_r"], [out], perm=list(perm))]


def write_corpus(root):
    """(case name, kernels the case makes)."""
    cases = []
    for dtype in DTYPES:
        elem = DTYPES[dtype][1]

        def x(name, shape):
            return data(name, dtype, shape, special=False, low=-1.0, high=1.0)

        def case(name, kernels, nodes, inputs, initializers, outputs):
            write_case(root, name, nodes, inputs, [(o, elem) for o in outputs], opset=21, initializers=initializers)
            cases.append((name, kernels))

        shapes = [("q_shape", np.array([1, 8, 4, 16], np.int64)), ("kv_shape", np.array([1, 8, 2, 16], np.int64))]
        name = f"qkv_{dtype}"
        case(name, 1, projection("a", "wq", "q_shape", "q") + projection("a", "wk", "kv_shape", "k") +
             projection("a", "wv", "kv_shape", "v"),
             [("a", x(name + "a", [1, 8, 64]), None)],
             [("wq", x(name + "wq", [64, 64])), ("wk", x(name + "wk", [64, 32])), ("wv", x(name + "wv", [64, 32]))] + shapes,
             ["q", "k", "v"])
        name = f"two_projections_other_perm_{dtype}"  # any permutation; A of rank 2
        case(name, 1, projection("a", "wq", "q_shape", "q", perm=(2, 0, 1)) + projection("a", "wk", "k_shape", "k", perm=(2, 0, 1)),
             [("a", x(name + "a", [8, 64]), None)],
             [("wq", x(name + "wq", [64, 64])), ("wk", x(name + "wk", [64, 32])),
              ("q_shape", np.array([8, 4, 16], np.int64)), ("k_shape", np.array([8, 2, 16], np.int64))], ["q", "k"])
        name = f"weights_are_inputs_not_fused_{dtype}"
        case(name, 6, projection("a", "wq", "q_shape", "q") + projection("a", "wk", "kv_shape", "k"),
             [("a", x(name + "a", [1, 8, 64]), None), ("wq", x(name + "wq", [64, 64]), None),
              ("wk", x(name + "wk", [64, 32]), None)], shapes, ["q", "k"])
        name = f"one_projection_not_fused_{dtype}"
        case(name, 3, projection("a", "wq", "q_shape", "q"), [("a", x(name + "a", [1, 8, 64]), None)],
             [("wq", x(name + "wq", [64, 64]))] + shapes[:1], ["q"])
        name = f"reshape_not_a_split_not_fused_{dtype}"  # [1, 8, 64] -> [1, 4, 2, 64] moves rows
        case(name, 6, projection("a", "wq", "q_shape", "q") + projection("a", "wk", "k_shape", "k"),
             [("a", x(name + "a", [1, 8, 64]), None)],
             [("wq", x(name + "wq", [64, 64])), ("wk", x(name + "wk", [64, 64])),
              ("q_shape", np.array([1, 4, 2, 64], np.int64)), ("k_shape", np.array([1, 8, 4, 16], np.int64))], ["q", "k"])
        # q and k rotated (4 and 2 heads), v not: cos and sin per position, [1, 1, seq, size].
        def rotated(name, kernels, a_shape, sin_k="sin", perm=(0, 2, 1, 3), trig=(1, 1, 8, 16), outputs=("q", "k", "v"),
                    v_first=False, cos_from_v=None):
            """v_first: v's projection comes first in the graph (and in the
            MatMuls' order); cos_from_v: cos is the mean of v over its
            heads, its node listed "first" or "last" in the graph."""
            seq = a_shape[-2]
            q_shape = np.array(list(a_shape[:-1]) + [4, 16], np.int64)
            kv_shape = np.array(list(a_shape[:-1]) + [2, 16], np.int64)
            qk = projection("a", "wq", "q_shape", "qh", perm) + projection("a", "wk", "kv_shape", "kh", perm)
            v = projection("a", "wv", "kv_shape", "v", perm)
            nodes = ((v + qk) if v_first else (qk + v)) + (
                rotate_half("qh", "cos", "sin", "q", 21, tag="q_") + rotate_half("kh", "cos", sin_k, "k", 21, tag="k_"))
            inputs = [("a", x(name + "a", list(a_shape)), None), ("sin", x(name + "sin", list(trig)), None)]
            initializers = [("wq", x(name + "wq", [64, 64])), ("wk", x(name + "wk", [64, 32])),
                            ("wv", x(name + "wv", [64, 32])), ("q_shape", q_shape), ("kv_shape", kv_shape)]
            if cos_from_v:
                mean = helper.make_node("ReduceMean", ["v", "head_axis"], ["cos"], keepdims=1)
                nodes = [mean] + nodes if cos_from_v == "first" else nodes + [mean]
                initializers.append(("head_axis", np.array([1], np.int64)))
            else:
                inputs.append(("cos", x(name + "cos", list(trig)), None))
            if sin_k != "sin":
                inputs.append((sin_k, x(name + sin_k, list(trig)), None))
            assert seq == trig[-2]
            case(name, kernels, nodes, inputs, initializers, list(outputs))

        rotated(f"qkv_rotated_{dtype}", 1, (1, 8, 64))
        rotated(f"qkv_rotated_heads_first_{dtype}", 1, (1, 8, 64), perm=(2, 0, 1, 3), trig=(1, 8, 16))
        rotated(f"qkv_rotated_rank2_{dtype}", 1, (8, 64), perm=(1, 0, 2), trig=(8, 16))
        # One row, as at a decode step: the heads are the product's columns, and v a copy.
        rotated(f"qkv_rotated_one_row_{dtype}", 1, (1, 1, 64), trig=(1, 1, 1, 16))
        # v's columns before q's and k's in the graph: the rotated ones are moved first.
        rotated(f"qkv_rotated_v_first_{dtype}", 1, (1, 8, 64), v_first=True)
        # Left to the rotations' own regions: three kernels (four with the mean).
        # cos made from v, an output of the region: taken in, the region would read what it makes,
        # wherever the mean's node is listed (nodes need not come in order).
        rotated(f"qk_cos_from_v_not_merged_{dtype}", 4, (1, 8, 64), cos_from_v="last")
        rotated(f"qk_cos_from_v_listed_first_not_merged_{dtype}", 4, (1, 8, 64), cos_from_v="first")
        rotated(f"qk_other_sin_not_merged_{dtype}", 3, (1, 8, 64), sin_k="sin_k")
        rotated(f"qk_batch_before_heads_not_merged_{dtype}", 3, (2, 8, 64))
        rotated(f"qk_heads_read_elsewhere_not_merged_{dtype}", 3, (1, 8, 64), outputs=("q", "k", "v", "qh"))
    return cases


@unittest.skipUnless(ADAPTER_BUILT, "the oneDNN adapter is not built")
class OneDnnProjectionsTest(unittest.TestCase):
    maxDiff = None

    def test_projections_are_one_kernel_and_pass(self):
        with tempfile.TemporaryDirectory(prefix="parity-onednn-projections-test-") as tmp:
            corpus = os.path.join(tmp, "cases")
            cases = write_corpus(corpus)
            rows = expect_and_run_all_pass(self, corpus, [name for name, _ in cases], os.path.join(tmp, "run"),
                                           "--no-fallback")
            for name, kernels in cases:
                row = rows[name]
                self.assertEqual(list(row["placement"]), ["cpu"], name)
                self.assertEqual(row["kernels_compiled"] + row["kernels_deferred"], kernels, name)


if __name__ == "__main__":
    unittest.main()
