"""Reductions and scans: the ops `Sum`, `Prod`, `Max`, `Min`, `AllTrue`, `AnyTrue` (over a set of
axes), `Argmax`, `Argmin` (over one axis or all), `CumSum`, `CumProd` (along one axis),
and the NumPy-named functions on top of them.

Reduction ops always drop their axes; `keepdims=True` is a `DimShuffle` that re-inserts
them, so rewrites see a single form. `mean`, `var`, `std`, `logsumexp`, `softmax` and
`log_softmax` are compositions of these ops and elementwise ones, so rewrites see
through them and their derivatives come for free.

This module defines `sum`, `max`, `min`, `all`, `any` like NumPy does, shadowing the
builtins: use `builtins.any(...)` inside it.
"""

from __future__ import annotations

import abc
import builtins
import functools
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar, SupportsIndex

import attrs
import numpy as np

from fgraph import DTypeError, Op, ShapeError, TensorType, Variable
from fgraph.dtypes import is_complex, is_inexact
from fgraph.op import Array, NonDifferentiable, Vectorized
from fgraph.operators import Axis, TensorLike
from ops.convert import as_tensor, constant
from ops.dimshuffle import DimShuffle, transpose
from ops.elemwise import REDUCTION_OPS
from ops.gradient_control import stop_gradient
from ops.reshape_ops import flatten, reshape
from ops.shape_vector import shape_i
from ops.elementwise_functions import (
    cast,
    eq,
    exp,
    isfinite,
    log,
    logical_and,
    logical_or,
    maximum,
    second,
    sqrt,
    where,
)


def normalize_axes(axis: Axis, ndim: int, what: str) -> tuple[int, ...]:
    """Sorted, non-negative, distinct axes; None means all axes. Errors name `what`."""
    if axis is None:
        return tuple(range(ndim))
    given: tuple[object, ...] = tuple(axis) if isinstance(axis, Sequence) else (axis,)
    normalized: list[int] = []
    for a in given:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{what}: axis must be an int or a sequence of ints, got {axis!r}")
        if not -ndim <= a < ndim:
            raise ShapeError(f"{what}: axis {a} is out of bounds for an input of rank {ndim}")
        normalized.append(int(a) % ndim)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{what}: repeated axis in {given}")
    normalized.sort()
    return tuple(normalized)


def keep_dims(x: Variable, reduced: Variable, axes: tuple[int, ...], keepdims: bool) -> Variable:
    """Re-insert reduced axes as length 1 when `keepdims` is set."""
    return restore_axes(reduced, axes, x.ndim) if keepdims else reduced


def restore_axes(reduced: Variable, axes: tuple[int, ...], ndim: int) -> Variable:
    """`reduced` with length-1 axes inserted at `axes`, so it broadcasts against the
    rank-`ndim` value it was reduced from."""
    if not axes:
        return reduced
    kept = iter(range(reduced.ndim))
    return DimShuffle(tuple(None if a in axes else next(kept) for a in range(ndim)))(reduced)


def merge_axes_last(x: Variable, axes: tuple[int, ...]) -> Variable:
    """`x` with the (normalized) `axes` moved last and merged into one axis, C order: a
    reduction over several axes as one along the last (a rank-0 `x` and no axes give
    one axis of length 1)."""
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = transpose(x, [*kept, *axes])
    if len(axes) == 1:
        return moved
    block = functools.reduce(operator.mul, (shape_i(x, a) for a in axes), constant(1, "int64"))
    return reshape(moved, [*(shape_i(x, a) for a in kept), block])


# --- op fields -------------------------------------------------------------------------
def _as_axes(axes: Iterable[SupportsIndex]) -> tuple[int, ...]:
    return tuple(sorted(operator.index(a) for a in axes))


def _check_axes(op: object, attribute: object, axes: tuple[int, ...]) -> None:
    if builtins.any(a < 0 for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{type(op).__name__}: axes {axes} must be distinct and non-negative")


def _as_axis(axis: SupportsIndex | None) -> int | None:
    return None if axis is None else operator.index(axis)


def _check_optional_axis(op: object, attribute: object, axis: int | None) -> None:
    if axis is not None:
        _check_axis(op, attribute, axis)


def _check_axis(op: object, attribute: object, axis: int) -> None:
    if axis < 0:
        raise ValueError(f"{type(op).__name__}: axis {axis} must be non-negative")


def _check_in_rank(op: Op, axes: Iterable[int], x: TensorType) -> None:
    for a in axes:
        if a >= x.ndim:
            raise ShapeError(f"{op}: axis {a} is out of bounds for input {x}")


def _reduced_shape(x: TensorType, axes: tuple[int, ...]) -> tuple[int | None, ...]:
    return tuple(length for a, length in enumerate(x.shape) if a not in axes)


# --- reductions over a set of axes -------------------------------------------------------
@attrs.frozen(cache_hash=True)
class Reduction(Op, abc.ABC):
    """Base of the reductions over `axes`, which the output drops. Subclasses give the
    NumPy implementation (`reduce`), which also fixes the output dtype as NumPy's."""

    axes: tuple[int, ...] = attrs.field(converter=_as_axes, validator=_check_axes)
    combine: ClassVar[np.ufunc]
    """The reduction of two parts of a group from each part's reduction (`np.add` for a
    sum): what compiled accumulators, chunked (Dask) and blocked reductions combine
    partial results with."""
    identity: ClassVar[bool | int | None]
    """The result over no element, or None where an empty group is an error."""

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """The same reduction over the axes shifted past the batch axes."""
        shifted = attrs.evolve(self, axes=tuple(axis + batch_ndim for axis in self.axes))
        return shifted.apply(inputs[0]), (True,)

    @abc.abstractmethod
    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        """NumPy's implementation, e.g. `numpy.sum(x, axes)`."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        _check_in_rank(self, self.axes, x)
        dtype = self.reduce(np.ones(1, dtype=x.dtype), (0,)).dtype.name
        return (TensorType(dtype, _reduced_shape(x, self.axes)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (self.reduce(inputs[0], self.axes),)


# Kernel: numba_backend.reduction._reduction
@attrs.frozen(cache_hash=True)
class Sum(Reduction):
    """Sum over `axes`; dtype as `numpy.sum` (ints widen to int64, bools count)."""

    combine = np.add
    identity = 0

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        return np.asarray(np.sum(x, axis=axes))

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None or not is_inexact(x.dtype):
            return (None,)
        return (cast(second(x, restore_axes(cotangent, self.axes, x.ndim)), x.dtype),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (tangent,) = tangents
        if tangent is None or not is_inexact(outputs[0].dtype):
            return (None,)
        return (self(tangent),)


# Kernel: numba_backend.reduction._reduction
@attrs.frozen(cache_hash=True)
class Prod(Reduction):
    """Product over `axes`; dtype as `numpy.prod`.

    Its derivative is the product of the other elements, computed as the product of
    the nonzero elements divided by the element (or not divided, at a zero), and
    masked to zero where another element of the group is zero. So it is exact for
    any number of zeros (it can overflow where dividing by a tiny element does). Its
    own derivative treats the zero pattern as fixed: second derivatives are exact
    only where no element of the group is zero.
    """

    combine = np.multiply
    identity = 1

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        return np.asarray(np.prod(x, axis=axes))

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None or not is_inexact(x.dtype):
            return (None,)
        others = _product_of_others(x, self.axes)
        return (cast(restore_axes(cotangent, self.axes, x.ndim) * others, x.dtype),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (tangent,) = tangents
        if tangent is None or not is_inexact(x.dtype):
            return (None,)
        return (Sum(self.axes)(tangent * _product_of_others(x, self.axes)),)


def _product_of_others(x: Variable, axes: tuple[int, ...]) -> Variable:
    """For each element of `x`, the product of the other elements of its group along
    `axes` (the derivative of the group's product), exact when elements are zero."""
    is_zero = eq(x, 0)
    nonzero = x + cast(is_zero, x.dtype)  # zeros replaced by ones
    zeros = restore_axes(Sum(axes)(is_zero), axes, x.ndim)
    product = restore_axes(Prod(axes)(nonzero), axes, x.ndim)
    # Nonzero only where no other element of the group is zero.
    alone = logical_or(eq(zeros, 0), logical_and(eq(zeros, 1), is_zero))
    return where(alone, product / nonzero, 0)


@attrs.frozen(cache_hash=True)
class Extremum(Reduction, abc.ABC):
    """Base of `Max` and `Min`: reducing an empty axis is an error (no identity), and the
    derivative is split evenly among the positions attaining the extremum (so ties
    share it, as in JAX: a valid subgradient whose entries sum to the cotangent)."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        empty = [a for a in self.axes if a < x.ndim and x.shape[a] == 0]
        if empty:
            raise ShapeError(f"{self}: axis {empty[0]} of input {x} is empty (no identity)")
        return super().infer(x)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        empty = [a for a in self.axes if x.shape[a] == 0]
        if empty:
            raise ValueError(
                f"{self}: axis {empty[0]} of the input {x.shape} is empty (no identity)"
            )
        return super().perform(x)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None or not is_inexact(x.dtype):
            return (None,)
        weights = _extremum_weights(x, outputs[0], self.axes)
        return (cast(restore_axes(cotangent, self.axes, x.ndim) * weights, x.dtype),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (tangent,) = tangents
        if tangent is None or not is_inexact(x.dtype):
            return (None,)
        return (Sum(self.axes)(tangent * _extremum_weights(x, outputs[0], self.axes)),)


def _extremum_weights(x: Variable, extremum: Variable, axes: tuple[int, ...]) -> Variable:
    """1 / (number of ties) where `x` attains its group's extremum, 0 elsewhere."""
    hits = cast(eq(x, restore_axes(extremum, axes, x.ndim)), x.dtype)
    return hits / restore_axes(Sum(axes)(hits), axes, x.ndim)


# Kernel: numba_backend.reduction._reduction
@attrs.frozen(cache_hash=True)
class Max(Extremum):
    """Maximum over `axes` (NaN propagates, as `numpy.max`)."""

    combine = np.maximum
    identity = None

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        return np.asarray(np.max(x, axis=axes))


# Kernel: numba_backend.reduction._reduction
@attrs.frozen(cache_hash=True)
class Min(Extremum):
    """Minimum over `axes` (NaN propagates, as `numpy.min`)."""

    combine = np.minimum
    identity = None

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        return np.asarray(np.min(x, axis=axes))


@attrs.frozen(cache_hash=True)
class Logical(Reduction, NonDifferentiable, abc.ABC):
    """Base of `AllTrue` and `AnyTrue`: boolean results, no derivative."""


# Kernel: numba_backend.reduction._reduction
@attrs.frozen(cache_hash=True)
class AllTrue(Logical):
    """Whether all elements over `axes` are nonzero (True over an empty axis)."""

    combine = np.logical_and
    identity = True

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        return np.asarray(np.all(x, axis=axes))


# Kernel: numba_backend.reduction._reduction
@attrs.frozen(cache_hash=True)
class AnyTrue(Logical):
    """Whether any element over `axes` is nonzero (False over an empty axis)."""

    combine = np.logical_or
    identity = False

    def reduce(self, x: Array, axes: tuple[int, ...]) -> Array:
        return np.asarray(np.any(x, axis=axes))


# --- index reductions ---------------------------------------------------------------------
@attrs.frozen(cache_hash=True)
class ArgExtremum(NonDifferentiable, abc.ABC):
    """Base of `Argmax` and `Argmin`: the int64 index of the first extremum along `axis`,
    or into the flattened input when `axis` is None. Not differentiable."""

    axis: int | None = attrs.field(converter=_as_axis, validator=_check_optional_axis)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Along the shifted axis (a flattening `axis=None` is looped instead)."""
        if self.axis is None:
            return None
        return attrs.evolve(self, axis=self.axis + batch_ndim).apply(inputs[0]), (True,)

    @abc.abstractmethod
    def reduce(self, x: Array) -> Array:
        """NumPy's implementation, e.g. `numpy.argmax(x, self.axis)`."""

    def _reduced_axes(self, ndim: int) -> tuple[int, ...]:
        return tuple(range(ndim)) if self.axis is None else (self.axis,)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        axes = self._reduced_axes(x.ndim)
        _check_in_rank(self, axes, x)
        empty = [a for a in axes if x.shape[a] == 0]
        if empty:
            raise ShapeError(f"{self}: axis {empty[0]} of input {x} is empty")
        return (TensorType("int64", _reduced_shape(x, axes)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        empty = [a for a in self._reduced_axes(x.ndim) if x.shape[a] == 0]
        if empty:
            raise ValueError(f"{self}: axis {empty[0]} of the input {x.shape} is empty")
        return (self.reduce(x).astype("int64"),)


# Kernel: numba_backend.reduction._arg_extremum
@attrs.frozen(cache_hash=True)
class Argmax(ArgExtremum):
    """Index of the largest element along `axis` (the first one on ties), as NumPy."""

    def reduce(self, x: Array) -> Array:
        return np.asarray(np.argmax(x, axis=self.axis))


# Kernel: numba_backend.reduction._arg_extremum
@attrs.frozen(cache_hash=True)
class Argmin(ArgExtremum):
    """Index of the smallest element along `axis` (the first one on ties), as NumPy."""

    def reduce(self, x: Array) -> Array:
        return np.asarray(np.argmin(x, axis=self.axis))


# --- scans along one axis -------------------------------------------------------------------
@attrs.frozen(cache_hash=True)
class Cumulative(Op, abc.ABC):
    """Base of `CumSum` and `CumProd` along `axis`; with `reverse`, from the end (so the
    pullback of a scan is the reversed scan, without flipping arrays)."""

    axis: int = attrs.field(converter=operator.index, validator=_check_axis)
    reverse: bool = attrs.field(default=False, converter=bool)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Along the axis shifted past the batch axes."""
        return attrs.evolve(self, axis=self.axis + batch_ndim).apply(inputs[0]), (True,)

    @abc.abstractmethod
    def scan(self, x: Array, axis: int) -> Array:
        """NumPy's implementation, e.g. `numpy.cumsum(x, axis)`."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        _check_in_rank(self, (self.axis,), x)
        return (TensorType(self.scan(np.ones(1, dtype=x.dtype), 0).dtype.name, x.shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        (x,) = inputs
        if not self.reverse:
            return (self.scan(x, self.axis),)
        flipped = self.scan(np.flip(x, self.axis), self.axis)
        return (np.ascontiguousarray(np.flip(flipped, self.axis)),)


# Kernel: numba_backend.reduction._cumulative
@attrs.frozen(cache_hash=True)
class CumSum(Cumulative):
    """Running sum along `axis`; dtype as `numpy.cumsum`. Linear: the pullback is the
    running sum in the other direction."""

    def scan(self, x: Array, axis: int) -> Array:
        return np.cumsum(x, axis=axis)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None or not is_inexact(x.dtype):
            return (None,)
        return (cast(CumSum(self.axis, not self.reverse)(cotangent), x.dtype),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (tangent,) = tangents
        if tangent is None or not is_inexact(outputs[0].dtype):
            return (None,)
        return (self(tangent),)


# Kernel: numba_backend.reduction._cumulative
@attrs.frozen(cache_hash=True)
class CumProd(Cumulative):
    """Running product along `axis`; dtype as `numpy.cumprod`.

    Derivatives divide by the input (`d y_i / d x_j = y_i / x_j` for j <= i), so they
    are correct for nonzero inputs only; a zero input gives inf or NaN.
    """

    def scan(self, x: Array, axis: int) -> Array:
        return np.cumprod(x, axis=axis)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None or not is_inexact(x.dtype):
            return (None,)
        gathered = CumSum(self.axis, not self.reverse)(cotangent * outputs[0])
        return (cast(gathered / x, x.dtype),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (x,) = inputs
        (tangent,) = tangents
        if tangent is None or not is_inexact(x.dtype):
            return (None,)
        return (outputs[0] * CumSum(self.axis, self.reverse)(tangent / x),)


# --- user functions ---------------------------------------------------------------------------
def _reduce(
    op_class: Callable[[tuple[int, ...]], Op], x: TensorLike, axis: Axis, keepdims: bool, what: str
) -> Variable:
    variable = as_tensor(x)
    axes = normalize_axes(axis, variable.ndim, what)
    return keep_dims(variable, op_class(axes)(variable), axes, keepdims)


def sum(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Sum over `axis` (all axes by default), as `numpy.sum`."""
    return _reduce(Sum, x, axis, keepdims, "sum")


def prod(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Product over `axis` (all axes by default), as `numpy.prod` (1 over empty axes)."""
    return _reduce(Prod, x, axis, keepdims, "prod")


def max(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Maximum over `axis`, as `numpy.max`: an empty axis is an error. Its gradient is
    shared evenly among tied maxima."""
    return _reduce(Max, x, axis, keepdims, "max")


def min(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Minimum over `axis`, as `numpy.min`: an empty axis is an error. Its gradient is
    shared evenly among tied minima."""
    return _reduce(Min, x, axis, keepdims, "min")


def all(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Whether all elements over `axis` are nonzero, as `numpy.all` (a bool tensor)."""
    return _reduce(AllTrue, x, axis, keepdims, "all")


def any(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Whether any element over `axis` is nonzero, as `numpy.any` (a bool tensor)."""
    return _reduce(AnyTrue, x, axis, keepdims, "any")


def _as_inexact(x: TensorLike) -> Variable:
    """`x`, with integers and bools converted to float64 as NumPy's statistics do."""
    variable = as_tensor(x)
    return variable if is_inexact(variable.dtype) else cast(variable, "float64")


def _count(x: Variable, axes: tuple[int, ...]) -> int | Variable:
    """How many elements each group along `axes` holds: a Python int when the lengths
    are static, else the product of the run-time lengths (read off the shape, never by
    touching the elements), in `x`'s dtype."""
    lengths = [length for a in axes if (length := x.type.shape[a]) is not None]
    if len(lengths) == len(axes):
        return math.prod(lengths)
    count: Variable = shape_i(x, axes[0])
    for axis in axes[1:]:
        count = count * shape_i(x, axis)
    return cast(count, x.dtype)


def mean(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Arithmetic mean over `axis`, as `numpy.mean` (integers average in float64; an
    empty axis gives NaN). A composition `sum / count`, so rewrites see through it."""
    variable = _as_inexact(x)
    axes = normalize_axes(axis, variable.ndim, "mean")
    return keep_dims(variable, Sum(axes)(variable) / _count(variable, axes), axes, keepdims)


def var(x: TensorLike, axis: Axis = None, keepdims: bool = False, *, ddof: float = 0) -> Variable:
    """Variance over `axis` with `ddof` delta degrees of freedom, as `numpy.var` (the
    divisor `count - ddof` is clamped at 0, giving inf / NaN like NumPy). Two-pass
    (centred) for accuracy. Complex inputs are not supported."""
    return _variance(x, axis, keepdims, ddof, "var")


def std(x: TensorLike, axis: Axis = None, keepdims: bool = False, *, ddof: float = 0) -> Variable:
    """Standard deviation: the square root of `var` (same arguments), as `numpy.std`."""
    return sqrt(_variance(x, axis, keepdims, ddof, "std"))


def _variance(x: TensorLike, axis: Axis, keepdims: bool, ddof: float, what: str) -> Variable:
    variable = _as_inexact(x)
    if is_complex(variable.dtype):
        raise DTypeError(f"{what}: complex inputs are not supported, got {variable.type}")
    axes = normalize_axes(axis, variable.ndim, what)
    centered = variable - mean(variable, axes, keepdims=True)
    count = _count(variable, axes)
    divisor = builtins.max(count - ddof, 0) if isinstance(count, int) else maximum(count - ddof, 0)
    return keep_dims(variable, Sum(axes)(centered * centered) / divisor, axes, keepdims)


def _arg_reduce(
    op_class: Callable[[int | None], Op], x: TensorLike, axis: Axis, keepdims: bool, what: str
) -> Variable:
    """One op along one axis or over all of them; over several axes (PyTensor's meaning,
    NumPy takes one) the op runs along those axes moved last and merged into one, so the
    index counts in C order through the block they span, as `numpy.ravel_multi_index`."""
    variable = as_tensor(x)
    axes = normalize_axes(axis, variable.ndim, what)
    if axis is None or len(axes) == variable.ndim:
        result = op_class(None)(variable)
    elif len(axes) == 1:
        result = op_class(axes[0])(variable)
    else:
        result = op_class(variable.ndim - len(axes))(merge_axes_last(variable, axes))
    return keep_dims(variable, result, axes, keepdims)


def argmax(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Index (int64) of the first maximum along `axis`, or into the flattened input by
    default, as `numpy.argmax`; over several axes, into their block flattened in C
    order (PyTensor's meaning). Not differentiable."""
    return _arg_reduce(Argmax, x, axis, keepdims, "argmax")


def argmin(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """Index (int64) of the first minimum along `axis`, or into the flattened input by
    default, as `numpy.argmin`; over several axes, into their block flattened in C
    order (PyTensor's meaning). Not differentiable."""
    return _arg_reduce(Argmin, x, axis, keepdims, "argmin")


def _cumulative(
    op_class: Callable[[int], Op], x: TensorLike, axis: int | None, what: str
) -> Variable:
    variable = as_tensor(x)
    if axis is None:
        return op_class(0)(variable if variable.ndim == 1 else flatten(variable))
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what}: axis must be an int or None, got {axis!r}")
    (normalized,) = normalize_axes(axis, variable.ndim, what)
    return op_class(normalized)(variable)


def cumsum(x: TensorLike, axis: int | None = None) -> Variable:
    """Running sum along `axis` (of the flattened input by default), as `numpy.cumsum`."""
    return _cumulative(CumSum, x, axis, "cumsum")


def cumprod(x: TensorLike, axis: int | None = None) -> Variable:
    """Running product along `axis` (of the flattened input by default), as
    `numpy.cumprod`. Its derivative assumes nonzero inputs (see `CumProd`)."""
    return _cumulative(CumProd, x, axis, "cumprod")


def logsumexp(x: TensorLike, axis: Axis = None, keepdims: bool = False) -> Variable:
    """`log(sum(exp(x)))` over `axis` without overflow: the group's maximum is shifted
    out first (and left at 0 when infinite, so infinities give inf / -inf as in SciPy),
    under `stop_gradient` as in `_shifted`. Needs non-empty axes."""
    variable = _as_inexact(x)
    axes = normalize_axes(axis, variable.ndim, "logsumexp")
    shift = finite_max_shift(variable, axes)
    shifted = variable - restore_axes(shift, axes, variable.ndim)
    result = log(Sum(axes)(exp(shifted))) + shift
    return keep_dims(variable, result, axes, keepdims)


def finite_max_shift(x: Variable, axes: tuple[int, ...]) -> Variable:
    """The shift a log-sum-exp takes out: the maximum over `axes`, 0 where it is
    infinite (so infinities give inf / -inf as in SciPy), under `stop_gradient` as in
    `_shifted`."""
    highest = Max(axes)(x)
    return stop_gradient(where(isfinite(highest), highest, 0))


def _shifted(x: TensorLike, axis: Axis, what: str) -> tuple[Variable, tuple[int, ...]]:
    """`x` minus its maximum along `axis` (so exponentials cannot overflow), and the axes.
    The maximum is under `stop_gradient`, as in JAX: the results do not depend on the
    shift, so every derivative through it is zero, and without the stop a gradient
    would compute the maximum's (a mask of the maximal elements and its count) only to
    cancel it: in the HMM's gradient, in and outside its loop, for nothing."""
    variable = _as_inexact(x)
    axes = normalize_axes(axis, variable.ndim, what)
    shift = stop_gradient(Max(axes)(variable))
    return variable - restore_axes(shift, axes, variable.ndim), axes


def softmax(x: TensorLike, axis: Axis = -1) -> Variable:
    """`exp(x) / sum(exp(x))` along `axis` (the last by default), computed on the
    max-shifted input so large values do not overflow."""
    shifted, axes = _shifted(x, axis, "softmax")
    exponentials = exp(shifted)
    return exponentials / restore_axes(Sum(axes)(exponentials), axes, shifted.ndim)


def log_softmax(x: TensorLike, axis: Axis = -1) -> Variable:
    """`log(softmax(x))` along `axis` (the last by default), computed as
    `shifted - log(sum(exp(shifted)))` so it neither overflows nor takes log(0)."""
    shifted, axes = _shifted(x, axis, "log_softmax")
    normalizer = log(Sum(axes)(exp(shifted)))
    return shifted - restore_axes(normalizer, axes, shifted.ndim)


REDUCTION_OPS.sum = Sum  # for `ops.elemwise.fit_to`, which cannot import this module
