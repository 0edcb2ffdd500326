"""`BroadcastTo`: a tensor broadcast to a shape given as an int64 vector input, and the
two rules it shares with `Alloc` (which broadcasts into fresh memory): the static type
of a broadcast, and summing a cotangent back to the broadcast operand.

As everywhere in this library (and PyTensor), an axis broadcasts only when its static
length is 1: the gradient is fixed when the graph is built, so an axis of unknown
length is taken to match the target, not to be stretched.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, ClassVar

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable, format_shape
from fgraph.dtypes import is_inexact
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from fgraph.types import Shape as StaticShape
from ops.convert import as_tensor
from ops.dimshuffle import DimShuffle
from ops.reduction import Sum
from ops.shape_vector import (
    ShapeLike,
    as_shape_vector,
    as_static_shape,
    check_runtime_shape,
    check_shape_input,
)


def broadcast_type(
    op: Op, x: TensorType, shape_type: TensorType, target: StaticShape
) -> TensorType:
    """The type of `x` broadcast to `target` (NumPy's rule, axes aligned on the right)."""
    check_shape_input(op, shape_type, len(target))
    lead = len(target) - x.ndim
    if lead < 0:
        raise ShapeError(f"{op}: cannot broadcast {x} to the lower rank of {format_shape(target)}")
    shape = list(target[:lead])
    for want, got in zip(target[lead:], x.shape):
        if want is not None and got is not None and got not in (1, want):
            raise ShapeError(f"{op}: cannot broadcast {x} to shape {format_shape(target)}")
        shape.append(want if want is not None else (None if got == 1 else got))
    return TensorType(x.dtype, tuple(shape))


def broadcast_array(op: Op, x: Array, target: Array, static: StaticShape) -> Array:
    """`numpy.broadcast_to` (a read-only view) with errors naming `op` and both shapes."""
    lengths = check_runtime_shape(op, target, static)
    try:
        return np.broadcast_to(x, lengths)
    except ValueError as error:
        message = f"{op}: cannot broadcast an array of shape {x.shape} to {lengths}"
        raise ShapeError(message) from error


def check_static_stretch(op: Op, x_type: TensorType, x: Array, target: Array) -> None:
    """Refuse stretching an axis of `x` that is 1 at run time but not statically: the
    gradient (`sum_to`) was built for an axis that is not stretched."""
    lead = len(target) - x.ndim
    for axis, (static, length) in enumerate(zip(x_type.shape, x.shape)):
        wanted = int(target[lead + axis])
        if length == 1 and static != 1 and wanted != 1:
            raise ShapeError(
                f"{op}: axis {axis} of {x_type} has length 1 at run time and would be stretched "
                f"to {wanted}; broadcasting needs a static length of 1 (use specify_shape)"
            )


def sum_to(cotangent: Variable, target: TensorType) -> Variable | None:
    """The cotangent of a broadcast operand of type `target` (None if it is not a float):
    `cotangent` summed over the added leading axes and the stretched length-1 axes."""
    if not is_inexact(target.dtype):
        return None
    lead = cotangent.ndim - target.ndim
    stretched = [
        lead + axis
        for axis, length in enumerate(target.shape)
        if length == 1 and cotangent.type.shape[lead + axis] != 1
    ]
    axes = (*range(lead), *stretched)
    if not axes:
        return cotangent
    summed = Sum(axes)(cotangent)
    kept = iter(range(summed.ndim))
    order = tuple(None if lead + axis in axes else next(kept) for axis in range(target.ndim))
    return summed if order == tuple(range(summed.ndim)) else DimShuffle(order)(summed)


class Stretch(Op, abc.ABC):
    """What `BroadcastTo` (a view) and `Alloc` (a fresh array) share: the first input
    broadcast to the shape an int64 vector input gives; `shape` holds the lengths known
    at build time. The gradient sums back over the stretched axes."""

    __slots__ = ()
    shape: StaticShape
    operand: ClassVar[str]
    """How error messages name the first input."""

    if TYPE_CHECKING:  # the attrs subclasses take their static shape first

        def __init__(self, shape: StaticShape) -> None: ...

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """The value, with its batch axes in front, stretched to the batch lengths and the
        target shape (an unbatched target)."""
        if batched[1]:
            return None
        value, target = inputs
        rank = len(self.shape)
        value = DimShuffle((*range(batch_ndim), *(None,) * (rank - value.ndim + batch_ndim),
                            *range(batch_ndim, value.ndim)))(value)
        batch = [value.type.shape[k] if value.type.shape[k] is not None else value.shape[k]
                 for k in range(batch_ndim)]
        entries = [self.shape[k] if self.shape[k] is not None else target[k] for k in range(rank)]
        stretched = type(self)((*value.type.shape[:batch_ndim], *self.shape))
        vector = as_shape_vector([*batch, *entries], str(self))
        return (stretched(value, vector.variable),), (True,)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 2:
            raise TypeError(
                f"{self}: expected 2 inputs ({self.operand}, shape), got {len(input_types)}"
            )
        return (broadcast_type(self, input_types[0], input_types[1], self.shape),)

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        check_static_stretch(self, input_types[0], inputs[0], inputs[1])

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (cotangent,) = cotangents
        return (None if cotangent is None else sum_to(cotangent, inputs[0].type), None)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        tangent, _ = tangents
        return (None if tangent is None else self(tangent, inputs[1]),)


# Kernel: numba_backend.broadcast._broadcast_to
@attrs.frozen(cache_hash=True)
class BroadcastTo(Stretch):
    """`x` broadcast to a shape, as `numpy.broadcast_to` (a read-only view)."""

    shape: StaticShape = attrs.field(converter=as_static_shape)
    operand: ClassVar[str] = "x"

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result may be a view of the input

    @property
    def read_only_outputs(self) -> tuple[int, ...]:
        return (0,)  # stretched axes repeat one element: writing one would write them all

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (broadcast_array(self, inputs[0], inputs[1], self.shape),)


def broadcast_to(x: TensorLike, shape: ShapeLike) -> Variable:
    """`x` broadcast to `shape`, as `numpy.broadcast_to`: missing leading axes are added,
    axes of static length 1 stretched; `shape` may hold integer variables."""
    variable = as_tensor(x, name="broadcast_to")
    target = as_shape_vector(shape, "broadcast_to")
    if variable.type.is_fully_static and target.static == variable.type.shape:
        return variable
    return BroadcastTo(target.static)(variable, target.variable)
