"""Determinants: `Det` and `SLogDet` (sign and log of the absolute value, which stays
finite where the determinant over- or underflows).

Both come from an LU factorization. Their derivatives go through the inverse
transpose (d det = det tr(a^-1 da)), so at a singular matrix the derivative is not
taken: the inverse's solve raises `LinAlgError` there, where NumPy would divide by zero.
The sign is piecewise constant: it has no derivative.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Variable
from fgraph.op import Array
from ops.dimshuffle import expand_dims
from ops.elemwise import fit_to
from ops.elementwise_functions import mul
from ops.matrix_op import MatrixOp, Shape, pad_batch, square_length
from ops.matrix_parts import identity_like, matrix_diagonal, mT
from ops.reduction import sum as reduce_sum
from ops.solves import Solve

Derivatives = tuple[Variable | None, ...]


def _inverse_transpose(a: Variable) -> Variable:
    """a^-T, as a solve against the identity (one LU, no separate inverse op)."""
    return Solve()(*pad_batch([mT(a), identity_like(a)], Solve.core_ranks))


def _trace_of_solve(a: Variable, tangent: Variable) -> Variable:
    """tr(a^-1 da), batched."""
    return reduce_sum(matrix_diagonal(Solve()(a, tangent)), axis=-1)


def _as_matrix_factor(x: Variable) -> Variable:
    """A batch of scalars (...,) as (..., 1, 1), to scale matrices."""
    return expand_dims(expand_dims(x, -1), -1)


# Kernel: numba_backend.linalg._det
@attrs.frozen(cache_hash=True)
class Det(MatrixOp):
    """The determinant of a square matrix."""

    core_ranks = (2,)

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        square_length(self, input_cores[0], "matrix")
        return ((),)

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        return (np.asarray(np.linalg.det(cores[0])),)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (det,), (cotangent,) = inputs, outputs, cotangents
        if cotangent is None:
            return (None,)
        scale = _as_matrix_factor(mul(cotangent, det))
        return (fit_to(a, mul(scale, _inverse_transpose(a))),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (det,), (tangent,) = inputs, outputs, tangents
        if tangent is None:
            return (None,)
        return (mul(det, _trace_of_solve(a, tangent)),)


# Kernel: numba_backend.linalg._slogdet
@attrs.frozen(cache_hash=True)
class SLogDet(MatrixOp):
    """(sign, log|det|) of a square matrix, as `numpy.linalg.slogdet`; a singular matrix
    gives (0, -inf)."""

    core_ranks = (2,)
    output_count = 2

    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        square_length(self, input_cores[0], "matrix")
        return ((), ())

    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        sign, logabsdet = np.linalg.slogdet(cores[0])
        return (np.asarray(sign), np.asarray(logabsdet))

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (_, log_cotangent) = inputs, cotangents
        if log_cotangent is None:
            return (None,)
        return (fit_to(a, mul(_as_matrix_factor(log_cotangent), _inverse_transpose(a))),)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> Derivatives:
        (a,), (tangent,) = inputs, tangents
        if tangent is None:
            return (None, None)
        return (None, _trace_of_solve(a, tangent))
