"""Values of the numpy oracle: a tensor is its float64 (or int64, or bool)
data and the ONNX element type it stands for, and rounding to a float type
is done here, from double, by the oracle's own code (README.md, "Rules")."""
from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
from onnx import TensorProto


class OracleError(Exception):
    """A model, attribute or value the oracle refuses; `unsupported` marks
    what it has no code for (the protocol's UNSUPPORTED) as against bad input."""

    def __init__(self, message: str, unsupported: bool = False):
        super().__init__(message)
        self.message = message
        self.unsupported = unsupported


@dataclasses.dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: `precision` significand bits (the
    leading one included), `min_exponent` the exponent of the smallest normal
    number, `max_finite` its largest finite value, `has_inf` whether it
    encodes infinities (float8e4m3fn does not)."""
    precision: int
    min_exponent: int
    max_finite: float
    has_inf: bool


FLOAT_FORMATS = {
    TensorProto.FLOAT: FloatFormat(24, -126, float(np.finfo(np.float32).max), True),
    TensorProto.FLOAT16: FloatFormat(11, -14, 65504.0, True),
    TensorProto.BFLOAT16: FloatFormat(8, -126, (2.0 - 2.0 ** -7) * 2.0 ** 127, True),
    TensorProto.FLOAT8E4M3FN: FloatFormat(4, -6, 448.0, False),
    TensorProto.FLOAT8E5M2: FloatFormat(3, -14, 57344.0, True),
}
# Integer types: (numpy storage type, lowest, highest).
INT_TYPES = {
    TensorProto.INT64: (np.int64, -2 ** 63, 2 ** 63 - 1),
    TensorProto.INT32: (np.int32, -2 ** 31, 2 ** 31 - 1),
    TensorProto.INT16: (np.int16, -2 ** 15, 2 ** 15 - 1),
    TensorProto.INT8: (np.int8, -128, 127),
    TensorProto.UINT64: (np.uint64, 0, 2 ** 64 - 1),
    TensorProto.UINT32: (np.uint32, 0, 2 ** 32 - 1),
    TensorProto.UINT16: (np.uint16, 0, 2 ** 16 - 1),
    TensorProto.UINT8: (np.uint8, 0, 255),
    TensorProto.INT4: (ml_dtypes.int4, -8, 7),
    TensorProto.UINT4: (ml_dtypes.uint4, 0, 15),
}
# How each float element type is stored when it leaves the oracle.
FLOAT_STORAGE = {
    TensorProto.DOUBLE: np.float64,
    TensorProto.FLOAT: np.float32,
    TensorProto.FLOAT16: np.float16,
    TensorProto.BFLOAT16: ml_dtypes.bfloat16,
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
}
FLOAT_TYPES = frozenset(FLOAT_STORAGE)


def type_name(elem: int) -> str:
    try:
        return TensorProto.DataType.Name(elem)
    except ValueError:
        return f"element type {elem}"


def is_float(elem: int) -> bool:
    return elem in FLOAT_TYPES


@dataclasses.dataclass
class Tensor:
    """`data` holds float64 for every float type (values the type can hold
    once `rounded`), int64 for the integer types, bool for BOOL."""
    data: np.ndarray
    elem: int

    @property
    def shape(self) -> tuple:
        return self.data.shape


def round_to_format(x, fmt: FloatFormat, overflow: str = "ieee") -> np.ndarray:
    """x (float64) rounded to nearest, ties to even, to `fmt`, in one step
    from double. The significand is rounded at the bit the format keeps for
    x's binade (fewer below the smallest normal: gradual underflow), then a
    rounded magnitude above `max_finite` becomes, by `overflow`: "ieee" inf
    (NaN where the format has none), "saturate" ±max_finite, "nan" NaN.
    NaN stays NaN, and ±inf are a magnitude above max_finite."""
    x = np.asarray(x, dtype=np.float64)
    _, exponent = np.frexp(x)  # x = m * 2**exponent with 0.5 <= |m| < 1
    # Exponent of the last kept bit: the leading bit is at exponent - 1.
    quantum = np.maximum(exponent - 1, fmt.min_exponent) - (fmt.precision - 1)
    with np.errstate(invalid="ignore", over="ignore"):  # a double near its own maximum may round to inf
        rounded = np.ldexp(np.round(np.ldexp(x, -quantum)), quantum)  # np.round: ties to even
        too_big = np.abs(rounded) > fmt.max_finite
    if not too_big.any():
        return rounded
    if overflow == "saturate":
        replacement = np.copysign(fmt.max_finite, rounded)
    elif overflow == "ieee" and fmt.has_inf:
        replacement = np.copysign(np.inf, rounded)
    else:
        replacement = np.full(rounded.shape, np.nan)
    return np.where(too_big & ~np.isnan(rounded), replacement, rounded)


def rounded(tensor: Tensor) -> Tensor:
    """The tensor with its data rounded to its element type (IEEE overflow)."""
    if tensor.elem in FLOAT_FORMATS:
        return Tensor(round_to_format(tensor.data, FLOAT_FORMATS[tensor.elem]), tensor.elem)
    return tensor


def from_numpy(array) -> Tensor:
    """A value that came in (a graph input or an initializer) as a Tensor."""
    array = np.asarray(array)
    dtype = array.dtype
    if dtype == np.bool_:
        return Tensor(array.astype(np.bool_), TensorProto.BOOL)
    for elem, storage in FLOAT_STORAGE.items():
        if dtype == np.dtype(storage):
            return Tensor(array.astype(np.float64), elem)
    for elem, (storage, _, _) in INT_TYPES.items():
        if dtype == np.dtype(storage):
            if elem == TensorProto.UINT64 and array.size and int(array.max()) > 2 ** 63 - 1:
                raise OracleError("a uint64 value above 2^63 - 1 does not fit the oracle's int64", unsupported=True)
            return Tensor(array.astype(np.int64), elem)
    raise OracleError(f"values of numpy type {dtype} are not among the oracle's types", unsupported=True)


def to_numpy(tensor: Tensor) -> np.ndarray:
    """The tensor in its element type's numpy storage; its data already holds
    values of that type, so the conversion is exact."""
    if tensor.elem == TensorProto.BOOL:
        return tensor.data.astype(np.bool_)
    if tensor.elem in FLOAT_STORAGE:
        return tensor.data.astype(FLOAT_STORAGE[tensor.elem])
    if tensor.elem in INT_TYPES:
        return tensor.data.astype(INT_TYPES[tensor.elem][0])
    raise OracleError(f"the oracle cannot write a value of {type_name(tensor.elem)}", unsupported=True)


def round_half_even_int(x: np.ndarray) -> np.ndarray:
    """Nearest integer, ties to even (numpy's round), as float64."""
    return np.round(np.asarray(x, dtype=np.float64))


def saturate_int(x: np.ndarray, elem: int) -> np.ndarray:
    """Integral float64 values clamped to the range of integer type `elem`, as int64."""
    _, low, high = INT_TYPES[elem]
    return np.clip(x, low, min(high, 2 ** 63 - 1)).astype(np.int64)


def float_attribute(value) -> float:
    """A float attribute as ONNX stores it (a 32-bit float), for defaults
    written as decimal literals: 1e-5 is read as the float32 nearest it."""
    return float(np.float32(value))


def is_integer_type(elem: int) -> bool:
    return elem in INT_TYPES
