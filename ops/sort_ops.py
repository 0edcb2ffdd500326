"""Sorting: `sort`, `argsort` (stable, as NumPy's `kind="stable"`), `searchsorted`.

The ops sort along the last axis; the user functions move any other axis there and back
(views), so each op has one kernel. `sort` differentiates by sending each cotangent back
to the element that landed there (through the stable order); the indices of `argsort`
and `searchsorted` carry no derivative.
"""

from __future__ import annotations

from typing import Literal

import attrs
import numpy as np

from fgraph import DTypeError, Op, ShapeError, TensorType, Variable
from fgraph.dtypes import is_complex, is_integer
from fgraph.op import Array, NonDifferentiable
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.creation import arange
from ops.dimshuffle import normalize_axis, transpose
from ops.elementwise_functions import zeros_like
from ops.reshape_ops import flatten
from ops.subtensor import inc_subtensor


def _check_sortable(op: Op, x: TensorType) -> None:
    if x.ndim == 0:
        raise ShapeError(f"{op}: cannot sort a scalar ({x}); sort along an axis of an array")
    if is_complex(x.dtype):
        raise DTypeError(f"{op}: complex values have no order here, got {x}")


# Kernel: numba_backend.sort_ops._sort
@attrs.frozen
class Sort(Op):
    """`x` sorted along its last axis."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        _check_sortable(self, x)
        return (x,)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.sort(inputs[0], axis=-1, kind="stable"),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,), (cotangent,) = inputs, cotangents
        if cotangent is None:
            return (None,)
        order = Argsort()(x)
        return (inc_subtensor(zeros_like(x)[_along_last(x, order)], cotangent),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,), (tangent,) = inputs, tangents
        if tangent is None:
            return (None,)
        return (tangent[_along_last(x, Argsort()(x))],)


# Kernel: numba_backend.sort_ops._argsort
@attrs.frozen
class Argsort(NonDifferentiable):
    """The indices that sort `x` along its last axis (stable: equal values keep their
    order), as int64."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        _check_sortable(self, x)
        return (TensorType("int64", x.shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.argsort(inputs[0], axis=-1, kind="stable").astype(np.int64),)


# Kernel: numba_backend.sort_ops._searchsorted
@attrs.frozen
class SearchSorted(NonDifferentiable):
    """Where each of `values` would go in the sorted vector `sorted_array` to keep it
    sorted (`side="left"`: before equal elements, `"right"`: after), as int64."""

    side: Literal["left", "right"] = "left"

    def __attrs_post_init__(self) -> None:
        if self.side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {self.side!r}")

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        sorted_array, values = input_types
        if sorted_array.ndim != 1:
            raise ShapeError(f"{self}: the sorted array must be a vector, got {sorted_array}")
        _check_sortable(self, sorted_array)
        return (TensorType("int64", values.shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        sorted_array, values = inputs
        return (np.asarray(np.searchsorted(sorted_array, values, side=self.side), np.int64),)


def _along_last(x: Variable, order: Variable) -> tuple[Variable, ...]:
    """The advanced index reading `x` in `order` along its last axis."""
    lead = [
        arange(x.shape[axis]).dimshuffle(*(0 if a == axis else "x" for a in range(x.ndim)))
        for axis in range(x.ndim - 1)
    ]
    return (*lead, order)


def moveaxis_order(ndim: int, source: int, destination: int) -> list[int]:
    """The transpose order moving axis `source` to `destination`."""
    start, end = source % ndim, destination % ndim
    order = [axis for axis in range(ndim) if axis != start]
    order.insert(end, start)
    return order


def _to_last(x: Variable, axis: int | None, name: str) -> tuple[Variable, int]:
    if x.ndim == 0:
        raise ShapeError(f"{name}: cannot sort a scalar ({x.type}); sort along an axis of an array")
    if axis is None:
        return flatten(x), 0
    return x, normalize_axis(axis, x.ndim, name)


def sort(x: TensorLike, axis: int | None = -1) -> Variable:
    """`x` sorted along `axis` (the flattened array for None), as `numpy.sort`."""
    variable, axis = _to_last(as_tensor(x, name="sort"), axis, "sort")
    moved = transpose(variable, moveaxis_order(variable.ndim, axis, -1))
    return transpose(Sort()(moved), moveaxis_order(variable.ndim, -1, axis))


def argsort(x: TensorLike, axis: int | None = -1) -> Variable:
    """The int64 indices that sort `x` along `axis`, stable (NumPy's `kind="stable"`)."""
    variable, axis = _to_last(as_tensor(x, name="argsort"), axis, "argsort")
    moved = transpose(variable, moveaxis_order(variable.ndim, axis, -1))
    return transpose(Argsort()(moved), moveaxis_order(variable.ndim, -1, axis))


def searchsorted(
    sorted_array: TensorLike, values: TensorLike, side: Literal["left", "right"] = "left",
    sorter: TensorLike | None = None,
) -> Variable:
    """Insertion points of `values` in the sorted vector, as `numpy.searchsorted`; with
    `sorter` (integer indices that sort the vector, as `argsort` gives) the vector
    read in that order (`sorted_array[sorter]`) is the sorted one."""
    array = as_tensor(sorted_array, name="searchsorted")
    if sorter is not None:
        order = as_tensor(sorter, name="searchsorted sorter")
        if order.ndim != 1 or not is_integer(order.dtype):
            raise TypeError(
                f"searchsorted: sorter must be an integer vector, got {order.type}")
        if array.ndim != 1:
            raise ShapeError(f"searchsorted: the sorted array must be a vector, got {array.type}")
        array = array[order]
    return SearchSorted(side)(array, as_tensor(values, name="searchsorted"))
