"""NumPy's and PyTensor's array functions that are compositions of existing ops:
`relu`, `logaddexp`, `isclose`, `allclose`, `ifelse`, `floor_divide`, `power`, `flip`,
`swapaxes`, `moveaxis`, `ravel`, `roll`, `diff`, `tile` (counts may be variables),
`repeat`, `pad`, `split`, `diagonal`, `diag`, `trace`, `tril`, `triu`, `tensordot`,
`linspace`, `meshgrid`.

Being compositions, they need no kernel of their own, fuse and compile like what they
are built from, and differentiate through their parts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fgraph import Variable
from fgraph.operators import TensorLike
from ops.broadcast import broadcast_to
from ops.convert import as_tensor, as_tensors_weak, constant
from ops.creation import arange, zeros
from ops.dimshuffle import expand_dims, normalize_axis, transpose
from ops.elementwise_functions import (
    abs,
    add,
    cast,
    eq,
    int_div,
    isnan,
    le,
    log1p,
    logical_and,
    logical_or,
    maximum,
    minimum,
    mul,
    pow,
    sub,
    where,
)
from ops.elementwise_functions import exp as _exp
from ops.join import concatenate
from ops.join import split as split_sizes
from ops.matmul_op import matmul
from ops.reduction import all as reduce_all
from ops.reduction import sum as reduce_sum
from ops.reshape_ops import flatten, reshape
from ops.shape_vector import ShapeLike, as_shape_vector, shape_i
from ops.subtensor import set_subtensor


def relu(x: TensorLike) -> Variable:
    """max(x, 0), elementwise."""
    return maximum(x, 0)


def logaddexp(x: TensorLike, y: TensorLike) -> Variable:
    """log(exp(x) + exp(y)) without overflow, as `numpy.logaddexp` (equal infinities
    give themselves)."""
    a, b = as_tensors_weak([x, y], "logaddexp")
    larger = maximum(a, b)
    spread = log1p(_exp(-abs(sub(a, b))))
    # Where a == b (infinities included) the mean keeps the value and splits the
    # derivative evenly, as the smooth formula's limit does.
    return where(eq(a, b), add(mul(add(a, b), 0.5), np.log(2.0)), add(larger, spread))


def isclose(
    a: TensorLike, b: TensorLike, rtol: float = 1e-05, atol: float = 1e-08,
    equal_nan: bool = False,
) -> Variable:
    """|a - b| <= atol + rtol |b| elementwise, as `numpy.isclose` (infinities are close
    to themselves; nan to nan only with `equal_nan`)."""
    x, y = as_tensors_weak([a, b], "isclose")
    close = logical_or(le(abs(sub(x, y)), add(atol, mul(rtol, abs(y)))), eq(x, y))
    return logical_or(close, logical_and(isnan(x), isnan(y))) if equal_nan else close


def allclose(
    a: TensorLike, b: TensorLike, rtol: float = 1e-05, atol: float = 1e-08,
    equal_nan: bool = False,
) -> Variable:
    """Whether every element is close (`isclose`), as `numpy.allclose`."""
    return reduce_all(isclose(a, b, rtol, atol, equal_nan))


def ifelse(condition: TensorLike, then: TensorLike, otherwise: TensorLike) -> Variable:
    """`then` if the scalar `condition` is true, else `otherwise` (PyTensor's `ifelse`).
    Both branches are computed (it is `where` on a scalar condition): a lazy branch
    would need an op of its own."""
    cond = as_tensor(condition, name="ifelse condition")
    if cond.ndim != 0:
        raise TypeError(f"ifelse: the condition must be a scalar, got {cond.type}")
    return where(cond, then, otherwise)


def floor_divide(x: TensorLike, y: TensorLike) -> Variable:
    """x // y, as `numpy.floor_divide`."""
    return int_div(x, y)


def power(x: TensorLike, y: TensorLike) -> Variable:
    """x ** y, as `numpy.power`."""
    return pow(x, y)


def flip(x: TensorLike, axis: int | Sequence[int] | None = None) -> Variable:
    """The elements in reverse order along `axis` (every axis by default)."""
    variable = as_tensor(x, name="flip")
    axes = range(variable.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    flipped = {normalize_axis(a, variable.ndim, "flip") for a in axes}
    index = tuple(slice(None, None, -1) if a in flipped else slice(None) for a in range(variable.ndim))
    return variable[index]


def swapaxes(x: TensorLike, axis1: int, axis2: int) -> Variable:
    """`x` with two axes exchanged."""
    variable = as_tensor(x, name="swapaxes")
    first = normalize_axis(axis1, variable.ndim, "swapaxes")
    second = normalize_axis(axis2, variable.ndim, "swapaxes")
    order = list(range(variable.ndim))
    order[first], order[second] = order[second], order[first]
    return transpose(variable, order)


def moveaxis(x: TensorLike, source: int, destination: int) -> Variable:
    """`x` with axis `source` moved to position `destination`, as `numpy.moveaxis`."""
    variable = as_tensor(x, name="moveaxis")
    start = normalize_axis(source, variable.ndim, "moveaxis")
    end = normalize_axis(destination, variable.ndim, "moveaxis")
    order = [a for a in range(variable.ndim) if a != start]
    order.insert(end, start)
    return transpose(variable, order)


def ravel(x: TensorLike) -> Variable:
    """The elements as a vector, in C order."""
    return flatten(x)


def roll(x: TensorLike, shift: int, axis: int | None = None) -> Variable:
    """Elements shifted by `shift` along `axis` (of the flattened array by default), those
    leaving one end coming back at the other, as `numpy.roll`."""
    variable = as_tensor(x, name="roll")
    if axis is None:
        return reshape(roll(flatten(variable), shift, 0), variable.shape)
    axis = normalize_axis(axis, variable.ndim, "roll")
    length = variable.shape[axis]
    cut = length - shift % maximum(length, 1)  # where the rolled array's start was
    before = (slice(None),) * axis
    return concatenate([variable[(*before, slice(cut, None))],
                        variable[(*before, slice(None, cut))]], axis=axis)


def diff(x: TensorLike, n: int = 1, axis: int = -1) -> Variable:
    """The n-th differences along `axis`: `x[1:] - x[:-1]`, n times."""
    variable = as_tensor(x, name="diff")
    axis = normalize_axis(axis, variable.ndim, "diff")
    before = (slice(None),) * axis
    for _ in range(n):
        variable = sub(variable[(*before, slice(1, None))], variable[(*before, slice(None, -1))])
    return variable


def tile(x: TensorLike, reps: ShapeLike) -> Variable:
    """`x` repeated `reps[i]` times along axis i, as `numpy.tile`. `reps` is an int, a
    sequence of ints and integer scalar variables, or an integer vector variable of
    static length; the shorter of `x`'s axes and `reps` is padded with leading ones.
    Each repeated axis gets a new axis before it, broadcast to the count and merged with
    it by one reshape, whose derivative sums the copies."""
    variable = as_tensor(x, name="tile")
    counts = as_shape_vector(reps, "tile reps")
    while variable.ndim < len(counts.static):
        variable = expand_dims(variable, 0)
    padding = variable.ndim - len(counts.static)
    new_axes: list[int] = []  # where the count axes stand in the stretched array
    stretched: list[Variable | int] = []
    tiled: list[Variable | int] = []
    for axis in range(variable.ndim):
        static_length = variable.type.shape[axis]
        length = shape_i(variable, axis) if static_length is None else static_length
        known = counts.static[axis - padding] if axis >= padding else 1
        if known == 1:
            stretched.append(length)
            tiled.append(length)
            continue
        count = counts.variable[axis - padding] if known is None else known
        new_axes.append(len(stretched))
        stretched += [count, length]
        tiled.append(count * length)
    if not new_axes:
        return variable
    return reshape(broadcast_to(expand_dims(variable, new_axes), stretched), tiled)


def repeat(x: TensorLike, repeats: int, axis: int | None = None) -> Variable:
    """Each element repeated `repeats` times along `axis` (of the flattened array by
    default), as `numpy.repeat` with one static count."""
    variable = as_tensor(x, name="repeat")
    if axis is None:
        variable, axis = flatten(variable), 0
    axis = normalize_axis(axis, variable.ndim, "repeat")
    lengths = [variable.shape[a] for a in range(variable.ndim)]
    stretched = broadcast_to(
        expand_dims(variable, axis + 1), [*lengths[: axis + 1], repeats, *lengths[axis + 1 :]]
    )
    return reshape(stretched, [*lengths[:axis], lengths[axis] * repeats, *lengths[axis + 1 :]])


def pad(
    x: TensorLike, pad_width: int | Sequence[int] | Sequence[Sequence[int]],
    mode: str = "constant", constant_values: float = 0,
) -> Variable:
    """`x` with `pad_width` constant elements before and after along each axis, as
    `numpy.pad` in its default mode."""
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got {mode!r}")
    variable = as_tensor(x, name="pad")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (variable.ndim, 2))
    lengths = [variable.shape[a] + int(widths[a].sum()) for a in range(variable.ndim)]
    filled = add(zeros(lengths, variable.dtype), cast(constant(constant_values), variable.dtype))
    region = tuple(
        slice(int(before), None if after == 0 else -int(after)) for before, after in widths
    )
    return set_subtensor(filled[region], variable)


def split(
    x: TensorLike, indices_or_sections: int | Sequence[int], axis: int = 0
) -> tuple[Variable, ...]:
    """`x` cut along `axis`, as `numpy.split`: into equal sections (a count), or at the
    given indices."""
    variable = as_tensor(x, name="split")
    axis = normalize_axis(axis, variable.ndim, "split")
    length = variable.shape[axis]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        static = variable.type.shape[axis]
        if static is not None and static % sections:
            raise ValueError(f"split: {static} elements do not divide into {sections} sections")
        return split_sizes(variable, [int_div(length, sections)] * sections, axis)
    bounds = list(indices_or_sections)
    sizes: list[Variable | int] = [bounds[0]] if bounds else []
    sizes += [b - a for a, b in zip(bounds, bounds[1:])]
    sizes.append(sub(length, bounds[-1]) if bounds else length)
    return split_sizes(variable, sizes, axis)


def diagonal(x: TensorLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal `offset` above the main one of the matrices on `axis1` and `axis2`,
    as the last axis of the result (`numpy.diagonal`)."""
    variable = as_tensor(x, name="diagonal")
    first = normalize_axis(axis1, variable.ndim, "diagonal")
    second = normalize_axis(axis2, variable.ndim, "diagonal")
    if first == second:
        raise ValueError("diagonal: axis1 and axis2 must differ")
    rest = [a for a in range(variable.ndim) if a not in (first, second)]
    matrices = transpose(variable, [*rest, first, second])
    rows, columns = matrices.shape[-2], matrices.shape[-1]
    start = offset if offset >= 0 else -offset * columns
    count = maximum(0, minimum(rows, columns - offset) if offset >= 0 else minimum(rows + offset, columns))
    # The diagonal of a row-major matrix is every (columns + 1)-th element of its rows
    # laid end to end: a reshape and a strided slice, views where the layout allows, whose
    # derivative is a plain slice update (no index arrays to gather or scatter).
    flat = reshape(matrices, [*(matrices.shape[axis] for axis in range(len(rest))), rows * columns])
    step = columns + 1
    return flat[..., start : start + count * step : step]


def trace(x: TensorLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The sum of a diagonal (`numpy.trace`)."""
    return reduce_sum(diagonal(x, offset, axis1, axis2), axis=-1)


def diag(v: TensorLike, k: int = 0) -> Variable:
    """A vector's square matrix with it on diagonal `k`, or a matrix's diagonal `k`."""
    variable = as_tensor(v, name="diag")
    if variable.ndim == 2:
        return diagonal(variable, k)
    if variable.ndim != 1:
        raise ValueError(f"diag: expected a vector or a matrix, got {variable.type}")
    length = variable.shape[0]
    size = length + (k if k >= 0 else -k)
    positions = arange(length)
    rows, columns = (positions, positions + k) if k >= 0 else (positions - k, positions)
    return set_subtensor(zeros([size, size], variable.dtype)[rows, columns], variable)


def tril(x: TensorLike, k: int = 0) -> Variable:
    """`x` with the elements above diagonal `k` of its last two axes set to zero."""
    return _triangle(x, k, lower=True)


def triu(x: TensorLike, k: int = 0) -> Variable:
    """`x` with the elements below diagonal `k` of its last two axes set to zero."""
    return _triangle(x, k, lower=False)


def _triangle(x: TensorLike, k: int, lower: bool) -> Variable:
    variable = as_tensor(x, name="tril" if lower else "triu")
    if variable.ndim < 2:
        raise ValueError(f"tril/triu: expected at least 2 axes, got {variable.type}")
    rows = expand_dims(arange(variable.shape[-2]), 1)
    columns = expand_dims(arange(variable.shape[-1]), 0)
    keep = le(sub(columns, rows), k) if lower else le(sub(rows, columns), -k)
    return where(keep, variable, cast(constant(0), variable.dtype))


def tensordot(a: TensorLike, b: TensorLike, axes: int | Sequence[Sequence[int]] = 2) -> Variable:
    """Sum of products over the given axes of `a` and `b`, as `numpy.tensordot`: the free
    axes of `a`, then those of `b`. Lowered to a transpose, a reshape and one product."""
    x, y = as_tensor(a, name="tensordot"), as_tensor(b, name="tensordot")
    if isinstance(axes, int):
        summed_x = list(range(x.ndim - axes, x.ndim))
        summed_y = list(range(axes))
    else:
        summed_x = [normalize_axis(i, x.ndim, "tensordot") for i in axes[0]]
        summed_y = [normalize_axis(i, y.ndim, "tensordot") for i in axes[1]]
    if len(summed_x) != len(summed_y):
        raise ValueError(f"tensordot: {len(summed_x)} axes of a against {len(summed_y)} of b")
    free_x = [i for i in range(x.ndim) if i not in summed_x]
    free_y = [i for i in range(y.ndim) if i not in summed_y]

    def product(variable: Variable, chosen: list[int]) -> Variable | int:
        total: Variable | int = 1
        for axis in chosen:
            total = variable.shape[axis] if isinstance(total, int) else total * variable.shape[axis]
        return total

    left = reshape(transpose(x, [*free_x, *summed_x]), [product(x, free_x), product(x, summed_x)])
    right = reshape(transpose(y, [*summed_y, *free_y]), [product(y, summed_y), product(y, free_y)])
    shape = [*(x.shape[i] for i in free_x), *(y.shape[i] for i in free_y)]
    return reshape(matmul(left, right), shape)


def linspace(
    start: float, stop: float, num: int = 50, endpoint: bool = True,
    dtype: npt.DTypeLike = "float64",
) -> Variable:
    """`num` evenly spaced values from `start` to `stop` (included with `endpoint`), as
    `numpy.linspace`."""
    if num < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num}")
    return constant(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


def meshgrid(*xs: TensorLike, indexing: str = "xy") -> tuple[Variable, ...]:
    """Coordinate arrays from vectors, as `numpy.meshgrid` ("xy": the first two axes
    swapped, Cartesian; "ij": matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [as_tensor(x, name="meshgrid") for x in xs]
    for vector in vectors:
        if vector.ndim != 1:
            raise ValueError(f"meshgrid: expected vectors, got {vector.type}")
    count = len(vectors)
    order = list(range(count))
    if indexing == "xy" and count >= 2:
        order[0], order[1] = 1, 0
    lengths = [vectors[order.index(axis)].shape[0] for axis in range(count)]
    grids = []
    for number, vector in enumerate(vectors):
        axis = order[number]
        shaped = vector
        for _ in range(axis):
            shaped = expand_dims(shaped, 0)
        for _ in range(count - axis - 1):
            shaped = expand_dims(shaped, shaped.ndim)
        grids.append(broadcast_to(shaped, lengths))
    return tuple(grids)
