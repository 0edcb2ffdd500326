"""Matrix products: batches of matrix-vector products sharing one matrix are one matrix
product.

`A @ v_t` for every t (what a loop's matrix-vector products become once they are
computed for all steps at once) is a batched `MatMul` of the broadcast matrix with the
stacked columns; `V @ A.T` computes the same numbers as one BLAS call instead of one
call per row.
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from ops.dimshuffle import DimShuffle, transpose
from ops.matmul_op import MatMul
from rewrite.patterns import replacement
from rewrite.rules import RuleSet, rule


@rule(MatMul)
def shared_matrix_times_stacked_columns(node: Apply) -> Sequence[Variable] | None:
    """A[None] @ V[:, :, None] -> (V @ A.T)[:, :, None]; v[:, None, :] @ B[None] ->
    (v @ B)[:, None, :]."""
    match node:
        case Apply(
            op=MatMul(),
            inputs=(
                Variable(owner=Apply(op=DimShuffle(order=(None, 0, 1)), inputs=(matrix,))),
                Variable(owner=Apply(op=DimShuffle(order=(0, 1, None)), inputs=(rows,))),
            ),
        ):
            product = MatMul()(rows, transpose(matrix))
            return replacement(DimShuffle((0, 1, None))(product), node.out)
        case Apply(
            op=MatMul(),
            inputs=(
                Variable(owner=Apply(op=DimShuffle(order=(0, None, 1)), inputs=(rows,))),
                Variable(owner=Apply(op=DimShuffle(order=(None, 0, 1)), inputs=(matrix,))),
            ),
        ):
            product = MatMul()(rows, matrix)
            return replacement(DimShuffle((0, None, 1))(product), node.out)
    return None


MATMUL = RuleSet("matmul", (shared_matrix_times_stacked_columns,))
"""Products of stacked vectors with one shared matrix as one matrix product."""
