"""DimShuffle as a view: `intrinsics.dimshuffled`, a few instructions computing the view's
shape and strides, keeping its source's memory order where the kept axes keep theirs
(numba types `x[:, None]` as arbitrarily strided, and an element loop reading that
loses vectorization). A full reversal is `.T`, which numba types Fortran-ordered. A
value of one element the block holds as a plain scalar stays a scalar (see
`registry.scalar_kernel`).

numba's own spellings cost compile time: `ndarray.transpose(axes)` seconds on its
first use in a process, indexing with `None` and `0` 15-20 ms a view.
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
    if op.order == tuple(range(rank)):
        return [f"{output} = {source}"]
    if op.order == tuple(reversed(range(rank))):
        return [f"{output} = {source}.T"]  # of a C-ordered source, typed Fortran-ordered
    order = ",".join("x" if axis is None else str(axis) for axis in op.order)
    return [f"{output} = dimshuffled({source}, '{order}')"]


def _index(parts: Iterable[str]) -> str:
    """`[a, b]`, with the trailing comma a one-element tuple index needs."""
    items = list(parts)
    return "[" + ", ".join(items) + ("," if len(items) == 1 else "") + "]"
