"""Shape simplifications: shapes read off the ops that set them, lengths read off the
inputs that have them, reductions over axes that hold one element, and slices of filled
arrays.

`x.shape` after `reshape(x, s)`, `alloc(v, s)` or `broadcast_to(x, s)` is `s` itself,
which lets the graph drop its dependency on the (possibly large) array. Likewise a
length of a result that an input has (an elementwise result's, a transpose's, a matrix
product's, a solve's: `rewrite.lengths`) is read off that input, down to the graph
inputs: the intermediate need not stay alive for its shape (nor is it kept from being
overwritten in place), and equal lengths become one variable, so what is computed from
them (an `arange` of a length) is computed once. A sum over an axis of length 1 only
drops that axis; and a slice of `alloc(v, s)` with a scalar `v` is a smaller alloc,
never a slice of a big one. (Shapes of fully static types become constants in
`rewrite.canonicalize`.)

A rule fires only where its result keeps the exact dtype and every known static length
of what it replaces.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from fgraph import Apply, Constant, TensorType, Variable
from ops.broadcast import BroadcastTo
from ops.creation import Alloc, alloc
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.reduction import Max, Min, Prod, Reduction, Sum
from ops.reshape_ops import Reshape
from ops.scalar_ops import Second
from ops.indexing import NewAxis
from ops.shape_vector import MakeVector, Shape, ShapeI, shape_i, static_value
from ops.subtensor import Subtensor
from rewrite.index_items import FULL, Item, SliceItem, unpack
from rewrite.lengths import length_source
from rewrite.patterns import replacement
from rewrite.rules import RuleSet, rule


def _is_non_negative_shape(vector: Variable) -> bool:
    """Whether a shape vector cannot hold reshape's -1 ("the rest"): another variable's
    shape, or lengths of other variables and non-negative constants."""
    if isinstance(vector, Constant):
        return bool(np.all(vector.data >= 0))
    match vector.owner:
        case Apply(op=Shape()):
            return True
        case Apply(op=MakeVector(), inputs=entries):
            return all(_is_length(entry) for entry in entries)
    return False


def _is_length(entry: Variable) -> bool:
    """A non-negative constant, `ShapeI(axis)(x)` or `x.shape[axis]`."""
    if isinstance(entry, Constant):
        return int(entry.data) >= 0
    match entry.owner:
        case Apply(op=ShapeI()):
            return True
        case Apply(op=Subtensor(idx_list=(int(),)), inputs=(Variable(owner=Apply(op=Shape())),)):
            return True
    return False


@rule(Shape)
def shape_of_shaping_op(node: Apply) -> Sequence[Variable] | None:
    """shape(alloc(v, s)) -> s, shape(broadcast_to(x, s)) -> s, and shape(reshape(x, s))
    -> s when s holds no -1."""
    match node:
        case Apply(inputs=(Variable(owner=Apply(op=Alloc() | BroadcastTo(), inputs=(_, s))),)):
            return replacement(s, node.out)
        case Apply(inputs=(Variable(owner=Apply(op=Reshape(), inputs=(_, s))),)):
            if _is_non_negative_shape(s):
                return replacement(s, node.out)
    return None


@rule(ShapeI)
def length_of_shaping_op(node: Apply) -> Sequence[Variable] | None:
    """ShapeI(k)(alloc(v, s)) -> the k-th entry of s, where the graph holds it (likewise
    broadcast_to, and reshape to a shape without -1)."""
    match node:
        case Apply(op=ShapeI(axis=axis), inputs=(Variable(owner=Apply() as shaping) as x,)):
            match shaping:
                case Apply(op=Alloc() | BroadcastTo(), inputs=(_, s)):
                    entries = shape_entries(s, x.ndim)
                case Apply(op=Reshape(), inputs=(_, s)) if _is_non_negative_shape(s):
                    entries = shape_entries(s, x.ndim)
                case _:
                    return None
            return None if entries is None else replacement(entries[axis], node.out)
    return None


@rule(ShapeI)
def length_of_input(node: Apply) -> Sequence[Variable] | None:
    """ShapeI(k)(f(x, ...)) -> ShapeI(j)(x) when f's result has x's length j along k
    (`rewrite.lengths.length_source`); the engine rewrites the result again, so a chain
    of such ops is read off its first input."""
    match node:
        case Apply(op=ShapeI(axis=axis), inputs=(x,)):
            found = length_source(x, axis)
            if found is None:
                return None
            source, source_axis = found
            return replacement(shape_i(source, source_axis), node.out)
    return None


@rule(Subtensor)
def length_read_off_shape(node: Apply) -> Sequence[Variable] | None:
    """x.shape[k] -> ShapeI(k)(x), which is a constant where x's length is static and
    what the other shape rules read."""
    match node:
        case Apply(
            op=Subtensor(idx_list=(int(axis),)),
            inputs=(Variable(owner=Apply(op=Shape(), inputs=(x,))),),
        ) if -x.ndim <= axis < x.ndim:
            return (shape_i(x, axis % x.ndim),)
    return None


@rule(Sum, Prod, Max, Min)
def reduce_axes_of_length_one(node: Apply) -> Sequence[Variable] | None:
    """Reducing over an axis of static length 1 only drops it: sum(x, axis=()) -> x,
    sum(x[:, None], axis=1) -> x, and the remaining axes are reduced as before."""
    match node:
        case Apply(op=Reduction(axes=axes) as op, inputs=(x,)):
            single = {axis for axis in axes if x.type.shape[axis] == 1}
            if axes and not single:
                return None
            kept = tuple(axis for axis in range(x.ndim) if axis not in single)
            squeezed = DimShuffle(kept)(x) if single else x
            remaining = tuple(kept.index(axis) for axis in axes if axis not in single)
            reduced = attrs.evolve(op, axes=remaining)(squeezed) if remaining else squeezed
            return replacement(reduced, node.out)
    return None


def filled(value: Variable, result: TensorType) -> Variable:
    """`value` allocated to the fully static shape of `result`."""
    lengths = np.array(result.shape, dtype="int64").reshape(result.ndim)
    return Alloc(result.shape)(value, Constant(lengths))


def shape_entries(vector: Variable, ndim: int) -> list[Variable] | None:
    """The lengths a shape vector holds, one int64 scalar each, where the graph says."""
    if isinstance(vector, Constant):
        return [Constant(np.asarray(length, dtype="int64")) for length in vector.data]
    match vector.owner:
        case Apply(op=MakeVector(), inputs=entries):
            return list(entries)
        case Apply(op=Shape(), inputs=(source,)):
            return [shape_i(source, axis) for axis in range(ndim)]
    return None


def indexed_lengths(
    items: Sequence[Item], lengths: Sequence[Variable], result: TensorType
) -> list[int | Variable] | None:
    """The lengths of x[items] given x's `lengths`: static where `result` knows them, the
    length of x where an axis is kept whole; None if another length is needed, or if an
    index is not known to be in bounds (x[items] would raise IndexError at run time:
    `alloc(v, n)[-1]` after zero steps of a loop)."""
    consumed = sum(not isinstance(item, NewAxis) for item in items)
    every = list(items) + [FULL] * (len(lengths) - consumed)
    found: list[int | Variable] = []
    axis = 0
    for item in every:
        if isinstance(item, NewAxis):
            found.append(1)
            continue
        if isinstance(item, SliceItem):
            static = result.shape[len(found)]
            if static is None and item != FULL:
                return None
            found.append(static if static is not None else lengths[axis])
        else:
            length = static_value(lengths[axis])
            if not (isinstance(item, int) and length is not None and -length <= item < length):
                return None
        axis += 1
    return found


@rule(Subtensor)
def subtensor_of_filled(node: Apply) -> Sequence[Variable] | None:
    """alloc(v, s)[i] -> alloc(v, shape of the result) for a scalar v: the slice of a
    filled array is a smaller filled array (when its lengths are static or x's own)."""
    match node:
        case Apply(
            op=Subtensor(idx_list=idx_list),
            inputs=(Variable(owner=Apply(op=Alloc(), inputs=(value, vector))) as x, *indices),
        ):
            entries = shape_entries(vector, x.ndim)
            if value.ndim != 0 or entries is None:
                return None
            lengths = indexed_lengths(unpack(idx_list, indices), entries, node.out.type)
            if lengths is None:
                return None
            return replacement(alloc(value, lengths), node.out)
    return None


@rule(Elemwise)
def fill_of_static_shape(node: Apply) -> Sequence[Variable] | None:
    """second(x, v) -> alloc(v, x's shape) when that shape is static: the result no
    longer depends on x (`zeros_like(x)` of a static x is a plain zeros)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Second()), inputs=(_, value)):
            result = node.out.type
            if result.is_fully_static:
                return replacement(filled(value, result), node.out)
    return None


SHAPES = RuleSet(
    "shapes",
    (
        shape_of_shaping_op,
        length_of_shaping_op,
        length_of_input,
        length_read_off_shape,
        reduce_axes_of_length_one,
        subtensor_of_filled,
        fill_of_static_shape,
    ),
)
"""Shape simplifications."""
