"""`DimShuffle`: one op for transposing, inserting and dropping length-1 axes.

`order[i]` names the input axis that becomes output axis i, or None for a new axis of
length 1; input axes left out must have static length 1. Transpose, expand_dims and
squeeze are all spelled with it, so their rewrites (merging, cancelling) are one rule.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable
from fgraph.op import Array


def _as_order(order: tuple[int | None, ...]) -> tuple[int | None, ...]:
    order = tuple(None if axis is None else int(axis) for axis in order)
    kept = [axis for axis in order if axis is not None]
    if len(set(kept)) != len(kept) or any(axis < 0 for axis in kept):
        raise ValueError(f"DimShuffle order {order} must use distinct non-negative axes")
    return order


@attrs.frozen(cache_hash=True)
class DimShuffle(Op):
    order: tuple[int | None, ...] = attrs.field(converter=_as_order)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        kept = [axis for axis in self.order if axis is not None]
        if any(axis >= x.ndim for axis in kept):
            raise ShapeError(f"{self}: input has rank {x.ndim}, order names axis {max(kept)}")
        for axis in range(x.ndim):
            if axis not in kept and x.shape[axis] != 1:
                raise ShapeError(
                    f"{self}: dropped axis {axis} must have static length 1, input is {x}"
                )
        shape = tuple(1 if axis is None else x.shape[axis] for axis in self.order)
        return (TensorType(x.dtype, shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        kept = [axis for axis in self.order if axis is not None]
        dropped = tuple(axis for axis in range(x.ndim) if axis not in kept)
        squeezed = np.squeeze(x, axis=dropped) if dropped else x
        # Renumber kept axes after squeezing, transpose them, then insert new axes.
        renumber = {axis: axis - sum(d < axis for d in dropped) for axis in kept}
        moved = np.transpose(squeezed, [renumber[axis] for axis in kept])
        shape = tuple(1 if axis is None else x.shape[axis] for axis in self.order)
        return (moved.reshape(shape),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None:
            return (None,)
        kept = [axis for axis in self.order if axis is not None]
        position = {axis: i for i, axis in enumerate(kept)}
        # Drop the new axes (length 1), move kept axes back, re-insert dropped ones.
        inverse = tuple(position.get(axis) for axis in range(x.ndim))
        return (DimShuffle(inverse)(cotangent_without_new_axes(self.order, cotangent)),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (tangent,) = tangents
        return (None if tangent is None else self(tangent),)


def cotangent_without_new_axes(order: tuple[int | None, ...], cotangent: Variable) -> Variable:
    """Remove the length-1 axes a DimShuffle inserted, keeping kept axes in output order."""
    if all(axis is not None for axis in order):
        return cotangent
    return DimShuffle(tuple(i for i, axis in enumerate(order) if axis is not None))(cotangent)


def transpose(x: Variable, axes: tuple[int, ...] | None = None) -> Variable:
    """Permute axes (reverse them by default), as `numpy.transpose`."""
    rank = x.ndim
    if axes is None:
        axes = tuple(reversed(range(rank)))
    axes = tuple(axis % rank if rank else axis for axis in axes)
    if sorted(axes) != list(range(rank)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of {rank} axes")
    return x if axes == tuple(range(rank)) else DimShuffle(axes)(x)


def expand_dims(x: Variable, axis: int | tuple[int, ...]) -> Variable:
    """Insert length-1 axes at the given output positions, as `numpy.expand_dims`."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    rank = x.ndim + len(axes)
    normalized = sorted(a % rank for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"expand_dims: repeated axis in {axes}")
    source = iter(range(x.ndim))
    return DimShuffle(tuple(None if a in normalized else next(source) for a in range(rank)))(x)


def squeeze(x: Variable, axis: int | tuple[int, ...] | None = None) -> Variable:
    """Remove length-1 axes (all statically known ones by default), as `numpy.squeeze`."""
    if axis is None:
        axes = tuple(a for a, length in enumerate(x.type.shape) if length == 1)
    else:
        axes = tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    for a in axes:
        if x.type.shape[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of {x.type} is not statically of length 1")
    return DimShuffle(tuple(a for a in range(x.ndim) if a not in axes))(x) if axes else x


def left_pad_rank(x: Variable, rank: int) -> Variable:
    """Prepend length-1 axes so `x` has `rank` axes (NumPy's broadcasting alignment)."""
    missing = rank - x.ndim
    if missing <= 0:
        return x
    return DimShuffle((None,) * missing + tuple(range(x.ndim)))(x)
