#!/usr/bin/env python3
"""The oneDNN region of matmul.cc: a MatMul or Gemm with the bias Add and the
activation that follow it, run as one matmul primitive with post-ops. Each
case is written here, its expected outputs by the reference (`parity
expect`), then run with `parity run --adapter onednn --no-fallback`: every
case must PASS on the device, and the chains the region must not take (Relu,
a bias that widens the product, a product read twice, a Sigmoid whose
output is read elsewhere) must still run, their nodes lowered one by one.
SiLU (x * Sigmoid(x)) and a gating Mul after it are among the post-ops."""
import os
import sys
import tempfile
import unittest

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eltwise_test import ADAPTER_BUILT, DTYPES, data, expect_and_run_all_pass, write_case  # noqa: E402


def write_corpus(root):
    """(case name, how many nodes the region folds into one kernel, or 0 for no region)."""
    cases = []

    def case(name, fused, nodes, inputs, outputs, opset=22, kernels=1):
        """kernels: how many the case's nodes make when the region is taken."""
        write_case(root, name, nodes, inputs, outputs, opset=opset)
        cases.append((name, fused, kernels))

    for dtype in DTYPES:
        elem = DTYPES[dtype][1]

        def x(name, shape, special=False):
            return data(name, dtype, shape, special=special, low=-1.0, high=1.0)

        name = f"matmul_bias_tanh_{dtype}"
        case(name, 3, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["p", "c"], ["q"]),
                       helper.make_node("Tanh", ["q"], ["y"])],
             [("a", x(name + "a", [4, 32], special=True), None), ("b", x(name + "b", [32, 16]), None),
              ("c", x(name + "c", [16]), None)], [("y", elem)])
        name = f"matmul_bias_first_column_{dtype}"
        case(name, 2, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["c", "p"], ["y"])],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None), ("c", x(name + "c", [4, 1]), None)],
             [("y", elem)])
        name = f"matmul_batched_bias_sigmoid_{dtype}"
        case(name, 3, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["p", "c"], ["q"]),
                       helper.make_node("Sigmoid", ["q"], ["y"])],
             [("a", x(name + "a", [2, 4, 32]), None), ("b", x(name + "b", [32, 16]), None),
              ("c", x(name + "c", [1, 4, 16]), None)], [("y", elem)])
        name = f"matmul_gelu_tanh_{dtype}"
        case(name, 2, [helper.make_node("MatMul", ["a", "b"], ["p"]),
                       helper.make_node("Gelu", ["p"], ["y"], approximate="tanh")],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None)], [("y", elem)])
        name = f"gemm_c_leakyrelu_{dtype}"
        case(name, 2, [helper.make_node("Gemm", ["a", "b", "c"], ["p"], transB=1, alpha=0.5),
                       helper.make_node("LeakyRelu", ["p"], ["y"], alpha=0.2)],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [16, 32]), None), ("c", x(name + "c", [16]), None)],
             [("y", elem)])
        name = f"gemm_bias_swish_{dtype}"
        case(name, 3, [helper.make_node("Gemm", ["a", "b"], ["p"], transA=1), helper.make_node("Add", ["p", "c"], ["q"]),
                       helper.make_node("Swish", ["q"], ["y"], alpha=1.5)],
             [("a", x(name + "a", [32, 4]), None), ("b", x(name + "b", [32, 16]), None), ("c", x(name + "c", [1, 16]), None)],
             [("y", elem)], opset=24)
        # SiLU written as x * Sigmoid(x), then the gate of a SwiGLU layer:
        # one region, beside the gate's own MatMul.
        name = f"matmul_silu_gate_{dtype}"
        case(name, 4, [helper.make_node("MatMul", ["a", "w1"], ["p"]), helper.make_node("Sigmoid", ["p"], ["s"]),
                       helper.make_node("Mul", ["p", "s"], ["silu"]), helper.make_node("MatMul", ["a", "w3"], ["g"]),
                       helper.make_node("Mul", ["silu", "g"], ["y"])],
             [("a", x(name + "a", [1, 8, 32]), None), ("w1", x(name + "w1", [32, 16]), None),
              ("w3", x(name + "w3", [32, 16]), None)], [("y", elem)], kernels=2)
        name = f"matmul_bias_silu_{dtype}"
        case(name, 4, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["c", "p"], ["q"]),
                       helper.make_node("Sigmoid", ["q"], ["s"]), helper.make_node("Mul", ["s", "q"], ["y"])],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None), ("c", x(name + "c", [16]), None)],
             [("y", elem)])
        name = f"matmul_sigmoid_read_twice_not_silu_{dtype}"  # the Sigmoid's output is a graph output too
        case(name, 0, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Sigmoid", ["p"], ["s"]),
                       helper.make_node("Mul", ["p", "s"], ["y"])],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None)], [("y", elem), ("s", elem)])
        if dtype != "bfloat16":  # Relu of bfloat16 is refused (eltwise.cc)
            name = f"matmul_relu_not_fused_{dtype}"
            case(name, 0, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Relu", ["p"], ["y"])],
                 [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None)], [("y", elem)])
        name = f"matmul_widening_bias_not_fused_{dtype}"
        case(name, 0, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Add", ["p", "c"], ["y"])],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None),
              ("c", x(name + "c", [3, 4, 16]), None)], [("y", elem)])
        name = f"matmul_read_twice_not_fused_{dtype}"
        case(name, 0, [helper.make_node("MatMul", ["a", "b"], ["p"]), helper.make_node("Tanh", ["p"], ["t"]),
                       helper.make_node("Sigmoid", ["p"], ["s"]), helper.make_node("Add", ["t", "s"], ["y"])],
             [("a", x(name + "a", [4, 32]), None), ("b", x(name + "b", [32, 16]), None)], [("y", elem)])
        name = f"gemm_k0_is_c_{dtype}"  # sums of nothing: the result is C broadcast
        case(name, 1, [helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5)],
             [("a", x(name + "a", [2, 0]), None), ("b", x(name + "b", [0, 3]), None), ("c", x(name + "c", [3]), None)],
             [("y", elem)])
    return cases


@unittest.skipUnless(ADAPTER_BUILT, "the oneDNN adapter is not built")
class OneDnnMatMulRegionTest(unittest.TestCase):
    maxDiff = None

    def test_regions_pass_on_the_device(self):
        with tempfile.TemporaryDirectory(prefix="parity-onednn-region-test-") as tmp:
            corpus = os.path.join(tmp, "cases")
            cases = write_corpus(corpus)
            rows = expect_and_run_all_pass(self, corpus, [name for name, _, _ in cases], os.path.join(tmp, "run"),
                                           "--no-fallback")
            for name, fused, expected in cases:
                # Every node on the device; a region is one kernel, unfused nodes one each.
                row = rows[name]
                self.assertEqual(list(row["placement"]), ["cpu"], name)
                kernels = row["kernels_compiled"] + row["kernels_deferred"]
                if fused:
                    self.assertEqual(kernels, expected, name)
                else:
                    self.assertGreater(kernels, 1, name)

if __name__ == "__main__":
    unittest.main()
