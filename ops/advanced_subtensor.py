"""Advanced (integer- and boolean-array) indexing: `AdvancedSubtensor` and its update
`AdvancedIncSubtensor`, following NumPy's rules.

The index arrays (SYMBOLIC entries: integer arrays of any rank, or boolean masks of
rank >= 1 standing for their `nonzero()` arrays) and static ints broadcast together;
their broadcast shape replaces the indexed axes where the first of them stands if they
are adjacent in the index, and goes first otherwise (NumPy's placement rule). Slices
and new axes may be mixed in. Incrementing accumulates over repeated indices
(`np.add.at`), so the gradient of a gather is a scatter-add.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from fgraph import Op, TensorType, Variable, broadcast_shapes, format_shape
from fgraph.dtypes import is_bool, is_integer
from fgraph.errors import ShapeError
from fgraph.op import Array, Vectorized
from ops.batching import batched_update
from ops.dimshuffle import DimShuffle
from ops.elemwise import as_destroy_map
from ops.indexing import (
    FULL_SLICE,
    IndexRead,
    IndexUpdate,
    Entry,
    NewAxis,
    Slice,
    Symbolic,
    as_entries,
    check_in_bounds,
    check_rank,
    types_per_entry,
    slice_length,
)

Shape = tuple[int | None, ...]


def advanced_indexed_shape(
    op: object, x: TensorType, entries: tuple[Entry, ...], index_types: tuple[TensorType, ...]
) -> Shape:
    """The static shape of `x[entries]` under NumPy's advanced-indexing rules."""
    types_of = types_per_entry(op, entries, index_types)
    check_rank(op, x, sum(_axes_indexed(entry, types) for entry, types in zip(entries, types_of)))
    lengths: list[int | None] = []  # of the axes slices and new axes give, in order
    index_shapes: list[Shape] = []
    insert_at: int | None = None  # where in `lengths` the first advanced entry stands
    axis = 0
    for entry, types in zip(entries, types_of):
        if isinstance(entry, NewAxis):
            lengths.append(1)
            continue
        if isinstance(entry, Slice):
            lengths.append(slice_length(op, entry, x.shape[axis], types))
        else:
            if isinstance(entry, Symbolic):
                index_shapes.append(_array_index_shape(op, x, axis, types[0]))
            else:
                check_in_bounds(op, entry, axis, x.shape[axis])
                index_shapes.append(())
            if insert_at is None:
                insert_at = len(lengths)
        axis += _axes_indexed(entry, types)
    try:
        indexed = broadcast_shapes(*index_shapes)
    except ShapeError as error:
        listed = ", ".join(format_shape(shape) for shape in index_shapes)
        raise IndexError(f"{op}: index arrays of shapes {listed} do not broadcast") from error
    if insert_at is None or _apart(entries):
        insert_at = 0  # advanced indices apart: NumPy puts their axes first
    return tuple(lengths[:insert_at]) + indexed + tuple(lengths[insert_at:]) + x.shape[axis:]


def _apart(entries: tuple[Entry, ...]) -> bool:
    """Whether slices or new axes stand between the advanced entries (ints and arrays),
    so that NumPy puts the axes of their broadcast shape first."""
    positions = [k for k, entry in enumerate(entries) if not isinstance(entry, (Slice, NewAxis))]
    return bool(positions) and positions[-1] - positions[0] + 1 != len(positions)


def batch_position(op: object, entries: tuple[Entry, ...], index_types: tuple[TensorType, ...]) -> int:
    """Where batch axes, indexed by full slices put in front of `entries`, stand in the
    result: first, unless the advanced entries are apart and NumPy puts the axes of
    their broadcast shape (a mask gives one) before them."""
    if not _apart(entries):
        return 0
    types_of = types_per_entry(op, entries, index_types)
    return max(
        (1 if is_bool(types[0].dtype) else types[0].ndim
         for entry, types in zip(entries, types_of) if isinstance(entry, Symbolic)),
        default=0,
    )


def _axes_indexed(entry: Entry, types: tuple[TensorType, ...]) -> int:
    if isinstance(entry, NewAxis):
        return 0
    if isinstance(entry, Symbolic) and is_bool(types[0].dtype):
        return types[0].ndim
    return 1


def _array_index_shape(op: object, x: TensorType, axis: int, index: TensorType) -> Shape:
    """The broadcasting shape of one index array: its own, or (count,) for a mask."""
    if is_integer(index.dtype):
        return index.shape
    if not is_bool(index.dtype):
        raise TypeError(f"{op}: index arrays must have an integer or bool dtype, got {index}")
    if index.ndim == 0:
        raise TypeError(f"{op}: scalar boolean indices are not supported, got {index}")
    for offset, got in enumerate(index.shape):
        want = x.shape[axis + offset]
        if None not in (want, got) and want != got:
            raise IndexError(
                f"{op}: boolean index of shape {format_shape(index.shape)} does not match "
                f"axis {axis + offset} of {x} (length {want})"
            )
    return (0,) if 0 in index.shape else (None,)


# Kernel: numba_backend.advanced_subtensor._advanced_subtensor
@attrs.frozen(cache_hash=True)
class AdvancedSubtensor(IndexRead):
    """`x[idx]` with integer or boolean arrays, static ints, slices and new axes, as
    NumPy's advanced indexing (a copy)."""

    idx_list: tuple[Entry, ...] = attrs.field(converter=as_entries)
    advanced: ClassVar[bool] = True

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """One read with full slices over the batch axes in front of the index, when
        only `x` is batched (else a loop over the batch); where NumPy puts the index
        arrays' axes first, the batch axes are moved back in front of them."""
        if any(batched[1:]):
            return None
        x, *indices = inputs
        read = AdvancedSubtensor((*(FULL_SLICE,) * batch_ndim, *self.idx_list))(x, *indices)
        position = batch_position(self, self.idx_list, tuple(v.type for v in indices))
        if position:
            batch_axes = range(position, position + batch_ndim)
            read = DimShuffle((*batch_axes, *range(position), *range(position + batch_ndim, read.ndim)))(read)
        return (read,), (True,)

    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        return advanced_indexed_shape(self, x, self.idx_list, index_types)

    def scatter(self) -> Op:
        return AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=False)


# Kernel: numba_backend.advanced_subtensor._advanced_inc_subtensor
@attrs.frozen(cache_hash=True)
class AdvancedIncSubtensor(IndexUpdate):
    """`x` with `x[idx]` (an advanced index) replaced by or incremented by `y`.

    Increments accumulate over repeated indices (`np.add.at`); a set with repeated
    indices keeps the last write, as NumPy does. The gradient of `y` under such a set
    still reaches every written element (PyTensor's convention)."""

    idx_list: tuple[Entry, ...] = attrs.field(converter=as_entries)
    set_instead_of_inc: bool = False
    destroy_map: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=as_destroy_map)
    advanced: ClassVar[bool] = True

    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        return advanced_indexed_shape(self, x, self.idx_list, index_types)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """One update with full slices over the batch axes in front of the index, when
        the indices are not batched (else a loop over the batch): see `batched_update`."""
        if any(batched[2:]):
            return None
        entries = (*(FULL_SLICE,) * batch_ndim, *self.idx_list)
        op = AdvancedIncSubtensor(entries, set_instead_of_inc=self.set_instead_of_inc)
        position = batch_position(self, self.idx_list, tuple(v.type for v in inputs[2:]))
        return batched_update(self, op, inputs, batched, batch_ndim, position)

    def read(self) -> Op:
        return AdvancedSubtensor(self.idx_list)

    def setting(self) -> Op:
        return AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=True)

    def increment(self, result: Array, index: Any, y: Array) -> None:
        np.add.at(result, index, y)


