"""Updates (`IncSubtensor`: `set_subtensor` / `inc_subtensor`) simplified.

Reverse mode writes every cotangent of an indexing into a fresh array of zeros
(`inc_subtensor(zeros_like(x)[i], g)`), and loops write their state into buffers one
step at a time; a second derivative differentiates those updates again. These rules
remove the updates that do nothing or everything (writing the whole array, adding
zero), collapse two updates of the same region into one, and drop the axes a value
gets only to broadcast. Indices are compared after `rewrite.subtensor`'s canonical
form, which the same pass brings them to.

A rule fires only where its result keeps the exact dtype and every known static length
of what it replaces.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from fgraph import Apply, Variable
from ops.broadcast import BroadcastTo
from ops.creation import Alloc
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.elementwise_functions import add
from ops.indexing import Entry
from ops.scalar_ops import Second
from ops.subtensor import IncSubtensor, basic_indexed_shape
from rewrite.index_items import FULL, Item, SliceItem, indexed_axes, pack, unpack
from rewrite.patterns import is_constant_value, replacement
from rewrite.rules import RuleSet, rule
from rewrite.subtensor import broadcast_value, canonical_item, canonical_items, disjoint


def is_zeros(variable: Variable) -> bool:
    """Whether `variable` is all zeros by construction: a zero constant, or a zero scalar
    allocated or broadcast to a shape (`zeros`, `zeros_like`)."""
    if is_constant_value(variable, 0):
        return True
    match variable.owner:
        case Apply(op=Alloc() | BroadcastTo(), inputs=(value, _)):
            return is_constant_value(value, 0)
        case Apply(op=Elemwise(scalar_op=Second()), inputs=(_, value)):
            return is_constant_value(value, 0)
    return False


def covers(items: Sequence[Item], x: Variable) -> bool:
    """Whether a basic index selects every element of `x` (only slices, each covering its
    axis by construction)."""
    if not all(isinstance(item, SliceItem) for item in items):
        return False
    return all(canonical_item(item, x, axis) == FULL for item, axis in indexed_axes(items))


@rule(IncSubtensor)
def canonical_update_index(node: Apply) -> Sequence[Variable] | None:
    """The index of an update in the canonical form `rewrite.subtensor` gives reads
    (x[-1] -> x[n - 1] on a known length n, ...), so that a write and a read of the
    same region have equal indices. Only where the region keeps its static shape: the
    value was checked against that shape."""
    match node:
        case Apply(op=IncSubtensor(idx_list=idx_list) as op, inputs=(x, y, *indices)):
            entries, canonical = pack(canonical_items(unpack(idx_list, indices), x), x)
            if (entries, canonical) == (idx_list, tuple(indices)):
                return None
            types = tuple(index.type for index in indices)
            region = basic_indexed_shape(op, x.type, idx_list, types)
            new_types = tuple(index.type for index in canonical)
            if basic_indexed_shape(op, x.type, entries, new_types) != region:
                return None
            return (attrs.evolve(op, idx_list=entries)(x, y, *canonical),)
    return None


@rule(IncSubtensor)
def update_of_everything(node: Apply) -> Sequence[Variable] | None:
    """An update whose index covers all of x: set -> y broadcast to x's shape; inc of
    zeros (`alloc(0, n)[:n].inc(y)`) -> the same; inc of anything else -> x + y."""
    match node:
        case Apply(op=IncSubtensor(idx_list=idx_list, set_instead_of_inc=is_set), inputs=inputs):
            x, y, *indices = inputs
            if not covers(unpack(idx_list, indices), x):
                return None
            if is_set or is_zeros(x):
                return replacement(broadcast_value(y, x), node.out)
            return replacement(add(x, y), node.out)
    return None


@rule(IncSubtensor)
def inc_by_zero(node: Apply) -> Sequence[Variable] | None:
    """inc_subtensor(x[i], 0) -> x."""
    match node:
        case Apply(op=IncSubtensor(set_instead_of_inc=False), inputs=(x, y, *_)):
            if is_constant_value(y, 0):
                return (x,)
    return None


@rule(IncSubtensor)
def inc_into_zeros(node: Apply) -> Sequence[Variable] | None:
    """inc_subtensor(zeros[i], y) -> set_subtensor(zeros[i], y): adding to zeros is
    writing (what a gradient of indexing builds; the write needs no read of the buffer)."""
    match node:
        case Apply(
            op=IncSubtensor(set_instead_of_inc=False, destroy_map=destroy_map) as op,
            inputs=(x, *rest),
        ) if is_zeros(x):
            setting = IncSubtensor(op.idx_list, set_instead_of_inc=True, destroy_map=destroy_map)
            return replacement(setting(x, *rest), node.out)
    return None


@rule(IncSubtensor)
def merge_updates_of_one_region(node: Apply) -> Sequence[Variable] | None:
    """Two updates of the same region (same basic index, same index inputs) in a row:
    set(update(x, a), b) -> set(x, b); inc(inc(x, a), b) -> inc(x, a + b);
    inc(set(x, a), b) -> set(x, a + b). A basic index writes each element once, so the
    second update sees exactly what the first one wrote."""
    match node:
        case Apply(
            op=IncSubtensor(idx_list=idx_list, set_instead_of_inc=outer_set),
            inputs=(Variable(owner=Apply(op=IncSubtensor() as inner) as first), b, *indices),
        ):
            x, a, *inner_indices = first.inputs
            if inner.idx_list != idx_list or inner_indices != indices:
                return None
            if outer_set:
                return (IncSubtensor(idx_list, True)(x, b, *indices),)
            return (IncSubtensor(idx_list, inner.set_instead_of_inc)(x, add(a, b), *indices),)
    return None


@rule(IncSubtensor)
def value_without_leading_new_axes(node: Apply) -> Sequence[Variable] | None:
    """update(x[i], expand_dims(y, 0)) -> update(x[i], y): broadcasting the value to the
    region adds leading axes of length 1 anyway."""
    match node:
        case Apply(
            op=IncSubtensor() as op,
            inputs=(x, Variable(owner=Apply(op=DimShuffle(order=order), inputs=(y,))), *indices),
        ):
            lead = len(order) - y.ndim
            if lead > 0 and order == (None,) * lead + tuple(range(y.ndim)):
                return (op(x, y, *indices),)
    return None


@rule(IncSubtensor)
def update_past_disjoint_update(node: Apply) -> Sequence[Variable] | None:
    """update_i(update_j(update_i(x, a), b), c) -> update_j(update_i(update_i(x, a), c), b)
    when regions i and j are statically disjoint: updates of disjoint regions commute,
    and the two updates of region i, now adjacent, merge. (It moves an update only to
    meet another one of the same region, so it cannot move updates back and forth.)"""
    match node:
        case Apply(
            op=IncSubtensor(idx_list=idx_list) as outer,
            inputs=(Variable(owner=Apply(op=IncSubtensor() as middle) as between), c, *indices),
        ):
            below, b, *middle_indices = between.inputs
            if not is_update_at(below, idx_list, indices):
                return None
            region, other = unpack(idx_list, indices), unpack(middle.idx_list, middle_indices)
            if disjoint(region, other, below):
                return (middle(outer(below, c, *indices), b, *middle_indices),)
    return None


def is_update_at(variable: Variable, idx_list: tuple[Entry, ...], indices: list[Variable]) -> bool:
    """Whether `variable` is an update of the region `idx_list` and `indices` select."""
    match variable.owner:
        case Apply(op=IncSubtensor(idx_list=found), inputs=(_, _, *found_indices)):
            return found == idx_list and found_indices == indices
    return False


INC_SUBTENSOR = RuleSet(
    "inc_subtensor",
    (
        canonical_update_index,
        update_of_everything,
        inc_by_zero,
        inc_into_zeros,
        merge_updates_of_one_region,
        value_without_leading_new_axes,
        update_past_disjoint_update,
    ),
)
"""Simplifications of functional updates."""
