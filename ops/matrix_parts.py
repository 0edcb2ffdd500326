"""Transposes, diagonals and triangles of stacked matrices (the last two axes), the
vocabulary the linear-algebra derivatives are written in."""

from __future__ import annotations

from fgraph import Variable
from ops.creation import arange, eye
from ops.dimshuffle import expand_dims
from ops.elementwise_functions import eq, gt, lt, mul, where
from ops.matmul_op import swap_last_axes
from ops.numpy_functions import diagonal, tril, triu


def mT(x: Variable) -> Variable:
    """The matrix transpose of a stack of matrices."""
    return swap_last_axes(x)


def matrix_diagonal(x: Variable) -> Variable:
    """The diagonal of each matrix: (..., n, n) -> (..., n)."""
    return diagonal(x, 0, -2, -1)


def diag_embed(v: Variable) -> Variable:
    """Diagonal matrices from the vectors `v` (..., n) -> (..., n, n)."""
    return mul(expand_dims(v, -1), eye(v.shape[-1], dtype=v.dtype))


def identity_like(x: Variable) -> Variable:
    """The identity of the size of the square matrices `x`, in their dtype."""
    return eye(x.shape[-1], dtype=x.dtype)


def triangle(x: Variable, lower: bool, strict: bool = False) -> Variable:
    """The lower or upper triangle of each matrix (without the diagonal if `strict`)."""
    if lower:
        return tril(x, -1 if strict else 0)
    return triu(x, 1 if strict else 0)


def from_triangle(x: Variable, lower: bool) -> Variable:
    """The symmetric matrix a routine reading only one triangle of `x` sees."""
    return triangle(x, lower) + mT(triangle(x, lower, strict=True))


def positions(x: Variable) -> tuple[Variable, Variable]:
    """The row and column index of each entry of the matrices `x` (broadcastable)."""
    return expand_dims(arange(x.shape[-2]), 1), expand_dims(arange(x.shape[-1]), 0)


def onto_triangle(gradient: Variable, lower: bool) -> Variable:
    """The derivative with respect to the entries of `x` that `from_triangle(x)` reads,
    given the derivative `gradient` with respect to that symmetric matrix: each
    off-diagonal entry feeds two places, the diagonal one. (Written with index masks,
    one fused loop, rather than with a diagonal matrix.)"""
    rows, columns = positions(gradient)
    strict = gt(rows, columns) if lower else lt(rows, columns)
    on_diagonal = where(eq(rows, columns), gradient, 0)
    return where(strict, gradient + mT(gradient), on_diagonal)
