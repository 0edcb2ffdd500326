"""Linear-algebra rewrites: solve instead of inverting, factor once, and read
determinants of triangular matrices off their diagonals.

- `inv(a) @ b -> solve(a, b)` and `b @ inv(a) -> solve(a^T, b^T)^T`: one LU solve is
  cheaper and more accurate than an inverse and a product.
- `inv(inv(a)) -> a`.
- `log(det(a)) -> log(sign) + log|det|` from `slogdet`, which does not overflow; the
  `log(sign)` term keeps log's values where det <= 0 (nan for a negative determinant,
  -inf for zero), so the rewrite is exact.
- `det` and `slogdet` of a triangular matrix (a Cholesky factor, QR's r) -> the product
  (or the sum of logs) of its diagonal.
- `solve(a, b)` where a = L L^T of a Cholesky factor L, or where the graph also factors
  `a` by Cholesky and `a` is known symmetric -> `cho_solve((L, lower), b)`: the factor
  is already paid for. Known symmetric means declared so (`assume_a="sym"`) or
  symmetric by construction (`is_symmetric`: X X^T, X^T X, plus scaled identities,
  diagonals, ...). Nothing else is: cholesky(a) reads one triangle, so for a
  non-symmetric `a` it factors another matrix than the one `solve` reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fgraph import Apply, Variable
from ops.creation import Eye
from ops.determinants import Det, SLogDet
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.elementwise_functions import abs, add, log, sign
from ops.factorizations import QR, Cholesky
from ops.matmul_op import MatMul
from ops.matrix_op import pad_batch
from ops.matrix_parts import matrix_diagonal, mT
from ops.reduction import prod
from ops.reduction import sum as reduce_sum
from ops.scalar_ops import Log, Mul
from ops.shape_vector import MakeVector
from ops.solves import CholeskySolve, Inv, Solve
from rewrite.context import RewriteContext
from rewrite.patterns import constant_data, is_constant_value, replacement
from rewrite.rules import RuleSet, context_rule, rule


@rule(MatMul)
def inverse_times_matrix(node: Apply) -> Sequence[Variable] | None:
    """inv(a) @ b -> solve(a, b); b @ inv(a) -> solve(a^T, b^T)^T."""
    match node:
        case Apply(op=MatMul(), inputs=(Variable(owner=Apply(op=Inv(), inputs=(a,))), b)):
            return replacement(Solve()(a, b), node.out)
        case Apply(op=MatMul(), inputs=(b, Variable(owner=Apply(op=Inv(), inputs=(a,))))):
            return replacement(mT(Solve()(mT(a), mT(b))), node.out)
    return None


@rule(Inv)
def inverse_of_inverse(node: Apply) -> Sequence[Variable] | None:
    """inv(inv(a)) -> a."""
    match node:
        case Apply(op=Inv(), inputs=(Variable(owner=Apply(op=Inv(), inputs=(a,))),)):
            return replacement(a, node.out)
    return None


@rule(Elemwise)
def log_of_determinant(node: Apply) -> Sequence[Variable] | None:
    """log(det(a)) -> log(sign) + logabsdet of slogdet(a)."""
    match node:
        case Apply(
            op=Elemwise(scalar_op=Log()), inputs=(Variable(owner=Apply(op=Det(), inputs=(a,))),)
        ):
            determinant_sign, logabsdet = SLogDet().apply(a)
            return replacement(add(log(determinant_sign), logabsdet), node.out)
    return None


def _is_triangular(x: Variable) -> bool:
    """Whether `x` is triangular by construction: a Cholesky factor or QR's r."""
    match x:
        case Variable(owner=Apply(op=Cholesky())):
            return True
        case Variable(owner=Apply(op=QR()), index=1):
            return True
    return False


@rule(Det, SLogDet)
def determinant_of_triangular(node: Apply) -> Sequence[Variable] | None:
    """det(t) -> prod(diag(t)); slogdet(t) -> (prod(sign(diag)), sum(log|diag|)) for a
    triangular t."""
    (matrix,) = node.inputs
    if not _is_triangular(matrix):
        return None
    entries = matrix_diagonal(matrix)
    if isinstance(node.op, Det):
        return replacement(prod(entries, axis=-1), node.out)
    determinant_sign = prod(sign(entries), axis=-1)
    logabsdet = reduce_sum(log(abs(entries)), axis=-1)
    values = (determinant_sign, logabsdet)
    fitted = [replacement(value, output) for value, output in zip(values, node.outputs)]
    if fitted[0] is None or fitted[1] is None:
        return None
    return (fitted[0][0], fitted[1][0])


def _cholesky_product(a: Variable) -> tuple[Variable, bool] | None:
    """(L, True) when `a` is L @ L^T of a lower Cholesky factor, (U, False) when it is
    U^T @ U of an upper one."""
    match a:
        case Variable(owner=Apply(op=MatMul(), inputs=(left, right))):
            if right == mT(left) and _is_cholesky(left, lower=True):
                return left, True
            if left == mT(right) and _is_cholesky(right, lower=False):
                return right, False
    return None


def _is_cholesky(x: Variable, lower: bool) -> bool:
    return isinstance(x.owner, Apply) and x.owner.op == Cholesky(lower=lower)


def is_symmetric(x: Variable) -> bool:
    """Whether each matrix of `x` (its last two axes) is symmetric by construction:
    X @ X^T and X^T @ X, square identities, constants equal to their transpose, products
    with an identity (diagonal: `d * eye(n)`), and elementwise functions of these and of
    values constant over the matrices (`2 * (X @ X.T) + 0.5 * eye(n)`), transposed or
    with batch axes added."""
    pending = [x]
    while pending:
        matrix = pending.pop()
        match matrix:
            case _ if _is_identity(matrix):
                continue
            case Variable(owner=Apply(op=MatMul(), inputs=(left, right))):
                if min(left.ndim, right.ndim) < 2 or (right != mT(left) and left != mT(right)):
                    return False
            case Variable(owner=Apply(op=DimShuffle(order=(*_, row, column)), inputs=(inner,))):
                if inner.ndim < 2 or {row, column} != {inner.ndim - 2, inner.ndim - 1}:
                    return False
                pending.append(inner)
            case Variable(owner=Apply(op=Elemwise(scalar_op=scalar_op), inputs=inputs)):
                if isinstance(scalar_op, Mul) and any(_is_identity(factor) for factor in inputs):
                    continue  # diagonal
                pending.extend(v for v in inputs if v.type.shape[-2:] != (1, 1))
            case _:
                data = constant_data(matrix)
                if data is None or data.ndim < 2 or not np.array_equal(data, np.swapaxes(data, -1, -2)):
                    return False
    return True


def _is_identity(x: Variable) -> bool:
    """Whether each matrix of `x` is a square identity: `eye(n)`, built or constant,
    possibly with leading axes added (as elementwise ops pad it)."""
    match _without_added_leading_axes(x):
        case Variable(owner=Apply(op=Eye(), inputs=(lengths, k))) if is_constant_value(k, 0):
            match lengths:
                case Variable(owner=Apply(op=MakeVector(), inputs=(rows, columns))):
                    return rows == columns
            data = constant_data(lengths)
            return data is not None and data.shape == (2,) and data[0] == data[1]
    data = constant_data(x)
    return (data is not None and data.ndim >= 2 and data.shape[-1] == data.shape[-2]
            and np.array_equal(data, np.broadcast_to(np.eye(data.shape[-1]), data.shape)))


def _without_added_leading_axes(x: Variable) -> Variable:
    """`x` without the leading axes `DimShuffle`s added to it (how elementwise ops pad
    their inputs to one rank)."""
    while isinstance(x.owner, Apply) and isinstance(x.owner.op, DimShuffle):
        (inner,) = x.owner.inputs
        added = x.ndim - inner.ndim
        if added < 1 or x.owner.op.order != (*(None,) * added, *range(inner.ndim)):
            break
        x = inner
    return x


@context_rule(Solve)
def solve_with_cholesky_factor(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """solve(a, b) -> cho_solve((L, lower), b) when a = L L^T of a Cholesky factor L, or
    when the graph computes L = cholesky(a) of an `a` known symmetric."""
    a, b = node.inputs
    product = _cholesky_product(a)
    if product is not None:
        factor, lower = product
        return replacement(CholeskySolve(lower)(*pad_batch([factor, b], (2, 2))), node.out)
    declared = isinstance(node.op, Solve) and node.op.symmetric
    if not declared and not is_symmetric(a):
        return None
    for client, _ in context.clients(a):
        match client:
            case Apply(op=Cholesky(lower=lower)):
                solved = CholeskySolve(lower)(*pad_batch([client.out, b], (2, 2)))
                return replacement(solved, node.out)
    return None


LINALG = RuleSet(
    "linalg",
    (
        inverse_times_matrix,
        inverse_of_inverse,
        log_of_determinant,
        determinant_of_triangular,
        solve_with_cholesky_factor,
    ),
)
"""Solves instead of inverses, shared factorizations, determinants of triangles."""
