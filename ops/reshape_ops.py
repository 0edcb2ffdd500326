"""`Reshape` (and `flatten` on it) and `SpecifyShape`, which asserts a shape.

Both take their target as an int64 vector input, so targets may be computed in the
graph (`reshape(y, x.shape)`), and keep what was known of it when the graph was built
as a parameter, so output types stay as static as the target allows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable, format_shape
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from fgraph.types import Shape as StaticShape
from ops.convert import as_tensor
from ops.dimshuffle import SHAPE_FUNCTIONS
from ops.elementwise_functions import mul
from ops.shape_vector import (
    ShapeLike,
    as_shape_vector,
    as_static_shape,
    check_runtime_shape,
    check_shape_input,
    shape,
    shape_i,
)


def _as_reshape_target(lengths: Sequence[int | None]) -> StaticShape:
    target = as_static_shape(lengths, allow_minus_one=True)
    if target.count(-1) > 1:
        raise ShapeError(f"reshape: at most one entry may be -1, got {format_shape(target)}")
    return target


def _static_size(shape: StaticShape) -> int | None:
    """The number of elements when the build-time shape determines it."""
    if 0 in shape:
        return 0
    return None if None in shape else math.prod(n for n in shape if n is not None)


# Kernel: numba_backend.reshape_ops._reshape
@attrs.frozen(cache_hash=True)
class Reshape(Op):
    """`x` with the shape given by an int64 vector input (one entry may be -1: the rest of
    the elements, as in NumPy). `target` holds the entries known at build time (None for
    the others)."""

    target: StaticShape = attrs.field(converter=_as_reshape_target)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Each element reshaped: the batch lengths, then the target (unbatched)."""
        if batched[1]:
            return None
        x, target = inputs
        batch = [x.type.shape[k] if x.type.shape[k] is not None else x.shape[k] for k in range(batch_ndim)]
        entries = [self.target[k] if self.target[k] is not None else target[k] for k in range(len(self.target))]
        return (reshape(x, [*batch, *entries]),), (True,)

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result may be a view of the input

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 2:
            raise TypeError(f"{self}: expected 2 inputs (x, shape), got {len(input_types)}")
        x, shape_type = input_types
        check_shape_input(self, shape_type, len(self.target))
        size = _static_size(x.shape)
        unknown = [axis for axis, n in enumerate(self.target) if n is None or n == -1]
        known = math.prod(n for n in self.target if n is not None and n >= 0)
        lengths = [None if n == -1 else n for n in self.target]
        if size is not None:
            fits = size == known if not unknown else (size % known == 0 if known else size == 0)
            if not fits:
                raise ShapeError(
                    f"{self}: cannot reshape {x} ({size} elements) into shape "
                    f"{format_shape(self.target)}"
                )
            if len(unknown) == 1 and known:
                lengths[unknown[0]] = size // known
        return (TensorType(x.dtype, tuple(lengths)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, target = inputs
        lengths = check_runtime_shape(self, target, self.target)
        error = f"{self}: cannot reshape an array of shape {x.shape} into shape {lengths}"
        if any(length < -1 for length in lengths) or lengths.count(-1) > 1:
            raise ShapeError(error)  # NumPy would take any negative entry for -1
        try:
            return (np.reshape(x, lengths),)
        except ValueError as numpy_error:
            raise ShapeError(error) from numpy_error

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, _ = inputs
        (cotangent,) = cotangents
        return (None if cotangent is None else reshape(cotangent, shape(x)), None)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        tangent, _ = tangents
        return (None if tangent is None else self(tangent, inputs[1]),)


def reshape(x: TensorLike, new_shape: ShapeLike) -> Variable:
    """`x` with a new shape of the same size, as `numpy.reshape` (one entry may be -1).
    `new_shape` may hold ints and integer scalar variables, or be an int vector variable
    such as another tensor's `.shape`."""
    variable = as_tensor(x, name="reshape")
    target = as_shape_vector(new_shape, "reshape", allow_minus_one=True)
    if variable.type.is_fully_static and target.static == variable.type.shape:
        return variable
    return Reshape(target.static)(variable, target.variable)


def flatten(x: TensorLike, ndim: int = 1) -> Variable:
    """`x` with its trailing axes merged so that `ndim` axes remain (1 by default: the
    `numpy.ndarray.flatten` of it, in C order), as PyTensor's `flatten`."""
    variable = as_tensor(x, name="flatten")
    if not 1 <= ndim <= max(variable.ndim, 1):
        raise ValueError(f"flatten: ndim must be in [1, {max(variable.ndim, 1)}], got {ndim}")
    if ndim == 1:
        return reshape(variable, (-1,))
    leading = [shape_i(variable, axis) for axis in range(ndim - 1)]
    trailing = variable.type.shape[ndim - 1 :]
    merged: int | Variable
    if None in trailing:
        merged = shape_i(variable, ndim - 1)
        for axis in range(ndim, variable.ndim):
            merged = mul(merged, shape_i(variable, axis))
    else:
        merged = math.prod(n for n in trailing if n is not None)
    return reshape(variable, [*leading, merged])


# Kernel: numba_backend.reshape_ops._specify_shape
@attrs.frozen(cache_hash=True)
class SpecifyShape(Op):
    """`x` itself, asserted to have the shape given by an int64 vector input (entries -1
    are not checked). `shape` holds the lengths known at build time, which refine the
    output type."""

    shape: StaticShape = attrs.field(converter=as_static_shape)

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result may be a view of the input

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 2:
            raise TypeError(f"{self}: expected 2 inputs (x, shape), got {len(input_types)}")
        x, shape_type = input_types
        check_shape_input(self, shape_type, len(self.shape))
        if x.ndim != len(self.shape) or any(
            want is not None and got is not None and want != got
            for want, got in zip(self.shape, x.shape)
        ):
            raise ShapeError(f"{self}: expected shape {format_shape(self.shape)}, got {x}")
        refined = tuple(got if want is None else want for want, got in zip(self.shape, x.shape))
        return (TensorType(x.dtype, refined),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, expected = inputs
        lengths = check_runtime_shape(self, expected, self.shape)
        if any(want >= 0 and want != got for want, got in zip(lengths, x.shape)):
            shown = tuple(None if n < 0 else n for n in lengths)
            raise ShapeError(f"{self}: expected shape {format_shape(shown)}, got {x.shape}")
        return (x,)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        return (cotangents[0], None)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        tangent, _ = tangents
        return (None if tangent is None else self(tangent, inputs[1]),)


def specify_shape(x: TensorLike, shape: ShapeLike) -> Variable:
    """`x`, asserted (when the graph runs) to have `shape`; None entries are not checked.
    The known lengths refine `x`'s static type, as PyTensor's `specify_shape`."""
    variable = as_tensor(x, name="specify_shape")
    if isinstance(shape, Sequence):
        shape = [-1 if length is None else length for length in shape]
    expected = as_shape_vector(shape, "specify_shape", allow_minus_one=True)
    if len(expected.static) != variable.ndim:
        raise ShapeError(
            f"specify_shape: expected shape {format_shape(expected.static)} has "
            f"{len(expected.static)} entries, but {variable.type} has rank {variable.ndim}"
        )
    known = variable.type.shape
    if all(n == -1 or (n is not None and n == k) for n, k in zip(expected.static, known)):
        return variable  # nothing to refine or check
    static = tuple(None if n == -1 else n for n in expected.static)
    return SpecifyShape(static)(variable, expected.variable)


SHAPE_FUNCTIONS.specify_shape = specify_shape  # for `DimShuffle`'s pullback (ops.dimshuffle)
