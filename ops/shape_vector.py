"""Shapes as graph values: int64 vectors, and the one conversion every shape argument
goes through.

`Shape` (x -> its shape), `ShapeI` (x -> one length) and `MakeVector` (int64 scalars ->
a vector) build shape vectors. `as_shape_vector` turns whatever a user passes where a
shape is expected (ints, int scalar variables, a list mixing them, an int vector
variable) into an int64 vector variable plus the static shape it implies: lengths
known when the graph is built (constants, or lengths read off a static type through
`Shape` / `ShapeI`) stay static, so `reshape(y, x.shape)` is as well typed as `x`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import attrs
import numpy as np

from fgraph import Constant, DTypeError, Op, ShapeError, TensorType, Variable, format_shape
from fgraph.dtypes import is_integer
from fgraph.op import Array, NonDifferentiable, Vectorized
from fgraph.operators import TensorLike
from fgraph.types import Shape as StaticShape
from ops.convert import as_tensor, constant
from ops.dimshuffle import normalize_axis
from ops.elementwise_functions import cast

# What a user may pass as a shape: an int, an integer scalar or vector variable, or a
# sequence of ints and integer scalar variables. Typed as `TensorLike` because that is
# what variables' methods forward (`x.reshape(...)`); `as_shape_vector` checks the rest.
ShapeLike: TypeAlias = TensorLike


# Kernel: numba_backend.shape_vector._shape
@attrs.frozen(cache_hash=True)
class Shape(NonDifferentiable):
    """The shape of `x` as an int64 vector whose static length is `x`'s rank."""

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """The shape of one element: the same for every element, so not batched."""
        return (Shape()(inputs[0])[batch_ndim:],), (False,)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 1:
            raise TypeError(f"{self}: expected 1 input, got {len(input_types)}")
        return (TensorType("int64", (input_types[0].ndim,)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.asarray(inputs[0].shape, dtype="int64"),)


# Kernel: numba_backend.shape_vector._shape_i
@attrs.frozen(cache_hash=True)
class ShapeI(NonDifferentiable):
    """The length of `x` along `axis`, an int64 scalar (PyTensor's `Shape_i`)."""

    axis: int = attrs.field(converter=int)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """The length of one element's axis: not batched."""
        return (ShapeI(self.axis + batch_ndim)(inputs[0]),), (False,)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 1:
            raise TypeError(f"{self}: expected 1 input, got {len(input_types)}")
        (x,) = input_types
        if not 0 <= self.axis < x.ndim:
            raise ShapeError(f"{self}: axis {self.axis} is out of bounds for input {x}")
        return (TensorType("int64", ()),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.asarray(inputs[0].shape[self.axis], dtype="int64"),)


# Kernel: numba_backend.shape_vector._make_vector
@attrs.frozen(cache_hash=True)
class MakeVector(NonDifferentiable):
    """int64 scalars -> the int64 vector holding them: how symbolic shapes are assembled
    (`ops.stack` is the general, differentiable way to join tensors)."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        for number, scalar in enumerate(input_types):
            if scalar != TensorType("int64", ()):
                raise TypeError(f"{self}: input {number} must be an int64 scalar, got {scalar}")
        return (TensorType("int64", (len(input_types),)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.array([int(value) for value in inputs], dtype="int64"),)



def shape(x: TensorLike) -> Variable:
    """The shape of `x` as an int64 vector (`x.shape`); static lengths are in `x.type`."""
    return Shape()(as_tensor(x, name="shape"))


def shape_i(x: TensorLike, axis: int) -> Variable:
    """The length of `x` along `axis` as an int64 scalar: a constant when it is static."""
    variable = as_tensor(x, name="shape_i")
    axis = normalize_axis(axis, variable.ndim, "shape_i")
    length = variable.type.shape[axis]
    return ShapeI(axis)(variable) if length is None else constant(length, "int64")


def static_value(scalar: Variable) -> int | None:
    """The value of an integer scalar known when the graph is built, or None."""
    if isinstance(scalar, Constant) and scalar.ndim == 0 and is_integer(scalar.dtype):
        return int(scalar.data)
    node = scalar.owner
    if node is not None and isinstance(node.op, ShapeI):
        return node.inputs[0].type.shape[node.op.axis]
    return None


def static_entries(vector: Variable, what: str) -> StaticShape:
    """The entries of an int vector known when the graph is built (None for the others);
    its length, the rank of whatever the shape is for, must be static."""
    length = vector.type.shape[0]
    if length is None:
        raise ShapeError(
            f"{what}: a shape vector needs a static length (the result's rank), got {vector.type}"
        )
    if isinstance(vector, Constant):
        return tuple(int(value) for value in vector.data)
    node = vector.owner
    if node is not None and isinstance(node.op, Shape):
        return node.inputs[0].type.shape
    if node is not None and isinstance(node.op, MakeVector):
        return tuple(static_value(entry) for entry in node.inputs)
    return (None,) * length


@attrs.frozen
class ShapeVector:
    """A shape as a graph value (an int64 vector) and what is known of it statically."""

    variable: Variable
    static: tuple[int | None, ...]


def as_shape_vector(shape: ShapeLike, what: str, *, allow_minus_one: bool = False) -> ShapeVector:
    """Convert a shape-like to an int64 vector variable and its static entries.

    Accepts an int, an integer scalar or vector variable (of static length), or a
    sequence of ints and integer scalar variables. Known entries must be >= 0 (or -1
    with `allow_minus_one`, for reshape's "the rest"). A fully known shape becomes a
    constant, so graphs built from static types carry no shape computations.
    """
    if isinstance(shape, Variable) and shape.ndim == 1:
        _check_integer(shape, what)
        static = static_entries(shape, what)
        vector = cast(shape, "int64")
    else:
        lengths = tuple(_as_length(entry, what) for entry in _entries(shape, what))
        static = tuple(static_value(length) for length in lengths)
        vector = MakeVector()(*(cast(length, "int64") for length in lengths))
    _check_static(static, what, allow_minus_one)
    if None not in static:
        vector = constant(np.array(static, dtype="int64").reshape(len(static)))
    return ShapeVector(vector, static)


def _entries(shape: ShapeLike, what: str) -> Sequence[object]:
    """The entries of a shape that is not a vector variable."""
    if isinstance(shape, np.ndarray):
        listed: object = shape.tolist()
        return tuple(listed) if isinstance(listed, list) else (listed,)
    if isinstance(shape, Variable):
        if shape.ndim != 0:
            raise ShapeError(f"{what}: a shape must be a vector, got a variable of {shape.type}")
        return (shape,)
    if isinstance(shape, (list, tuple)):
        return shape
    return (shape,)


def _check_integer(variable: Variable, what: str) -> None:
    if not is_integer(variable.dtype):
        raise DTypeError(f"{what}: shape entries must be integers, got dtype {variable.dtype}")


def _as_length(entry: object, what: str) -> Variable:
    """One shape entry as an integer scalar variable."""
    if isinstance(entry, Variable):
        if entry.ndim != 0:
            raise ShapeError(
                f"{what}: each shape entry must be a scalar, got a variable of type {entry.type}"
            )
        _check_integer(entry, what)
        return entry
    if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (int, np.integer)):
        raise TypeError(f"{what}: shape entries must be ints or integer scalars, got {entry!r}")
    return constant(int(entry), "int64")


def _check_static(static: StaticShape, what: str, allow_minus_one: bool) -> None:
    lowest = -1 if allow_minus_one else 0
    for length in static:
        if length is not None and length < lowest:
            allowed = "non-negative or -1" if allow_minus_one else "non-negative"
            raise ShapeError(f"{what}: shape entries must be {allowed}, got {format_shape(static)}")


def as_static_shape(lengths: Sequence[int | None], allow_minus_one: bool = False) -> StaticShape:
    """Converter for ops' static-shape fields: a tuple of Python ints (>= 0, or -1 where
    allowed) and None for unknown."""
    normalized = tuple(None if length is None else int(length) for length in lengths)
    _check_static(normalized, "static shape", allow_minus_one)
    return normalized


def check_shape_input(op: Op, shape_type: TensorType, length: int) -> None:
    """The shape input of `op` must be an int64 vector of static length `length`."""
    if shape_type != TensorType("int64", (length,)):
        raise TypeError(f"{op}: the shape input must be int64({length},), got {shape_type}")


def check_runtime_shape(op: Op, runtime: Array, static: StaticShape) -> tuple[int, ...]:
    """The run-time shape vector as ints, checked against what `op` was built to expect."""
    lengths = tuple(int(length) for length in runtime)
    if len(lengths) != len(static) or any(
        want is not None and want != got for want, got in zip(static, lengths)
    ):
        raise ShapeError(f"{op}: the shape input is {lengths}, expected {format_shape(static)}")
    return lengths
