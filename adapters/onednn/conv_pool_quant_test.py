#!/usr/bin/env python3
"""Cases of the oneDNN conv, pool and quantized families that the node
corpus lacks: Conv and ConvTranspose in bfloat16 and float16, 1-D and 3-D,
with groups, dilations, asymmetric pads, SAME_LOWER and output_padding;
MaxPool on int8 and uint8 and with dilations, AveragePool with ceil_mode in
16-bit floats, the global pools on 3-D images; MatMulInteger and
QLinearMatMul with batch broadcasting, mixed int8/uint8 operands, per-column
b_scale and long dot products (many results near a rounding boundary).
Each case is written with `parity expect` (the reference's outputs) and run
with `parity run --adapter onednn`; the test asserts PASS and the placement
(oneDNN for what the lowering claims, the reference for what it refuses).

  conv_pool_quant_test.py [--parity build/parity]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARITY = os.path.join(ROOT, "build", "parity")
F32, F16, BF16 = np.float32, np.float16, ml_dtypes.bfloat16


def write_case(root: str, name: str, node: onnx.NodeProto, inputs: dict, opset: int) -> str:
    """inputs: name -> array, in the node's order (absent ones left out of the node by the caller)."""
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                    for n, a in inputs.items()]
    graph_outputs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in node.output if o]
    graph = helper.make_graph([node], name, graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    case_dir = os.path.join(root, name)
    data = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (n, a) in enumerate(inputs.items()):
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    subprocess.run([PARITY, "expect", case_dir], check=True, capture_output=True)
    return case_dir


def run_onednn(case_dir: str, out: str) -> dict:
    subprocess.run([PARITY, "run", "--adapter", "onednn", "--cases", case_dir, "--out", out, "--fresh", "--jobs", "1",
                    "--progress", "quiet"], check=False, capture_output=True)
    with open(os.path.join(out, "results.jsonl")) as f:
        return json.loads(f.readline())


class ConvPoolQuantTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="onednn-conv-")
        self.rng = np.random.default_rng(11)

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, name, node, inputs, opset=22, placement=None):
        case_dir = write_case(self.tmp.name, name, node, inputs, opset)
        result = run_onednn(case_dir, os.path.join(self.tmp.name, "run-" + name))
        self.assertEqual(result["state"], "PASS", f"{name}: {result.get('message', '')}")
        self.assertEqual(result["placement"], placement or {"cpu": 1}, name)

    def normal(self, shape, dtype):
        return self.rng.standard_normal(shape).astype(dtype)

    def ints(self, shape, dtype):
        info = np.iinfo(dtype)
        return self.rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)

    # Conv and ConvTranspose.

    def test_conv_2d_group_dilation_asymmetric_pads_16_bit(self):
        for dtype in (BF16, F16, F32):
            node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, dilations=[2, 1], strides=[1, 2],
                                    pads=[1, 0, 2, 1])
            self.check(f"conv2d_{np.dtype(dtype).name}", node,
                       {"x": self.normal((2, 4, 9, 8), dtype), "w": self.normal((6, 2, 3, 3), dtype),
                        "b": self.normal((6,), dtype)})

    def test_conv_3d_same_lower_and_1d_valid(self):
        node = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER", strides=[2, 1, 2])
        self.check("conv3d_same_lower", node, {"x": self.normal((1, 3, 5, 6, 7), F32),
                                                "w": self.normal((4, 3, 2, 3, 2), F32)})
        node = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="VALID", strides=[3])
        self.check("conv1d_valid", node, {"x": self.normal((2, 16, 20), F16), "w": self.normal((8, 16, 4), F16)})

    def test_conv_transpose_group_output_padding_16_bit(self):
        for dtype in (BF16, F16):
            node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=2, strides=[2, 3],
                                    dilations=[1, 2], pads=[1, 0, 2, 2], output_padding=[1, 2])
            self.check(f"convtranspose_{np.dtype(dtype).name}", node,
                       {"x": self.normal((1, 4, 5, 4), dtype), "w": self.normal((4, 3, 3, 2), dtype),
                        "b": self.normal((6,), dtype)})

    def test_conv_transpose_output_shape_and_past_end_pad(self):
        for size, placement in ((10, {"cpu": 1}), (12, {"reference": 1})):  # 12: a negative begin pad, refused
            node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2], output_shape=[size],
                                    auto_pad="SAME_UPPER")
            self.check(f"convtranspose_output_shape_{size}", node, {"x": self.normal((1, 2, 5), F32),
                                                                     "w": self.normal((2, 3, 3), F32)},
                       placement=placement)
        # output_padding beyond the end pad: less than no padding on the right.
        node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 3], output_padding=[2, 1])
        self.check("convtranspose_past_end_pad", node, {"x": self.normal((1, 2, 3, 3), F32),
                                                         "w": self.normal((2, 2, 2, 2), F32)})

    # Pools.

    def test_maxpool_int8_ceil_and_dilations(self):
        for dtype in (np.int8, np.uint8):
            node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
                                    ceil_mode=1)
            self.check(f"maxpool_ceil_{np.dtype(dtype).name}", node, {"x": self.ints((2, 3, 8, 7), dtype)})
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], dilations=[2, 1, 2], pads=[1] * 6)
        self.check("maxpool3d_dilations_bf16", node, {"x": self.normal((1, 2, 6, 5, 6), BF16)})

    def test_maxpool_indices_is_refused(self):
        node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])
        self.check("maxpool_indices", node, {"x": self.normal((1, 1, 4, 4), F32)}, placement={"reference": 1})

    def test_averagepool_ceil_and_include_pad(self):
        for dtype in (F16, BF16):
            node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                    pads=[1, 1, 1, 1], ceil_mode=1)
            self.check(f"averagepool_ceil_{np.dtype(dtype).name}", node, {"x": self.normal((1, 3, 8, 8), dtype)})
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3], strides=[2], pads=[2, 1],
                                count_include_pad=1)
        self.check("averagepool_include_pad", node, {"x": self.normal((2, 3, 10), F32)})
        # A ceil_mode window past the end pad with count_include_pad: refused (ONNX and oneDNN divide differently).
        node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3], strides=[2], count_include_pad=1,
                                ceil_mode=1)
        self.check("averagepool_include_pad_ceil", node, {"x": self.normal((1, 1, 8), F32)},
                   placement={"reference": 1})

    def test_global_pools_3d(self):
        for op in ("GlobalAveragePool", "GlobalMaxPool"):
            for dtype in (F32, F16):
                node = helper.make_node(op, ["x"], ["y"])
                self.check(f"{op}_{np.dtype(dtype).name}", node, {"x": self.normal((2, 3, 4, 5, 6), dtype)})

    # Quantized matrix products.

    def test_matmulinteger_mixed_types_broadcast(self):
        node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
        self.check("matmulinteger_s8_u8", node,
                   {"a": self.ints((2, 5, 6, 40), np.int8), "b": self.ints((5, 40, 7), np.uint8),
                    "az": np.array(-3, np.int8), "bz": np.array([131], np.uint8)}, opset=10)
        node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
        self.check("matmulinteger_u8_s8_no_zero_points", node,
                   {"a": self.ints((6, 33), np.uint8), "b": self.ints((33, 4), np.int8)}, opset=10)

    def test_qlinearmatmul_per_column_scale_long_k(self):
        for a_type, b_type in ((np.uint8, np.uint8), (np.int8, np.int8)):
            node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
            inputs = {"a": self.ints((3, 8, 96), a_type), "as": np.array(0.02, F32),
                      "az": np.array(np.iinfo(a_type).max // 2, a_type),
                      "b": self.ints((96, 10), b_type), "bs": self.rng.uniform(0.001, 0.01, 10).astype(F32),
                      "bz": np.array(np.iinfo(b_type).max // 3, b_type), "ys": np.array(0.7, F32),
                      "yz": np.array(np.iinfo(a_type).max // 4, a_type)}
            self.check(f"qlinearmatmul_per_column_{np.dtype(a_type).name}", node, inputs, opset=21)

    def test_convinteger_grouped_per_channel_zero_points(self):
        for x_type, w_type in ((np.int8, np.int8), (np.uint8, np.uint8), (np.uint8, np.int8)):
            node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2, strides=[2, 1],
                                    dilations=[1, 2], pads=[1, 2, 0, 1])
            inputs = {"x": self.ints((2, 4, 7, 9), x_type), "w": self.ints((6, 2, 3, 2), w_type),
                      "xz": np.array(np.iinfo(x_type).max // 3, x_type), "wz": self.ints((6,), w_type)}
            self.check(f"convinteger_{np.dtype(x_type).name}_{np.dtype(w_type).name}", node, inputs, opset=10)

    def test_qlinearconv_bias_per_channel_scale(self):
        for y_type in (np.uint8, np.int8):
            node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                                    auto_pad="SAME_UPPER", strides=[2, 2])
            inputs = {"x": self.ints((1, 8, 9, 9), np.uint8), "xs": np.array(0.05, F32), "xz": np.array(120, np.uint8),
                      "w": self.ints((5, 8, 3, 3), np.uint8), "ws": self.rng.uniform(0.001, 0.01, 5).astype(F32),
                      "wz": self.ints((5,), np.uint8), "ys": np.array(0.3, F32),
                      "yz": np.array(np.iinfo(y_type).max // 2, y_type),
                      "b": self.rng.integers(-5000, 5000, 5).astype(np.int32)}
            self.check(f"qlinearconv_{np.dtype(y_type).name}", node, inputs, opset=10)

    def qdq_matmul_case(self, name, with_quantize, a_type=np.uint8, w_type=np.int8):
        """DequantizeLinear(a), DequantizeLinear(w, per column) -> MatMul [-> QuantizeLinear]."""
        nodes = [helper.make_node("DequantizeLinear", ["aq", "as", "az"], ["a"]),
                 helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=1),
                 helper.make_node("MatMul", ["a", "w"], ["y" if with_quantize else "out"])]
        inputs = {"aq": self.ints((2, 5, 64), a_type), "as": np.array(0.031, F32), "az": np.array(17, a_type),
                  "wq": self.ints((64, 24), w_type), "ws": self.rng.uniform(0.002, 0.02, 24).astype(F32),
                  "wz": np.zeros(24, w_type)}  # per-axis scale: the zero point takes its shape
        if with_quantize:
            nodes.append(helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["out"]))
            inputs.update({"ys": np.array(0.37, F32), "yz": np.array(-4, np.int8)})
        graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                        for n, a in inputs.items()]
        graph = helper.make_graph(nodes, name, graph_inputs,
                                  [helper.make_tensor_value_info("out", TensorProto.UNDEFINED, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
        case_dir = os.path.join(self.tmp.name, name)
        os.makedirs(os.path.join(case_dir, "test_data_set_0"))
        onnx.save(model, os.path.join(case_dir, "model.onnx"))
        for k, (n, a) in enumerate(inputs.items()):
            with open(os.path.join(case_dir, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        subprocess.run([PARITY, "expect", case_dir], check=True, capture_output=True)
        return run_onednn(case_dir, os.path.join(self.tmp.name, "run-" + name))

    def test_qdq_matmul_region(self):
        result = self.qdq_matmul_case("qdq_matmul_float_out", with_quantize=False)
        self.assertEqual(result["state"], "PASS", result.get("message", ""))
        self.assertEqual(result["placement"], {"cpu": 3})
        result = self.qdq_matmul_case("qdq_matmul_quantized_out", with_quantize=True)
        self.assertEqual(result["state"], "PASS", result.get("message", ""))
        self.assertEqual(result["placement"], {"cpu": 4})

    def resize_case(self, name, x, sizes, placement=None, **attrs):
        """Resize with `sizes` as an initializer (known at creation, as the lowering needs)."""
        node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
        graph = helper.make_graph([node], name, [helper.make_tensor_value_info(
            "x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
            [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
            initializer=[numpy_helper.from_array(np.array(sizes, np.int64), "sizes")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
        case_dir = os.path.join(self.tmp.name, name)
        os.makedirs(os.path.join(case_dir, "test_data_set_0"))
        onnx.save(model, os.path.join(case_dir, "model.onnx"))
        with open(os.path.join(case_dir, "test_data_set_0", "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        subprocess.run([PARITY, "expect", case_dir], check=True, capture_output=True)
        result = run_onednn(case_dir, os.path.join(self.tmp.name, "run-" + name))
        self.assertEqual(result["state"], "PASS", f"{name}: {result.get('message', '')}")
        self.assertEqual(result["placement"], placement or {"cpu": 1}, name)

    def test_resize_nearest(self):
        # Upsampling by 12/5 and 8/4: no coordinate is a tie, so the default round_prefer_floor is claimed.
        self.resize_case("resize_nearest_up", self.normal((1, 2, 4, 5), F32), [1, 2, 8, 12])
        self.resize_case("resize_nearest_up_u8", self.ints((2, 3, 4, 5), np.uint8), [2, 3, 8, 10],
                         nearest_mode="round_prefer_ceil")
        # Downsampling by 2: every coordinate is a tie; oneDNN rounds up, as round_prefer_ceil does.
        self.resize_case("resize_nearest_down_ceil", self.normal((1, 1, 8, 6), F16), [1, 1, 4, 3],
                         nearest_mode="round_prefer_ceil")
        self.resize_case("resize_nearest_down_floor", self.normal((1, 1, 8, 6), F32), [1, 1, 4, 3],
                         placement={"reference": 1})

    def test_resize_linear(self):
        for dtype in (F32, BF16):
            self.resize_case(f"resize_linear_{np.dtype(dtype).name}", self.normal((2, 3, 5, 7), dtype),
                             [2, 3, 9, 4], mode="linear")
        self.resize_case("resize_linear_3d_pytorch", self.normal((1, 2, 3, 4, 5), F32), [1, 2, 6, 3, 7],
                         mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
        self.resize_case("resize_linear_align_corners", self.normal((1, 1, 4, 4), F32), [1, 1, 7, 7],
                         mode="linear", coordinate_transformation_mode="align_corners", placement={"reference": 1})


def main() -> int:
    global PARITY
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parity", default=PARITY)
    args, rest = parser.parse_known_args()
    PARITY = os.path.abspath(args.parity)
    return 0 if unittest.main(argv=[sys.argv[0]] + rest, exit=False).result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
