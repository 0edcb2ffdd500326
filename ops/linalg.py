"""`pt.linalg`: linear algebra with NumPy's and SciPy's names and conventions.

Stacked matrices (leading batch axes) work everywhere, as in NumPy. Integer inputs are
converted to float64; float32 stays float32. The ops (`Cholesky`, `Solve`, ...) live in
`ops.factorizations`, `ops.solves` and `ops.determinants`; what NumPy computes from them
(`pinv`, `lstsq`, `norm`, `matrix_power`, `kron`, `einsum`) is written here and in
`ops.einsum_lowering` as graphs of those ops, so it needs no kernel of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

from fgraph import DTypeError, ShapeError, Variable, promote
from fgraph.dtypes import is_complex
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.determinants import Det, SLogDet
from ops.broadcast import broadcast_to
from ops.creation import arange, eye, zeros
from ops.dimshuffle import DimShuffle, expand_dims, normalize_axis, squeeze, transpose
from ops.elementwise_functions import abs as elementwise_abs
from ops.elementwise_functions import (
    add,
    cast,
    gt,
    isnan,
    le,
    logical_and,
    logical_not,
    minimum,
    mul,
    neq,
    pow,
    reciprocal,
    sqrt,
    where,
)
from ops.factorizations import QR, SVD, Cholesky, Eigh
from ops.matmul_op import matmul, outer
from ops.matrix_op import LinAlgError, as_matrix_operand, pad_batch
from ops.lu import LUFactor, PivotPermutation, permutation_matrix
from ops.matrix_exponential import Expm
from ops.matrix_parts import diag_embed, from_triangle, matrix_diagonal, mT, positions, triangle
from ops.numpy_functions import diagonal as numpy_diagonal
from ops.numpy_functions import tensordot
from ops.join import concatenate
from ops.reduction import any as any_true
from ops.reduction import max as reduce_max
from ops.reduction import min as reduce_min
from ops.reduction import sum as reduce_sum
from ops.reshape_ops import reshape
from ops.solves import CholeskySolve, Inv, Solve, SolveTriangular

__all__ = [
    "LinAlgError",
    "block_diag",
    "cho_solve",
    "cholesky",
    "cond",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "expm",
    "inv",
    "kron",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_solve",
    "matmul",
    "matrix_power",
    "matrix_rank",
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
    "tensorinv",
    "tensorsolve",
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


_SOLVE_KINDS = {
    "gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "sym",
    "hermitian": "sym", "pos": "pos", "positive definite": "pos", "diagonal": "diagonal",
    "tridiagonal": "tridiagonal", "lower triangular": "lower triangular",
    "upper triangular": "upper triangular",
}


def solve(
    a: TensorLike, b: TensorLike, assume_a: str = "gen", lower: bool = False,
    transposed: bool = False,
) -> Variable:
    """x with a x = b (`numpy.linalg.solve`; `b` of rank 1 is a vector), or with
    a^T x = b for `transposed`, as `scipy.linalg.solve` with its `assume_a` names:

    - "gen" ("general"): LU with partial pivoting;
    - "pos" ("positive definite"): a is symmetric positive definite, read from its
      `lower` (or upper) triangle and solved through its Cholesky factor;
    - "sym" ("symmetric", and for real matrices "her", "hermitian"): a is declared
      symmetric (all of it is read), which lets the rewrites reuse a Cholesky factor of
      it the graph computes;
    - "diagonal" and "tridiagonal": only a's diagonal (or three diagonals) is read, as
      SciPy's; solved as a triangular (or general) system of those entries;
    - "lower triangular", "upper triangular": `solve_triangular` of that triangle.
    """
    kind = _SOLVE_KINDS.get(assume_a)
    if kind is None:
        raise ValueError(f"solve: assume_a must be one of {sorted(_SOLVE_KINDS)}, got {assume_a!r}")
    if kind in ("lower triangular", "upper triangular"):
        return solve_triangular(a, b, trans=1 if transposed else 0, lower=kind == "lower triangular")
    if kind == "pos":
        factor = cholesky(a, lower=lower)
        return _with_right_side("solve", factor, b, CholeskySolve(lower))
    matrix = as_matrix_operand(a, "solve")
    if kind == "diagonal":
        return _with_right_side("solve", diag_embed(matrix_diagonal(matrix)), b, SolveTriangular(lower=True))
    if kind == "tridiagonal":
        rows, columns = positions(matrix)
        matrix = where(le(elementwise_abs(rows - columns), 1), matrix, 0)
    if transposed and kind != "sym":
        matrix = mT(matrix)
    return _with_right_side("solve", matrix, b, Solve(symmetric=kind == "sym"))


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


def lu_factor(a: TensorLike) -> tuple[Variable, Variable]:
    """(lu, piv) as `scipy.linalg.lu_factor`: LAPACK getrf's packed factors of an
    (m, n) matrix (L's strict lower triangle, its unit diagonal not stored, and U) and
    its 0-based row interchanges, int32 (row i was swapped with row piv[i])."""
    packed, pivots = LUFactor().apply(as_matrix_operand(a, "lu_factor"))
    return packed, pivots


@overload
def lu(
    a: TensorLike, permute_l: Literal[False] = ..., p_indices: bool = ...
) -> tuple[Variable, Variable, Variable]: ...
@overload
def lu(a: TensorLike, permute_l: Literal[True], p_indices: bool = ...) -> tuple[Variable, Variable]: ...
def lu(
    a: TensorLike, permute_l: bool = False, p_indices: bool = False
) -> tuple[Variable, Variable, Variable] | tuple[Variable, Variable]:
    """(p, l, u) with a = p @ l @ u for an (m, n) matrix, as `scipy.linalg.lu`: p the
    (m, m) permutation matrix, l (m, k) unit lower triangular, u (k, n) upper, k =
    min(m, n). With `p_indices`, p is the int32 row indices with a = l[p] @ u; with
    `permute_l`, (p @ l, u). Derivatives (square matrices) hold the pivots fixed."""
    matrix = as_matrix_operand(a, "lu")
    packed, pivots = LUFactor().apply(matrix)
    m, n = _length(matrix, -2), _length(matrix, -1)
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else minimum(m, n)
    lower = add(triangle(packed[..., :, :k], lower=True, strict=True), eye(m, k, dtype=matrix.dtype))
    upper = triangle(packed[..., :k, :], lower=False)
    if not (isinstance(m, int) and isinstance(n, int) and m <= n):
        # Rows beyond the k pivots of a tall matrix stay where they are.
        batch = [_length(pivots, axis) for axis in range(pivots.ndim - 1)]
        rest = broadcast_to(arange(k, m, dtype="int32"), [*batch, m - k])
        pivots = concatenate([pivots, rest], axis=-1)
    if p_indices and not permute_l:
        return PivotPermutation()(pivots), lower, upper
    permutation = permutation_matrix(pivots, matrix.dtype)
    if permute_l:
        return matmul(permutation, lower), upper
    return permutation, lower, upper


def lu_solve(
    lu_and_piv: tuple[TensorLike, TensorLike], b: TensorLike, trans: Literal[0, 1, 2] = 0
) -> Variable:
    """x with a x = b (or a^T x = b for `trans` 1, and for real matrices 2) from
    `lu_factor(a)`, as `scipy.linalg.lu_solve` (`b` of rank 1 is a vector): two
    triangular solves reading the packed factors and the pivots' permutation. A zero on
    U's diagonal raises `LinAlgError` (SciPy returns inf or nan)."""
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    packed = as_matrix_operand(lu_and_piv[0], "lu_solve")
    pivots = as_tensor(lu_and_piv[1], name="lu_solve pivots")
    right = as_matrix_operand(b, "lu_solve", min_rank=1)
    vector = right.ndim == 1
    if vector:
        right = expand_dims(right, -1)
    packed, pivots, right = pad_batch([packed, pivots, right], (2, 1, 2))
    permutation = permutation_matrix(pivots, promote(packed.dtype, right.dtype))
    if trans == 0:  # L U x = P^T b
        moved = SolveTriangular(lower=True, unit_diagonal=True)(packed, matmul(mT(permutation), right))
        solution = SolveTriangular(lower=False)(packed, moved)
    else:  # U^T L^T (P^T x) = b
        moved = SolveTriangular(lower=False, trans=True)(packed, right)
        solution = matmul(permutation, SolveTriangular(lower=True, trans=True, unit_diagonal=True)(packed, moved))
    return squeeze(solution, -1) if vector else solution


def expm(a: TensorLike) -> Variable:
    """The matrix exponential of square matrices (stacks too), as `scipy.linalg.expm`;
    its derivative is the Fréchet derivative, from the exponential of a block matrix
    twice as large (`ops.matrix_exponential`)."""
    return Expm()(as_matrix_operand(a, "expm"))


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


def eigh(
    a: TensorLike, b: TensorLike | Literal["L", "U"] | None = None, UPLO: Literal["L", "U"] = "L"
) -> tuple[Variable, Variable]:
    """(eigenvalues ascending, eigenvectors in columns) of symmetric matrices given by
    their lower (UPLO="L") or upper triangle, as `numpy.linalg.eigh`.

    With `b`, the generalized problem a v = w b v for symmetric positive-definite `b`
    (its same triangle read), as `scipy.linalg.eigh(a, b, lower=UPLO == "L")`: the
    eigenvectors are b-orthonormal (v^T b v = I). Solved as LAPACK's sygvd does:
    b = L L^T, the ordinary problem of L^-1 a L^-T, v = L^-T times its vectors.
    NumPy's positional `eigh(a, "U")` still means UPLO."""
    if isinstance(b, str):
        return eigh(a, None, b)
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    lower = UPLO == "L"
    matrix = as_matrix_operand(a, "eigh")
    if b is None:
        values, vectors = Eigh(lower).apply(matrix)
        return values, vectors
    factor = cholesky(b, lower=lower)
    if not lower:
        factor = mT(factor)
    matrix, factor = pad_batch([from_triangle(matrix, lower), factor], (2, 2))
    solve_lower = SolveTriangular(lower=True)
    half = solve_lower(factor, matrix)  # L^-1 a
    reduced = mT(solve_lower(factor, mT(half)))  # (L^-1 (L^-1 a)^T)^T = L^-1 a L^-T
    values, rotated = Eigh(lower=True).apply(reduced)
    return values, SolveTriangular(lower=True, trans=True)(factor, rotated)


def eigvalsh(
    a: TensorLike, b: TensorLike | None = None, UPLO: Literal["L", "U"] = "L"
) -> Variable:
    """The eigenvalues (ascending) of symmetric matrices, as `numpy.linalg.eigvalsh`;
    with `b`, of the generalized problem, as `scipy.linalg.eigvalsh(a, b)` (see `eigh`)."""
    return eigh(a, b, UPLO)[0]


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
    x: TensorLike, ord: NormOrder = None, axis: int | Sequence[int] | None = None,
    keepdims: bool = False,
) -> Variable:
    """Vector and matrix norms, as `numpy.linalg.norm`: with `axis` None, the vector norm
    of a 1-d `x`, the matrix norm of a 2-d one, or (`ord` None) the 2-norm of all
    elements; an int `axis` (or a 1-tuple) takes vector norms along it, a pair matrix
    norms (`axis=(-2, -1)`: of each matrix of a stack)."""
    variable = as_tensor(x, name="norm")
    if is_complex(variable.dtype):  # all norms but the spectral ones read only the moduli
        matrix = variable.ndim == 2 if axis is None else not isinstance(axis, int) and len(axis) == 2
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
    if not isinstance(axis, (int, np.integer)) and len(axis) == 1:
        (axis,) = axis
    if isinstance(axis, (int, np.integer)):
        return _vector_norm(variable, ord, normalize_axis(axis, variable.ndim, "norm"), keepdims)
    if len(axis) != 2:
        raise ValueError(f"norm: axis must be an int, or a tuple of one or two ints, got {axis!r}")
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


def cond(x: TensorLike, p: NormOrder = None) -> Variable:
    """The condition number of square matrices (stacks too), as `numpy.linalg.cond`:
    for `p` None, 2 or -2 the ratio of the largest to the smallest singular value (or
    its inverse), inf for a singular matrix; for the other orders (1, -1, inf, -inf,
    'fro', 'nuc') norm(x, p) * norm(inv(x), p), where a singular matrix raises
    `LinAlgError` (NumPy returns inf)."""
    matrix = as_matrix_operand(x, "cond")
    if p is None or p in (2, -2):
        values = _singular_values(matrix)
        largest, smallest = reduce_max(values, axis=-1), reduce_min(values, axis=-1)
        ratio = largest / smallest if p != -2 else smallest / largest
        # NumPy's 0 / 0 of a zero matrix is inf too, unless the matrix holds a nan.
        finite_input = logical_not(any_true(isnan(matrix), axis=(-2, -1)))
        return where(logical_and(isnan(ratio), finite_input), np.inf, ratio)
    return mul(norm(matrix, p, axis=(-2, -1)), norm(inv(matrix), p, axis=(-2, -1)))


def matrix_rank(
    a: TensorLike, tol: TensorLike | None = None, hermitian: bool = False,
    *, rtol: TensorLike | None = None,
) -> Variable:
    """The number of singular values above `tol` (per matrix of a stack), as
    `numpy.linalg.matrix_rank`: by default tol = max(s) * max(m, n) * eps, or
    max(s) * rtol; for a vector or scalar 1 unless all of it is 0. int64.
    `hermitian` is accepted for NumPy's signature and changes nothing."""
    variable = as_tensor(a, name="matrix_rank")
    if variable.ndim < 2:
        return cast(any_true(neq(variable, 0)), "int64")
    matrix = as_matrix_operand(variable, "matrix_rank")
    values = _singular_values(matrix)
    if tol is None:
        if rtol is None:
            eps = float(np.finfo(matrix.dtype).eps)
            m, n = matrix.shape[-2], matrix.shape[-1]
            rtol = mul(cast(where(gt(m, n), m, n), matrix.dtype), eps)
        else:
            rtol = expand_dims(as_tensor(rtol, name="matrix_rank rtol"), -1)
        cutoff = mul(reduce_max(values, axis=-1, keepdims=True), rtol)
    else:
        cutoff = expand_dims(as_tensor(tol, name="matrix_rank tol"), -1)
    return reduce_sum(cast(gt(values, cutoff), "int64"), axis=-1)


def _product(lengths: Sequence[Variable | int]) -> Variable | int:
    total: Variable | int = 1
    for length in lengths:
        total = total * length
    return total


def tensorinv(a: TensorLike, ind: int = 2) -> Variable:
    """The inverse with respect to `tensordot(inv, a, ind)`, as `numpy.linalg.tensorinv`:
    a of shape left + right (left its first `ind` axes, prod(left) == prod(right)) is
    inverted as a prod(left) x prod(right) matrix, and the result has shape
    right + left."""
    if isinstance(ind, bool) or ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive int, got {ind!r}")
    variable = as_matrix_operand(a, "tensorinv", min_rank=ind + 1)
    lengths = [_length(variable, axis) for axis in range(variable.ndim)]
    matrix = reshape(variable, [_product(lengths[:ind]), _product(lengths[ind:])])
    return reshape(inv(matrix), [*lengths[ind:], *lengths[:ind]])


def tensorsolve(a: TensorLike, b: TensorLike, axes: Sequence[int] | None = None) -> Variable:
    """x with tensordot(a, x, x.ndim) = b, as `numpy.linalg.tensorsolve`: the axes of a
    in `axes` move to the end first; a of shape b.shape + x.shape (sizes equal) is
    solved as a square matrix."""
    matrix = as_matrix_operand(a, "tensorsolve", min_rank=1)
    right = as_matrix_operand(b, "tensorsolve", min_rank=0)
    if axes is not None:
        moved = [normalize_axis(axis, matrix.ndim, "tensorsolve") for axis in axes]
        kept = [axis for axis in range(matrix.ndim) if axis not in moved]
        matrix = transpose(matrix, [*kept, *moved])
    if right.ndim >= matrix.ndim:
        raise ShapeError(
            f"tensorsolve: a needs more axes than b (a's are b's and x's), got {matrix.type} "
            f"and {right.type}"
        )
    solution_lengths = [_length(matrix, axis) for axis in range(right.ndim, matrix.ndim)]
    size = _product(solution_lengths)
    square = reshape(matrix, [_product([_length(matrix, k) for k in range(right.ndim)]), size])
    solution = _with_right_side("tensorsolve", square, reshape(right, [-1]), Solve())
    return reshape(solution, solution_lengths)


def block_diag(*arrays: TensorLike) -> Variable:
    """The block-diagonal matrix of `arrays`, as `scipy.linalg.block_diag`: a scalar is
    a 1 x 1 block, a vector a row; with batch axes (equal ranks; lengths 1 broadcast),
    one block-diagonal matrix per batch element. No arrays give a (1, 0) matrix."""
    if not arrays:
        return zeros((1, 0))
    blocks = [as_tensor(x, name="block_diag") for x in arrays]
    blocks = [expand_dims(x, tuple(range(2 - x.ndim))) if x.ndim < 2 else x for x in blocks]
    batch_rank = max(x.ndim for x in blocks) - 2
    blocks = pad_batch(blocks, (2,) * len(blocks))
    dtype = promote(*(x.dtype for x in blocks))
    # A batch length comes from a block whose length there is not statically 1; the
    # others broadcast along their static 1 (or must match, checked when run).
    batch = [next((_length(x, axis) for x in blocks if x.type.shape[axis] != 1), 1)
             for axis in range(batch_rank)]
    columns = [_length(x, -1) for x in blocks]
    rows = []
    for number, x in enumerate(blocks):
        height = _length(x, -2)
        left = zeros([*batch, height, _total(columns[:number])], dtype)
        right = zeros([*batch, height, _total(columns[number + 1:])], dtype)
        middle = broadcast_to(cast(x, dtype), [*batch, height, columns[number]])
        rows.append(concatenate([left, middle, right], axis=-1))
    return concatenate(rows, axis=-2)


def _length(x: Variable, axis: int) -> Variable | int:
    """x's length along `axis`: the static int when known, else the symbolic one."""
    static = x.type.shape[axis]
    return x.shape[axis] if static is None else static


def _total(lengths: Sequence[Variable | int]) -> Variable | int:
    total: Variable | int = 0
    for length in lengths:
        total = total + length
    return total
