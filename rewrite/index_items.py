"""Basic indices as the indexing rules reason about them: one item per index entry,
with each symbolic part replaced by the variable the node takes for it.

An indexing op keeps its index split in two (the static `idx_list` and the node's index
inputs, see `ops.indexing`). Rules that compare, compose or normalize indices want the
two zipped together: `unpack` does that and `pack` splits them again, folding constant
parts into static ints and dropping trailing full slices, as `ops.index_parsing` does
for user indices (so a rule's result is in the form a user's index would take).

Also here: static facts about one axis (is this variable the length of that axis?) and
exact slice arithmetic on known lengths, which Python's `range` does for us.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs
from fgraph import Apply, Constant, Variable
from fgraph.dtypes import is_integer
from ops.convert import constant
from ops.broadcast import BroadcastTo
from ops.creation import Alloc
from ops.elemwise import Elemwise
from ops.indexing import FULL_SLICE, SYMBOLIC, Entry, NewAxis, Slice, Symbolic
from ops.shape_vector import MakeVector, Shape, ShapeI
from ops.subtensor import Subtensor
from rewrite.lengths import length_root

Part = int | Variable | None
"""A slice part: static int, None, or the scalar int variable the node takes for it."""


@attrs.frozen
class SliceItem:
    """A slice whose symbolic parts are the variables standing for them."""

    start: Part = None
    stop: Part = None
    step: Part = None

    @property
    def parts(self) -> tuple[Part, Part, Part]:
        return (self.start, self.stop, self.step)

    @property
    def is_static(self) -> bool:
        return not any(isinstance(part, Variable) for part in self.parts)


FULL = SliceItem()
Item = int | Variable | SliceItem | NewAxis
"""One basic index entry: a static int, a scalar int variable, a slice or a new axis."""


def unpack(entries: tuple[Entry, ...], inputs: Sequence[Variable]) -> tuple[Item, ...]:
    """The items of an index held as `idx_list` `entries` and the node's index `inputs`."""
    remaining = iter(inputs)

    def part(bound: int | Symbolic | None) -> Part:
        return next(remaining) if isinstance(bound, Symbolic) else bound

    items: list[Item] = []
    for entry in entries:
        if isinstance(entry, Slice):
            items.append(SliceItem(part(entry.start), part(entry.stop), part(entry.step)))
        elif isinstance(entry, Symbolic):
            items.append(next(remaining))
        else:
            items.append(entry)
    return tuple(items)


def static_int(part: Part) -> int | Variable | None:
    """A part with a constant variable folded to its int."""
    if isinstance(part, Constant) and part.ndim == 0 and is_integer(part.dtype):
        return int(part.data)
    return part


def pack(
    items: Sequence[Item], x: Variable | None = None
) -> tuple[tuple[Entry, ...], tuple[Variable, ...]]:
    """`(idx_list, index inputs)` for `items`: constants folded, trailing full slices
    dropped. Given the indexed `x`, an int index known to be out of bounds stays an
    index input: folded into the op it would not build (the op checks static bounds),
    and a rewrite must leave that IndexError to the run, as the graph it replaces does."""
    entries: list[Entry] = []
    inputs: list[Variable] = []
    lengths = iter(() if x is None else x.type.shape)

    def bound(part: Part) -> int | Symbolic | None:
        folded = static_int(part)
        if isinstance(folded, Variable):
            inputs.append(folded)
            return SYMBOLIC
        return folded

    for item in items:
        length = None if isinstance(item, NewAxis) else next(lengths, None)
        index = static_int(item) if isinstance(item, (int, Variable)) else None
        if isinstance(index, int) and length is not None and not -length <= index < length:
            inputs.append(item if isinstance(item, Variable) else constant(index))
            entries.append(SYMBOLIC)
        elif isinstance(item, SliceItem):
            entries.append(Slice(bound(item.start), bound(item.stop), bound(item.step)))
        elif isinstance(item, Variable):
            folded = bound(item)
            entries.append(SYMBOLIC if folded is None else folded)
        else:
            entries.append(item)
    while entries and entries[-1] == FULL_SLICE:
        entries.pop()
    return tuple(entries), tuple(inputs)


def subtensor(x: Variable, items: Sequence[Item]) -> Variable:
    """`x[items]` as a node, or `x` itself when the index selects everything."""
    entries, inputs = pack(items, x)
    return Subtensor(entries)(x, *inputs) if entries else x


def indexed_axes(items: Sequence[Item]) -> Iterator[tuple[Item, int]]:
    """Each item that consumes an axis of the indexed variable, with that axis."""
    axis = 0
    for item in items:
        if isinstance(item, NewAxis):
            continue
        yield item, axis
        axis += 1


def is_length_of(length: Variable, x: Variable, axis: int) -> bool:
    """Whether `length` is, by construction, the run-time length of `x` along `axis`:
    `x.shape[axis]`, `ShapeI(axis)(x)`, the shape entry `x` was allocated or broadcast
    with, the length of an operand of the elementwise op computing `x`, or a constant
    equal to a static length."""
    static = x.type.shape[axis]
    folded = static_int(length)
    if isinstance(folded, int) or folded is None:
        return static is not None and folded == static
    match x.owner:
        case Apply(op=Alloc() | BroadcastTo(), inputs=(_, Variable(owner=Apply() as vector))):
            if isinstance(vector.op, MakeVector):
                return vector.inputs[axis] is length
            if isinstance(vector.op, Shape):  # zeros_like(y) is alloc(0, y.shape)
                return _is_length_read_off(length, vector.inputs[0], axis)
        case Apply(op=Elemwise(), inputs=operands):
            # zeros_like(x) is second(x, 0): its lengths are those of the operands it is
            # not broadcasting (one level only, so that chains cost nothing).
            return any(
                _is_length_read_off(length, operand, axis)
                for operand in operands
                if operand.type.shape[axis] != 1 or static == 1
            )
    return _is_length_read_off(length, x, axis)


def _is_length_read_off(length: Variable, x: Variable, axis: int) -> bool:
    """Whether `length` is `ShapeI(axis)(x)` or `x.shape[axis]`, or the length of a
    variable x's length along `axis` is read off (`rewrite.lengths.length_root`: the
    shape rules rewrite the former into the latter)."""
    match length.owner:
        case Apply(op=ShapeI(axis=which), inputs=(source,)):
            return length_root(source, which) == length_root(x, axis)
        case Apply(op=Subtensor(idx_list=(int(which),)), inputs=(Variable(owner=shape_node),)):
            match shape_node:
                case Apply(op=Shape(), inputs=(source,)) if source is x:
                    return which in (axis, axis - x.ndim)
    return False


def static_range(item: SliceItem | int, length: int | None) -> range | None:
    """The positions an int or a static slice selects on an axis of known `length`."""
    if length is None:
        return None
    if isinstance(item, int):
        return range(item % length, item % length + 1) if -length <= item < length else None
    if not item.is_static:
        return None
    start, stop, step = (part if isinstance(part, int) else None for part in item.parts)
    return range(*slice(start, stop, step).indices(length))


def slice_of_range(positions: range, length: int) -> SliceItem:
    """The canonical slice selecting `positions` on an axis of `length`: non-negative
    explicit bounds, None where a bound is the end of the axis, FULL for everything."""
    if len(positions) == 0:
        return SliceItem(0, 0)
    step = positions.step
    first, last = positions[0], positions[-1]
    if step > 0:
        if first == 0 and last + step >= length and step == 1:
            return FULL
        stop = None if last + step >= length else last + 1
        return SliceItem(first or None, stop, None if step == 1 else step)
    stop = last + step
    return SliceItem(None if first == length - 1 else first, None if stop < 0 else stop, step)

