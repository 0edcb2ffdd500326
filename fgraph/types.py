"""`TensorType`: what a variable holds, a dtype and a static shape with unknown lengths.

Static shapes follow NumPy broadcasting; `broadcast_shapes` is the one place that
rule is written, for the op library and for validation alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from fgraph.dtypes import as_dtype, can_cast_safely
from fgraph.errors import DTypeError, ShapeError
from fgraph.frozen import Frozen

Shape = tuple[int | None, ...]


def _as_shape(shape: Iterable[int | None]) -> Shape:
    """Normalize a shape to a tuple of Python ints / None, rejecting negative lengths."""
    if type(shape) is tuple and all(
        length is None or (type(length) is int and length >= 0) for length in shape
    ):
        return shape
    normalized: list[int | None] = []
    for length in shape:
        if length is None:
            normalized.append(None)
            continue
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
            raise ShapeError(f"shape entries must be int or None, got {length!r}")
        if length < 0:
            raise ShapeError(f"shape entries must be >= 0, got {length}")
        normalized.append(int(length))
    return tuple(normalized)


@attrs.frozen(cache_hash=True)
class TensorType(Frozen):
    """A dense array type: `dtype` is a canonical NumPy name, `shape` has None for unknown."""

    dtype: str = attrs.field(converter=as_dtype)
    shape: Shape = attrs.field(converter=_as_shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """Which axes are statically known to have length 1 (PyTensor's notion)."""
        return tuple(length == 1 for length in self.shape)

    @property
    def is_fully_static(self) -> bool:
        return all(length is not None for length in self.shape)

    def accepts_shape(self, shape: tuple[int, ...]) -> bool:
        """Whether a concrete shape matches this type's rank and known lengths."""
        return len(shape) == len(self.shape) and all(
            want is None or want == got for want, got in zip(self.shape, shape)
        )

    def is_subtype_of(self, other: TensorType) -> bool:
        """Whether every value of this type is a value of `other` (same dtype, refined shape)."""
        return (
            self.dtype == other.dtype
            and len(self.shape) == len(other.shape)
            and all(b is None or a == b for a, b in zip(self.shape, other.shape))
        )

    def filter(self, value: Any, name: str) -> np.ndarray[Any, np.dtype[Any]]:
        """Convert `value` to an array of this type or raise naming `name`.

        Safe casts are applied (an int array for a float64 input), unsafe ones raise
        DTypeError; a wrong rank or a known length that differs raises ShapeError.
        """
        array = np.asarray(value)
        if array.dtype.kind not in "biufc":  # strings, objects, dates: no tensor dtype
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise DTypeError(
                f"{name}: expected {self} values, got {type(value).__name__} {shown} "
                f"(NumPy dtype {array.dtype})"
            )
        if array.dtype.name != self.dtype:
            if not can_cast_safely(array.dtype.name, self.dtype) and not _is_python_scalar_fit(
                value, self.dtype
            ):
                raise DTypeError(
                    f"{name}: expected dtype {self.dtype}, got {array.dtype.name} "
                    "(which does not cast safely)"
                )
            array = array.astype(self.dtype)
        if not self.accepts_shape(array.shape):
            raise ShapeError(f"{name}: expected shape {format_shape(self.shape)}, got {array.shape}")
        return array

    def __str__(self) -> str:
        return f"{self.dtype}{format_shape(self.shape)}"


def _is_python_scalar_fit(value: Any, dtype: str) -> bool:
    """Python scalars are weakly typed (NEP 50): 1.5 is a fine float32, 3 a fine int8."""
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return False
    kind = np.dtype(dtype).kind
    if isinstance(value, int):
        if kind in "iu":
            info = np.iinfo(np.dtype(dtype))
            return int(info.min) <= value <= int(info.max)
        return kind in "fc"
    if isinstance(value, float):
        return kind in "fc"
    return kind == "c"


def format_shape(shape: Shape) -> str:
    """`(3, ?)` style: `?` for unknown lengths, trailing comma for rank 1."""
    inner = ", ".join("?" if length is None else str(length) for length in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting on static shapes; None (unknown) stays unknown unless another
    operand fixes the length. Raises ShapeError naming all shapes when they conflict."""
    ndim = max((len(shape) for shape in shapes), default=0)
    result: list[int | None] = []
    for axis in range(ndim):
        known: int | None = 1
        saw_unknown = False
        for shape in shapes:
            offset = axis - (ndim - len(shape))
            if offset < 0:
                continue
            length = shape[offset]
            if length is None:
                saw_unknown = True
            elif length != 1:
                if known not in (1, length):
                    listed = ", ".join(format_shape(s) for s in shapes)
                    raise ShapeError(f"shapes {listed} cannot be broadcast together (axis {axis})")
                known = length
        result.append(None if known == 1 and saw_unknown else known)
    return tuple(result)


def type_of_value(value: npt.ArrayLike) -> TensorType:
    """The fully static type of a concrete array."""
    array = np.asarray(value)
    return TensorType(array.dtype.name, array.shape)
