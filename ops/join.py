"""Joining and splitting along an axis: `Concatenate`, its inverse `Split`, and `stack`.

Each is the other's pullback: the cotangent of a concatenation is split back into the
pieces' lengths, and the cotangents of a split are concatenated. As in NumPy, the
pieces must agree on every other axis; nothing broadcasts.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable, format_shape, promote
from fgraph.dtypes import is_inexact
from fgraph.op import Array
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import expand_dims, normalize_axis
from ops.elementwise_functions import zeros_like
from ops.reshape_ops import flatten
from ops.shape_vector import (
    ShapeLike,
    as_shape_vector,
    as_static_shape,
    check_runtime_shape,
    check_shape_input,
    shape_i,
)


def _joined_length(lengths: Sequence[int | None]) -> int | None:
    return None if None in lengths else sum(length for length in lengths if length is not None)


# Kernel: numba_backend.join._concatenate
@attrs.frozen(cache_hash=True)
class Concatenate(Op):
    """Inputs of equal rank joined along `axis`; the dtype is NumPy's promotion of theirs."""

    axis: int = attrs.field(converter=int)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if not input_types:
            raise TypeError(f"{self}: needs at least one input")
        listed = ", ".join(str(t) for t in input_types)
        rank = input_types[0].ndim
        if any(t.ndim != rank for t in input_types):
            raise ShapeError(f"{self}: inputs need equal ranks, got {listed}")
        if not 0 <= self.axis < rank:
            raise ShapeError(f"{self}: axis {self.axis} is out of bounds for inputs {listed}")
        shape: list[int | None] = []
        for axis in range(rank):
            lengths = [t.shape[axis] for t in input_types]
            if axis == self.axis:
                shape.append(_joined_length(lengths))
                continue
            known = {length for length in lengths if length is not None}
            if len(known) > 1:
                raise ShapeError(f"{self}: inputs differ in length along axis {axis}: {listed}")
            shape.append(known.pop() if known else None)
        return (TensorType(promote(*(t.dtype for t in input_types)), tuple(shape)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        dtype = promote(*(x.dtype.name for x in inputs))
        try:
            joined = np.concatenate(inputs, axis=self.axis, dtype=dtype)
        except ValueError as error:
            shapes = ", ".join(str(x.shape) for x in inputs)
            raise ShapeError(f"{self}: cannot join inputs of shapes {shapes}: {error}") from error
        return (joined,)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (cotangent,) = cotangents
        if cotangent is None:
            return (None,) * len(inputs)
        lengths = [shape_i(x, self.axis) for x in inputs]
        pieces = split(cotangent, lengths, self.axis)
        return tuple(
            piece if is_inexact(x.dtype) else None for x, piece in zip(inputs, pieces)
        )

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        if all(tangent is None for tangent in tangents):
            return (None,)
        pieces = [zeros_like(x) if t is None else t for x, t in zip(inputs, tangents)]
        return (self(*pieces),)


# Kernel: numba_backend.join._split
@attrs.frozen(cache_hash=True)
class Split(Op):
    """`x` cut along `axis` into consecutive pieces whose lengths the second input (an
    int64 vector) gives; `sizes` holds those known when the graph was built."""

    axis: int = attrs.field(converter=int)
    sizes: tuple[int | None, ...] = attrs.field(converter=as_static_shape)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 2:
            raise TypeError(f"{self}: expected 2 inputs (x, sizes), got {len(input_types)}")
        x, sizes_type = input_types
        check_shape_input(self, sizes_type, len(self.sizes))
        if not 0 <= self.axis < x.ndim:
            raise ShapeError(f"{self}: axis {self.axis} is out of bounds for input {x}")
        sizes = list(self.sizes)
        total = x.shape[self.axis]
        unknown = [number for number, size in enumerate(sizes) if size is None]
        known_sum = sum(size for size in sizes if size is not None)
        if total is not None and (known_sum > total or (not unknown and known_sum != total)):
            raise ShapeError(
                f"{self}: pieces of lengths {format_shape(self.sizes)} do not add up to "
                f"length {total} of axis {self.axis} of {x}"
            )
        if total is not None and len(unknown) == 1:
            sizes[unknown[0]] = total - known_sum
        shapes = [x.shape[: self.axis] + (size,) + x.shape[self.axis + 1 :] for size in sizes]
        return tuple(TensorType(x.dtype, shape) for shape in shapes)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, sizes = inputs
        lengths = check_runtime_shape(self, sizes, self.sizes)
        if any(length < 0 for length in lengths) or sum(lengths) != x.shape[self.axis]:
            raise ShapeError(
                f"{self}: pieces of lengths {lengths} do not split axis {self.axis} of an "
                f"array of shape {x.shape}"
            )
        return tuple(np.split(x, np.cumsum(lengths[:-1]), axis=self.axis))

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        if all(cotangent is None for cotangent in cotangents):
            return (None, None)
        pieces = [zeros_like(y) if c is None else c for y, c in zip(outputs, cotangents)]
        return (Concatenate(self.axis)(*pieces), None)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        tangent, _ = tangents
        if tangent is None:
            return (None,) * len(outputs)
        return self.apply(tangent, inputs[1])


def split(x: TensorLike, sizes: ShapeLike, axis: int = 0) -> tuple[Variable, ...]:
    """Cut `x` along `axis` into pieces of the given lengths (which must add up to the
    axis's length), as PyTensor's `split`; NumPy's `split` takes cut points instead."""
    variable = as_tensor(x, name="split")
    if variable.ndim == 0:
        raise ShapeError("split: cannot split a scalar")
    axis = normalize_axis(axis, variable.ndim, "split")
    lengths = as_shape_vector(sizes, "split sizes")
    if not lengths.static:
        raise ValueError("split: needs at least one piece")
    return Split(axis, lengths.static).apply(variable, lengths.variable)


def concatenate(tensors: Sequence[TensorLike], axis: int | None = 0) -> Variable:
    """Join tensors along an existing axis, as `numpy.concatenate` (`axis=None` joins
    the flattened tensors); dtypes promote as in NumPy."""
    variables = [as_tensor(t, name="concatenate") for t in tensors]
    if not variables:
        raise ValueError("concatenate: needs at least one tensor")
    if axis is None:
        variables = [flatten(v) for v in variables]
        axis = 0
    shapes = ", ".join(format_shape(v.type.shape) for v in variables)
    if any(v.ndim != variables[0].ndim for v in variables):
        raise ShapeError(f"concatenate: tensors need equal ranks, got shapes {shapes}")
    if variables[0].ndim == 0:
        raise ShapeError(f"concatenate: cannot join scalars (shapes {shapes}); use stack")
    axis = normalize_axis(axis, variables[0].ndim, "concatenate")
    if len(variables) == 1:
        return variables[0]
    return Concatenate(axis)(*variables)


def stack(tensors: Sequence[TensorLike], axis: int = 0) -> Variable:
    """Join tensors of equal shape along a new axis, as `numpy.stack`."""
    variables = [as_tensor(t, name="stack") for t in tensors]
    if not variables:
        raise ValueError("stack: needs at least one tensor")
    shapes = ", ".join(format_shape(v.type.shape) for v in variables)
    if any(v.ndim != variables[0].ndim for v in variables):
        raise ShapeError(f"stack: tensors need equal shapes, got shapes {shapes}")
    axis = normalize_axis(axis, variables[0].ndim + 1, "stack")
    return concatenate([expand_dims(v, axis) for v in variables], axis)
