"""Basic indexing (`Subtensor`) and its functional update (`IncSubtensor`), and the user
API for all indexing: `x[index]` (`getitem`), `set_subtensor`, `inc_subtensor`, `take`.

Basic indices are ints, slices and new axes; the result has a static length wherever
the input's length and the slice's bounds are known. Indices holding an integer or
boolean array go to `ops.advanced_subtensor`. Updates are values, not mutations:
`set_subtensor(x[1:3], y)` is a new variable equal to `x` with rows 1 and 2 replaced.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from fgraph import DTypeError, Op, TensorType, Variable
from fgraph.dtypes import can_cast_safely, is_inexact, is_integer
from fgraph.op import Array
from fgraph.operators import TensorLike
from ops.advanced_subtensor import AdvancedIncSubtensor, AdvancedSubtensor
from ops.broadcast import sum_to
from ops.convert import as_tensor, as_tensors_weak, constant
from ops.dimshuffle import normalize_axis
from ops.elemwise import cast
from ops.index_parsing import parse_index
from ops.indexing import (
    IndexRead,
    Entry,
    NewAxis,
    Slice,
    Symbolic,
    as_entries,
    check_in_bounds,
    check_rank,
    check_scalar_int,
    check_update_dtype,
    check_update_shape,
    format_entries,
    numpy_index,
    slice_length,
    types_per_entry,
    update_tangent,
)
from ops.reshape import flatten

Shape = tuple[int | None, ...]


def basic_indexed_shape(
    op: object, x: TensorType, entries: tuple[Entry, ...], index_types: tuple[TensorType, ...]
) -> Shape:
    """The static shape of `x[entries]`, checking index input types and static bounds."""
    types_of = types_per_entry(op, entries, index_types)
    check_rank(op, x, sum(not isinstance(entry, NewAxis) for entry in entries))
    shape: list[int | None] = []
    axis = 0
    for entry, types in zip(entries, types_of):
        if isinstance(entry, NewAxis):
            shape.append(1)
            continue
        if isinstance(entry, Slice):
            shape.append(slice_length(op, entry, x.shape[axis], types))
        elif isinstance(entry, Symbolic):
            check_scalar_int(op, types[0], "a symbolic index")
        else:
            check_in_bounds(op, entry, axis, x.shape[axis])
        axis += 1
    return tuple(shape) + x.shape[axis:]


@attrs.frozen(cache_hash=True)
class Subtensor(IndexRead):
    """`x[idx]` for ints, slices and new axes (a view of `x`)."""

    idx_list: tuple[Entry, ...] = attrs.field(converter=as_entries)
    advanced: ClassVar[bool] = False

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result may be a view of the input

    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        return basic_indexed_shape(self, x, self.idx_list, index_types)

    def scatter(self) -> Op:
        return IncSubtensor(self.idx_list, set_instead_of_inc=False)


@attrs.frozen(cache_hash=True)
class IncSubtensor(Op):
    """`x` with `x[idx]` replaced by (`set_instead_of_inc`) or incremented by `y`, which
    broadcasts to the indexed region; inputs are `x`, `y`, then the index inputs."""

    idx_list: tuple[Entry, ...] = attrs.field(converter=as_entries)
    set_instead_of_inc: bool = False
    inplace: bool = False
    """Set by the inplace rewrite: the result is written into `x`'s buffer."""

    @property
    def destroy_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),) if self.inplace else ()

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        x, y, *index_types = input_types
        check_update_dtype(self, x, y)
        region = basic_indexed_shape(self, x, self.idx_list, tuple(index_types))
        check_update_shape(self, y, region)
        return (x,)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, y, *values = inputs
        index = numpy_index(self.idx_list, values, advanced=False)
        result = x.copy()
        try:
            if self.set_instead_of_inc:
                result[index] = y
            else:
                result[index] += y
        except (IndexError, ValueError) as error:
            raise type(error)(f"{self}: {error}") from error
        return (result,)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, y, *indices = inputs
        (cotangent,) = cotangents
        no_indices = (None,) * len(indices)
        if cotangent is None or not is_inexact(x.dtype):
            return (None, None, *no_indices)
        cotangent = cast(cotangent, x.dtype)
        if self.set_instead_of_inc:
            zero = constant(np.zeros((), dtype=x.dtype))
            grad_x = IncSubtensor(self.idx_list, set_instead_of_inc=True)(cotangent, zero, *indices)
        else:
            grad_x = cotangent
        grad_y = sum_to(Subtensor(self.idx_list)(cotangent, *indices), y.type)
        return (grad_x, grad_y, *no_indices)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, _, *indices = inputs
        tangent_x, tangent_y = tangents[0], tangents[1]
        return (update_tangent(self, self.set_instead_of_inc, x, tangent_x, tangent_y, indices),)

    def __str__(self) -> str:
        name = "SetSubtensor" if self.set_instead_of_inc else "IncSubtensor"
        return format_entries(name, self.idx_list) + ("{inplace}" if self.inplace else "")


def getitem(x: Variable, index: Any) -> Variable:
    """`x[index]` with NumPy's semantics: basic indexing (ints, slices, None, ...) gives a
    `Subtensor`, anything holding an integer or boolean array an `AdvancedSubtensor`."""
    parsed = parse_index(x, index)
    op: Op = AdvancedSubtensor(parsed.entries) if parsed.advanced else Subtensor(parsed.entries)
    return op(x, *parsed.inputs)


def set_subtensor(indexed: TensorLike, y: TensorLike) -> Variable:
    """`x[idx] = y` as a value: given `indexed = x[idx]`, the variable `x` with that region
    replaced by `y` (broadcast to it). `x` itself is never modified; repeated advanced
    indices keep the last write, as NumPy does."""
    return _update(indexed, y, set_instead_of_inc=True, name="set_subtensor")


def inc_subtensor(indexed: TensorLike, y: TensorLike) -> Variable:
    """`x[idx] += y` as a value: given `indexed = x[idx]`, the variable `x` with `y` added
    to that region. Repeated advanced indices accumulate (`np.add.at`), unlike NumPy's
    `x[idx] += y`, so that this is the gradient of indexing."""
    return _update(indexed, y, set_instead_of_inc=False, name="inc_subtensor")


def _update(indexed: TensorLike, y: TensorLike, set_instead_of_inc: bool, name: str) -> Variable:
    """Recover `x` and the index from the node that computed `indexed`, and update."""
    node = indexed.owner if isinstance(indexed, Variable) else None
    if node is None or not isinstance(node.op, (Subtensor, AdvancedSubtensor)):
        raise TypeError(
            f"{name}: the first argument must be the result of indexing a variable, such as "
            f"x[1:3]; got {indexed!r}"
        )
    x, *indices = node.inputs
    value = _update_value(x, y, name)
    op: Op
    if isinstance(node.op, Subtensor):
        op = IncSubtensor(node.op.idx_list, set_instead_of_inc)
    else:
        op = AdvancedIncSubtensor(node.op.idx_list, set_instead_of_inc)
    return op(x, value, *indices)


def _update_value(x: Variable, y: TensorLike, name: str) -> Variable:
    """`y` in `x`'s dtype: Python scalars adapt (NEP 50), other values must cast safely."""
    _, value = as_tensors_weak((x, y), name=name)
    if value.dtype == x.dtype:
        return value
    if not can_cast_safely(value.dtype, x.dtype):
        raise DTypeError(
            f"{name}: cannot write a {value.dtype} value into a {x.dtype} variable without "
            f"losing precision; convert it with .astype({x.dtype!r}) first"
        )
    return cast(value, x.dtype)


def take(x: TensorLike, indices: TensorLike, axis: int | None = None) -> Variable:
    """Elements of `x` at integer `indices` along `axis`, as `numpy.take` (over the
    flattened `x` when `axis` is None)."""
    variable = as_tensor(x, name="take")
    if axis is None:
        return take(flatten(variable), indices, axis=0)
    leading = normalize_axis(axis, variable.ndim, "take")
    index = as_tensor(indices, name="take indices")
    if not is_integer(index.dtype):
        raise TypeError(f"take: indices must have an integer dtype, got {index.dtype}")
    return getitem(variable, (slice(None),) * leading + (index,))
