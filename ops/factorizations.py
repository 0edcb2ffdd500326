"""Matrix factorizations: `Cholesky`, `Eigh`, `SVD`, `QR`.

Each reads what its LAPACK routine reads (Cholesky and Eigh one triangle of a symmetric
matrix), and its derivative is with respect to those entries, so that it agrees with
finite differences on any input; the derivative with respect to the symmetric matrix
itself is the symmetric part of the result's triangle, as PyTensor gives it.

Where a derivative does not exist, the formulas give inf or nan rather than raise:
`Eigh` at repeated eigenvalues and `SVD` at repeated (or, through u and vh of a
rectangular matrix, zero) singular values, where the vectors are not unique.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Variable
from fgraph.op import Array
from ops.creation import eye
from ops.dimshuffle import expand_dims
from ops.elemwise import fit_to
from ops.elementwise_functions import (
    add,
    eq,
    gt,
    mul,
    neg,
    reciprocal,
    sub,
    true_div,
    where,
    zeros_like,
)
from ops.join import concatenate
from ops.matmul_op import matmul
from ops.matrix_op import LinAlgError, MatrixOp, Shape, square_length
from ops.matrix_parts import (
    diag_embed,
    from_triangle,
    matrix_diagonal,
    mT,
    onto_triangle,
    positions,
    triangle,
)
from ops.solves import SolveTriangular

Derivatives = tuple[Variable | None, ...]


def _halved_lower(x: Variable) -> Variable:
    """Murray's Phi: the lower triangle with the diagonal halved."""
    rows, columns = positions(x)
    return where(gt(rows, columns), x, where(eq(rows, columns), mul(x, 0.5), 0))


def _pair_weights(values: Variable, power: int = 1) -> Variable:
    """F[i, j] = 1 / (v[j]^p - v[i]^p) off the diagonal and 0 on it (the diagonal's
    denominator is made 1 first, so that no derivative of this meets a 0 / 0)."""
    raised = values if power == 1 else mul(values, values)
    differences = sub(expand_dims(raised, -2), expand_dims(raised, -1))
    on_diagonal = eq(eye(values.shape[-1], dtype="int8"), 1)
    safe = where(on_diagonal, 1, differences)
    return where(on_diagonal, 0, reciprocal(safe))


# Kernel: numba_backend.linalg._cholesky
@attrs.frozen(cache_hash=True)
class Cholesky(MatrixOp):
    """The Cholesky factor L (a = L L^T) of a symmetric positive-definite matrix, or U
    (a = U^T U) with `lower=False`; reads only that triangle of `a`."""

    lower: bool = True
    core_ranks = (2,)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        n = square_length(self, input_cores[0], "matrix")
        return ((n, n),)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        a = cores[0]
        try:
            factor = np.linalg.cholesky(a if self.lower else a.T)
        except LinAlgError:
            raise LinAlgError(f"{self}: the matrix is not positive definite") from None
        return (factor if self.lower else factor.T,)

    def _lower_gradient(self, factor: Variable, cotangent: Variable) -> Variable:
        """Murray (2016): with L lower, the gradient with respect to the symmetric matrix
        is S = L^-T Phi(L^T Lbar) L^-1."""
        solve = SolveTriangular(lower=True, trans=True)
        middle = _halved_lower(matmul(mT(factor), cotangent))
        left = solve(factor, middle)  # L^-T Phi
        return mT(solve(factor, mT(left)))  # (L^-T (L^-T Phi)^T)^T = L^-T Phi L^-1

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (factor,), (cotangent,) = outputs, cotangents
        if cotangent is None:
            return (None,)
        if self.lower:
            symmetric = self._lower_gradient(factor, cotangent)
            return (fit_to(inputs[0], onto_triangle(symmetric, lower=True)),)
        # U = L^T for the L of a's transpose, whose lower triangle is a's upper one.
        symmetric = self._lower_gradient(mT(factor), mT(cotangent))
        return (fit_to(inputs[0], onto_triangle(mT(symmetric), lower=False)),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (factor,), (tangent,) = outputs, tangents
        if tangent is None:
            return (None,)
        lower = factor if self.lower else mT(factor)
        moved = from_triangle(tangent, self.lower)
        solve = SolveTriangular(lower=True)
        # dL = L Phi(L^-1 dA L^-T)
        inner = solve(lower, mT(solve(lower, moved)))
        change = matmul(lower, _halved_lower(inner))
        return (change if self.lower else mT(change),)


# Kernel: numba_backend.linalg._eigh
@attrs.frozen(cache_hash=True)
class Eigh(MatrixOp):
    """Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix given by
    its lower (or upper) triangle, as `numpy.linalg.eigh`."""

    lower: bool = True
    core_ranks = (2,)
    output_count = 2

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        n = square_length(self, input_cores[0], "matrix")
        return ((n,), (n, n))

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        values, vectors = np.linalg.eigh(cores[0], UPLO="L" if self.lower else "U")
        return (values, vectors)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        values, vectors = outputs
        value_cotangent, vector_cotangent = cotangents
        middle: Variable | None = None
        if value_cotangent is not None:
            middle = diag_embed(value_cotangent)
        if vector_cotangent is not None:
            term = mul(_pair_weights(values), matmul(mT(vectors), vector_cotangent))
            middle = term if middle is None else add(middle, term)
        if middle is None:
            return (None,)
        gradient = matmul(matmul(vectors, middle), mT(vectors))
        return (fit_to(inputs[0], onto_triangle(gradient, self.lower)),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        values, vectors = outputs
        (tangent,) = tangents
        if tangent is None:
            return (None, None)
        rotated = matmul(matmul(mT(vectors), from_triangle(tangent, self.lower)), vectors)
        return (
            matrix_diagonal(rotated),
            matmul(vectors, mul(_pair_weights(values), rotated)),
        )


# Kernel: numba_backend.linalg._svd
@attrs.frozen(cache_hash=True)
class SVD(MatrixOp):
    """The singular value decomposition a = u diag(s) vh, as `numpy.linalg.svd`: outputs
    (u, s, vh), or only s without `compute_uv`."""

    full_matrices: bool = True
    compute_uv: bool = True
    core_ranks = (2,)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        m, n = input_cores[0]
        k = None if m is None or n is None else min(m, n)
        if not self.compute_uv:
            return ((k,),)
        if self.full_matrices:
            return ((m, m), (k,), (n, n))
        return ((m, k), (k,), (k, n))

    def output_dtypes(self, dtype: str) -> tuple[str, ...]:
        return (dtype,) * (3 if self.compute_uv else 1)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        if not self.compute_uv:
            return (np.linalg.svd(cores[0], compute_uv=False),)
        u, s, vh = np.linalg.svd(cores[0], full_matrices=self.full_matrices)
        return (u, s, vh)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,) = inputs
        if all(c is None for c in cotangents):
            return (None,)
        if self.compute_uv:
            u_cotangent, s_cotangent, vh_cotangent = cotangents
            if self.full_matrices and (u_cotangent is not None or vh_cotangent is not None):
                raise NotImplementedError(
                    f"{self}: no derivative through u or vh with full_matrices=True (the "
                    "added singular vectors are not unique); use full_matrices=False"
                )
        else:
            (s_cotangent,), u_cotangent, vh_cotangent = cotangents, None, None
        u, s, vh = SVD(full_matrices=False).apply(a)
        return (fit_to(a, _svd_gradient(a, u, s, vh, u_cotangent, s_cotangent, vh_cotangent)),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (tangent,) = inputs, tangents
        if tangent is None:
            return (None,) * len(outputs)
        if self.compute_uv and self.full_matrices:
            raise NotImplementedError(
                f"{self}: no derivative of u or vh with full_matrices=True (the added "
                "singular vectors are not unique); use full_matrices=False"
            )
        u, s, vh = SVD(full_matrices=False).apply(a)
        v = mT(vh)
        rotated = matmul(matmul(mT(u), tangent), v)  # u^T da v
        s_tangent = matrix_diagonal(rotated)
        if not self.compute_uv:
            return (s_tangent,)
        row = expand_dims(s, -2)
        weights = _pair_weights(s, power=2)  # 1 / (s_j^2 - s_i^2)
        scaled_right = mul(rotated, row)  # (u^T da v) diag(s)
        scaled_left = mul(expand_dims(s, -1), rotated)  # diag(s) (u^T da v)
        u_tangent = matmul(u, mul(weights, add(scaled_right, mT(scaled_right))))
        v_tangent = matmul(v, mul(weights, add(scaled_left, mT(scaled_left))))
        m, n = a.type.shape[-2], a.type.shape[-1]
        if m is None or n is None or m != n:
            # Rectangular parts: the components outside the span of u (or v).
            if m is None or n is None or m > n:
                moved = matmul(tangent, v)
                outside = sub(moved, matmul(u, matmul(mT(u), moved)))
                u_tangent = add(u_tangent, true_div(outside, row))
            if m is None or n is None or n > m:
                moved = matmul(mT(tangent), u)
                outside = sub(moved, matmul(v, matmul(vh, moved)))
                v_tangent = add(v_tangent, true_div(outside, row))
        return (u_tangent, s_tangent, mT(v_tangent))


def _svd_gradient(
    a: Variable, u: Variable, s: Variable, vh: Variable,
    u_cotangent: Variable | None, s_cotangent: Variable | None, vh_cotangent: Variable | None,
) -> Variable:
    """The gradient of the thin SVD (Townsend 2016; PyTorch's `svd_backward` layout)."""
    middle: Variable | None = None if s_cotangent is None else diag_embed(s_cotangent)
    if u_cotangent is not None or vh_cotangent is not None:
        row, column = expand_dims(s, -2), expand_dims(s, -1)
        weights = _pair_weights(s, power=2)  # 1 / (s_j^2 - s_i^2)
        term: Variable | None = None
        if u_cotangent is not None:
            skew = matmul(mT(u), u_cotangent)
            skew = sub(skew, mT(skew))
            term = mul(skew, row)
        if vh_cotangent is not None:
            skew = matmul(vh, mT(vh_cotangent))
            skew = sub(skew, mT(skew))
            scaled = mul(column, skew)
            term = scaled if term is None else add(term, scaled)
        assert term is not None
        weighted = mul(term, weights)
        middle = weighted if middle is None else add(middle, weighted)
    assert middle is not None
    gradient = matmul(matmul(u, middle), vh)
    m, n = a.type.shape[-2], a.type.shape[-1]
    row = expand_dims(s, -2)
    if u_cotangent is not None and (m is None or n is None or m > n):
        scaled = true_div(u_cotangent, row)
        outside = sub(scaled, matmul(u, matmul(mT(u), scaled)))
        gradient = add(gradient, matmul(outside, vh))
    if vh_cotangent is not None and (m is None or n is None or n > m):
        scaled = true_div(mT(vh_cotangent), row)
        outside = sub(scaled, matmul(mT(vh), matmul(vh, scaled)))
        gradient = add(gradient, matmul(u, mT(outside)))
    return gradient


# Kernel: numba_backend.linalg._qr
@attrs.frozen(cache_hash=True)
class QR(MatrixOp):
    """The QR decomposition a = q r, as `numpy.linalg.qr` (mode "reduced", or "complete"
    with `complete`): q has orthonormal columns, r is upper triangular."""

    complete: bool = False
    core_ranks = (2,)
    output_count = 2

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        m, n = input_cores[0]
        k = m if self.complete else (None if m is None or n is None else min(m, n))
        return ((m, k), (k, n))

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        q, r = np.linalg.qr(cores[0], mode="complete" if self.complete else "reduced")
        return (q, r)

    def _wide_length(self, a: Variable) -> int | None:
        """m for a statically wide matrix (m < n), None for a tall or square one; refuses
        what has no derivative here (unknown lengths, complete mode of a tall matrix)."""
        m, n = a.type.shape[-2], a.type.shape[-1]
        if m is None or n is None or (self.complete and m > n):
            raise NotImplementedError(
                f"{self}: derivatives need static matrix lengths (and m <= n with "
                f"complete=True, whose added columns of q are not unique), got {a.type}"
            )
        return m if m < n else None

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (q, r) = inputs, outputs
        q_cotangent, r_cotangent = cotangents
        if q_cotangent is None and r_cotangent is None:
            return (None,)
        m = self._wide_length(a)
        if m is None:
            return (fit_to(a, _qr_pullback(q, r, q_cotangent, r_cotangent)),)
        # a = [x y] with x = q r1 square and r2 = q^T y (Liao et al. 2019): y's share
        # reaches q's cotangent as y r2bar^T, and y's gradient is q r2bar.
        if r_cotangent is None:
            square = _qr_pullback(q, r[..., :m], q_cotangent, None)
            return (fit_to(a, concatenate([square, zeros_like(a[..., m:])], axis=-1)),)
        left, right = r_cotangent[..., :m], r_cotangent[..., m:]
        moved = matmul(a[..., m:], mT(right))
        q_total = moved if q_cotangent is None else add(q_cotangent, moved)
        square = _qr_pullback(q, r[..., :m], q_total, left)
        return (fit_to(a, concatenate([square, matmul(q, right)], axis=-1)),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (q, r) = inputs, outputs
        (tangent,) = tangents
        if tangent is None:
            return (None, None)
        m = self._wide_length(a)
        if m is None:
            return _qr_pushforward(q, r, tangent)
        q_tangent, left = _qr_pushforward(q, r[..., :m], tangent[..., :m])
        right = add(matmul(mT(q_tangent), a[..., m:]), matmul(mT(q), tangent[..., m:]))
        return (q_tangent, concatenate([left, right], axis=-1))


def _qr_pullback(
    q: Variable, r: Variable, q_cotangent: Variable | None, r_cotangent: Variable | None
) -> Variable:
    """The gradient of a = q r for m >= n: M = r rbar^T - qbar^T q;
    abar = (qbar + q copyltu(M)) r^-T."""
    terms = []
    if r_cotangent is not None:
        terms.append(matmul(r, mT(r_cotangent)))
    if q_cotangent is not None:
        terms.append(neg(matmul(mT(q_cotangent), q)))
    m_matrix = terms[0] if len(terms) == 1 else add(terms[0], terms[1])
    copied = add(triangle(m_matrix, lower=True), mT(triangle(m_matrix, lower=True, strict=True)))
    left = matmul(q, copied)
    if q_cotangent is not None:
        left = add(left, q_cotangent)
    # left r^-T = (r^-1 left^T)^T
    return mT(SolveTriangular(lower=False)(r, mT(left)))


def _qr_pushforward(q: Variable, r: Variable, tangent: Variable) -> tuple[Variable, Variable]:
    """(dq, dr) of a = q r for m >= n."""
    # da r^-1 = (r^-T da^T)^T
    moved = mT(SolveTriangular(lower=False, trans=True)(r, mT(tangent)))
    rotated = matmul(mT(q), moved)
    strict = triangle(rotated, lower=True, strict=True)
    skew = sub(strict, mT(strict))
    q_tangent = add(matmul(q, sub(skew, rotated)), moved)
    r_tangent = matmul(sub(rotated, skew), r)
    return q_tangent, r_tangent
