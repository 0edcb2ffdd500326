"""Creating tensors: `alloc` / `full` / `zeros` / `ones` / `empty` (and their `_like`
forms), `arange` and `eye`, with NumPy's names, arguments and dtypes.

Shapes may be computed in the graph (any shape-like, see `ops.shape_vector`); lengths
known when the graph is built are op parameters, so results keep static shapes. `Alloc`
writes a fresh buffer (an inplace op may overwrite it); `AllocEmpty` is a separate op
because its contents are undefined, so a backend need not fill it.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np
import numpy.typing as npt

from fgraph import (
    Constant,
    DTypeError,
    Op,
    ShapeError,
    TensorType,
    Variable,
    as_dtype,
    format_shape,
    promote,
)
from fgraph.dtypes import is_complex, is_inexact, is_integer
from fgraph.op import Array, NonDifferentiable
from fgraph.operators import TensorLike
from fgraph.types import Shape as StaticShape
from ops.broadcast import Stretch, broadcast_array
from ops.convert import as_tensor, constant
from ops.elementwise_functions import add, cast, mul
from ops.reduction import Sum
from ops.shape_vector import (
    ShapeLike,
    ShapeVector,
    as_shape_vector,
    as_static_shape,
    check_runtime_shape,
    check_shape_input,
    shape,
    shape_i,
)


# Kernel: numba_backend.creation._alloc
@attrs.frozen(cache_hash=True)
class Alloc(Stretch):
    """A fresh array holding `value` broadcast to a shape (PyTensor's `Alloc`)."""

    shape: StaticShape = attrs.field(converter=as_static_shape)
    operand: ClassVar[str] = "value"

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.array(broadcast_array(self, inputs[0], inputs[1], self.shape)),)


# Kernel: numba_backend.creation._alloc_empty
@attrs.frozen(cache_hash=True)
class AllocEmpty(NonDifferentiable):
    """A fresh array of `dtype` and the shape an int64 vector input gives, contents
    undefined (the reference `perform` fills zeros)."""

    dtype: str = attrs.field(converter=as_dtype)
    shape: StaticShape = attrs.field(converter=as_static_shape)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 1:
            raise TypeError(f"{self}: expected 1 input (shape), got {len(input_types)}")
        check_shape_input(self, input_types[0], len(self.shape))
        return (TensorType(self.dtype, self.shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.zeros(_lengths(self, inputs[0], self.shape), dtype=self.dtype),)


def _lengths(op: Op, target: Array, static: StaticShape) -> tuple[int, ...]:
    """The run-time shape an op was given, which must be non-negative."""
    lengths = check_runtime_shape(op, target, static)
    if any(length < 0 for length in lengths):
        raise ShapeError(f"{op}: shape entries must be non-negative, got {lengths}")
    return lengths


def alloc(value: TensorLike, *shape: ShapeLike) -> Variable:
    """A fresh tensor of `value` broadcast to `shape`, as PyTensor's `alloc(value, *shape)`;
    the shape may also be passed as one sequence or vector (`alloc(v, x.shape)`)."""
    variable = as_tensor(value, name="alloc value")
    target = shape[0] if len(shape) == 1 and not _is_scalar_entry(shape[0]) else shape
    return _alloc(variable, as_shape_vector(target, "alloc"))


def _is_scalar_entry(entry: ShapeLike) -> bool:
    if isinstance(entry, Variable):
        return entry.ndim == 0
    return np.ndim(entry) == 0


def _alloc(value: Variable, target: ShapeVector) -> Variable:
    return Alloc(target.static)(value, target.variable)


def full(shape: ShapeLike, fill_value: TensorLike, dtype: npt.DTypeLike | None = None) -> Variable:
    """A tensor of `shape` filled with `fill_value` (broadcast), as `numpy.full`; the dtype
    is `fill_value`'s unless given."""
    if isinstance(fill_value, Variable):
        value = fill_value if dtype is None else cast(fill_value, as_dtype(dtype))
    else:
        value = constant(np.asarray(fill_value, dtype=None if dtype is None else as_dtype(dtype)))
    return _alloc(value, as_shape_vector(shape, "full"))


def zeros(shape: ShapeLike, dtype: npt.DTypeLike = "float64") -> Variable:
    """A tensor of zeros, as `numpy.zeros`."""
    return full(shape, 0, dtype)


def ones(shape: ShapeLike, dtype: npt.DTypeLike = "float64") -> Variable:
    """A tensor of ones, as `numpy.ones`."""
    return full(shape, 1, dtype)


def empty(shape: ShapeLike, dtype: npt.DTypeLike = "float64") -> Variable:
    """A tensor with undefined contents, as `numpy.empty`: for buffers every element of
    which is written before it is read."""
    target = as_shape_vector(shape, "empty")
    return AllocEmpty(as_dtype(dtype), target.static)(target.variable)


def full_like(
    x: TensorLike, fill_value: TensorLike, dtype: npt.DTypeLike | None = None
) -> Variable:
    """A tensor of `x`'s shape filled with `fill_value`, of `x`'s dtype unless given, as
    `numpy.full_like`."""
    variable = as_tensor(x, name="full_like")
    return full(shape(variable), fill_value, variable.dtype if dtype is None else dtype)


def zeros_like(x: TensorLike, dtype: npt.DTypeLike | None = None) -> Variable:
    """Zeros of `x`'s shape, of `x`'s dtype unless given, as `numpy.zeros_like`."""
    return full_like(x, 0, dtype)


def ones_like(x: TensorLike, dtype: npt.DTypeLike | None = None) -> Variable:
    """Ones of `x`'s shape, of `x`'s dtype unless given, as `numpy.ones_like`."""
    return full_like(x, 1, dtype)


# Kernel: numba_backend.creation._arange
@attrs.frozen(cache_hash=True)
class ARange(Op):
    """`numpy.arange(start, stop, step, dtype=dtype)` over three scalars of one dtype;
    `length` is the result's length when known at build time."""

    dtype: str = attrs.field(converter=as_dtype)
    length: int | None = None

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 3:
            count = len(input_types)
            raise TypeError(f"{self}: expected 3 inputs (start, stop, step), got {count}")
        if len({t.dtype for t in input_types}) != 1 or any(t.ndim for t in input_types):
            listed = ", ".join(str(t) for t in input_types)
            raise TypeError(
                f"{self}: start, stop and step must be scalars of one dtype, got {listed}"
            )
        return (TensorType(self.dtype, (self.length,)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        start, stop, step = inputs
        if step == 0:
            raise ValueError(f"{self}: step must not be zero")
        result = np.arange(start.item(), stop.item(), step.item(), dtype=self.dtype)
        if self.length is not None and len(result) != self.length:
            raise ShapeError(f"{self}: got {len(result)} values, expected {self.length}")
        return (result,)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        # values[i] = start + i * step: stop only moves the (integer) length.
        (cotangent,) = cotangents
        if cotangent is None or not is_inexact(self.dtype) or not is_inexact(inputs[0].dtype):
            return (None, None, None)
        steps = _step_counts(outputs[0])
        return (Sum((0,))(cotangent), None, Sum((0,))(mul(cotangent, steps)))

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        start_tangent, _, step_tangent = tangents
        if not is_inexact(self.dtype) or (start_tangent is None and step_tangent is None):
            return (None,)
        (output,) = outputs
        total = full_like(output, 0 if start_tangent is None else start_tangent)
        if step_tangent is not None:
            total = add(total, mul(step_tangent, _step_counts(output)))
        return (total,)


def _step_counts(output: Variable) -> Variable:
    """0, 1, ..., len(output) - 1 in `output`'s dtype: how many steps each value took."""
    return arange(0, shape_i(output, 0), 1, dtype=output.dtype)


def arange(
    start: TensorLike,
    stop: TensorLike | None = None,
    step: TensorLike = 1,
    dtype: npt.DTypeLike | None = None,
) -> Variable:
    """Evenly spaced values in [start, stop), as `numpy.arange` (`arange(stop)` counts
    from 0); arguments may be scalar variables. The dtype is NumPy's promotion of the
    arguments unless given; the length is static when all arguments are constants."""
    if stop is None:
        start, stop = 0, start
    values = [as_tensor(v, name="arange") for v in (start, stop, step)]
    for value in values:
        if value.ndim != 0 or is_complex(value.dtype):
            raise DTypeError(f"arange: start, stop and step must be real scalars, got {value.type}")
    common = promote(*(value.dtype for value in values))
    out_dtype = common if dtype is None else as_dtype(dtype)
    start_v, stop_v, step_v = (cast(value, common) for value in values)
    return ARange(out_dtype, _arange_length(values))(start_v, stop_v, step_v)


def _arange_length(values: list[Variable]) -> int | None:
    """NumPy's arange length, ceil((stop - start) / step) (at least 0), for constants."""
    if not all(isinstance(value, Constant) for value in values):
        return None
    start, stop, step = (value.data.item() for value in values if isinstance(value, Constant))
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if all(isinstance(v, int) for v in (start, stop, step)):
        return max(0, int(-((start - stop) // step)))
    return max(0, int(math.ceil((stop - start) / step)))


# Kernel: numba_backend.creation._eye
@attrs.frozen(cache_hash=True)
class Eye(NonDifferentiable):
    """An (n, m) matrix with ones on the k-th diagonal, as `numpy.eye`; the inputs are the
    shape (an int64 vector of length 2) and k (an int64 scalar)."""

    dtype: str = attrs.field(converter=as_dtype)
    shape: StaticShape = attrs.field(converter=as_static_shape)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 2:
            raise TypeError(f"{self}: expected 2 inputs (shape, k), got {len(input_types)}")
        shape_type, k_type = input_types
        if len(self.shape) != 2:
            raise ShapeError(
                f"{self}: the shape must have 2 entries, got {format_shape(self.shape)}"
            )
        check_shape_input(self, shape_type, 2)
        if k_type != TensorType("int64", ()):
            raise TypeError(f"{self}: k must be an int64 scalar, got {k_type}")
        return (TensorType(self.dtype, self.shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        target, k = inputs
        rows, columns = _lengths(self, target, self.shape)
        return (np.eye(rows, columns, int(k), dtype=self.dtype),)


def eye(
    n: TensorLike, m: TensorLike | None = None, k: TensorLike = 0, dtype: npt.DTypeLike = "float64"
) -> Variable:
    """An (n, m) matrix (m = n by default) with ones on the k-th diagonal, as `numpy.eye`;
    n, m and k may be integer scalar variables."""
    target = as_shape_vector((n, n if m is None else m), "eye")
    diagonal = as_tensor(k, name="eye k")
    if diagonal.ndim != 0 or not is_integer(diagonal.dtype):
        raise DTypeError(f"eye: k must be an integer scalar, got {diagonal.type}")
    return Eye(as_dtype(dtype), target.static)(target.variable, cast(diagonal, "int64"))
