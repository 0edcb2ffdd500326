"""Parsing NumPy-style user indices (`x[1:, None, [0, 2]]`) into the `idx_list` an
indexing op holds and the variables its SYMBOLIC entries stand for.

Accepted: Python and NumPy ints, slices whose parts are ints, None or integer scalar
variables, None (new axis), one Ellipsis, and integer or boolean arrays (lists, NumPy
arrays, variables). Constants are folded where that gives static information: a
constant scalar becomes a static int, a constant boolean mask its `nonzero()` arrays.
"""

from __future__ import annotations

from types import EllipsisType

import attrs
import numpy as np

from fgraph import Constant, Variable
from fgraph.dtypes import is_bool, is_integer
from fgraph.op import Array
from ops.convert import constant
from ops.indexing import FULL_SLICE, NEW_AXIS, SYMBOLIC, Entry, NewAxis, Slice


@attrs.frozen
class _SliceItem:
    start: int | Variable | None
    stop: int | Variable | None
    step: int | Variable | None


_Item = int | Variable | _SliceItem | NewAxis | EllipsisType


@attrs.frozen
class ParsedIndex:
    """A user index as an `idx_list`, the node inputs for its SYMBOLIC entries, and
    whether it needs advanced indexing (an integer or boolean array somewhere)."""

    entries: tuple[Entry, ...]
    inputs: tuple[Variable, ...]
    advanced: bool


def parse_index(x: Variable, index: object) -> ParsedIndex:
    """Normalize a NumPy index for `x`: expand `...`, fold constant scalars to ints, turn
    constant boolean masks into integer arrays, check static bounds of constant arrays,
    and drop trailing full slices (so `x[1]` and `x[1, :]` are the same node)."""
    items = [_parse_item(item) for item in (index if isinstance(index, tuple) else (index,))]
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_axes_consumed(item) for item in items)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for {x.type}: rank {x.ndim}, {consumed} indexed")
    entries: list[Entry] = []
    inputs: list[Variable] = []
    advanced = any(isinstance(item, Variable) and _is_array_index(item) for item in items)
    axis = 0
    for item in items:
        if isinstance(item, EllipsisType):
            entries.extend([FULL_SLICE] * (x.ndim - consumed))
            axis += x.ndim - consumed
        elif isinstance(item, _SliceItem):
            parts = (item.start, item.stop, item.step)
            inputs.extend(part for part in parts if isinstance(part, Variable))
            entries.append(Slice(*(SYMBOLIC if isinstance(p, Variable) else p for p in parts)))
            axis += 1
        elif isinstance(item, Variable):
            arrays = _index_arrays(item, x.type.shape, axis)
            entries.extend([SYMBOLIC] * len(arrays))
            inputs.extend(arrays)
            axis += _axes_consumed(item)
        else:
            entries.append(item)
            axis += _axes_consumed(item)
    while entries and entries[-1] == FULL_SLICE:
        entries.pop()
    return ParsedIndex(tuple(entries), tuple(inputs), advanced)


def _is_array_index(variable: Variable) -> bool:
    """Integer arrays of rank >= 1 and boolean masks (symbolic ints are scalars)."""
    return variable.ndim > 0 or is_bool(variable.dtype)


def _axes_consumed(item: _Item) -> int:
    if isinstance(item, (NewAxis, EllipsisType)):
        return 0
    if isinstance(item, Variable) and is_bool(item.dtype):
        return item.ndim
    return 1


def _parse_item(item: object) -> _Item:
    if item is None:
        return NEW_AXIS
    if isinstance(item, EllipsisType):
        return item
    if isinstance(item, slice):
        step = _parse_bound(item.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        return _SliceItem(_parse_bound(item.start), _parse_bound(item.stop), step)
    if isinstance(item, (bool, np.bool_)):
        raise IndexError("scalar boolean indices (x[True]) are not supported")
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, Variable):
        return _parse_variable(item)
    if isinstance(item, (list, tuple, np.ndarray)):
        return _parse_variable(_array_constant(item))
    raise TypeError(
        "indices must be ints, slices, None, Ellipsis, or integer or boolean arrays; "
        f"got {type(item).__name__} {item!r}"
    )


def _array_constant(item: list[object] | tuple[object, ...] | Array) -> Variable:
    if any(isinstance(element, Variable) for element in np.ravel(np.asarray(item, dtype=object))):
        raise TypeError("an index list holding variables; combine them with ops.stack first")
    array = np.asarray(item)
    if array.size == 0 and array.dtype.kind == "f":  # NumPy reads `x[[]]` as integers
        array = array.astype(np.intp)
    return constant(array)


def _parse_variable(variable: Variable) -> int | Variable:
    if is_bool(variable.dtype):
        if variable.ndim == 0:
            raise IndexError("scalar boolean indices (x[True]) are not supported")
        return variable
    if not is_integer(variable.dtype):
        raise TypeError(
            f"index arrays must have an integer or bool dtype, got {variable.dtype} "
            f"({variable.type})"
        )
    if variable.ndim == 0 and isinstance(variable, Constant):
        return int(variable.data)
    return variable


def _parse_bound(part: object) -> int | Variable | None:
    if part is None:
        return None
    if isinstance(part, (bool, np.bool_)):
        raise TypeError(f"slice bounds must be integers, got {part!r}")
    if isinstance(part, (int, np.integer)):
        return int(part)
    if isinstance(part, np.ndarray):
        part = constant(part)
    if isinstance(part, Variable):
        if not is_integer(part.dtype) or part.ndim != 0:
            raise TypeError(f"slice bounds must be integer scalars, got {part.type}")
        return int(part.data) if isinstance(part, Constant) else part
    raise TypeError(f"slice bounds must be ints, None or integer scalar variables, got {part!r}")


def _index_arrays(array: Variable, shape: tuple[int | None, ...], axis: int) -> list[Variable]:
    """The index inputs for one array index starting at `axis`: a constant boolean mask
    becomes its `nonzero()` integer arrays; constant integer arrays are bounds-checked."""
    if not isinstance(array, Constant):
        return [array]
    if is_bool(array.dtype):
        for offset, got in enumerate(array.data.shape):
            want = shape[axis + offset]
            if want is not None and got != want:
                raise IndexError(
                    f"boolean index did not match indexed variable along axis {axis + offset}: "
                    f"length {want}, mask length {got}"
                )
        return [constant(positions) for positions in np.nonzero(array.data)]
    length = shape[axis]
    if length is not None and array.data.size:
        outside = array.data[(array.data >= length) | (array.data < -length)]
        if outside.size:
            raise IndexError(
                f"index {int(outside.flat[0])} is out of bounds for axis {axis} "
                f"with length {length}"
            )
    return [array]
