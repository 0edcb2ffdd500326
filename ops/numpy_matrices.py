"""NumPy's functions of vectors and matrix positions built from existing ops: `cross`,
`triu_indices`, `tril_indices` (and their `_from` forms), `fill_diagonal`.

`cross` is products of components; the triangle indices are a mask over positions,
gathered (so `n` may be a variable; lengths known when the graph is built give
constants); `fill_diagonal` is a strided slice update of the flattened array, as NumPy
writes it, which makes it a value rather than a mutation, with the update's gradient.
"""

from __future__ import annotations

import numpy as np

from fgraph import ShapeError, Variable
from fgraph.dtypes import is_integer
from fgraph.operators import TensorLike
from ops.convert import as_tensor, constant
from ops.creation import arange
from ops.dimshuffle import expand_dims, normalize_axis
from ops.elementwise_functions import cast, ge, int_div, le, minimum, mod, mul, neg, sub
from ops.join import stack
from ops.numpy_functions import moveaxis
from ops.reshape_ops import flatten, reshape, specify_shape
from ops.shape_vector import shape_i, static_value
from ops.subtensor import set_subtensor


def cross(
    a: TensorLike, b: TensorLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
    axis: int | None = None,
) -> Variable:
    """The cross product of 3-vectors along `axisa` of `a` and `axisb` of `b` (the last
    axes by default; `axis` sets all three), broadcast over the other axes and placed
    along `axisc`, as `numpy.cross`. A 2-vector counts as a 3-vector with a zero third
    component; two 2-vectors give the scalar z component (NumPy deprecates that). The
    vector axes' lengths must be known when the graph is built."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = as_tensor(a, name="cross a"), as_tensor(b, name="cross b")
    first = _components(x, axisa, "a")
    second = _components(y, axisb, "b")
    if len(first) == 2 and len(second) == 2:
        return _difference(first[0], second[1], first[1], second[0])
    a0, a1, a2 = (*first, None)[:3]
    b0, b1, b2 = (*second, None)[:3]
    product = stack(
        [_difference(a1, b2, a2, b1), _difference(a2, b0, a0, b2), _difference(a0, b1, a1, b0)],
        axis=-1,
    )
    return moveaxis(product, -1, normalize_axis(axisc, product.ndim, "cross axisc"))


def _components(vectors: Variable, axis: int, name: str) -> list[Variable]:
    """The 2 or 3 components of the vectors along `axis`, each over the other axes."""
    if vectors.ndim == 0:
        raise ShapeError(f"cross: {name} must have at least one axis, got {vectors.type}")
    axis = normalize_axis(axis, vectors.ndim, f"cross axis{name}")
    length = vectors.type.shape[axis]
    if length not in (2, 3):
        shown = "unknown" if length is None else str(length)
        raise ShapeError(
            f"cross: axis {axis} of {name} ({vectors.type}) must have static length 2 or 3, "
            f"got {shown} (give it a static length with specify_shape)"
        )
    last = moveaxis(vectors, axis, -1)
    return [last[..., number] for number in range(length)]


def _difference(
    p: Variable | None, q: Variable | None, r: Variable | None, s: Variable | None
) -> Variable:
    """p*q - r*s, leaving out a product with a missing (zero) component as NumPy does,
    so that infinities and NaN in the other factor do not make NaN."""
    if p is None or q is None:
        assert r is not None and s is not None
        return neg(mul(r, s))
    if r is None or s is None:
        return mul(p, q)
    return sub(mul(p, q), mul(r, s))


def triu_indices(
    n: TensorLike, k: TensorLike = 0, m: TensorLike | None = None
) -> tuple[Variable, Variable]:
    """The row and column indices (int64 vectors, in row-major order) of the elements
    on and above diagonal `k` of an (n, m) matrix (m = n by default), as
    `numpy.triu_indices`; n, m and k may be integer scalar variables."""
    return _triangle_indices(n, k, m, upper=True)


def tril_indices(
    n: TensorLike, k: TensorLike = 0, m: TensorLike | None = None
) -> tuple[Variable, Variable]:
    """The row and column indices (int64 vectors, in row-major order) of the elements
    on and below diagonal `k` of an (n, m) matrix (m = n by default), as
    `numpy.tril_indices`; n, m and k may be integer scalar variables."""
    return _triangle_indices(n, k, m, upper=False)


def triu_indices_from(arr: TensorLike, k: TensorLike = 0) -> tuple[Variable, Variable]:
    """`triu_indices` for the shape of the matrix `arr`, as `numpy.triu_indices_from`."""
    rows, columns = _matrix_lengths(arr, "triu_indices_from")
    return _triangle_indices(rows, k, columns, upper=True)


def tril_indices_from(arr: TensorLike, k: TensorLike = 0) -> tuple[Variable, Variable]:
    """`tril_indices` for the shape of the matrix `arr`, as `numpy.tril_indices_from`."""
    rows, columns = _matrix_lengths(arr, "tril_indices_from")
    return _triangle_indices(rows, k, columns, upper=False)


def _matrix_lengths(arr: TensorLike, name: str) -> tuple[Variable, Variable]:
    matrix = as_tensor(arr, name=name)
    if matrix.ndim != 2:
        raise ShapeError(f"{name}: expected a matrix, got {matrix.type}")
    return shape_i(matrix, 0), shape_i(matrix, 1)


def _integer_scalar(value: TensorLike, name: str) -> Variable:
    variable = as_tensor(value, name=name)
    if variable.ndim != 0 or not is_integer(variable.dtype):
        raise TypeError(f"{name}: expected an integer scalar, got {variable.type}")
    return cast(variable, "int64")


def _triangle_indices(
    n: TensorLike, k: TensorLike, m: TensorLike | None, upper: bool
) -> tuple[Variable, Variable]:
    name = "triu_indices" if upper else "tril_indices"
    rows = _integer_scalar(n, f"{name} n")
    columns = rows if m is None else _integer_scalar(m, f"{name} m")
    offset = _integer_scalar(k, f"{name} k")
    static = [static_value(v) for v in (rows, columns, offset)]
    if None not in static:
        row_count, column_count, diagonal = (int(v) for v in static if v is not None)
        if row_count < 0 or column_count < 0:
            raise ValueError(f"{name}: negative dimensions ({row_count}, {column_count})")
        where = np.triu_indices if upper else np.tril_indices
        found = where(row_count, diagonal, column_count)
        return constant(found[0].astype("int64")), constant(found[1].astype("int64"))
    # Positions of the kept elements in the row-major (n, m) grid, one mask gathered once.
    height = sub(expand_dims(arange(columns), 0), expand_dims(arange(rows), 1))
    keep = ge(height, offset) if upper else le(height, offset)
    positions = arange(mul(rows, columns))[flatten(keep)]
    return int_div(positions, columns), mod(positions, columns)


def fill_diagonal(a: TensorLike, val: TensorLike) -> Variable:
    """A copy of `a` with its main diagonal (the elements a[i, i, ..., i]) set to `val`,
    as PyTensor's `fill_diagonal` and a value-returning `numpy.fill_diagonal`
    (`wrap=False`): a rectangular matrix fills min(rows, columns) elements; more than
    two axes must have equal lengths (checked when run). `val` is a scalar or broadcasts
    to the diagonal's length, and must convert to `a`'s dtype without loss."""
    array = as_tensor(a, name="fill_diagonal a")
    if array.ndim < 2:
        raise ShapeError(f"fill_diagonal: a must have at least 2 axes, got {array.type}")
    if array.ndim == 2:
        rows, columns = shape_i(array, 0), shape_i(array, 1)
        count, step = minimum(rows, columns), columns + 1
    else:
        known = {length for length in array.type.shape if length is not None}
        if len(known) > 1:
            raise ShapeError(
                f"fill_diagonal: a's axes must have equal lengths, got {array.type}"
            )
        count = shape_i(array, 0)
        array = specify_shape(array, [count] * array.ndim)
        # Consecutive diagonal elements are 1 + n + n**2 + ... elements apart.
        step = 1 + count
        power = count
        for _ in range(array.ndim - 2):
            power = power * count
            step = step + power
    flat = flatten(array)
    filled = set_subtensor(flat[: count * step : step], val)
    return reshape(filled, [shape_i(array, axis) for axis in range(array.ndim)])
