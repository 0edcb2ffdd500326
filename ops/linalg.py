"""`pt.linalg`: linear algebra with NumPy's and SciPy's names and conventions.

Stacked matrices (leading batch axes) work everywhere, as in NumPy. Integer inputs are
converted to float64; float32 stays float32. The ops (`Cholesky`, `Solve`, ...) live in
`ops.factorizations`, `ops.solves` and `ops.determinants`; what NumPy computes from them
(`pinv`, `lstsq`, `norm`, `matrix_power`, `kron`, `einsum`) is written here and in
`ops.einsum` as graphs of those ops, so it needs no kernel of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

from fgraph import DTypeError, ShapeError, Variable
from fgraph.dtypes import is_complex
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.determinants import Det, SLogDet
from ops.broadcast import broadcast_to
from ops.creation import eye
from ops.dimshuffle import DimShuffle, expand_dims, normalize_axis, squeeze, transpose
from ops.elemwise import abs as elementwise_abs
from ops.elemwise import cast, gt, mul, neq, pow, reciprocal, sqrt, where
from ops.factorizations import QR, SVD, Cholesky, Eigh
from ops.matmul import matmul, outer
from ops.matrix_op import LinAlgError, as_matrix_operand, pad_batch
from ops.matrix_parts import mT
from ops.numpy_functions import diagonal as numpy_diagonal
from ops.numpy_functions import tensordot
from ops.reduction import max as reduce_max
from ops.reduction import min as reduce_min
from ops.reduction import sum as reduce_sum
from ops.reshape import reshape
from ops.solves import CholeskySolve, Inv, Solve, SolveTriangular

__all__ = [
    "LinAlgError",
    "cho_solve",
    "cholesky",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "kron",
    "lstsq",
    "matmul",
    "matrix_power",
    "matrix_transpose",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "tensordot",
    "trace",
]


def cholesky(a: TensorLike, lower: bool = True) -> Variable:
    """The Cholesky factor of symmetric positive-definite matrices: L with a = L L^T
    (NumPy's result), or U with a = U^T U for `lower=False`. Reads only that triangle."""
    return Cholesky(lower)(as_matrix_operand(a, "cholesky"))


def _with_right_side(
    name: str, a: TensorLike, b: TensorLike, solve: Solve | SolveTriangular | CholeskySolve
) -> Variable:
    """`solve(a, b)` where a 1-d `b` is a vector (a column, dropped again afterwards), as
    NumPy and SciPy treat it; other ranks are stacks of (n, k) right-hand sides."""
    matrix = as_matrix_operand(a, name)
    right = as_matrix_operand(b, name, min_rank=1)
    vector = right.ndim == 1
    if vector:
        right = expand_dims(right, -1)
    matrix, right = pad_batch([matrix, right], (2, 2))
    solution = solve(matrix, right)
    return squeeze(solution, -1) if vector else solution


def solve(
    a: TensorLike, b: TensorLike, assume_a: Literal["gen", "sym", "pos"] = "gen",
    lower: bool = False,
) -> Variable:
    """x with a x = b (`numpy.linalg.solve`; `b` of rank 1 is a vector). With
    `assume_a="pos"`, a is symmetric positive definite and read from its `lower` (or
    upper) triangle, solved through its Cholesky factor, as `scipy.linalg.solve`; with
    `assume_a="sym"`, a is declared symmetric (all of it is read), which lets the
    rewrites reuse a Cholesky factor of it the graph computes."""
    if assume_a == "pos":
        factor = cholesky(a, lower=lower)
        return _with_right_side("solve", factor, b, CholeskySolve(lower))
    if assume_a not in ("gen", "sym"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym' or 'pos', got {assume_a!r}")
    return _with_right_side("solve", a, b, Solve(symmetric=assume_a == "sym"))


def solve_triangular(
    a: TensorLike, b: TensorLike, trans: Literal[0, 1, 2, "N", "T", "C"] = 0,
    lower: bool = False, unit_diagonal: bool = False,
) -> Variable:
    """x with op(a) x = b for triangular `a`, as `scipy.linalg.solve_triangular`: only
    the `lower` (default: upper) triangle is read, op is the transpose for `trans` 1, 'T'
    or (real matrices) 2, 'C'; `unit_diagonal` takes the diagonal as ones."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    transposed = trans not in (0, "N")
    op = SolveTriangular(lower=lower, trans=transposed, unit_diagonal=unit_diagonal)
    return _with_right_side("solve_triangular", a, b, op)


def cho_solve(c_and_lower: tuple[TensorLike, bool], b: TensorLike) -> Variable:
    """x with a x = b from a's Cholesky factor, as `scipy.linalg.cho_solve((c, lower), b)`."""
    c, lower = c_and_lower
    return _with_right_side("cho_solve", c, b, CholeskySolve(lower))


def inv(a: TensorLike) -> Variable:
    """The inverse of square matrices."""
    return Inv()(as_matrix_operand(a, "inv"))


def det(a: TensorLike) -> Variable:
    """The determinant of square matrices."""
    return Det()(as_matrix_operand(a, "det"))


def slogdet(a: TensorLike) -> tuple[Variable, Variable]:
    """(sign, log|det|) of square matrices, as `numpy.linalg.slogdet`."""
    sign, logabsdet = SLogDet().apply(as_matrix_operand(a, "slogdet"))
    return sign, logabsdet


def eigh(a: TensorLike, UPLO: Literal["L", "U"] = "L") -> tuple[Variable, Variable]:
    """(eigenvalues ascending, eigenvectors in columns) of symmetric matrices given by
    their lower (UPLO="L") or upper triangle, as `numpy.linalg.eigh`."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    values, vectors = Eigh(UPLO == "L").apply(as_matrix_operand(a, "eigh"))
    return values, vectors


def eigvalsh(a: TensorLike, UPLO: Literal["L", "U"] = "L") -> Variable:
    """The eigenvalues (ascending) of symmetric matrices, as `numpy.linalg.eigvalsh`."""
    return eigh(a, UPLO)[0]


@overload
def svd(
    a: TensorLike, full_matrices: bool = ..., compute_uv: Literal[True] = ...
) -> tuple[Variable, Variable, Variable]: ...
@overload
def svd(a: TensorLike, full_matrices: bool, compute_uv: Literal[False]) -> Variable: ...
@overload
def svd(a: TensorLike, full_matrices: bool = ..., *, compute_uv: Literal[False]) -> Variable: ...
def svd(
    a: TensorLike, full_matrices: bool = True, compute_uv: bool = True
) -> tuple[Variable, Variable, Variable] | Variable:
    """(u, s, vh) with a = u diag(s) vh, or s alone without `compute_uv`, as
    `numpy.linalg.svd`. Derivatives through u and vh need `full_matrices=False`."""
    outputs = SVD(full_matrices, compute_uv).apply(as_matrix_operand(a, "svd"))
    if not compute_uv:
        return outputs[0]
    u, s, vh = outputs
    return u, s, vh


def _singular_values(a: Variable) -> Variable:
    return SVD(compute_uv=False)(a)


@overload
def qr(
    a: TensorLike, mode: Literal["reduced", "complete"] = ...
) -> tuple[Variable, Variable]: ...
@overload
def qr(a: TensorLike, mode: Literal["r"]) -> Variable: ...
def qr(
    a: TensorLike, mode: Literal["reduced", "complete", "r"] = "reduced"
) -> tuple[Variable, Variable] | Variable:
    """(q, r) with a = q r, as `numpy.linalg.qr`; mode "r" gives r alone."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = QR(mode == "complete").apply(as_matrix_operand(a, "qr"))
    return r if mode == "r" else (q, r)


def _inverted_singular_values(s: Variable, rtol: TensorLike) -> tuple[Variable, Variable]:
    """1/s where s exceeds rtol * max(s), else 0 (with a safe denominator, so that the
    derivative of the dropped ones is 0, not 0 * inf); and the mask of those kept."""
    cutoff = mul(rtol, reduce_max(s, axis=-1, keepdims=True))
    kept = gt(s, cutoff)
    return where(kept, reciprocal(where(kept, s, 1)), 0), kept


def pinv(a: TensorLike, rcond: float = 1e-15, hermitian: bool = False) -> Variable:
    """The Moore-Penrose pseudo-inverse from the SVD, singular values below
    rcond * largest treated as zero (`numpy.linalg.pinv`; `hermitian` is accepted for
    NumPy's signature and changes nothing). Its derivative assumes distinct singular
    values (through the SVD's)."""
    u, s, vh = SVD(full_matrices=False).apply(as_matrix_operand(a, "pinv"))
    inverted, _ = _inverted_singular_values(s, rcond)
    return matmul(mul(mT(vh), expand_dims(inverted, -2)), mT(u))


def lstsq(
    a: TensorLike, b: TensorLike, rcond: float | None = None
) -> tuple[Variable, Variable, Variable, Variable]:
    """(x, residuals, rank, s): the least-squares solution of a x = b, as
    `numpy.linalg.lstsq` (singular values below rcond * largest, by default
    eps * max(m, n), count as zero).

    One difference: NumPy returns an empty `residuals` unless a has full column rank and
    more rows than columns; a graph's shapes cannot depend on values, so here
    `residuals` always holds the sums of squared residuals per column of b (shape (1,)
    for a vector b), which is what NumPy gives whenever it gives any."""
    matrix = as_matrix_operand(a, "lstsq")
    right = as_matrix_operand(b, "lstsq", min_rank=1)
    vector = right.ndim == 1
    if vector:
        right = expand_dims(right, -1)
    if matrix.ndim != 2 or right.ndim != 2:
        raise ShapeError(
            f"lstsq: expected a matrix and a vector or matrix, got {matrix.type} and {right.type}"
        )
    m, n = matrix.shape[-2], matrix.shape[-1]
    if rcond is None:
        single = matrix.dtype == "float32" and right.dtype == "float32"
        eps = float(np.finfo(np.float32 if single else np.float64).eps)
        tolerance: TensorLike = mul(cast(where(gt(m, n), m, n), matrix.dtype), eps)
    else:
        tolerance = rcond
    u, s, vh = SVD(full_matrices=False).apply(matrix)
    inverted, kept = _inverted_singular_values(s, tolerance)
    solution = matmul(mT(vh), mul(expand_dims(inverted, -1), matmul(mT(u), right)))
    misfit = matmul(matrix, solution) - right
    residuals = reduce_sum(mul(misfit, misfit), axis=-2)
    rank = reduce_sum(cast(kept, "int64"), axis=-1)
    if vector:
        solution = squeeze(solution, -1)
    return solution, residuals, rank, s


def matrix_power(a: TensorLike, n: int) -> Variable:
    """a multiplied by itself n times, by repeated squaring (`numpy.linalg.matrix_power`):
    n = 0 gives the identity in a's shape and dtype, a negative n the power of inv(a)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power: n must be a Python int, got {n!r}")
    matrix = as_tensor(a, name="matrix_power")
    if matrix.ndim < 2:
        raise ShapeError(f"matrix_power: expected at least 2 axes, got {matrix.type}")
    rows, columns = matrix.type.shape[-2:]
    if rows is not None and columns is not None and rows != columns:
        raise ShapeError(f"matrix_power: expected square matrices, got {matrix.type}")
    if n == 0:
        return broadcast_to(eye(matrix.shape[-1], dtype=matrix.dtype), matrix.shape)
    base = inv(matrix) if n < 0 else matrix
    result: Variable | None = None
    remaining = abs(n)
    while remaining:
        if remaining & 1:
            result = base if result is None else matmul(result, base)
        remaining >>= 1
        if remaining:
            base = matmul(base, base)
    assert result is not None
    return result


def kron(a: TensorLike, b: TensorLike) -> Variable:
    """The Kronecker product (`numpy.kron`): the smaller rank is padded with leading axes
    of length 1; result[i * m + k, ...] = a[i, ...] * b[k, ...], as one product of
    interleaved broadcasts and one reshape."""
    left, right = as_tensor(a, name="kron a"), as_tensor(b, name="kron b")
    rank = max(left.ndim, right.ndim)
    left, right = (expand_dims(v, tuple(range(rank - v.ndim))) if v.ndim < rank else v
                   for v in (left, right))
    spread_left = DimShuffle(tuple(x for axis in range(rank) for x in (axis, None)))(left)
    spread_right = DimShuffle(tuple(x for axis in range(rank) for x in (None, axis)))(right)
    return reshape(mul(spread_left, spread_right),
                   [left.shape[axis] * right.shape[axis] for axis in range(rank)])


def matrix_transpose(x: TensorLike) -> Variable:
    """The transpose of the last two axes (`numpy.linalg.matrix_transpose`)."""
    return mT(as_matrix_operand(x, "matrix_transpose"))


def diagonal(x: TensorLike, offset: int = 0) -> Variable:
    """The diagonals of the last two axes (`numpy.linalg.diagonal`)."""
    return numpy_diagonal(x, offset, -2, -1)


def trace(x: TensorLike, offset: int = 0) -> Variable:
    """The traces of the last two axes (`numpy.linalg.trace`)."""
    return reduce_sum(diagonal(x, offset), axis=-1)


NormOrder = float | Literal["fro", "nuc"] | None


def norm(
    x: TensorLike, ord: NormOrder = None, axis: int | tuple[int, int] | None = None,
    keepdims: bool = False,
) -> Variable:
    """Vector and matrix norms, as `numpy.linalg.norm`: with `axis` None, the vector norm
    of a 1-d `x`, the matrix norm of a 2-d one, or (`ord` None) the 2-norm of all
    elements; an int `axis` takes vector norms along it, a pair matrix norms."""
    variable = as_tensor(x, name="norm")
    if is_complex(variable.dtype):  # all norms but the spectral ones read only the moduli
        matrix = variable.ndim == 2 if axis is None else not isinstance(axis, int)
        if matrix and ord in (2, -2, "nuc"):
            raise DTypeError(
                f"norm: order {ord!r} needs singular values, which are not computed for "
                f"complex matrices; got {variable.type}"
            )
        variable = elementwise_abs(variable)
    if variable.dtype not in ("float32", "float64"):
        variable = cast(variable, "float64")
    if axis is None:
        flattened = ord is None or (ord == "fro" and variable.ndim == 2)
        if flattened or (ord == 2 and variable.ndim == 1):
            flat_axes = tuple(range(variable.ndim))
            return sqrt(reduce_sum(mul(variable, variable), axis=flat_axes, keepdims=keepdims))
        if variable.ndim == 1:
            return _vector_norm(variable, ord, 0, keepdims)
        if variable.ndim == 2:
            return _matrix_norm(variable, ord, (0, 1), keepdims)
        raise ShapeError(f"norm: an order needs a vector or a matrix (or an axis), got {variable.type}")
    if isinstance(axis, int):
        return _vector_norm(variable, ord, normalize_axis(axis, variable.ndim, "norm"), keepdims)
    if len(axis) != 2:
        raise ValueError(f"norm: axis must be an int or a pair of ints, got {axis!r}")
    rows, columns = (normalize_axis(a, variable.ndim, "norm") for a in axis)
    if rows == columns:
        raise ValueError(f"norm: the two axes must differ, got {axis!r}")
    return _matrix_norm(variable, ord, (rows, columns), keepdims)


def _vector_norm(x: Variable, ord: NormOrder, axis: int, keepdims: bool) -> Variable:
    if isinstance(ord, str):
        raise ValueError(f"norm: order {ord!r} is for matrices, not vectors")
    magnitude = elementwise_abs(x)
    if ord is None or ord == 2:
        return sqrt(reduce_sum(mul(x, x), axis=axis, keepdims=keepdims))
    if ord == float("inf"):
        return reduce_max(magnitude, axis=axis, keepdims=keepdims)
    if ord == float("-inf"):
        return reduce_min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        return reduce_sum(cast(neq(x, 0), x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return reduce_sum(magnitude, axis=axis, keepdims=keepdims)
    return pow(reduce_sum(pow(magnitude, ord), axis=axis, keepdims=keepdims), 1.0 / ord)


def _matrix_norm(x: Variable, ord: NormOrder, axes: tuple[int, int], keepdims: bool) -> Variable:
    rows, columns = axes
    if ord is None or ord == "fro":
        result = sqrt(reduce_sum(mul(x, x), axis=axes))
    elif ord in (1, -1, float("inf"), float("-inf")):
        summed_axis, kept_axis = (rows, columns) if ord in (1, -1) else (columns, rows)
        sums = reduce_sum(elementwise_abs(x), axis=summed_axis)
        remaining = kept_axis - (1 if kept_axis > summed_axis else 0)
        pick = reduce_max if ord in (1, float("inf")) else reduce_min
        result = pick(sums, axis=remaining)
    elif ord in (2, -2, "nuc"):
        others = [axis for axis in range(x.ndim) if axis not in axes]
        values = _singular_values(transpose(x, [*others, rows, columns]))
        if ord == "nuc":
            result = reduce_sum(values, axis=-1)
        else:
            result = (reduce_max if ord == 2 else reduce_min)(values, axis=-1)
    else:
        raise ValueError(f"norm: invalid order {ord!r} for matrices")
    if keepdims:
        for axis in sorted(axes):
            result = expand_dims(result, axis)
    return result
