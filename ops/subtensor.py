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

from fgraph import DTypeError, Op, TensorType, Variable
from fgraph.dtypes import can_cast_safely, is_integer
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from ops.advanced_subtensor import AdvancedIncSubtensor, AdvancedSubtensor
from ops.batching import batched_update
from ops.convert import as_tensor, as_tensors_weak
from ops.dimshuffle import normalize_axis
from ops.elemwise import as_destroy_map
from ops.elementwise_functions import cast, clip, mod
from ops.index_parsing import parse_index
from ops.indexing import (
    IndexRead,
    IndexUpdate,
    Entry,
    NewAxis,
    Slice,
    Symbolic,
    as_entries,
    check_in_bounds,
    check_rank,
    check_scalar_int,
    slice_length,
    types_per_entry,
)
from ops.reshape_ops import flatten
from ops.shape_vector import shape_i
from ops.indexing import FULL_SLICE

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


# Kernel: numba_backend.subtensor._subtensor
@attrs.frozen(cache_hash=True)
class Subtensor(IndexRead):
    """`x[idx]` for ints, slices and new axes (a view of `x`)."""

    idx_list: tuple[Entry, ...] = attrs.field(converter=as_entries)
    advanced: ClassVar[bool] = False

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Full slices over the batch axes, when only `x` is batched."""
        if any(batched[1:]):
            return None
        entries = (*(FULL_SLICE,) * batch_ndim, *self.idx_list)
        return (Subtensor(entries)(*inputs),), (True,)

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result may be a view of the input

    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        return basic_indexed_shape(self, x, self.idx_list, index_types)

    def scatter(self) -> Op:
        return IncSubtensor(self.idx_list, set_instead_of_inc=False)


# Kernel: numba_backend.subtensor._inc_subtensor
@attrs.frozen(cache_hash=True)
class IncSubtensor(IndexUpdate):
    """`x` with the basic-indexed region `x[idx]` set to or incremented by `y`, which
    broadcasts to the region."""

    idx_list: tuple[Entry, ...] = attrs.field(converter=as_entries)
    set_instead_of_inc: bool = False
    destroy_map: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=as_destroy_map)
    advanced: ClassVar[bool] = False

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """One update with full slices over the batch axes, which lead its region, when
        the indices are not batched (else a loop over the batch): see `batched_update`."""
        if any(batched[2:]):
            return None
        entries = (*(FULL_SLICE,) * batch_ndim, *self.idx_list)
        op = IncSubtensor(entries, set_instead_of_inc=self.set_instead_of_inc)
        return batched_update(self, op, inputs, batched, batch_ndim, position=0)

    def indexed_shape(
        self, x: TensorType, index_types: tuple[TensorType, ...]
    ) -> tuple[int | None, ...]:
        return basic_indexed_shape(self, x, self.idx_list, index_types)

    def read(self) -> Op:
        return Subtensor(self.idx_list)

    def setting(self) -> Op:
        return IncSubtensor(self.idx_list, set_instead_of_inc=True)

    def increment(self, result: Array, index: Any, y: Array) -> None:
        result[index] += y


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


def take(
    x: TensorLike, indices: TensorLike, axis: int | None = None, mode: str = "raise"
) -> Variable:
    """Elements of `x` at integer `indices` along `axis`, as `numpy.take` (over the
    flattened `x` when `axis` is None). `mode` says what an index outside [-n, n) does:
    "raise" an IndexError (negative indices count from the end), "wrap" around (the
    index modulo n), or "clip" to [0, n - 1] (so negative indices give the first
    element, as in NumPy). An empty axis has no element to wrap or clip to: it raises."""
    variable = as_tensor(x, name="take")
    if axis is None:
        return take(flatten(variable), indices, axis=0, mode=mode)
    leading = normalize_axis(axis, variable.ndim, "take")
    index = as_tensor(indices, name="take indices")
    if not is_integer(index.dtype):
        raise TypeError(f"take: indices must have an integer dtype, got {index.dtype}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if mode != "raise":
        length = shape_i(variable, leading)
        position = cast(index, "int64")
        index = mod(position, length) if mode == "wrap" else clip(position, 0, length - 1)
    return getitem(variable, (slice(None),) * leading + (index,))
