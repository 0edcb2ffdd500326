"""What the ops' vectorization rules share: batch lengths, batch axes for an unbatched
operand, and the one rule of the index updates (`IncSubtensor`, `AdvancedIncSubtensor`).

`ops.vectorize` (`vectorize_graph`, `vmap`) asks each op's `vectorize` rule; the rules of
the ops below it that need more than their own op import these from here, not from
`ops.vectorize`, which is built on them (it loops over the batch with `scan`).
"""

from __future__ import annotations

from fgraph import TensorType, Variable
from fgraph.op import Vectorized
from ops.creation import alloc
from ops.dimshuffle import DimShuffle
from ops.indexing import IndexUpdate


def pad_batch_axes(x: Variable, batch_ndim: int) -> Variable:
    """`x` with `batch_ndim` leading axes of length 1 (an unbatched operand, made to
    broadcast against batched ones)."""
    return x if batch_ndim == 0 else DimShuffle((*(None,) * batch_ndim, *range(x.ndim)))(x)


def lengths_after(x: Variable, skip: int) -> list[Variable | int]:
    """x's lengths after its first `skip` axes (static where known)."""
    lengths: list[Variable | int] = []
    for axis in range(skip, x.ndim):
        static = x.type.shape[axis]
        lengths.append(static if static is not None else x.shape[axis])
    return lengths


def batch_lengths(batched: list[Variable], batch_ndim: int) -> list[Variable | int]:
    """The broadcast batch lengths: per axis, from an operand whose length is not a
    static 1."""
    lengths: list[Variable | int] = []
    for axis in range(batch_ndim):
        full = [v for v in batched if v.type.shape[axis] != 1]
        source = full[0] if full else batched[0]
        static = source.type.shape[axis]
        lengths.append(static if static is not None else source.shape[axis])
    return lengths


def batched_update(
    example: IndexUpdate, update: IndexUpdate, inputs: tuple[Variable, ...],
    batched: tuple[bool, ...], batch_ndim: int, position: int,
) -> Vectorized:
    """The index update `example(x, y, *indices)`, with unbatched indices, mapped over
    the batch as one update: `update` is `example` with full slices over the batch axes
    put in front of its index; its region holds the batch axes at `position` (0, unless
    NumPy moves the advanced index axes first).

    The result is one `x` per example, so an `x` that does not span the batch
    (unbatched, or of static batch length 1 while `y` is not) is first copied over it,
    into a fresh array (`alloc`) the update may then overwrite in place (a broadcast
    view could only be copied again). `y` gets the region's missing leading axes behind
    its batch axes (of length 1 when unbatched), which then move to `position`, so that
    it broadcasts against each example's region as it did unbatched."""
    x, y, *indices = inputs
    example_x = TensorType(x.dtype, x.type.shape[batch_ndim:] if batched[0] else x.type.shape)
    region_ndim = len(example.indexed_shape(example_x, tuple(v.type for v in indices)))
    lengths = batch_lengths([v for v, flag in zip((x, y), batched) if flag], batch_ndim)
    if not batched[0]:
        x = alloc(pad_batch_axes(x, batch_ndim), [*lengths, *lengths_after(x, 0)])
    elif any(x.type.shape[axis] == 1 and not (isinstance(length, int) and length == 1)
             for axis, length in enumerate(lengths)):
        x = alloc(x, [*lengths, *lengths_after(x, batch_ndim)])
    own = y.ndim - batch_ndim if batched[1] else y.ndim
    batch_axes: list[int | None] = list(range(batch_ndim)) if batched[1] else [None] * batch_ndim
    own_axes: list[int | None] = [*(None,) * (region_ndim - own), *range(y.ndim - own, y.ndim)]
    order = (*own_axes[:position], *batch_axes, *own_axes[position:])
    if order != tuple(range(y.ndim)):
        y = DimShuffle(order)(y)
    return (update(x, y, *indices),), (True,)
