"""Reductions: `Sum` and the functions built on it.

This module defines `sum`, `max`, `min`, `all`, `any` like NumPy does, shadowing the
builtins: use `builtins.any(...)` inside it.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import attrs
import numpy as np

from fgraph import Op, TensorType, Variable
from fgraph.op import Array
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import DimShuffle


def normalize_axes(axis: int | Sequence[int] | None, ndim: int, what: str) -> tuple[int, ...]:
    """Sorted, non-negative, distinct axes; None means all axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of bounds for rank {ndim}")
    normalized = sorted(a % ndim for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{what}: repeated axis in {axes}")
    return tuple(normalized)


def _as_axes(axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(int(a) for a in axes))


@attrs.frozen(cache_hash=True)
class Sum(Op):
    """Sum over `axes` (dropped from the output); dtype as `numpy.sum`."""

    axes: tuple[int, ...] = attrs.field(converter=_as_axes)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        if builtins.any(a >= x.ndim for a in self.axes):
            raise ValueError(f"{self}: axes out of bounds for input {x}")
        dtype = np.sum(np.zeros(1, dtype=x.dtype)).dtype.name
        shape = tuple(n for a, n in enumerate(x.shape) if a not in self.axes)
        return (TensorType(dtype, shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.asarray(np.sum(inputs[0], axis=self.axes)),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        from ops.elemwise import cast, second

        (x,) = inputs
        (cotangent,) = cotangents
        if cotangent is None:
            return (None,)
        kept = iter(range(cotangent.ndim))
        expanded = DimShuffle(tuple(None if a in self.axes else next(kept) for a in range(x.ndim)))
        return (cast(second(x, expanded(cotangent)), x.dtype),)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (tangent,) = tangents
        return (None if tangent is None else self(tangent),)


def sum(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    """Sum over `axis` (all axes by default), as `numpy.sum`."""
    variable = as_tensor(x)
    axes = normalize_axes(axis, variable.ndim, "sum")
    return keep_dims(variable, Sum(axes)(variable), axes, keepdims)


def keep_dims(x: Variable, reduced: Variable, axes: tuple[int, ...], keepdims: bool) -> Variable:
    """Re-insert reduced axes as length 1 when `keepdims` is set."""
    if not keepdims:
        return reduced
    kept = iter(range(reduced.ndim))
    return DimShuffle(tuple(None if a in axes else next(kept) for a in range(x.ndim)))(reduced)


def _todo(name: str) -> NotImplementedError:
    return NotImplementedError(f"{name}: being implemented")


def prod(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("prod")


def mean(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("mean")


def max(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("max")


def min(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("min")


def all(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("all")


def any(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("any")


def var(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("var")


def std(x: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Variable:
    raise _todo("std")


def argmax(x: TensorLike, axis: int | None = None, keepdims: bool = False) -> Variable:
    raise _todo("argmax")


def argmin(x: TensorLike, axis: int | None = None, keepdims: bool = False) -> Variable:
    raise _todo("argmin")
