"""`DimShuffle`: one op for transposing, inserting and dropping length-1 axes.

`order[i]` names the input axis that becomes output axis i, or None for a new axis of
length 1; input axes left out must have static length 1. Transpose, expand_dims and
squeeze are all spelled with it, so their rewrites (merging, cancelling) are one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from ops.convert import as_tensor


@attrs.define
class ShapeFunctions:
    """The function `DimShuffle`'s pullback needs from a module above this one:
    `specify_shape` (`ops.reshape_ops`), which states that a cotangent has length 1
    where the shuffle inserted axes. Shapes are built on `DimShuffle`, so
    `ops.reshape_ops` imports this module and sets `specify_shape` here when it is
    imported (the `ops` package imports it), as a loop's derivatives register in
    `ops.scan_op.LOOP_DELEGATES`."""

    specify_shape: Callable[[Variable, tuple[int | None, ...]], Variable] | None = None


SHAPE_FUNCTIONS = ShapeFunctions()


def _as_order(order: Sequence[int | None]) -> tuple[int | None, ...]:
    normalized = tuple(None if axis is None else int(axis) for axis in order)
    kept = [axis for axis in normalized if axis is not None]
    if len(set(kept)) != len(kept) or any(axis < 0 for axis in kept):
        raise ValueError(f"DimShuffle order {normalized} must use distinct non-negative axes")
    return normalized


# Kernel: numba_backend.dimshuffle._dimshuffle
@attrs.frozen(cache_hash=True)
class DimShuffle(Op):
    """Axes permuted, dropped (static length 1 only) or inserted (`None` in `order`, a new
    axis of length 1): `order` lists, per output axis, the input axis it takes. A view."""

    order: tuple[int | None, ...] = attrs.field(converter=_as_order)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """The batch axes stay in front; the order shifts past them."""
        shifted = tuple(None if axis is None else axis + batch_ndim for axis in self.order)
        return (DimShuffle((*range(batch_ndim), *shifted))(inputs[0]),), (True,)

    @property
    def kept(self) -> tuple[int, ...]:
        """The input axes that survive, in output order."""
        return tuple(axis for axis in self.order if axis is not None)

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result may be a view of the input

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 1:
            raise TypeError(f"{self}: expected 1 input, got {len(input_types)}")
        (x,) = input_types
        for axis in self.kept:
            if axis >= x.ndim:
                raise ShapeError(f"{self}: order names axis {axis}, but the input is {x}")
        for axis in range(x.ndim):
            if axis not in self.kept and x.shape[axis] != 1:
                raise ShapeError(
                    f"{self}: dropped axis {axis} must have static length 1, input is {x}"
                )
        shape = tuple(1 if axis is None else x.shape[axis] for axis in self.order)
        return (TensorType(x.dtype, shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        # Move kept axes to the front in output order (dropped ones, all of length 1,
        # trail), then reshape: that drops them and inserts the new axes.
        dropped = [axis for axis in range(x.ndim) if axis not in self.kept]
        moved = np.transpose(x, [*self.kept, *dropped])
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
        position = {axis: i for i, axis in enumerate(self.kept)}
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

    def __str__(self) -> str:
        """What the shuffle does: `Transpose{axes=(1, 0)}`, `ExpandDims{axis=0}`,
        `DropDims{keep=(0, 2)}` (all other axes, of length 1, are dropped; the op does not
        know the input rank), or the general `DimShuffle{order=(1,x,0)}`."""
        kept = self.kept
        identity = tuple(range(len(kept)))
        if len(kept) == len(self.order):
            if sorted(kept) == list(identity) and kept != identity:
                return f"Transpose{{axes={kept}}}"
            if list(kept) == sorted(kept):
                return f"DropDims{{keep={kept}}}"
        elif kept == identity:
            new = tuple(i for i, axis in enumerate(self.order) if axis is None)
            return f"ExpandDims{{axis={new[0]}}}" if len(new) == 1 else f"ExpandDims{{axes={new}}}"
        order = ",".join("x" if axis is None else str(axis) for axis in self.order)
        return f"DimShuffle{{order=({order})}}"


def cotangent_without_new_axes(order: tuple[int | None, ...], cotangent: Variable) -> Variable:
    """Remove the length-1 axes a DimShuffle inserted, keeping kept axes in output order.

    A cotangent given from outside (`known_grads`) may not know statically that those
    axes have length 1; `specify_shape` states it (and checks it at run time)."""
    if all(axis is not None for axis in order):
        return cotangent
    if any(axis is None and cotangent.type.shape[i] != 1 for i, axis in enumerate(order)):
        assert SHAPE_FUNCTIONS.specify_shape is not None, "ops.reshape_ops registers it"
        cotangent = SHAPE_FUNCTIONS.specify_shape(
            cotangent, tuple(1 if axis is None else None for axis in order)
        )
    return DimShuffle(tuple(i for i, axis in enumerate(order) if axis is not None))(cotangent)


def normalize_axis(axis: int, ndim: int, what: str) -> int:
    """`axis` in [-ndim, ndim) as a non-negative int, or a ValueError naming `what`."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for rank {ndim}")
    return int(axis) % ndim


def _axes_tuple(axis: int | Sequence[int], ndim: int, what: str) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    normalized = tuple(normalize_axis(a, ndim, what) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{what}: repeated axis in {tuple(axes)}")
    return normalized


def transpose(x: TensorLike, axes: Sequence[int] | None = None) -> Variable:
    """Permute axes (reverse them by default), as `numpy.transpose`."""
    variable = as_tensor(x, name="transpose")
    rank = variable.ndim
    if axes is None:
        permutation = tuple(reversed(range(rank)))
    else:
        permutation = tuple(normalize_axis(a, rank, "transpose") for a in axes)
        if sorted(permutation) != list(range(rank)):
            raise ValueError(f"transpose: axes {tuple(axes)} are not a permutation of {rank} axes")
    return variable if permutation == tuple(range(rank)) else DimShuffle(permutation)(variable)


def expand_dims(x: TensorLike, axis: int | Sequence[int]) -> Variable:
    """Insert length-1 axes at the given output positions, as `numpy.expand_dims`."""
    variable = as_tensor(x, name="expand_dims")
    rank = variable.ndim + (1 if isinstance(axis, (int, np.integer)) else len(axis))
    new = _axes_tuple(axis, rank, "expand_dims")
    if not new:
        return variable
    source = iter(range(variable.ndim))
    return DimShuffle(tuple(None if a in new else next(source) for a in range(rank)))(variable)


def squeeze(x: TensorLike, axis: int | Sequence[int] | None = None) -> Variable:
    """Remove length-1 axes (all statically known ones by default), as `numpy.squeeze`.
    A named axis must have static length 1: graphs are typed before they run."""
    variable = as_tensor(x, name="squeeze")
    if axis is None:
        axes = tuple(a for a, length in enumerate(variable.type.shape) if length == 1)
    else:
        axes = _axes_tuple(axis, variable.ndim, "squeeze")
    for a in axes:
        if variable.type.shape[a] != 1:
            raise ShapeError(f"squeeze: axis {a} of {variable.type} is not statically of length 1")
    if not axes:
        return variable
    return DimShuffle(tuple(a for a in range(variable.ndim) if a not in axes))(variable)


def left_pad_rank(x: Variable, rank: int) -> Variable:
    """Prepend length-1 axes so `x` has `rank` axes (NumPy's broadcasting alignment)."""
    missing = rank - x.ndim
    if missing <= 0:
        return x
    return DimShuffle((None,) * missing + tuple(range(x.ndim)))(x)
