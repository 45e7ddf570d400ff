"""The numpy oracle's small standard operators: what QDQ chains and
FlexAttention hooks are made of (arithmetic, comparisons, shapes, Cast,
MatMul, DequantizeLinear, QuantizeLinear). Each computes in float64 (or
exactly, for integers and booleans); the graph walk rounds its outputs."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, numpy_helper

from values import (FLOAT_FORMATS, INT_TYPES, OracleError, Tensor, from_numpy, is_float, round_half_even_int,
                    round_to_format, saturate_int, type_name)

BOOL, INT64 = TensorProto.BOOL, TensorProto.INT64


def same_type(ctx, values) -> int:
    elems = {v.elem for v in values}
    if len(elems) != 1:
        raise ctx.error(f"inputs of different types: {', '.join(sorted(type_name(e) for e in elems))}")
    return elems.pop()


def _broadcast(ctx, *arrays):
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        raise ctx.error(f"shapes {' and '.join(str(list(a.shape)) for a in arrays)} do not broadcast") from None


def require_inputs(ctx, values, count_min, count_max=None):
    count_max = count_min if count_max is None else count_max
    present = len(values)
    if present < count_min or present > count_max:
        raise ctx.error(f"takes {count_min}{'' if count_max == count_min else f' to {count_max}'} inputs, "
                        f"the node gives {present}")
    for index in range(count_min):
        if values[index] is None:
            raise ctx.error(f"input {index} is required")


# --- Arithmetic and comparisons


def _binary(numpy_fn, floats_only=False):
    def op(ctx, values):
        require_inputs(ctx, values, 2)
        elem = same_type(ctx, values)
        if elem == BOOL or (floats_only and not is_float(elem)):
            raise OracleError(f"{ctx.label}: {type_name(elem)} inputs are not among the oracle's types for "
                              f"{ctx.node.op_type}", unsupported=True)
        a, b = _broadcast(ctx, values[0].data, values[1].data)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return [Tensor(numpy_fn(a, b), elem)]
    return op


def _unary_float(numpy_fn):
    def op(ctx, values):
        require_inputs(ctx, values, 1)
        x = values[0]
        if not is_float(x.elem):
            raise OracleError(f"{ctx.label}: {type_name(x.elem)} input; the oracle's {ctx.node.op_type} takes "
                              "float types", unsupported=True)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return [Tensor(numpy_fn(x.data), x.elem)]
    return op


def _neg(ctx, values):
    require_inputs(ctx, values, 1)
    return [Tensor(-values[0].data, values[0].elem)]


def _abs(ctx, values):
    require_inputs(ctx, values, 1)
    return [Tensor(np.abs(values[0].data), values[0].elem)]


def _sigmoid(x):
    # exp(-x) overflows to inf for x below about -709, and 1 / inf is the right 0.
    return 1.0 / (1.0 + np.exp(-x))


def _compare(numpy_fn):
    def op(ctx, values):
        require_inputs(ctx, values, 2)
        same_type(ctx, values)
        a, b = _broadcast(ctx, values[0].data, values[1].data)
        return [Tensor(numpy_fn(a, b), BOOL)]
    return op


def _logical(numpy_fn):
    def op(ctx, values):
        require_inputs(ctx, values, 2)
        if same_type(ctx, values) != BOOL:
            raise ctx.error("inputs must be bool")
        a, b = _broadcast(ctx, values[0].data, values[1].data)
        return [Tensor(numpy_fn(a, b), BOOL)]
    return op


def _not(ctx, values):
    require_inputs(ctx, values, 1)
    if values[0].elem != BOOL:
        raise ctx.error("input must be bool")
    return [Tensor(~values[0].data, BOOL)]


def _where(ctx, values):
    require_inputs(ctx, values, 3)
    condition, x, y = values
    if condition.elem != BOOL:
        raise ctx.error(f"condition is {type_name(condition.elem)}, not bool")
    elem = same_type(ctx, [x, y])
    c, a, b = _broadcast(ctx, condition.data, x.data, y.data)
    return [Tensor(np.where(c, a, b), elem)]


# --- Shapes and data movement


def _identity(ctx, values):
    require_inputs(ctx, values, 1)
    return [values[0]]


def _constant(ctx, values):
    require_inputs(ctx, values, 0)
    if len(ctx.attrs) != 1:
        raise ctx.error(f"needs exactly one value attribute, has {', '.join(sorted(ctx.attrs)) or 'none'}")
    name = next(iter(ctx.attrs))
    value = ctx.attr(name)
    if name == "value":
        return [from_numpy(numpy_helper.to_array(value))]
    if name in ("value_float", "value_floats"):
        return [Tensor(np.asarray(value, dtype=np.float64), TensorProto.FLOAT)]
    if name in ("value_int", "value_ints"):
        return [Tensor(np.asarray(value, dtype=np.int64), INT64)]
    raise OracleError(f"{ctx.label}: Constant with attribute '{name}'", unsupported=True)


def _shape(ctx, values):
    require_inputs(ctx, values, 1)
    dims = list(values[0].shape)
    rank = len(dims)
    start = ctx.attr("start", 0)
    end = ctx.attr("end", rank)
    # Negative bounds count from the end; both are clamped to [0, rank].
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return [Tensor(np.array(dims[start:end], dtype=np.int64), INT64)]


def _int_input(ctx, value, what):
    if value.elem not in (TensorProto.INT64, TensorProto.INT32):
        raise ctx.error(f"{what} is {type_name(value.elem)}, not int64 or int32")
    return value.data


def _gather(ctx, values):
    require_inputs(ctx, values, 2)
    data, indices = values[0], _int_input(ctx, values[1], "indices")
    rank = data.data.ndim
    axis = ctx.attr("axis", 0)
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is outside [-{rank}, {rank - 1}]")
    axis %= rank
    size = data.shape[axis]
    if indices.size and (indices.min() < -size or indices.max() >= size):
        raise ctx.error(f"an index is outside [-{size}, {size - 1}]")
    return [Tensor(np.take(data.data, np.where(indices < 0, indices + size, indices), axis=axis), data.elem)]


def _range(ctx, values):
    require_inputs(ctx, values, 3)
    for value in values:
        if value.data.size != 1:
            raise ctx.error(f"start, limit and delta must be scalars, one has shape {list(value.shape)}")
    elem = same_type(ctx, values)
    start, limit, delta = (v.data.reshape(()) for v in values)
    if delta == 0:
        raise ctx.error("delta is 0")
    count = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
    return [Tensor(start + np.arange(count, dtype=values[0].data.dtype) * delta, elem)]


def _reshape(ctx, values):
    require_inputs(ctx, values, 2)
    data = values[0]
    target = [int(d) for d in _int_input(ctx, values[1], "shape").reshape(-1)]
    allow_zero = ctx.attr("allowzero", 0)
    shape = []
    for index, dim in enumerate(target):
        if dim == 0 and not allow_zero:
            if index >= data.data.ndim:
                raise ctx.error(f"shape entry {index} copies a dimension the input (rank {data.data.ndim}) lacks")
            dim = data.shape[index]
        shape.append(dim)
    if shape.count(-1) > 1:
        raise ctx.error("more than one -1 in the shape")
    try:
        return [Tensor(data.data.reshape(shape), data.elem)]
    except ValueError:
        raise ctx.error(f"cannot reshape {list(data.shape)} to {target}") from None


def _axes(ctx, values):
    if ctx.version >= 13:
        if len(values) < 2 or values[1] is None:
            return None
        return [int(a) for a in _int_input(ctx, values[1], "axes").reshape(-1)]
    return ctx.attr("axes")


def _normalise_axes(ctx, axes, rank):
    out = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise ctx.error(f"axis {axis} is outside [-{rank}, {rank - 1}]")
        out.append(axis % rank)
    if len(set(out)) != len(out):
        raise ctx.error(f"axes {axes} repeat an axis")
    return sorted(out)


def _unsqueeze(ctx, values):
    require_inputs(ctx, values, 1, 2)
    data = values[0]
    axes = _axes(ctx, values)
    if axes is None:
        raise ctx.error("axes are required")
    rank = data.data.ndim + len(axes)
    shape = list(data.shape)
    for axis in _normalise_axes(ctx, axes, rank):
        shape.insert(axis, 1)
    return [Tensor(data.data.reshape(shape), data.elem)]


def _squeeze(ctx, values):
    require_inputs(ctx, values, 1, 2)
    data = values[0]
    axes = _axes(ctx, values)
    rank = data.data.ndim
    if axes is None:
        axes = [i for i, d in enumerate(data.shape) if d == 1]
    axes = _normalise_axes(ctx, axes, rank)
    for axis in axes:
        if data.shape[axis] != 1:
            raise ctx.error(f"axis {axis} has size {data.shape[axis]}, not 1")
    return [Tensor(np.squeeze(data.data, axis=tuple(axes)), data.elem)]


def _cast(ctx, values):
    require_inputs(ctx, values, 1)
    x = values[0]
    to = ctx.attr("to")
    if to is None:
        raise ctx.error("attribute 'to' is required")
    if to == BOOL:
        return [Tensor(x.data != 0, BOOL)]
    if is_float(to):
        if to in FLOAT_FORMATS and to not in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16):
            raise OracleError(f"{ctx.label}: Cast to {type_name(to)} (saturation rules)", unsupported=True)
        return [Tensor(x.data.astype(np.float64), to)]
    if to in INT_TYPES:
        data = x.data
        if is_float(x.elem):
            if not np.isfinite(data).all():
                raise ctx.error(f"casting a non-finite value to {type_name(to)} is undefined")
            data = np.trunc(data)
        _, low, high = INT_TYPES[to]
        if data.size and (data.min() < low or data.max() > high):
            raise OracleError(f"{ctx.label}: a value outside {type_name(to)}'s range (wrapping is not "
                              "implemented)", unsupported=True)
        return [Tensor(data.astype(np.int64), to)]
    raise OracleError(f"{ctx.label}: Cast to {type_name(to)}", unsupported=True)


# --- MatMul and quantization


def _matmul(ctx, values):
    require_inputs(ctx, values, 2)
    elem = same_type(ctx, values)
    if not is_float(elem):
        raise OracleError(f"{ctx.label}: MatMul of {type_name(elem)}", unsupported=True)
    a, b = values[0].data, values[1].data
    if a.ndim == 0 or b.ndim == 0:
        raise ctx.error("MatMul inputs must have rank 1 or more")
    try:
        return [Tensor(np.matmul(a, b), elem)]
    except ValueError:
        raise ctx.error(f"shapes {list(a.shape)} and {list(b.shape)} do not multiply") from None


def _expanded_scale(ctx, scale: np.ndarray, shape: tuple, what: str) -> np.ndarray:
    """A scale (or zero point) broadcast to the input's shape by the three
    granularities of QuantizeLinear: per tensor (a scalar, or one element),
    per axis (1-D along `axis`), blocked (the input's rank, `block_size`
    consecutive elements along `axis` per entry)."""
    rank = len(shape)
    axis = ctx.attr("axis", 1)
    block = ctx.attr("block_size", 0)
    if scale.ndim == 0 or (scale.ndim == 1 and scale.size == 1 and not block):
        return scale.reshape(())  # one element: the same for every element, whatever the axis
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is outside [-{rank}, {rank - 1}]")
    axis %= rank
    if block > 0:
        if scale.ndim != rank:
            raise ctx.error(f"blocked {what} must have the input's rank {rank}, has shape {list(scale.shape)}")
        for i, (s, d) in enumerate(zip(scale.shape, shape)):
            expected = -(-d // block) if i == axis else d
            if s != expected:
                raise ctx.error(f"blocked {what} has shape {list(scale.shape)}; with block_size {block} along axis "
                                f"{axis} of input {list(shape)} it must have {expected} at axis {i}")
        return np.repeat(scale, block, axis=axis).take(np.arange(shape[axis]), axis=axis)
    if block < 0:
        raise ctx.error(f"block_size {block} is negative")
    if scale.ndim != 1 or scale.shape[0] != shape[axis]:
        raise ctx.error(f"per-axis {what} must be 1-D of length {shape[axis]} (axis {axis} of input "
                        f"{list(shape)}), has shape {list(scale.shape)}")
    view = [1] * rank
    view[axis] = shape[axis]
    return scale.reshape(view)


def _dequantize_linear(ctx, values):
    require_inputs(ctx, values, 2, 3)
    x, scale = values[0], values[1]
    zero = values[2] if len(values) > 2 else None
    if not is_float(scale.elem):
        raise ctx.error(f"x_scale is {type_name(scale.elem)}, not a float type")
    if zero is not None and zero.elem != x.elem:
        raise ctx.error(f"x_zero_point is {type_name(zero.elem)} and x is {type_name(x.elem)}; they must match")
    out = ctx.attr("output_dtype", 0) or scale.elem
    if not is_float(out):
        raise ctx.error(f"output_dtype {type_name(out)} is not a float type")
    s = _expanded_scale(ctx, scale.data, x.shape, "x_scale")
    z = 0.0 if zero is None else _expanded_scale(ctx, zero.data.astype(np.float64), x.shape, "x_zero_point")
    return [Tensor((x.data.astype(np.float64) - z) * s, out)]


def _quantize_linear(ctx, values):
    require_inputs(ctx, values, 2, 3)
    x, scale = values[0], values[1]
    zero = values[2] if len(values) > 2 else None
    if not is_float(x.elem) or not is_float(scale.elem):
        raise ctx.error(f"x ({type_name(x.elem)}) and y_scale ({type_name(scale.elem)}) must be float types")
    out = ctx.attr("output_dtype", 0)
    if zero is not None:
        if out and out != zero.elem:
            raise ctx.error(f"output_dtype {type_name(out)} differs from y_zero_point's {type_name(zero.elem)}")
        out = zero.elem
    out = out or TensorProto.UINT8
    s = _expanded_scale(ctx, scale.data, x.shape, "y_scale")
    z = 0.0 if zero is None else _expanded_scale(ctx, zero.data.astype(np.float64), x.shape, "y_zero_point")
    # The quotient is rounded to y_scale's type before it is rounded to an
    # integer (or to float8). Opset 23 says so ("The type of y_scale
    # determines the precision of the division operation between x and
    # y_scale, unless the precision attribute is specified"); at 21 x and
    # y_scale share one type T1, so x / y_scale is a division in T1.
    precision = ctx.attr("precision", 0) or scale.elem
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = x.data / s
        if precision in FLOAT_FORMATS:
            quotient = round_to_format(quotient, FLOAT_FORMATS[precision])
    if out in INT_TYPES:
        if not np.isfinite(quotient).all():
            raise ctx.error("x / y_scale is not finite (a NaN or infinite input, or a zero scale)")
        # y = saturate(round_half_even(x / y_scale) + y_zero_point)
        return [Tensor(saturate_int(round_half_even_int(quotient) + z, out), out)]
    if out in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2):
        saturate = ctx.attr("saturate", 1)
        fmt = FLOAT_FORMATS[out]
        # Cast's float8 tables: [x] above the largest finite value is ±max
        # with saturate; without it NaN (e4m3fn) or ±inf (e5m2), infinities
        # included.
        value = round_to_format(quotient + z, fmt, "saturate" if saturate else "ieee")
        return [Tensor(value, out)]
    raise OracleError(f"{ctx.label}: QuantizeLinear to {type_name(out)}", unsupported=True)


def register(registry) -> None:
    add = registry.add
    add("", "Add", _binary(np.add), min_version=7)
    add("", "Sub", _binary(np.subtract), min_version=7)
    add("", "Mul", _binary(np.multiply), min_version=7)
    add("", "Div", _binary(np.divide, floats_only=True), min_version=7)
    add("", "Neg", _neg, min_version=6)
    add("", "Abs", _abs, min_version=6)
    add("", "Tanh", _unary_float(np.tanh), min_version=6)
    add("", "Exp", _unary_float(np.exp), min_version=6)
    add("", "Sqrt", _unary_float(np.sqrt), min_version=6)
    add("", "Sigmoid", _unary_float(_sigmoid), min_version=6)
    add("", "Equal", _compare(np.equal), min_version=11)
    add("", "Greater", _compare(np.greater), min_version=9)
    add("", "GreaterOrEqual", _compare(np.greater_equal), min_version=12)
    add("", "Less", _compare(np.less), min_version=9)
    add("", "LessOrEqual", _compare(np.less_equal), min_version=12)
    add("", "And", _logical(np.logical_and), min_version=7)
    add("", "Or", _logical(np.logical_or), min_version=7)
    add("", "Not", _not)
    add("", "Where", _where, min_version=9)
    add("", "Identity", _identity)
    add("", "Constant", _constant, min_version=12)
    add("", "Shape", _shape)
    add("", "Gather", _gather)
    add("", "Range", _range, min_version=11)
    add("", "Reshape", _reshape, min_version=5)
    add("", "Unsqueeze", _unsqueeze)
    add("", "Squeeze", _squeeze)
    add("", "Cast", _cast, min_version=6)
    add("", "MatMul", _matmul, min_version=9)
    # Blocked scales and int4 are opset 21's; 23 adds types and `precision`,
    # which a float64 oracle has no use for.
    add("", "DequantizeLinear", _dequantize_linear, versions=(21, 23))
    add("", "QuantizeLinear", _quantize_linear, versions=(21, 23))

