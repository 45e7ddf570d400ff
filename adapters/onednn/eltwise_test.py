#!/usr/bin/env python3
"""The oneDNN lowerings of eltwise.cc, binary.cc and softmax.cc against the
reference, on what ONNX's node tests lack: float16 and bfloat16 inputs,
special values (NaN, infinities, signed zeros, subnormals, overflow),
every broadcast form (either operand, both, a scalar), shapes known only at
the first run, Clip's bound forms, and Cast between the 16-bit floats.
Each case is written here, its expected outputs by `parity expect` (the
reference), then run with `parity run --adapter onednn`: every case must
PASS with every node on the oneDNN device, and each refused operator must
stay on the reference with the reason its lowering gives."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY_DIR = os.environ.get("PARITY_BINARY_DIR", os.path.join(HERE, "../../build"))
PARITY = os.path.join(BINARY_DIR, "parity")
ADAPTER_BUILT = os.path.exists(os.path.join(BINARY_DIR, "adapters", "libparity_adapter_onednn.so"))

DTYPES = {"float32": (np.float32, TensorProto.FLOAT), "float16": (np.float16, TensorProto.FLOAT16),
          "bfloat16": (ml_dtypes.bfloat16, TensorProto.BFLOAT16)}

ELEM_TYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
              "int8": TensorProto.INT8, "uint8": TensorProto.UINT8}

# Values where oneDNN's kernels are most likely to differ from the reference.
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-39, -1e-39, 0.5, -0.5, 1.5, -1.5, 2.5,
           -2.5, 3.5, 1.0, -1.0, 20.0, -20.0, 3.0e38, -3.0e38, 65504.0, 65520.0, -65520.0, 1e-30, 7.0]


def data(name, dtype, shape, special=True, low=-4.0, high=4.0):
    """SPECIAL (when asked) among uniform values from a generator seeded by the case name."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little"))
    count = int(np.prod(shape))
    values = rng.uniform(low, high, count)
    if special and count >= 16:  # a smaller operand, mostly special, would make the output degenerate
        head = np.array(SPECIAL[:count // 2])
        values[:len(head)] = head
        rng.shuffle(values)
    with np.errstate(over="ignore"):
        return values.astype(DTYPES[dtype][0]).reshape(shape)


def write_case(root, name, nodes, inputs, outputs, opset=21, initializers=()):
    """inputs: (name, array, declared dims or None for the array's); outputs: (name, elem_type)."""
    folder = os.path.join(root, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, ELEM_TYPES[str(a.dtype)],
                                       list(a.shape) if dims is None else dims) for n, a, dims in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    # The expected outputs are the reference's (`parity expect`): judged by the policy alone.
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump({"operator": nodes[0].op_type, "source": "reference", "generator": "adapters/onednn/eltwise_test.py"}, f)
    for k, (n, a, _) in enumerate(inputs):
        with open(os.path.join(folder, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


UNARY = [  # (case stem, op, attributes, opset, whether SPECIAL is in the input)
    ("relu", "Relu", {}, 22, True),
    ("leakyrelu", "LeakyRelu", {"alpha": 0.1}, 22, True),
    ("elu", "Elu", {"alpha": 0.7}, 22, True),
    ("selu", "Selu", {}, 22, True),
    ("celu", "Celu", {"alpha": 1.0}, 22, True),
    ("tanh", "Tanh", {}, 22, True),
    ("sigmoid", "Sigmoid", {}, 22, True),
    ("exp", "Exp", {}, 22, True),
    ("sqrt", "Sqrt", {}, 22, True),
    ("round", "Round", {}, 22, True),
    ("abs", "Abs", {}, 22, True),
    ("neg", "Neg", {}, 22, True),
    ("reciprocal", "Reciprocal", {}, 22, True),
    ("gelu_tanh", "Gelu", {"approximate": "tanh"}, 22, True),
    ("hardswish", "HardSwish", {}, 22, True),
    ("swish", "Swish", {"alpha": 0.5}, 24, True),
    ("clip6_attrs", "Clip", {"min": -0.3, "max": 0.1}, 6, True),
    ("clip6_defaults", "Clip", {}, 6, True),  # -+FLT_MAX: infinities are clipped in float32
    ("clip1_min_only", "Clip", {"min": 0.25}, 1, True),
]

# The types a lowering refuses for an operator (write_refused checks the reason):
# Celu's schema is float32 only; oneDNN rounds only float32; a bfloat16
# subnormal result is written as zero, which the exact operators cannot allow.
NOT_LOWERED = {"Celu": ("float16", "bfloat16"), "Round": ("float16", "bfloat16"), "Relu": ("bfloat16",),
               "Abs": ("bfloat16",), "Neg": ("bfloat16",), "Clip": ("bfloat16",), "Max": ("bfloat16",),
               "Min": ("bfloat16",)}

BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]
# (stem, shape of A, shape of B): B broadcast, A broadcast (swapped or read
# with stride 0), both, a scalar A, ranks that differ.
BROADCASTS = [("same", [4, 16], [4, 16]), ("b_row", [4, 16], [1, 16]), ("a_col", [4, 1], [4, 16]),
              ("both", [4, 1, 8], [1, 6, 1]), ("a_scalar", [], [4, 16]), ("b_rank1", [2, 4, 8], [8])]


def write_corpus(root):
    """Every case that must PASS on the oneDNN device; returns their names."""
    names = []

    def case(name, *args, **kwargs):
        write_case(root, name, *args, **kwargs)
        names.append(name)

    for dtype in DTYPES:
        elem = DTYPES[dtype][1]
        for stem, op, attributes, opset, special in UNARY:
            if dtype in NOT_LOWERED.get(op, ()) or (dtype != "float32" and op == "Clip" and opset == 1):
                continue  # refused (write_refused), or float32 only here (Clip-1)
            name = f"{stem}_{dtype}"
            case(name, [helper.make_node(op, ["x"], ["y"], **attributes)], [("x", data(name, dtype, [4, 16]), None)],
                 [("y", elem)], opset=opset)
        # Clip-11 and later: each bound form, including min > max and bounds
        # read at run time; a NaN bound makes every element NaN (on 15
        # elements, below the size where an all-equal output is mistrusted).
        bound = lambda v: np.array(v, dtype=DTYPES[dtype][0])  # noqa: E731
        for stem, lo, hi in (("both", -0.5, 2.0), ("min_only", 0.0, None), ("max_only", None, 1.0),
                             ("min_above_max", 1.0, -1.0), ("nan_min", np.nan, 1.0)):
            if dtype in NOT_LOWERED["Clip"]:
                break
            x = data(f"clip_{stem}_{dtype}", dtype, [3, 5] if stem.startswith("nan") else [4, 16])
            inputs = [("x", x, None)] + ([("lo", bound(lo), None)] if lo is not None else []) + \
                     ([("hi", bound(hi), None)] if hi is not None else [])
            node = helper.make_node("Clip", ["x", "lo" if lo is not None else "", "hi" if hi is not None else ""], ["y"])
            case(f"clip13_{stem}_{dtype}", [node], inputs, [("y", elem)], opset=13)
        for op in BINARY:
            out = TensorProto.BOOL if op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual") else elem
            if dtype in NOT_LOWERED.get(op, ()):
                continue
            for stem, sa, sb in BROADCASTS:
                name = f"{op.lower()}_{stem}_{dtype}"
                a, b = data(name + "a", dtype, sa), data(name + "b", dtype, sb)
                if out == TensorProto.BOOL:  # small integers, so that equal pairs are common
                    a, b = (np.where(np.isfinite(v), np.round(v.astype(np.float32) / 2), v).astype(v.dtype) for v in (a, b))
                if not sa:
                    a = np.array(1.0, dtype=a.dtype)  # a NaN here would make every element NaN
                case(name, [helper.make_node(op, ["a", "b"], ["c"])], [("a", a, None), ("b", b, None)], [("c", out)])
            # Dims known only at the run: the plan is made then, the lowering tried on ones at creation.
            name = f"{op.lower()}_dynamic_{dtype}"
            a, b = data(name + "a", dtype, [3, 1, 5]), data(name + "b", dtype, [4, 1])
            if out == TensorProto.BOOL:
                a, b = (np.round(v.astype(np.float32) / 2).astype(v.dtype) for v in (a, b))
            case(name, [helper.make_node(op, ["a", "b"], ["c"])], [("a", a, ["n", 1, "k"]), ("b", b, ["m", 1])],
                 [("c", out)])
        for stem, opset, axis, shape in (("axis1_opset11", 11, 1, [2, 3, 4]), ("axis0_opset11", 11, 0, [2, 3, 4]),
                                         ("axis1_opset13", 13, 1, [2, 3, 4]), ("last_opset13", 13, -1, [3, 4, 5]),
                                         ("axis0_opset13", 13, 0, [6, 2, 3]), ("length1_opset13", 13, 1, [3, 1, 4])):
            name = f"softmax_{stem}_{dtype}"
            case(name, [helper.make_node("Softmax", ["x"], ["y"], axis=axis)],
                 [("x", data(name, dtype, shape, special=False), None)], [("y", elem)], opset=opset)
        # Rows holding NaN, +inf, -inf, all -inf, a huge value: ONNX's row is
        # NaN throughout where it holds NaN or +inf (on 32 elements, 12 NaN).
        rows = np.array([[np.nan, 1, 2, 3], [np.inf, 1, 2, 3], [-np.inf, 1, 2, 3], [np.inf, np.inf, 1, 2],
                         [-np.inf] * 4, [1e30, 1, 2, 3], [8, 9, 10, -1e4], [-1e-45, 0, 1e-45, 0]])
        with np.errstate(over="ignore"):
            rows = rows.astype(DTYPES[dtype][0])
        for opset, axis, shape in ((13, -1, [8, 4]), (11, 1, [8, 2, 2])):
            name = f"softmax_special_opset{opset}_{dtype}"
            case(name, [helper.make_node("Softmax", ["x"], ["y"], axis=axis)], [("x", rows.reshape(shape), None)],
                 [("y", elem)], opset=opset)
        name = f"softmax_dynamic_{dtype}"
        case(name, [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
             [("x", data(name, dtype, [3, 7], special=False), ["n", "k"])], [("y", elem)], opset=13)
    # A float32 sweep of each lowered function (the tolerance's floor and
    # budget judge every element): uniform on [-20, 20] and magnitudes from
    # 1e-38 to 1e38 of both signs.
    rng = np.random.default_rng(11)
    sweep = np.concatenate([rng.uniform(-20, 20, 2048),
                            np.exp(rng.uniform(np.log(1e-38), np.log(1e38), 2048)) * rng.choice([-1, 1], 2048)])
    for stem, op, attributes, opset, _ in UNARY:
        if op == "Clip":
            continue
        case(f"sweep_{stem}_float32", [helper.make_node(op, ["x"], ["y"], **attributes)],
             [("x", sweep.astype(np.float32).reshape(64, 64), None)], [("y", TensorProto.FLOAT)], opset=opset)
    # The variadic operators as chains: three inputs that broadcast each
    # step differently, NaN in each, and one input alone. The bfloat16 sum
    # 1 + 2^-9 - 1 cancels what a 16-bit accumulator would have rounded off.
    for dtype in DTYPES:
        elem = DTYPES[dtype][1]
        for op in ("Sum", "Mean", "Max", "Min"):
            if dtype in NOT_LOWERED.get(op, ()):
                continue
            name = f"{op.lower()}_three_{dtype}"
            inputs = [(n, data(name + n, dtype, shape), None) for n, shape in (("a", [4, 1, 16]), ("b", [3, 1]), ("c", [1, 3, 16]))]
            case(name, [helper.make_node(op, ["a", "b", "c"], ["y"])], inputs, [("y", elem)])
            name = f"{op.lower()}_one_{dtype}"
            case(name, [helper.make_node(op, ["a"], ["y"])], [("a", data(name, dtype, [4, 16]), None)], [("y", elem)])
        name = f"sum_cancelling_{dtype}"
        one = np.ones([4, 16], dtype=DTYPES[dtype][0])
        case(name, [helper.make_node("Sum", ["a", "b", "c"], ["y"])],
             [("a", one, None), ("b", (data(name, "float32", [4, 16], special=False) * 2.0**-9).astype(one.dtype), None),
              ("c", -one, None)], [("y", elem)])
    # Comparisons of 8-bit integers, which float32 holds exactly.
    for dtype in (np.int8, np.uint8):
        for op in ("Equal", "Less", "Greater", "GreaterOrEqual", "LessOrEqual"):
            name = f"{op.lower()}_{np.dtype(dtype).name}"
            rng = np.random.default_rng(7)
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, [4, 16], endpoint=True).astype(dtype)
            b = np.where(rng.random([1, 16]) < 0.3, a[:1], rng.integers(info.min, info.max, [1, 16], endpoint=True)).astype(dtype)
            case(name, [helper.make_node(op, ["a", "b"], ["c"])], [("a", a, None), ("b", b, None)], [("c", TensorProto.BOOL)])
    # Cast between the 16-bit floats and from them to float32, SPECIAL included
    # (65520 overflows float16 to inf, as ONNX's Cast does).
    for src, dst in (("float16", "float32"), ("bfloat16", "float32"), ("float32", "float16"),
                     ("bfloat16", "float16"), ("float16", "bfloat16"), ("float16", "float16")):
        name = f"cast_{src}_to_{dst}"
        case(name, [helper.make_node("Cast", ["x"], ["y"], to=DTYPES[dst][1])],
             [("x", data(name, src, [4, 16]), None)], [("y", DTYPES[dst][1])])
    name = "castlike_float32_to_float16"
    case(name, [helper.make_node("CastLike", ["x", "like"], ["y"])],
         [("x", data(name, "float32", [4, 16]), None), ("like", np.zeros([1], np.float16), None)],
         [("y", TensorProto.FLOAT16)])
    return names


# Operators the lowering refuses, each with a word of its reason.
REFUSED = [("Log", {}, 21, "eltwise_log"), ("Softplus", {}, 21, "soft_relu"), ("Mish", {}, 21, "mish"),
           ("HardSigmoid", {}, 21, "NaN to 1"), ("Gelu", {}, 21, "gelu_erf"), ("LogSoftmax", {}, 21, "softmax_log"),
           ("ThresholdedRelu", {}, 21, "no eltwise"), ("Celu", {"alpha": 2.0}, 21, "alpha 2")]


def write_refused(root):
    names = {}
    for op, attributes, opset, reason in REFUSED:
        name = f"refused_{op.lower()}"
        write_case(root, name, [helper.make_node(op, ["x"], ["y"], **attributes)],
                   [("x", data(name, "float32", [4, 16], special=False, low=0.1), None)], [("y", TensorProto.FLOAT)],
                   opset=opset)
        names[name] = reason
    for op, reason in (("Pow", "no binary pow"),):
        name = f"refused_{op.lower()}"
        write_case(root, name, [helper.make_node(op, ["a", "b"], ["c"])],
                   [("a", data(name + "a", "float32", [4, 16], special=False, low=0.1), None),
                    ("b", data(name + "b", "float32", [4, 16], special=False), None)], [("c", TensorProto.FLOAT)])
        names[name] = reason
    # Types and attributes refused where the operator is otherwise lowered.
    for op, attributes, dtype, reason in (("Relu", {}, "bfloat16", "bfloat16 subnormal"),
                                          ("Round", {}, "float16", "float32 only"),
                                          ("LeakyRelu", {"alpha": 0.0}, "float32", "alpha 0")):
        name = f"refused_{op.lower()}_{dtype}"
        write_case(root, name, [helper.make_node(op, ["x"], ["y"], **attributes)],
                   [("x", data(name, dtype, [4, 16], special=False), None)], [("y", DTYPES[dtype][1])], opset=22)
        names[name] = reason
    name = "refused_max_bfloat16"
    write_case(root, name, [helper.make_node("Max", ["a", "b"], ["c"])],
               [(n, data(name + n, "bfloat16", [4, 16], special=False), None) for n in ("a", "b")],
               [("c", TensorProto.BFLOAT16)])
    names[name] = "bfloat16 subnormal"
    name = "refused_cast_bfloat16_to_bfloat16"
    write_case(root, name, [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
               [("x", data(name, "bfloat16", [4, 16]), None)], [("y", TensorProto.BFLOAT16)])
    names[name] = "subnormals"
    name = "refused_cast_float32_to_bfloat16"
    write_case(root, name, [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
               [("x", data(name, "float32", [4, 16]), None)], [("y", TensorProto.BFLOAT16)])
    names[name] = "subnormals"
    return names


def expect_and_run_all_pass(test, corpus, names, out, *extra):
    """`parity expect` over `corpus`, then `run`; asserts that exactly the
    cases `names` ran and every one passed. Returns the rows by case."""
    proc = subprocess.run([PARITY, "expect", corpus], capture_output=True, text=True, timeout=600)
    test.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    rows, proc = run(corpus, out, *extra)
    test.assertEqual(sorted(rows), sorted(names), proc.stdout + proc.stderr)
    failures = [f"{name}: {r['state']} {r.get('message', '')}" for name, r in sorted(rows.items()) if r["state"] != "PASS"]
    test.assertEqual(failures, [])
    return rows


def run(cases, out, *extra):
    proc = subprocess.run([PARITY, "run", "--adapter", "onednn", "--cases", cases, "--out", out, "--fresh",
                           "--jobs", "1", "--progress", "quiet", *extra], capture_output=True, text=True, timeout=600)
    with open(os.path.join(out, "results.jsonl")) as f:
        return {r["case"]: r for r in map(json.loads, f)}, proc


@unittest.skipUnless(ADAPTER_BUILT, "the oneDNN adapter is not built")
class OneDnnElementwiseTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="parity-onednn-eltwise-test-")
        cls.lowered_dir = os.path.join(cls.tmp.name, "lowered")
        cls.refused_dir = os.path.join(cls.tmp.name, "refused")
        cls.lowered = write_corpus(cls.lowered_dir)
        cls.refused = write_refused(cls.refused_dir)
        for folder in (cls.lowered_dir, cls.refused_dir):
            proc = subprocess.run([PARITY, "expect", folder], capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stdout + proc.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_lowered_case_passes_on_the_device(self):
        rows, proc = run(self.lowered_dir, os.path.join(self.tmp.name, "run-lowered"), "--no-fallback")
        self.assertEqual(sorted(rows), sorted(self.lowered), proc.stdout + proc.stderr)
        failures = [f"{name}: {r['state']} {r.get('message', '')}" for name, r in sorted(rows.items())
                    if r["state"] != "PASS"]
        self.assertEqual(failures, [])
        off_device = [name for name, r in sorted(rows.items()) if r.get("placement") != {"cpu": 1}]
        self.assertEqual(off_device, [])

    def test_refused_operators_stay_on_the_reference_with_their_reason(self):
        rows, _ = run(self.refused_dir, os.path.join(self.tmp.name, "run-refused"))
        for name in self.refused:
            self.assertEqual(rows[name]["state"], "PASS", name)
            self.assertEqual(rows[name].get("placement"), {"reference": 1}, name)
        rows, _ = run(self.refused_dir, os.path.join(self.tmp.name, "run-refused-no-fallback"), "--no-fallback")
        for name, reason in self.refused.items():
            self.assertEqual(rows[name]["state"], "UNSUPPORTED", name)
            self.assertIn("FALLBACK_REQUIRED", rows[name].get("message", ""), name)
            self.assertIn(reason, rows[name].get("message", ""), name)


if __name__ == "__main__":
    unittest.main()
