"""DimShuffle as a view: index dropped axes with 0, permute, insert new axes with None.

A view that only drops or inserts length-1 axes keeps its source's memory order, which
`intrinsics.with_layout_of` tells numba (it would type it as arbitrarily strided). A
value of one element the block holds as a plain scalar stays a scalar (see
`registry.scalar_kernel`).

Permutations avoid numba's `ndarray.transpose(axes)`, whose compilation alone takes
seconds: a full reversal is `.T`, any other permutation the intrinsic
`intrinsics.permuted` (a few instructions; `as_strided` cost 0.15 s a process).
"""

from __future__ import annotations

from collections.abc import Iterable

from numba_backend.registry import (
    Allocation,
    ModuleBuilder,
    NodeInfo,
    numba_kernel,
    scalar_kernel,
)
from ops.dimshuffle import DimShuffle


@numba_kernel.register
@scalar_kernel(size_one=True)
def _dimshuffle(op: DimShuffle, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A value of one element held as a scalar (a scalar given axes to broadcast along)
    stays one, or becomes a fresh array where the block needs an array."""
    (source,) = node.inputs
    (output,) = node.outputs
    if node.holds_scalar(0) or node.makes_scalar(0):
        return node.assign_scalar(0, node.scalar(0))
    rank = node.input_types[0].ndim
    kept = [axis for axis in op.order if axis is not None]
    if not kept and rank:  # every input axis dropped: indexing would give a scalar
        element = f"{source}{_index('0' for _ in range(rank))}"
        shape = "(" + "".join("1, " for _ in op.order) + ")"
        return [Allocation(output, shape, node.output_types[0].dtype), f"{output}[...] = {element}"]
    lines: list[str] = []
    expression = source
    if len(kept) < rank:  # drop length-1 axes
        expression += _index(":" if axis in kept else "0" for axis in range(rank))
    remaining = sorted(kept)
    permutation = tuple(remaining.index(axis) for axis in kept)
    if permutation == tuple(reversed(range(len(kept)))) and len(kept) > 1:
        expression = f"{expression}.T"
    elif permutation != tuple(range(len(kept))):
        expression = f"permuted({expression}, '{','.join(map(str, permutation))}')"
    if len(kept) < len(op.order):  # insert new axes
        expression += _index("None" if axis is None else ":" for axis in op.order)
    if permutation == tuple(range(len(kept))) and expression != source:
        expression = f"with_layout_of({expression}, {source})"  # still C (or F) ordered
    return [*lines, f"{output} = {expression}"]


def _index(parts: Iterable[str]) -> str:
    """`[a, b]`, with the trailing comma a one-element tuple index needs."""
    items = list(parts)
    return "[" + ", ".join(items) + ("," if len(items) == 1 else "") + "]"
