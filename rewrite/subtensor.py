"""Basic indexing (`Subtensor`) simplified: one canonical form per index, chains of
indexing merged into one, reads of an updated array answered from the update, and
indexing moved before elementwise work.

Gradients of loops are full of `x[i]` read from `set_subtensor(buffer[j], v)` and of
slices of slices; these rules turn them into `v` (i == j, or i inside j), `buffer[i]`
(i and j statically disjoint) and single slices, so equal indices become equal nodes
(interning then merges them) and the update rules in `rewrite.inc_subtensor` can see
through them.

A rule fires only where its result keeps the exact dtype and every known static length
of what it replaces; indices that are out of bounds are left for run time to report.
As everywhere in this library, an axis of unknown length is taken never to be
stretched by broadcasting (see `ops.broadcast`).
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from ops.broadcast import broadcast_to
from ops.elemwise import Elemwise
from ops.elementwise_functions import add
from ops.indexing import NEW_AXIS, NewAxis
from ops.shape_vector import shape
from ops.subtensor import IncSubtensor, Subtensor
from rewrite.index_items import (
    FULL,
    Item,
    SliceItem,
    indexed_axes,
    is_length_of,
    pack,
    slice_of_range,
    static_int,
    static_range,
    subtensor,
    unpack,
)
from rewrite.context import RewriteContext
from rewrite.patterns import replacement
from rewrite.rules import RuleSet, context_rule, rule


# --- one canonical form per index -------------------------------------------------------------
def canonical_item(item: Item, x: Variable, axis: int) -> Item:
    """`item` on axis `axis` of `x` in canonical form: constants folded, negative ints and
    static slices on known lengths made explicit and non-negative, parts that say "the
    default" (start 0, step 1, stop at the length of the axis) dropped."""
    length = x.type.shape[axis]
    if isinstance(item, NewAxis):
        return item
    if not isinstance(item, SliceItem):
        index = static_int(item)
        if isinstance(index, int) and length is not None and -length <= index < 0:
            return index + length
        return item if index is None else index
    start, stop, step = (static_int(part) for part in item.parts)
    folded = SliceItem(start, stop, step)
    positions = static_range(folded, length)
    if positions is not None and length is not None:
        return slice_of_range(positions, length)
    forward = step is None or (isinstance(step, int) and step > 0)
    if forward and isinstance(stop, Variable) and is_length_of(stop, x, axis):
        stop = None
    if forward and isinstance(stop, int) and length is not None and stop >= length:
        stop = None
    start = None if start == 0 and forward else start  # x[0::-1] starts at 0, not the end
    return SliceItem(start, stop, None if step == 1 else step)


def canonical_items(items: Sequence[Item], x: Variable) -> tuple[Item, ...]:
    """Every item of a basic index on `x` in canonical form."""
    axes = {position: axis for position, (_, axis) in enumerate(indexed_axes(items))}
    result: list[Item] = []
    consumed = 0
    for item in items:
        if isinstance(item, NewAxis):
            result.append(item)
        else:
            result.append(canonical_item(item, x, axes[consumed]))
            consumed += 1
    return tuple(result)


@rule(Subtensor)
def canonical_subtensor(node: Apply) -> Sequence[Variable] | None:
    """x[:] -> x, x[0:n] -> x (n the length), x[::1] -> x, x[:x.shape[0]] -> x,
    x[3:-6:-1] -> its explicit form on a known length, x[-1] -> x[n - 1]."""
    match node:
        case Apply(op=Subtensor(idx_list=idx_list), inputs=(x, *inputs)):
            items = canonical_items(unpack(idx_list, inputs), x)
            if not idx_list or pack(items, x) != (idx_list, tuple(inputs)):
                return replacement(subtensor(x, items), node.out)
    return None


# --- chains of indexing ---------------------------------------------------------------------
def compose_on_axis(inner: SliceItem, outer: Item, length: int | None) -> Item | None:
    """The one index on an axis of `length` that `outer` applied after `inner` amounts
    to, or None where that is not known to be exact."""
    if outer == FULL:
        return inner
    if inner == FULL:
        return outer
    if isinstance(outer, NewAxis):
        return None
    positions = static_range(inner, length)
    if length is not None and positions is not None:
        if isinstance(outer, int):
            return positions[outer] if -len(positions) <= outer < len(positions) else None
        if isinstance(outer, SliceItem) and outer.is_static:
            start, stop, step = (part if isinstance(part, int) else None for part in outer.parts)
            return slice_of_range(positions[start:stop:step], length)
        return None
    return _compose_forward(inner, outer)


def _compose_forward(inner: SliceItem, outer: Item) -> Item | None:
    """x[s:e][c:d] -> x[s + c : min(e, s + d)] for static non-negative bounds and unit
    steps (exact on any length: both sides clip at the end of the axis)."""
    bounds = (inner.start, inner.stop) + (
        (outer.start, outer.stop) if isinstance(outer, SliceItem) else (outer,)
    )
    if not all(bound is None or (isinstance(bound, int) and bound >= 0) for bound in bounds):
        return None
    if inner.step is not None:
        return None
    start = inner.start if isinstance(inner.start, int) else 0
    if isinstance(outer, int):
        # x[s + k] is out of bounds exactly when x[s:e][k] is, unless k >= e - s.
        within = not isinstance(inner.stop, int) or start + outer < inner.stop
        return start + outer if within else None
    if not isinstance(outer, SliceItem) or outer.step is not None:
        return None
    offset = outer.start if isinstance(outer.start, int) else 0
    stops = [bound for bound in (inner.stop, _shifted(outer.stop, start)) if bound is not None]
    return SliceItem(start + offset or None, min(stops) if stops else None)


def _shifted(bound: Item | None, offset: int) -> int | None:
    return bound + offset if isinstance(bound, int) else None


def compose(inner: Sequence[Item], outer: Sequence[Item], x: Variable) -> list[Item] | None:
    """One index on `x` equal to indexing with `inner` then `outer`, or None."""
    consumed = sum(not isinstance(item, NewAxis) for item in inner)
    inner_full = list(inner) + [FULL] * (x.ndim - consumed)
    pending = list(outer)
    composed: list[Item] = []

    def next_outer() -> Item:
        while pending and isinstance(pending[0], NewAxis):
            composed.append(pending.pop(0))
        return pending.pop(0) if pending else FULL

    axis = 0
    for item in inner_full:
        if isinstance(item, NewAxis):
            applied = next_outer()
            index = static_int(applied) if isinstance(applied, (int, Variable)) else None
            if applied == FULL:
                composed.append(NEW_AXIS)
            elif not (isinstance(index, int) and index in (0, -1)):
                return None
            continue
        if isinstance(item, SliceItem):
            merged = compose_on_axis(item, next_outer(), x.type.shape[axis])
            if merged is None:
                return None
            composed.append(merged)
        else:
            composed.append(item)
        axis += 1
    composed.extend(pending)
    return composed


@rule(Subtensor)
def merge_subtensors(node: Apply) -> Sequence[Variable] | None:
    """x[a:b][c:d] -> x[e:f] (and ints, steps, new axes) where the composition is exact."""
    match node:
        case Apply(
            op=Subtensor(idx_list=outer_list),
            inputs=(
                Variable(owner=Apply(op=Subtensor(idx_list=inner_list), inputs=(x, *inner_inputs))),
                *outer_inputs,
            ),
        ):
            inner = unpack(inner_list, inner_inputs)
            composed = compose(inner, unpack(outer_list, outer_inputs), x)
            if composed is None:
                return None
            return replacement(subtensor(x, canonical_items(composed, x)), node.out)
    return None


# --- reading what an update wrote -------------------------------------------------------------
def broadcast_value(value: Variable, like: Variable) -> Variable:
    """`value` broadcast to the shape of `like` (whose dtype it has), as an update
    broadcasts it to its region: `value` itself where no axis is stretched (axes of
    unknown length are never stretched, see `ops.broadcast`)."""
    if value.ndim == like.ndim and all(
        have == want or (want is None and have != 1)
        for have, want in zip(value.type.shape, like.type.shape)
    ):
        return value
    return broadcast_to(value, shape(like))


def _positions(item: Item, length: int | None) -> range | None:
    """The positions a static item selects (a non-negative int also on unknown lengths)."""
    if isinstance(item, int) and item >= 0 and length is None:
        return range(item, item + 1)
    if isinstance(item, (int, SliceItem)):
        return static_range(item, length)
    return None


def disjoint(first: Sequence[Item], second: Sequence[Item], x: Variable) -> bool:
    """Whether two basic indices on `x` select statically disjoint regions: on some axis
    their positions do not meet."""
    by_axis = {axis: item for item, axis in indexed_axes(second)}
    for item, axis in indexed_axes(first):
        if axis not in by_axis:
            continue
        length = x.type.shape[axis]
        mine, theirs = _positions(item, length), _positions(by_axis[axis], length)
        if mine is not None and theirs is not None and not set(mine) & set(theirs):
            return True
    return False


@rule(Subtensor)
def subtensor_of_update(node: Apply) -> Sequence[Variable] | None:
    """set_subtensor(x[i], v)[i] -> v (broadcast to the region), inc_subtensor(x[i],
    v)[i] -> x[i] + v, and an update of x[j] read at a disjoint x[i] -> x[i]."""
    match node:
        case Apply(
            op=Subtensor() as read,
            inputs=(Variable(owner=Apply(op=IncSubtensor() as update) as written), *indices),
        ):
            x, y, *update_indices = written.inputs
            region = read(x, *indices)
            if update.idx_list == read.idx_list and update_indices == indices:
                if update.set_instead_of_inc:
                    return replacement(broadcast_value(y, region), node.out)
                return replacement(add(region, y), node.out)
            write_items = unpack(update.idx_list, update_indices)
            read_items = unpack(read.idx_list, indices)
            if disjoint(write_items, read_items, x):
                return replacement(region, node.out)
            within = index_within(write_items, read_items, x.ndim)
            if within is None:
                return None
            written_region = Subtensor(update.idx_list)(x, *update_indices)
            part = subtensor(y, value_index(within, y, written_region))
            if update.set_instead_of_inc:
                return replacement(broadcast_value(part, region), node.out)
            return replacement(add(region, part), node.out)
    return None


def _within_on_axis(write: Item, read: Item) -> Item | None:
    """Where `read` picks on the axis `write` sliced, counted inside the slice, if it
    picks there only (on any length: static non-negative bounds, unit steps)."""
    if write == FULL:
        return read
    if not isinstance(write, SliceItem) or write.step is not None:
        return None
    start, stop = write.start, write.stop
    if not (_non_negative(start) and _non_negative(stop)):
        return None
    offset = start if isinstance(start, int) else 0
    if isinstance(read, int):
        return read - offset if offset <= read and (stop is None or read < stop) else None
    if not isinstance(read, SliceItem) or read.step is not None:
        return None
    first, last = (0 if read.start is None else read.start), read.stop
    if not (isinstance(first, int) and first >= offset and _non_negative(last)):
        return None
    if stop is not None and (last is None or last > stop):
        return None
    return SliceItem(first - offset or None, None if last is None else last - offset)


def _non_negative(bound: Item | None) -> bool:
    """None, or a static int >= 0."""
    return bound is None or (isinstance(bound, int) and bound >= 0)


def index_within(write: Sequence[Item], read: Sequence[Item], ndim: int) -> list[Item] | None:
    """The index on the region `write` selects that picks what `read` picks from the
    whole array, when the read lies inside the written region; else None."""
    if any(isinstance(item, NewAxis) for item in (*write, *read)):
        return None
    padded_write = list(write) + [FULL] * (ndim - len(write))
    padded_read = list(read) + [FULL] * (ndim - len(read))
    within: list[Item] = []
    for write_item, read_item in zip(padded_write, padded_read):
        if not isinstance(write_item, SliceItem):
            # An axis the update indexes with an int: the read must pick that element.
            if isinstance(read_item, SliceItem) or isinstance(read_item, NewAxis):
                return None
            if isinstance(write_item, NewAxis) or static_int(write_item) != static_int(read_item):
                return None
            continue
        relative = _within_on_axis(write_item, read_item)
        if relative is None:
            return None
        within.append(relative)
    return within


def value_index(within: Sequence[Item], value: Variable, region: Variable) -> list[Item]:
    """The index on an update's value that picks what `within` picks from the region it
    is broadcast to: axes the value lacks are left out, stretched ones keep their one
    element (see `index_for_input`)."""
    return index_for_input(within[len(within) - value.ndim :], value, region)


# --- indexing before computing ---------------------------------------------------------------
def index_for_input(items: Sequence[Item], operand: Variable, result: Variable) -> list[Item]:
    """The index that picks from an operand broadcast to `result` what `items` picks
    from `result`: the same, except along axes the operand is broadcast along (static
    length 1 stretched), where it keeps its one element (an int becomes 0, a slice
    everything). The operand's axes align with the last ones of `result`."""
    lead = result.ndim - operand.ndim
    picked: list[Item] = []
    for item, axis in indexed_axes(items):
        length = result.type.shape[lead + axis]
        stretched = operand.type.shape[axis] == 1 and length != 1
        if not stretched:
            picked.append(item)
        else:
            picked.append(FULL if isinstance(item, SliceItem) else 0)
    return picked


@context_rule(Subtensor)
def subtensor_of_elemwise(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """f(a, b)[i] -> f(a[i], b[i]) when everything that reads f(a, b) is an indexing (so
    the full-size result need not be computed): the indexed operands are what the other
    rules simplify (reads of updates, slices of zeros)."""
    match node:
        case Apply(
            op=Subtensor(idx_list=idx_list),
            inputs=(Variable(owner=Apply(op=Elemwise(destroy_map=()) as op) as inner), *indices),
        ):
            if len(inner.outputs) != 1 or any(isinstance(entry, NewAxis) for entry in idx_list):
                return None
            result = inner.outputs[0]
            if context.is_output(result):
                return None
            if not all(isinstance(client.op, Subtensor) for client, _ in context.clients(result)):
                return None
            items = unpack(idx_list, indices)
            operands = (
                subtensor(operand, index_for_input(items, operand, result))
                for operand in inner.inputs
            )
            return replacement(op(*operands), node.out)
    return None


SUBTENSOR = RuleSet("subtensor", (canonical_subtensor, merge_subtensors, subtensor_of_update))
"""Simplifications of basic indexing."""

LIFT_SUBTENSOR = RuleSet("lift_subtensor", (subtensor_of_elemwise,))
"""Indexing moved before elementwise computations. Kept apart from `SUBTENSOR` because
it reads clients, which makes a pass sweep the graph until nothing changes."""
