"""Canonicalization: remove operations that do nothing and merge chains of shape
operations into one, so that later rule sets see one simple form of each computation.

Every rule here keeps values exactly (up to the sign of a zero: `-0.0 + 0` is `0.0`,
not `-0.0`, as in every array compiler) and keeps the exact type of what it replaces:
`x * 1` where the `1` would broadcast `x` to a larger static shape is left alone, and
where only the dtype differs (`int_x * 1.0`) the replacement is `x` cast to it.
Rules that could change values on special inputs (`x - x -> 0` is wrong for inf and
nan) are deliberately absent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fgraph import Apply, Constant, ShapeError, Variable
from fgraph.dtypes import can_cast_safely
from ops.broadcast import BroadcastTo
from ops.creation import Alloc
from ops.dimshuffle import DimShuffle, left_pad_rank
from ops.elemwise import Elemwise
from ops.elementwise_functions import ones_like
from ops.reshape_ops import Reshape
from ops.scalar_ops import Add, Cast, Mul, Neg, Pow, Second, Sub, TrueDiv
from ops.shape_vector import Shape, ShapeI
from rewrite.patterns import fit_to_type, is_constant_value, replacement
from rewrite.rules import RuleSet, rule


# --- neutral elements ------------------------------------------------------------------------
@rule(Elemwise)
def mul_by_one(node: Apply) -> Sequence[Variable] | None:
    """x * 1 -> x and 1 * x -> x."""
    match node:
        case Apply(op=Elemwise(scalar_op=Mul()), inputs=(x, one)) if is_constant_value(one, 1):
            return replacement(x, node.out)
        case Apply(op=Elemwise(scalar_op=Mul()), inputs=(one, x)) if is_constant_value(one, 1):
            return replacement(x, node.out)
    return None


@rule(Elemwise)
def mul_by_minus_one(node: Apply) -> Sequence[Variable] | None:
    """x * -1 -> -x and -1 * x -> -x (exact: both flip the sign bit, or wrap integers)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Mul()), inputs=(x, minus_one)) if is_constant_value(
            minus_one, -1
        ):
            return _negated(x, node.out)
        case Apply(op=Elemwise(scalar_op=Mul()), inputs=(minus_one, x)) if is_constant_value(
            minus_one, -1
        ):
            return _negated(x, node.out)
    return None


def _negated(x: Variable, product: Variable) -> Sequence[Variable] | None:
    """-x computed in the dtype of `product` (which it stands for)."""
    operand = fit_to_type(x, product.type)
    return None if operand is None else (Elemwise(Neg())(operand),)


@rule(Elemwise)
def add_zero(node: Apply) -> Sequence[Variable] | None:
    """x + 0 -> x and 0 + x -> x."""
    match node:
        case Apply(op=Elemwise(scalar_op=Add()), inputs=(x, zero)) if is_constant_value(zero, 0):
            return replacement(x, node.out)
        case Apply(op=Elemwise(scalar_op=Add()), inputs=(zero, x)) if is_constant_value(zero, 0):
            return replacement(x, node.out)
    return None


@rule(Elemwise)
def sub_zero(node: Apply) -> Sequence[Variable] | None:
    """x - 0 -> x."""
    match node:
        case Apply(op=Elemwise(scalar_op=Sub()), inputs=(x, zero)) if is_constant_value(zero, 0):
            return replacement(x, node.out)
    return None


@rule(Elemwise)
def div_by_one(node: Apply) -> Sequence[Variable] | None:
    """x / 1 -> x (as a float when x is an integer, as true division gives)."""
    match node:
        case Apply(op=Elemwise(scalar_op=TrueDiv()), inputs=(x, one)) if is_constant_value(one, 1):
            return replacement(x, node.out)
    return None


@rule(Elemwise)
def pow_one(node: Apply) -> Sequence[Variable] | None:
    """x ** 1 -> x."""
    match node:
        case Apply(op=Elemwise(scalar_op=Pow()), inputs=(x, one)) if is_constant_value(one, 1):
            return replacement(x, node.out)
    return None


@rule(Elemwise)
def pow_zero(node: Apply) -> Sequence[Variable] | None:
    """x ** 0 -> 1 (as NumPy, for nan and inf too), shaped like the result."""
    match node:
        case Apply(op=Elemwise(scalar_op=Pow()), inputs=(x, zero)) if is_constant_value(zero, 0):
            return replacement(ones_like(x) if x.type == node.out.type else ones_like(
                Elemwise(Second())(x, zero)), node.out)
    return None


@rule(Elemwise)
def double_neg(node: Apply) -> Sequence[Variable] | None:
    """-(-x) -> x (exact, also for wrapping unsigned integers)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Neg()), inputs=(Variable(owner=inner),)):
            match inner:
                case Apply(op=Elemwise(scalar_op=Neg()), inputs=(x,)):
                    return replacement(x, node.out)
    return None


# --- casts -----------------------------------------------------------------------------------
@rule(Elemwise)
def cast_to_own_dtype(node: Apply) -> Sequence[Variable] | None:
    """cast(x, x.dtype) -> x."""
    match node:
        case Apply(op=Elemwise(scalar_op=Cast(dtype=dtype)), inputs=(x,)) if x.dtype == dtype:
            return (x,)
    return None


@rule(Elemwise)
def merge_casts(node: Apply) -> Sequence[Variable] | None:
    """cast(cast(x, a), b) -> cast(x, b) when every value of x survives the cast to a
    (so the second cast sees x's own values)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Cast() as outer), inputs=(Variable(owner=inner),)):
            match inner:
                case Apply(op=Elemwise(scalar_op=Cast(dtype=middle)), inputs=(x,)):
                    if can_cast_safely(x.dtype, middle):
                        return (Elemwise(outer)(x),)
    return None


# --- shuffles, reshapes and broadcasts -------------------------------------------------------
@rule(DimShuffle)
def identity_dimshuffle(node: Apply) -> Sequence[Variable] | None:
    """A DimShuffle that keeps every axis in place -> its input. Dropping a length-1 axis
    and inserting a new one in its place (`v[:, 0][:, None]` once merged) counts too."""
    match node:
        case Apply(op=DimShuffle(order=order), inputs=(x,)) if len(order) == x.ndim and all(
            axis == position or (axis is None and x.type.shape[position] == 1)
            for position, axis in enumerate(order)
        ):
            return (x,)
    return None


@rule(DimShuffle)
def merge_dimshuffles(node: Apply) -> Sequence[Variable] | None:
    """DimShuffle(DimShuffle(x)) -> one DimShuffle of x. An axis the outer one drops has
    length 1 (it was a new axis or a length-1 axis of x), so the composition is valid."""
    match node:
        case Apply(op=DimShuffle(order=outer), inputs=(Variable(owner=inner),)):
            match inner:
                case Apply(op=DimShuffle(order=middle), inputs=(x,)):
                    order = tuple(None if axis is None else middle[axis] for axis in outer)
                    return (DimShuffle(order)(x),)
    return None


@rule(Reshape)
def merge_reshapes(node: Apply) -> Sequence[Variable] | None:
    """reshape(reshape(x, a), b) -> reshape(x, b): reshapes keep the C order of elements.
    Declines where b statically cannot fit x (the graph fails when it runs, as written)
    and where the merged reshape would lose a static length."""
    match node:
        case Apply(op=Reshape() as op, inputs=(Variable(owner=inner), target)):
            match inner:
                case Apply(op=Reshape(), inputs=(x, _)):
                    try:
                        merged = op(x, target)
                    except ShapeError:
                        return None
                    # Declines when the merged reshape would know less (x of unknown
                    # length reshaped to (1, -1) loses the static 6 the chain had).
                    return replacement(merged, node.out)
    return None


@rule(Reshape)
def identity_reshape(node: Apply) -> Sequence[Variable] | None:
    """reshape(x, s) -> x when s is x's own shape, or when x's shape is fully static and
    the result's static shape is the same."""
    match node:
        case Apply(op=Reshape(), inputs=(x, Variable(owner=Apply(op=Shape(), inputs=(source,))))):
            if source == x:  # outputs are value objects: equal, not always identical
                return replacement(x, node.out)
    x = node.inputs[0]
    if x.type.is_fully_static and node.output_types[0] == x.type:
        return (x,)
    return None


@rule(Elemwise, BroadcastTo, Alloc)
def needless_broadcast(node: Apply) -> Sequence[Variable] | None:
    """second(x, y) -> y, broadcast_to(y, s) -> y and alloc(y, s) -> y when the result
    has y's very type: then no axis is stretched (an axis of static length 1 stays 1,
    and one of unknown length is never stretched), so the values are y's. (Alloc's
    fresh buffer is not needed: the inplace pass never overwrites a variable that is
    not its own.)"""
    match node:
        case Apply(op=Elemwise(scalar_op=Second()), inputs=(_, y)) if y.type == node.out.type:
            return (y,)
        case Apply(op=BroadcastTo() | Alloc(), inputs=(y, _)) if y.type == node.out.type:
            return (y,)
    return None


@rule(Elemwise)
def broadcast_in_elementwise(node: Apply) -> Sequence[Variable] | None:
    """elemwise(..., alloc(y, s), ...) -> elemwise(..., y, ...), likewise for
    broadcast_to, when the result keeps its type and the broadcast's shape is static:
    the elementwise loop broadcasts y itself, where an array was filled first (PyTensor's
    `local_elemwise_alloc`; a gradient broadcasts its scalar cotangents so). Static
    shapes only, so that no run-time length check of the broadcast is lost."""
    if node.op.destroy_map:
        return None
    for k, x in enumerate(node.inputs):
        match x.owner:
            case Apply(op=BroadcastTo() | Alloc(), inputs=(y, _)) if (
                x.type.is_fully_static and y.dtype == x.dtype and y.ndim <= x.ndim
            ):
                inputs = list(node.inputs)
                inputs[k] = left_pad_rank(y, x.ndim)
                result = node.op(*inputs)
                if result.type == node.out.type:
                    return (result,)
    return None


@rule(Shape, ShapeI)
def static_shape(node: Apply) -> Sequence[Variable] | None:
    """shape(x) -> a constant when x's shape is fully static; likewise one known length."""
    match node:
        case Apply(op=Shape(), inputs=(x,)) if x.type.is_fully_static:
            return (Constant(np.array(x.type.shape, dtype="int64").reshape(x.ndim)),)
        case Apply(op=ShapeI(axis=axis), inputs=(x,)) if x.type.shape[axis] is not None:
            return (Constant(np.asarray(x.type.shape[axis], dtype="int64")),)
    return None


CANONICALIZE = RuleSet(
    "canonicalize",
    (
        mul_by_one,
        mul_by_minus_one,
        add_zero,
        sub_zero,
        div_by_one,
        pow_one,
        pow_zero,
        double_neg,
        cast_to_own_dtype,
        merge_casts,
        identity_dimshuffle,
        merge_dimshuffles,
        merge_reshapes,
        identity_reshape,
        needless_broadcast,
        broadcast_in_elementwise,
        static_shape,
    ),
)
"""Removing no-op operations and merging chains of shape operations."""
