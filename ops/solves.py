"""Linear systems: `Solve` (general square), `SolveTriangular`, `CholeskySolve` (from a
Cholesky factor) and `Inv`.

Right-hand sides are stacks of matrices (..., n, k); the user functions in `ops.linalg`
turn a vector right-hand side into a column and back. The derivatives reuse the ops
themselves: the adjoint of a solve is a solve with the transposed matrix.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Variable
from fgraph.op import Array
from ops.elemwise import fit_to
from ops.elementwise_functions import add, neg
from ops.matmul_op import matmul
from ops.matrix_op import LinAlgError, MatrixOp, Shape, same_length, square_length
from ops.matrix_parts import mT, triangle

Derivatives = tuple[Variable | None, ...]


def _system_shapes(op: MatrixOp, a: Shape, b: Shape) -> tuple[Shape, ...]:
    n = square_length(op, a, "matrix")
    rows = same_length(op, n, b[0], "the matrix and the right-hand side")
    return ((rows, b[1]),)


def _sum_terms(terms: list[Variable]) -> Variable | None:
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = add(total, term)
    return total


# Kernel: numba_backend.linalg._solve_triangular
@attrs.frozen(cache_hash=True)
class SolveTriangular(MatrixOp):
    """x with op(a) x = b for a triangular `a` (only its `lower` or upper triangle is
    read, and not its diagonal with `unit_diagonal`); op(a) is a.T with `trans`."""

    lower: bool = False
    trans: bool = False
    unit_diagonal: bool = False
    core_ranks = (2, 2)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        return _system_shapes(self, *input_cores)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        import scipy.linalg  # here, not at import: it costs every `import ops` 0.12 s

        a, b = cores
        try:
            solution = scipy.linalg.solve_triangular(
                a, b, trans=int(self.trans), lower=self.lower,
                unit_diagonal=self.unit_diagonal, check_finite=False,
            )
        except LinAlgError as error:
            raise LinAlgError(f"{self}: the triangular matrix is singular ({error})") from None
        return (solution,)

    def read(self, a: Variable) -> Variable:
        """The part of `a` the solve reads: its triangle, without a unit diagonal."""
        return triangle(a, self.lower, strict=self.unit_diagonal)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        a, b = inputs
        (x,), (cotangent,) = outputs, cotangents
        if cotangent is None:
            return (None, None)
        b_gradient = attrs.evolve(self, trans=not self.trans)(a, cotangent)
        # op(a) gets -b_gradient x^T; a itself its transpose when op transposes.
        product = matmul(x, mT(b_gradient)) if self.trans else matmul(b_gradient, mT(x))
        return (fit_to(a, self.read(neg(product))), fit_to(b, b_gradient))

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        a, _ = inputs
        (x,) = outputs
        a_tangent, b_tangent = tangents
        terms = [] if b_tangent is None else [b_tangent]
        if a_tangent is not None:
            read = self.read(a_tangent)
            terms.append(neg(matmul(mT(read) if self.trans else read, x)))
        right = _sum_terms(terms)
        return (None if right is None else self(a, right),)


# Kernel: numba_backend.linalg._solve
@attrs.frozen(cache_hash=True)
class Solve(MatrixOp):
    """x with a x = b for a general square `a` (LU with partial pivoting). `symmetric`
    records the caller's word that `a` is symmetric (`assume_a="sym"`): the solve still
    reads all of `a`, but rewrites may then solve through its Cholesky factor."""

    symmetric: bool = False
    core_ranks = (2, 2)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        return _system_shapes(self, *input_cores)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        a, b = cores
        try:
            return (np.linalg.solve(a, b),)
        except LinAlgError:
            raise LinAlgError(f"{self}: the matrix is singular") from None

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        a, b = inputs
        (x,), (cotangent,) = outputs, cotangents
        if cotangent is None:
            return (None, None)
        b_gradient = self(mT(a), cotangent)
        return (fit_to(a, neg(matmul(b_gradient, mT(x)))), fit_to(b, b_gradient))

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        a, _ = inputs
        (x,) = outputs
        a_tangent, b_tangent = tangents
        terms = [] if b_tangent is None else [b_tangent]
        if a_tangent is not None:
            terms.append(neg(matmul(a_tangent, x)))
        right = _sum_terms(terms)
        return (None if right is None else self(a, right),)


# Kernel: numba_backend.linalg._cho_solve
@attrs.frozen(cache_hash=True)
class CholeskySolve(MatrixOp):
    """x with (c c^T) x = b for a lower Cholesky factor c (c^T c with `lower=False`), as
    `scipy.linalg.cho_solve((c, lower), b)`; only c's triangle is read."""

    lower: bool = True
    core_ranks = (2, 2)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        return _system_shapes(self, *input_cores)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        import scipy.linalg  # here, not at import: it costs every `import ops` 0.12 s

        c, b = cores
        if np.any(np.diagonal(c) == 0):
            raise LinAlgError(f"{self}: the Cholesky factor is singular (a zero on its diagonal)")
        return (scipy.linalg.cho_solve((c, self.lower), b, check_finite=False),)

    def _product(self, c: Variable) -> Variable:
        """The matrix c c^T (or c^T c) that the factor stands for."""
        factor = triangle(c, self.lower)
        return matmul(factor, mT(factor)) if self.lower else matmul(mT(factor), factor)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        c, b = inputs
        (x,), (cotangent,) = outputs, cotangents
        if cotangent is None:
            return (None, None)
        b_gradient = self(c, cotangent)
        # d(c c^T) = dc c^T + c dc^T; the product's gradient is -b_gradient x^T.
        product_gradient = neg(matmul(b_gradient, mT(x)))
        symmetric = add(product_gradient, mT(product_gradient))
        factor = triangle(c, self.lower)
        c_gradient = matmul(symmetric, factor) if self.lower else matmul(factor, symmetric)
        return (fit_to(c, triangle(c_gradient, self.lower)), fit_to(b, b_gradient))

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        c, _ = inputs
        (x,) = outputs
        c_tangent, b_tangent = tangents
        terms = [] if b_tangent is None else [b_tangent]
        if c_tangent is not None:
            factor, moved = triangle(c, self.lower), triangle(c_tangent, self.lower)
            if self.lower:
                product = add(matmul(moved, mT(factor)), matmul(factor, mT(moved)))
            else:
                product = add(matmul(mT(moved), factor), matmul(mT(factor), moved))
            terms.append(neg(matmul(product, x)))
        right = _sum_terms(terms)
        return (None if right is None else self(c, right),)


# Kernel: numba_backend.linalg._inv
@attrs.frozen(cache_hash=True)
class Inv(MatrixOp):
    """The inverse of a square matrix."""

    core_ranks = (2,)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        n = square_length(self, input_cores[0], "matrix")
        return ((n, n),)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        try:
            return (np.linalg.inv(cores[0]),)
        except LinAlgError:
            raise LinAlgError(f"{self}: the matrix is singular") from None

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (inverse,), (cotangent,) = outputs, cotangents
        if cotangent is None:
            return (None,)
        transposed = mT(inverse)
        return (fit_to(inputs[0], neg(matmul(matmul(transposed, cotangent), transposed))),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (inverse,), (tangent,) = outputs, tangents
        if tangent is None:
            return (None,)
        return (neg(matmul(matmul(inverse, tangent), inverse)),)
