"""What a generated case is, and the helpers the case matrices share: data
types, per-case seeded generators, and conversion to the case's dtype."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from onnx import TensorProto

DTYPES = {
    "float32": (np.float32, TensorProto.FLOAT),
    "float16": (np.float16, TensorProto.FLOAT16),
    "bfloat16": (ml_dtypes.bfloat16, TensorProto.BFLOAT16),
}
_ELEM_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(ml_dtypes.bfloat16): TensorProto.BFLOAT16,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,  # key padding masks (contrib_attention_cases.py)
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
    # Quantized types of the QDQ cases (quant_cases.py).
    np.dtype(ml_dtypes.int4): TensorProto.INT4,
    np.dtype(ml_dtypes.uint4): TensorProto.UINT4,
    np.dtype(ml_dtypes.float8_e4m3fn): TensorProto.FLOAT8E4M3FN,
    np.dtype(ml_dtypes.float8_e5m2): TensorProto.FLOAT8E5M2,
}


@dataclass
class Case:
    """One model with one data set. `inputs` are graph inputs in order (name,
    array); `outputs` are graph output names with their element types."""
    name: str
    operator: str
    feature: str
    tags: list
    opset: int
    nodes: list
    inputs: list
    outputs: list  # (name, elem_type), or (name, elem_type, shape) where ONNX cannot infer it
    initializers: list = field(default_factory=list)  # (name, array)
    domains: list = field(default_factory=list)  # (domain, version) imported besides the default domain


def seed_for(name: str) -> int:
    """A seed from the case name alone, so any case can be rebuilt by itself."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(seed_for(name))


def elem_type(array: np.ndarray) -> int:
    return _ELEM_TYPES[np.dtype(array.dtype)]



def as_dtype(values, dtype_name: str) -> np.ndarray:
    """`values` (float64) rounded to nearest-even in the case's dtype."""
    return np.asarray(values, dtype=np.float64).astype(DTYPES[dtype_name][0])


def elem_of(dtype_name: str) -> int:
    return DTYPES[dtype_name][1]


def attr_suffix(value: float) -> str:
    """A number as it may appear in a case name: 1.702 -> 1p702, -0.5 -> neg0p5."""
    text = f"{value:g}".replace("-", "neg").replace(".", "p")
    return text
