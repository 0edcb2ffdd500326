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
- `solve(a, b)` where the graph also factors `a` by Cholesky, or where a = L L^T of a
  Cholesky factor L -> `cho_solve((L, lower), b)`: the factor is already paid for. A
  matrix the graph factors by Cholesky is taken to be symmetric, as the factorization
  presumes (it reads one triangle; for a non-symmetric `a`, cholesky(a) factors another
  matrix than the one `solve` would have read).
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from ops.determinants import Det, SLogDet
from ops.elemwise import Elemwise, abs, add, log, sign
from ops.factorizations import QR, Cholesky
from ops.matmul import MatMul
from ops.matrix_op import pad_batch
from ops.matrix_parts import matrix_diagonal, mT
from ops.reduction import prod
from ops.reduction import sum as reduce_sum
from ops.scalar import Log
from ops.solves import CholeskySolve, Inv, Solve
from rewrite.context import RewriteContext
from rewrite.patterns import replacement
from rewrite.rule import RuleSet, context_rule, rule


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


@context_rule(Solve)
def solve_with_cholesky_factor(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """solve(a, b) -> cho_solve((L, lower), b) when the graph computes L = cholesky(a),
    or when a = L L^T of a Cholesky factor L."""
    a, b = node.inputs
    product = _cholesky_product(a)
    if product is not None:
        factor, lower = product
        return replacement(CholeskySolve(lower)(*pad_batch([factor, b], (2, 2))), node.out)
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
