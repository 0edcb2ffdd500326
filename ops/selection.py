"""Selections whose length depends on the values: `nonzero`, `flatnonzero` and `unique`
(and `where`, which is `nonzero` given its condition alone, elementwise otherwise).

Their results have unknown lengths (`int64(?,)`), which fgraph's types carry like any
other. They are compositions around one masked index (`arange(n)[mask]`, which the
backend compiles with `np.nonzero`): the positions of the true elements of a mask.
`unique` sorts stably and keeps the first of each run of equal values, so its values
differentiate through the sort and the index (each to the element of first
occurrence).
"""

from __future__ import annotations

from typing import Literal, overload

from fgraph import ShapeError, Variable
from fgraph.dtypes import is_bool, is_inexact
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.creation import arange, ones_like, zeros
from ops.elementwise_functions import int_div, isnan, logical_and, logical_not, mod, neq
from ops.elementwise_functions import where as elementwise_where
from ops.join import concatenate
from ops.numpy_functions import diff
from ops.reduction import cumsum
from ops.reshape_ops import flatten, reshape
from ops.shape_vector import shape_i
from ops.sort_ops import argsort, sort
from ops.subtensor import set_subtensor


def _truth(x: Variable) -> Variable:
    return x if is_bool(x.dtype) else neq(x, 0)


def _positions(mask: Variable) -> Variable:
    """The int64 positions of the true elements of the boolean vector `mask`."""
    return arange(shape_i(mask, 0))[mask]


def flatnonzero(a: TensorLike) -> Variable:
    """The int64 positions of the nonzero elements of `a` flattened, as
    `numpy.flatnonzero` (a vector of unknown length)."""
    return _positions(flatten(_truth(as_tensor(a, name="flatnonzero"))))


def nonzero(a: TensorLike) -> tuple[Variable, ...]:
    """The indices of the nonzero elements of `a`, one int64 vector (of unknown length)
    per axis, in C order, as `numpy.nonzero`; `a[nonzero(a)]` reads them. A 0-d input
    is an error, as in NumPy."""
    variable = as_tensor(a, name="nonzero")
    if variable.ndim == 0:
        raise ShapeError(f"nonzero: cannot take the nonzero of a 0-d value ({variable.type}); "
                         f"make it a vector first (NumPy refuses it too)")
    truth = _truth(variable)
    if variable.ndim == 1:
        return (_positions(truth),)
    positions = _positions(flatten(truth))
    indices = []
    stride: Variable | int = 1  # of the axis, in elements, counted from the last one
    for axis in reversed(range(variable.ndim)):
        length = shape_i(variable, axis)
        block = int_div(positions, stride) if axis < variable.ndim - 1 else positions
        indices.append(block if axis == 0 else mod(block, length))
        stride = length * stride
    return tuple(reversed(indices))


@overload
def where(cond: TensorLike) -> tuple[Variable, ...]: ...


@overload
def where(cond: TensorLike, x: TensorLike, y: TensorLike) -> Variable: ...


def where(
    cond: TensorLike, x: TensorLike | None = None, y: TensorLike | None = None
) -> Variable | tuple[Variable, ...]:
    """`x` where `cond` is true (nonzero), `y` elsewhere, as `numpy.where`. The result
    dtype comes from x and y alone, so `cond` never promotes it. A Python bool `cond` is
    refused: it is what `x == y` gives (identity), never an elementwise comparison.
    With `cond` alone, `nonzero(cond)`, as NumPy."""
    if x is None and y is None:
        return nonzero(cond)
    if x is None or y is None:
        raise TypeError("where: give both x and y, or neither (then it is nonzero(cond))")
    return elementwise_where(cond, x, y)


@overload
def unique(
    ar: TensorLike, return_index: Literal[False] = False, return_inverse: Literal[False] = False,
    return_counts: Literal[False] = False, axis: None = None, *, equal_nan: bool = True,
) -> Variable: ...


@overload
def unique(
    ar: TensorLike, return_index: bool = False, return_inverse: bool = False,
    return_counts: bool = False, axis: None = None, *, equal_nan: bool = True,
) -> Variable | tuple[Variable, ...]: ...


def unique(
    ar: TensorLike, return_index: bool = False, return_inverse: bool = False,
    return_counts: bool = False, axis: None = None, *, equal_nan: bool = True,
) -> Variable | tuple[Variable, ...]:
    """The sorted distinct elements of `ar` flattened, as `numpy.unique` with `axis=None`
    (the only axis supported), a vector of unknown length; with `return_index`,
    `return_inverse`, `return_counts` a tuple in NumPy's order adding the position of
    each value's first occurrence, the index of each input element in the result (of
    `ar`'s shape, as NumPy 2) and how often each value occurs. With `equal_nan` (NumPy's
    default) all NaNs count as one value, sorted last."""
    if axis is not None:
        raise ValueError(f"unique: only axis=None is supported, got axis={axis!r}")
    variable = as_tensor(ar, name="unique")
    values = flatten(variable)
    # The sorting permutation only where an output needs it: a sort is cheaper than an
    # argsort and a gather (NumPy takes the same shortcut).
    order = argsort(values) if return_index or return_inverse else None
    ordered = sort(values) if order is None else values[order]
    # A run of equal values starts at the first element and wherever a value differs
    # from the one before (NaNs all equal with `equal_nan`: they sort last).
    later, earlier = ordered[1:], ordered[:-1]
    starts = neq(later, earlier)
    if equal_nan and is_inexact(variable.dtype):
        starts = logical_and(starts, logical_not(logical_and(isnan(later), isnan(earlier))))
    first = ones_like(ordered[:1], dtype="bool")
    mask = concatenate([first, starts])
    result = [ordered[mask]]
    if order is not None and return_index:
        result.append(order[mask])
    if order is not None and return_inverse:
        runs = cumsum(mask) - 1
        inverse = set_subtensor(zeros([shape_i(values, 0)], "int64")[order], runs)
        result.append(reshape(inverse, [shape_i(variable, a) for a in range(variable.ndim)]))
    if return_counts:
        starts_at = _positions(mask)
        result.append(diff(concatenate([starts_at, shape_i(values, 0)[None]])))
    return result[0] if len(result) == 1 else tuple(result)
