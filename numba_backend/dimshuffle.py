"""DimShuffle as a view: index dropped axes with 0, transpose, insert new axes with None."""

from __future__ import annotations

from collections.abc import Iterable

from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from ops.dimshuffle import DimShuffle


@numba_kernel.register
def _dimshuffle(op: DimShuffle, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    (source,) = node.inputs
    (output,) = node.outputs
    rank = node.input_types[0].ndim
    kept = [axis for axis in op.order if axis is not None]
    if not op.order and rank:  # every axis dropped: numba would give a scalar, not a 0-d array
        dtype = dtype_expression(node.output_types[0].dtype)
        zeros = _index("0" for _ in range(rank))
        return [f"{output} = np.empty((), dtype={dtype})", f"{output}[()] = {source}{zeros}"]
    expression = source
    if len(kept) < rank:  # drop length-1 axes
        expression += _index(":" if axis in kept else "0" for axis in range(rank))
    remaining = sorted(kept)
    permutation = tuple(remaining.index(axis) for axis in kept)
    if permutation != tuple(range(len(kept))):
        expression = f"{expression}.transpose({permutation})"
    if len(kept) < len(op.order):  # insert new axes
        expression += _index("None" if axis is None else ":" for axis in op.order)
    return [f"{output} = {expression}"]


def _index(parts: Iterable[str]) -> str:
    """`[a, b]`, with the trailing comma a one-element tuple index needs."""
    items = list(parts)
    return "[" + ", ".join(items) + ("," if len(items) == 1 else "") + "]"
