"""The LU factorization with partial pivoting, in SciPy's conventions: `LUFactor` gives
LAPACK getrf's packed factors (L's strict lower triangle, with its unit diagonal left
out, and U's upper one, in one matrix) and its row interchanges as 0-based pivots
(`scipy.linalg.lu_factor`); `PivotPermutation` turns the pivots into the row indices
p with a = (L U)[p] (`scipy.linalg.lu(..., p_indices=True)`).

The user functions in `ops.linalg` build `lu`, `lu_solve` and the permutation matrix
from these two. The factors' derivative (square matrices) treats the pivots as
constant, as they are almost everywhere: with b = P^T a = L U,
bbar = L^-T (tril_strict(L^T Lbar) + triu(Ubar U^T)) U^-T, all through triangular
solves that read `lu` itself.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np

from fgraph import DTypeError, ShapeError, TensorType, Variable
from fgraph.op import Array, NonDifferentiable, Vectorized
from ops.creation import arange, eye
from ops.dimshuffle import expand_dims
from ops.elemwise import fit_to
from ops.elementwise_functions import add, cast, eq
from ops.matmul_op import matmul
from ops.matrix_op import MatrixOp, Shape
from ops.matrix_parts import mT, triangle
from ops.solves import SolveTriangular

Derivatives = tuple[Variable | None, ...]


# Kernel: numba_backend.linalg._lu_factor
@attrs.frozen(cache_hash=True)
class LUFactor(MatrixOp):
    """(lu, pivots) of an (m, n) matrix, as `scipy.linalg.lu_factor`: lu packs L (unit
    lower, its diagonal not stored) and U; pivots (min(m, n),) int32, row i was
    interchanged with row pivots[i]. A singular matrix is factored all the same (a zero
    on U's diagonal), as SciPy's (without its warning)."""

    core_ranks = (2,)
    output_count = 2

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        m, n = input_cores[0]
        k = None if m is None or n is None else min(m, n)
        return ((m, n), (k,))

    def output_dtypes(self, dtype: str) -> tuple[str, ...]:
        return (dtype, "int32")

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        import scipy.linalg  # here, not at import: it costs every `import ops` 0.12 s

        a = cores[0]
        if a.size == 0:
            return (a.copy(), np.zeros(min(a.shape), np.int32))
        with warnings.catch_warnings():  # SciPy's warning for a singular matrix
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            lu, pivots = scipy.linalg.lu_factor(a, check_finite=False)
        return (lu, pivots.astype(np.int32))

    def _check_square(self, a: Variable) -> None:
        m, n = a.type.shape[-2], a.type.shape[-1]
        if m is not None and n is not None and m != n:
            raise NotImplementedError(f"{self}: derivatives are for square matrices, got {a.type}")

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (lu, pivots), (cotangent, _) = inputs, outputs, cotangents
        if cotangent is None:
            return (None,)
        self._check_square(a)
        lower = add(triangle(lu, lower=True, strict=True), eye(lu.shape[-1], dtype=lu.dtype))
        upper = triangle(lu, lower=False)
        middle = add(
            triangle(matmul(mT(lower), triangle(cotangent, lower=True, strict=True)),
                     lower=True, strict=True),
            triangle(matmul(triangle(cotangent, lower=False), mT(upper)), lower=False),
        )
        left = SolveTriangular(lower=True, trans=True, unit_diagonal=True)(lu, middle)
        permuted = mT(SolveTriangular(lower=False)(lu, mT(left)))  # L^-T middle U^-T
        return (fit_to(a, matmul(permutation_matrix(pivots, a.dtype), permuted)),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (lu, pivots), (tangent,) = inputs, outputs, tangents
        if tangent is None:
            return (None, None)
        self._check_square(a)
        moved = matmul(mT(permutation_matrix(pivots, lu.dtype)), tangent)  # P^T da
        half = SolveTriangular(lower=True, unit_diagonal=True)(lu, moved)  # L^-1 P^T da
        inner = mT(SolveTriangular(lower=False, trans=True)(lu, mT(half)))  # ... U^-1
        lower = add(triangle(lu, lower=True, strict=True), eye(lu.shape[-1], dtype=lu.dtype))
        change = add(matmul(lower, triangle(inner, lower=True, strict=True)),
                     matmul(triangle(inner, lower=False), triangle(lu, lower=False)))
        return (change, None)


# Kernel: numba_backend.linalg._pivot_permutation
@attrs.frozen(cache_hash=True)
class PivotPermutation(NonDifferentiable):
    """The row indices p (int32) with a = (L U)[p] from LAPACK's 0-based pivots over the
    last axis: starting from 0, 1, ..., k - 1, row i is swapped with row pivots[i] in
    turn, which gives the order perm with a[perm] = L U, and p is its inverse. A pivot
    outside [0, k) is refused with an error naming the op."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (pivots,) = input_types
        if not pivots.dtype.startswith(("int", "uint")):
            raise DTypeError(f"{self}: the pivots must be integers, got {pivots}")
        if pivots.ndim < 1:
            raise ShapeError(f"{self}: the pivots need at least one axis, got {pivots}")
        return (TensorType("int32", pivots.shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        pivots = inputs[0]
        k = pivots.shape[-1]
        rows = np.empty(pivots.shape, np.int32)
        for index in np.ndindex(*pivots.shape[:-1]):
            order = np.arange(k)
            for i, pivot in enumerate(pivots[index]):
                if not 0 <= pivot < k:
                    raise ValueError(f"{self}: pivot {i} is {pivot}, outside [0, {k})")
                order[i], order[pivot] = order[pivot], order[i]
            rows[index][order] = np.arange(k)
        return (rows,)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        return self.apply(*inputs), (True,)


def permutation_matrix(pivots: Variable, dtype: str) -> Variable:
    """The permutation matrices P (..., k, k) with a = P L U, from LAPACK's pivots:
    P[i, p[i]] = 1 for the row indices p."""
    rows = PivotPermutation()(pivots)
    return cast(eq(expand_dims(rows, -1), arange(pivots.shape[-1], dtype="int32")), dtype)
